"""The default mode's tier: generated Python at once, numba kernels once they pay.

A numba kernel costs 0.1-80 s to compile (about 0.5 s to load from the disk cache, most of it
numba's import), which a first result must not wait for. So the default mode (a function built
without ``mode``; an explicit ``mode="fast"`` never hands over) answers every call with the
fast evaluator; once a function with loops has spent ``config.numba_after`` seconds in calls
(and numba is installed), its numba version is built and run once on a copy of the latest
inputs (the compile); later calls use it when it compiled every loop and gave the fast
evaluator's results on those inputs. Nothing changes when it did not.

Where the compile runs: a program may end during it, and must then end at once with its own
status. In a daemon thread, LLVM was cut off by the interpreter's teardown (SIGABRT or SIGSEGV
after all output); a non-daemon thread or an exit hook that waits would hold a finished script
for the rest of the compile. So a child process compiles: a fresh interpreter (``subprocess``:
fork is unsafe with threads, and multiprocessing's spawn runs the user's ``__main__`` again) that
gets the pickled graph, fills numba's on-disk kernel cache (numba/cache.py) and sends back the
state. It runs at the lowest priority (``COMPILE_NICENESS``), and while it runs the program's
products get one BLAS thread, so that the calls answered meanwhile are as fast as mode fast's.
It is killed when the program exits or the function is collected: teardown never meets it. The
first call after it ended loads the kernels from the cache in a non-daemon thread (~1 s, joined
at exit), so the hand-over comes 2-3 s later than from a thread, while the fast evaluator
answers. A compile that runs longer than ``config.compile_message_after`` gets a line on stderr
when a call sees it running, and one when it ends (progress.py). Without a writable cache
directory the tier stays fast.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from symscan.backends import blas_threads, progress
from symscan.backends.fast import FastEvaluator
from symscan.config import config
from symscan.scan.op import Scan
from symscan.tensor.random import generator_states

_ROOT = Path(__file__).resolve().parents[2]  # the folder holding this symscan (and rewrites)
_CHILD = f"import sys; sys.path.insert(0, {str(_ROOT)!r}); import symscan.backends.tiered as t; t.compile_in_child()"

COMPILE_NICENESS = 19
"""The compile process's priority, taken by its first line whatever the parent's (an absolute
value; lowering one's own priority needs no privilege): on a machine with few cores the
program's own calls keep theirs (on 2 cores, LSTM training steps ran 1.6-2.4x slower than mode
fast while the compile took a core at the same priority). The price: where every core is kept
busy by others, the compile waits for them."""

CHILD_ENVIRONMENT = {"SYMSCAN_QUIET": "1", "OPENBLAS_NUM_THREADS": "1"}
"""The compile process speaks only through its state (its stderr's last line is the reason it
failed), and its check run multiplies on one thread: a background job."""



def _kernel_settings() -> dict:
    """This process's kernel level for the compile process: the kernels it caches must be the
    ones this process then loads (a kernel's source, hence its cache entry, names its level)."""
    return {"SYMSCAN_NUMBA_KERNEL_OPT": str(config.numba_kernel_opt)}

def numba_installed() -> bool:
    return importlib.util.find_spec("numba") is not None


def worth_tiering(fgraph) -> bool:
    """Loops stayed loops after the rewrites, numba is installed and the tier is on."""
    return (config.numba_after is not None and any(isinstance(n.op, Scan) for n in fgraph.apply_nodes)
            and numba_installed())


class TieredEvaluator(FastEvaluator):
    """The fast evaluator, handing over to a numba evaluator compiled in a child process."""

    def __init__(self, fgraph, name: str = "symscan_function"):
        super().__init__(fgraph, name)
        self.spent = 0.0
        self.compiled = None  # the numba evaluator, once it has taken over
        self.state = "fast"  # fast -> compiling -> numba | stays fast (reason)
        self._child: CompileProcess | None = None
        self._check: tuple | None = None  # copies of the inputs, shared values and results
        self._loader: threading.Thread | None = None
        self._lock = threading.Lock()
        self._compile_started = 0.0
        self._announced = False  # the note that a long compile runs was written

    def __call__(self, inputs: Sequence, shared: dict | None = None) -> list:
        if self.state != "compiling":
            return self._call(inputs, shared)
        self._announce()
        with blas_threads.one_thread():  # the compile process has a core: no BLAS thread waits for it
            return self._call(inputs, shared)

    def _call(self, inputs: Sequence, shared: dict | None) -> list:
        compiled = self.compiled
        if compiled is not None:
            return compiled(inputs, shared)
        # the background run starts from the generators' states before this call's draws
        states = generator_states((shared or {}).values()) if self.state == "fast" else []
        start = time.perf_counter()
        results = super().__call__(inputs, shared)
        self.spent += time.perf_counter() - start
        if self.state == "fast" and self.spent >= config.numba_after:
            self._start(inputs, shared, results, states)
        else:
            self._poll()
        return results

    def _start(self, inputs: Sequence, shared: dict | None, results: list, states: list) -> None:
        before = {id(generator): state for generator, state in states}
        self._check = ([_copy(v) for v in inputs], {k: _copy(v, before) for k, v in (shared or {}).items()},
                       [_copy(v) for v in results])
        self.state = "compiling"
        self._compile_started = time.monotonic()
        try:
            self._child = CompileProcess((self.fgraph, self.name, *self._check))
        except Exception as err:  # noqa: BLE001 - an op that does not pickle, no interpreter: stays fast
            self.state = f"stays fast (no compile process: {type(err).__name__}: {err})"
            return
        weakref.finalize(self, self._child.stop)  # at exit too: nothing waits for the compile

    def _poll(self) -> None:
        """Once the child has ended: load its kernels in a thread, or take its reason to stay fast."""
        with self._lock:
            child = self._child
            if child is None or child.process.poll() is None:
                return
            self._child = None
        state = child.result()
        if state != "numba":
            self.state = state
            if self._announced:
                progress.note(f"function {self.name!r} stays in mode fast: {state.removeprefix('stays fast ')}")
            return
        # not a daemon: loading from the cache runs LLVM too (briefly), to finish before teardown
        self._loader = threading.Thread(target=self._load, name=f"symscan numba: {self.name}")
        self._loader.start()

    def _load(self) -> None:
        numba_version, state = build_numba(self.fgraph, self.name, *self._check)
        self._check = None
        self.compiled, self.state = numba_version, state
        if self._announced:
            took = time.monotonic() - self._compile_started
            progress.note(f"function {self.name!r} runs in numba from now on (compiled in {took:.1f} s)"
                          if numba_version is not None else f"function {self.name!r} stays in mode fast: "
                          f"{state.removeprefix('stays fast ')}")

    def _announce(self) -> None:
        """Once the compile has run ``config.compile_message_after`` seconds: one line saying so."""
        if not self._announced and time.monotonic() - self._compile_started >= config.compile_message_after:
            self._announced = True
            progress.note(f"numba is compiling function {self.name!r} in the background (mode fast answers "
                          "meanwhile)")

    def wait(self, timeout: float | None = None) -> str:
        """Wait for the numba version, compiled and loaded (tests, benchmarks); returns ``state``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        child = self._child
        if child is not None:
            try:
                child.process.wait(timeout)
            except subprocess.TimeoutExpired:
                return self.state
        self._poll()
        if self._loader is not None:
            self._loader.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return self.state

    def __getstate__(self) -> dict:
        return {"fgraph": self.fgraph, "name": self.name}


class CompileProcess:
    """A fresh interpreter running ``compile_in_child`` on the pickled ``job``; its stdin,
    stdout and stderr are anonymous files, so it never holds the program's own pipes."""

    def __init__(self, job: tuple):
        self.out, self.err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        with tempfile.TemporaryFile() as payload:
            # the shared values' keys are the graph's variables: one pickle keeps them the same
            pickle.dump(job, payload)
            payload.seek(0)
            lowest = ("import os; hasattr(os, 'setpriority') and "
                      f"os.setpriority(os.PRIO_PROCESS, 0, {COMPILE_NICENESS}); ")
            self.process = subprocess.Popen([sys.executable, "-c", lowest + _CHILD], stdin=payload, stdout=self.out,
                                            stderr=self.err, env={**os.environ, **CHILD_ENVIRONMENT,
                                                                  **_kernel_settings()})

    def result(self) -> str:
        """The state it sent, or why it sent none (its exit status and last line of stderr)."""
        self.out.seek(0)
        state = self.out.read().decode()
        if self.process.returncode != 0 or not state:
            self.err.seek(0)
            last = (self.err.read().decode(errors="replace").strip().splitlines() or [""])[-1]
            state = f"stays fast (the compile process ended with status {self.process.returncode}: {last})"
        self.stop()
        return state

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.out.close()
        self.err.close()


def build_numba(fgraph, name: str, inputs: list, shared: dict, expected: list) -> tuple:
    """The numba version of ``fgraph`` and ``"numba"``, or None and the reason it stays fast."""
    try:
        from symscan.backends.numba import NumbaEvaluator

        numba_version = NumbaEvaluator(fgraph, name)
        got = numba_version(inputs, shared)
    except Exception as err:  # noqa: BLE001 - any failure: the fast evaluator stays
        return None, f"stays fast ({type(err).__name__}: {err})"
    fallen = [str(r) for r in numba_version.report if r.runs_in != "numba"]
    if fallen:
        return None, f"stays fast ({'; '.join(fallen)})"
    if not _same(got, expected):
        return None, "stays fast (the numba version's result differed)"
    return numba_version, "numba"


def compile_in_child() -> None:
    """The child process: the pickled graph and values on stdin, the state on stdout."""
    out, sys.stdout = sys.stdout.buffer, sys.stderr  # only the state goes to the parent
    fgraph, name, inputs, shared, expected = pickle.load(sys.stdin.buffer)
    from symscan.backends.numba.cache import cache_dir, writable

    if writable():
        state = build_numba(fgraph, name, inputs, shared, expected)[1]
    else:
        state = f"stays fast (the kernel cache {cache_dir()} cannot be written)"
    out.write(state.encode())
    out.flush()


def _copy(value, generator_states: dict | None = None):
    """A value for the background compile: arrays copied, generators copied at their state before
    the call (its draws may have advanced them in place); the live ones stay untouched."""
    if isinstance(value, np.ndarray):
        return np.array(value, copy=True)
    if generator_states and id(value) in generator_states:
        generator = copy.deepcopy(value)
        generator.bit_generator.state = generator_states[id(value)]
        return generator
    return value


def _same(got: list, expected: list) -> bool:
    return len(got) == len(expected) and all(
        np.shape(g) == np.shape(e) and np.asarray(g).dtype == np.asarray(e).dtype
        and np.allclose(g, e, rtol=1e-9, atol=1e-12, equal_nan=True) for g, e in zip(got, expected)
        if isinstance(e, np.ndarray) or np.isscalar(e))
