"""The default mode's tier: generated Python at once, numba kernels once they pay.

A numba kernel costs 0.1-4 s to compile (about 0.5 s to load from the disk cache, most of it
numba's import), which a first result must not wait for. So the default mode (a function built
without ``mode``; an explicit ``mode="fast"`` never hands over) answers every call with the
fast evaluator; once a function with loops has spent ``config.numba_after`` seconds
in calls (and numba is installed), a background thread builds its numba version and runs it
once on a copy of the latest inputs (the compile); later calls use it when it compiled every
loop and gave the fast evaluator's results on those inputs. Nothing changes when it did not.
"""

from __future__ import annotations

import copy
import importlib.util
import threading
import time
from collections.abc import Sequence

import numpy as np

from symscan.backends.fast import FastEvaluator
from symscan.config import config
from symscan.scan.op import Scan
from symscan.tensor.random import generator_states


def numba_installed() -> bool:
    return importlib.util.find_spec("numba") is not None


def worth_tiering(fgraph) -> bool:
    """Loops stayed loops after the rewrites, numba is installed and the tier is on."""
    return (config.numba_after is not None and any(isinstance(n.op, Scan) for n in fgraph.apply_nodes)
            and numba_installed())


class TieredEvaluator(FastEvaluator):
    """The fast evaluator, handing over to a numba evaluator built in the background."""

    def __init__(self, fgraph, name: str = "symscan_function"):
        super().__init__(fgraph, name)
        self.spent = 0.0
        self.compiled = None  # the numba evaluator, once it has taken over
        self.state = "fast"  # fast -> compiling -> numba | stays fast (reason)
        self._thread: threading.Thread | None = None

    def __call__(self, inputs: Sequence, shared: dict | None = None) -> list:
        compiled = self.compiled
        if compiled is not None:
            return compiled(inputs, shared)
        # the background run starts from the generators' states before this call's draws
        states = generator_states((shared or {}).values()) if self._thread is None else []
        start = time.perf_counter()
        results = super().__call__(inputs, shared)
        self.spent += time.perf_counter() - start
        if self._thread is None and self.spent >= config.numba_after:
            self._start(inputs, shared, results, states)
        return results

    def _start(self, inputs: Sequence, shared: dict | None, results: list, states: list) -> None:
        copies = [np.array(v, copy=True) for v in inputs]
        before = {id(generator): state for generator, state in states}
        shared_copies = {k: _copy_as_before(v, before) for k, v in (shared or {}).items()}
        self.state = "compiling"
        self._thread = threading.Thread(target=self._compile, args=(copies, shared_copies, results),
                                        name=f"symscan numba: {self.name}", daemon=True)
        self._thread.start()

    def _compile(self, inputs: list, shared: dict, expected: list) -> None:
        try:
            from symscan.backends.numba import NumbaEvaluator

            numba_version = NumbaEvaluator(self.fgraph, self.name)
            got = numba_version(inputs, shared)
        except Exception as err:  # noqa: BLE001 - any failure: the fast evaluator stays
            self.state = f"stays fast ({type(err).__name__}: {err})"
            return
        fallen = [str(r) for r in numba_version.report if r.runs_in != "numba"]
        if fallen:
            self.state = f"stays fast ({'; '.join(fallen)})"
        elif not _same(got, expected):
            self.state = "stays fast (the numba version's result differed)"
        else:
            self.compiled, self.state = numba_version, "numba"

    def wait(self, timeout: float | None = None) -> str:
        """Wait for a background compile (tests, benchmarks); returns ``state``."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.state

    def __getstate__(self) -> dict:
        return {"fgraph": self.fgraph, "name": self.name}


def _copy_as_before(value, states: dict):
    """A value for the background run: arrays copied, generators copied at their state before
    the call (its draws may have advanced them in place); the live ones stay untouched."""
    if isinstance(value, np.ndarray):
        return np.array(value, copy=True)
    if id(value) in states:
        generator = copy.deepcopy(value)
        generator.bit_generator.state = states[id(value)]
        return generator
    return value


def _same(got: list, expected: list) -> bool:
    return len(got) == len(expected) and all(
        np.shape(g) == np.shape(e) and np.asarray(g).dtype == np.asarray(e).dtype
        and np.allclose(g, e, rtol=1e-9, atol=1e-12, equal_nan=True) for g, e in zip(got, expected)
        if isinstance(e, np.ndarray) or np.isscalar(e))
