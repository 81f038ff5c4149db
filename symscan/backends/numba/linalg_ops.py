"""numba forms of the linear algebra added beside ``ops.py``'s: expm (the same Padé code as mode
py, its source copied into the kernel's module so that numba's disk cache follows it) and lstsq.
Eig has none: its results are complex, which the kernels do not carry."""

from __future__ import annotations

import numpy as np

from symscan.backends.numba.ops import NotCompilable, as_dtype, numba_emits
from symscan.backends.numba.sources import module_function
from symscan.tensor.linalg import Expm, Lstsq
from symscan.tensor.linalg.matrix_functions import PADE13, THETA13, pade_expm

FLOATS = ("float32", "float64")


@numba_emits(Expm)
def emit_expm(gen, node, ins: list[str], outs: list[str]) -> None:
    """One matrix per call (a batch stays in Python), computed in float64 as mode py does."""
    a, dtype = node.inputs[0], node.outputs[0].dtype
    if a.ndim != 2 or dtype not in FLOATS:
        raise NotCompilable(f"{node.op} of {a.type}: the kernel takes one 2-d float matrix (no batch)")
    fn = module_function(gen, pade_expm, {"PADE13": PADE13, "THETA13": THETA13})
    gen.line(f"{outs[0]} = {fn}(np.ascontiguousarray({ins[0]}).astype(np.float64)).astype(np.{dtype})")


@numba_emits(Lstsq)
def emit_lstsq(gen, node, ins: list[str], outs: list[str]) -> None:
    """numba's lstsq, with numpy's default cutoff given explicitly (numba's default is numpy's
    old rcond=-1, machine precision alone)."""
    a, b = node.inputs
    dtype = node.outputs[0].dtype
    if a.dtype != dtype or b.dtype != dtype:
        raise NotCompilable(f"{node.op} of {a.type} and {b.type}: numba's lstsq takes one float dtype")
    eps = float(np.finfo(dtype).eps)
    rcond = repr(node.op.rcond) if node.op.rcond is not None else \
        f"{eps!r} * max({ins[0]}.shape[0], {ins[0]}.shape[1])"
    x, residuals, rank, s = outs
    gen.line(f"{x}, {residuals}, _{rank}, {s} = np.linalg.lstsq({ins[0]}, {ins[1]}, {rcond})")
    gen.line(f"{rank} = {as_dtype(f'_{rank}', 'int32')}")
