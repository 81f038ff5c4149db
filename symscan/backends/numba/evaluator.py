"""NumbaEvaluator: the fast evaluator's generated function, with each loop a numba kernel.

Outside loops each op runs once per call, so numpy calls from Python cost little there; inside
a loop they cost once per step, which is what numba removes. A loop numba cannot run as
written here stays a Python loop (``NotCompilable``: the reason is in ``report``); a kernel
numba fails to compile sends the whole function to the fast evaluator (reason reported). When a
kernel raises (a check failed), the call is run again in the fast evaluator, whose error
names the node and the values, exactly as mode "fast" reports it.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
from numba.core.errors import NumbaError

from symscan.backends.fast.codegen import EMITTERS, Codegen
from symscan.backends.fast.evaluator import FastEvaluator
from symscan.backends.fast.loops import emit_scan, write_scan
from symscan.backends.numba import branches, indexing, linalg_ops, nested, unique  # noqa: F401 - register numba forms
from symscan.backends.numba.blas import matmul_helper
from symscan.backends.numba.cache import load_kernel
from symscan.backends.numba.compile_status import KernelPlace, compile_status, listen_to_compiles
from symscan.backends.numba.kernel import LoopKernel
from symscan.backends.numba.ops import NotCompilable
from symscan.scan.op import Scan
from symscan.tensor.math import Dot
from symscan.tensor.random import generator_states, restore_generator_states


@dataclass
class LoopReport:
    """How one loop runs: ``"numba"`` or ``"fast"`` (with the reason)."""

    loop: str
    runs_in: str
    reason: str = ""

    def __str__(self) -> str:
        return f"{self.loop}: {self.runs_in}" + (f" ({self.reason})" if self.reason else "")


class KernelCompileError(Exception):
    """Numba could not compile a kernel it was given (a gap in the numba op table)."""


def run_kernel(kernel, place: KernelPlace, *args):
    """Call a kernel; numba's compile errors become ``KernelCompileError``; a compile it starts
    (the first call, or new argument layouts) is announced if long (``compile_status``)."""
    compile_status.place = place
    try:
        return kernel(*args)
    except NumbaError as err:
        where = getattr(sys.modules.get(kernel.py_func.__module__), "__file__", "in memory")
        raise KernelCompileError(f"{str(err).strip().splitlines()[0]} (kernel: {where})") from err
    finally:
        compile_status.place = None


class NumbaEvaluator(FastEvaluator):
    """Same interface and results as the fast evaluator; ``report`` says how each loop runs."""

    def __init__(self, fgraph, name: str = "symscan_function"):
        self.report: list[LoopReport] = []
        self._fast: FastEvaluator | None = None
        self.fallback_reason: str | None = None
        self._loops = sum(isinstance(node.op, Scan) for node in fgraph.apply_nodes)
        _quiet_numba()
        listen_to_compiles()
        super().__init__(fgraph, name)

    def emitters(self) -> dict:
        return {**EMITTERS, Scan: self._emit_scan, Dot: _emit_outer_dot}

    def _emit_scan(self, gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
        label = node.op.info.name or "scan"
        mark, counts = len(gen.lines), dict(gen._counts)
        try:
            place = KernelPlace(self.name, label, len(self.report) + 1, self._loops)
            write_scan(gen, node, ins, outs, partial(_kernel_loop, place=place))
        except NotCompilable as err:
            del gen.lines[mark:]
            gen._counts = counts
            emit_scan(gen, node, ins, outs)
            self.report.append(LoopReport(label, "fast", str(err)))
            return
        self.report.append(LoopReport(label, "numba"))

    @property
    def fast(self) -> FastEvaluator:
        if self._fast is None:
            self._fast = FastEvaluator(self.fgraph, self.name)
        return self._fast

    def __call__(self, inputs: Sequence, shared: dict | None = None) -> list:
        if self.fallback_reason is not None:
            return self.fast(inputs, shared)
        saved = generator_states((shared or {}).values())  # the fast run below draws what this one drew
        try:
            return super().__call__(inputs, shared)
        except KernelCompileError as err:
            restore_generator_states(saved)
            return self._fall_back(f"numba could not compile a loop: {err}", inputs, shared)
        except NotImplementedError as err:
            restore_generator_states(saved)
            return self._fall_back(f"a kernel met a case it leaves to mode fast: {err}", inputs, shared)
        except Exception:
            # a kernel's check failed (or numba raised where numpy does not): the fast
            # evaluator gives mode fast's error, with its message, or the result
            restore_generator_states(saved)
            return self.fast(inputs, shared)

    def _fall_back(self, reason: str, inputs: Sequence, shared: dict | None) -> list:
        """From now on the fast evaluator runs this function."""
        self.fallback_reason = reason
        self.report.append(LoopReport("function", "fast", reason))
        return self.fast(inputs, shared)

    def __getstate__(self) -> dict:
        return {"fgraph": self.fgraph, "name": self.name}


def _emit_outer_dot(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    """Products outside loops through the same private BLAS as the kernels (blas.py): its
    AVX-512 kernels, and one thread, which a busy machine does not stall (numpy's OpenBLAS
    threads wait for a core each call: W5's products took 1 ms, or 15 under load)."""
    (a, b), dtype = node.inputs, node.outputs[0].dtype
    matmul = a.ndim >= 2 and b.ndim == 2 and a.dtype == b.dtype == dtype and matmul_helper(dtype)
    if not matmul:
        EMITTERS[Dot](gen, node, ins, outs)
        return
    gen.line(f"{outs[0]} = {gen.bind(partial(outer_matmul, matmul), 'matmul')}({ins[0]}, {ins[1]})")


def outer_matmul(matmul, a, b):
    """``np.dot(a, b)`` of an n-d ``a`` and a matrix ``b``, as one matrix product."""
    if a.ndim == 2:
        return matmul(a, b)
    rows = a.reshape((int(np.prod(a.shape[:-1])), a.shape[-1]))
    return matmul(rows, b).reshape(a.shape[:-1] + (b.shape[1],))


def _kernel_loop(loop, n: str, views, outputs, shared: list[str], steps: str, place: KernelPlace) -> None:
    """``write_scan``'s body: the loop as a kernel call (NotCompilable before any line)."""
    kernel = LoopKernel(loop, n, views, outputs, shared, steps)
    compiled = load_kernel(kernel.source())
    name = loop.gen.bind(partial(run_kernel, compiled, place), "kernel")
    for line in kernel.call_lines(name):
        loop.gen.line(line)


def _quiet_numba() -> None:
    """Numba's performance hints (a dot on a non-contiguous view) are not the user's concern.
    One process-wide filter, installed once: ``catch_warnings`` is not thread-safe, and the
    default mode builds numba versions in a background thread."""
    from numba.core.errors import NumbaPerformanceWarning

    if not any(f[2] is NumbaPerformanceWarning and f[0] == "ignore" for f in warnings.filters):
        warnings.filterwarnings("ignore", category=NumbaPerformanceWarning)
