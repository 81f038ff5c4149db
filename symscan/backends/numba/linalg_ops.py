"""numba forms of the linear algebra added beside ``ops.py``'s: expm (the same Padé code as mode
py, its source copied into the kernel's module so that numba's disk cache follows it), lstsq,
and batches (leading axes) of the one-matrix forms, ``ops.py``'s included, by a loop around
them. Eig has none: its results are complex, which the kernels do not carry."""

from __future__ import annotations

import numpy as np

from symscan.backends.numba.ops import NUMBA_EMITTERS, NotCompilable, as_dtype, numba_emits
from symscan.backends.numba.sources import module_function
from symscan.graph.type import TensorType
from symscan.tensor.linalg import Cholesky, Det, Eigh, Eigvalsh, Expm, Lstsq, MatrixInverse, SlogDet, Solve
from symscan.tensor.linalg.matrix_functions import PADE13, THETA13, pade_expm

FLOATS = ("float32", "float64")


@numba_emits(Expm)
def emit_expm(gen, node, ins: list[str], outs: list[str]) -> None:
    """One matrix per call (a batch stays in Python), computed in float64 as mode py does."""
    a, dtype = node.inputs[0], node.outputs[0].dtype
    if a.ndim != 2 or dtype not in FLOATS:
        raise NotCompilable(f"{node.op} of {a.type}: the kernel takes a float matrix (a batch: see _batched)")
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


# ---------------------------------------------------------------------------- batches
CORE_SHAPES = {
    MatrixInverse: lambda n: ["({n}, {n})"], Cholesky: lambda n: ["({n}, {n})"], Det: lambda n: ["()"],
    SlogDet: lambda n: ["()", "()"], Eigh: lambda n: ["({n},)", "({n}, {n})"], Eigvalsh: lambda n: ["({n},)"],
    Expm: lambda n: ["({n}, {n})"],
}
"""Each batched op's result shapes per matrix (as source text, from n = the matrix's size)."""


def _batched(emit_one):
    """An emitter that runs ``emit_one`` (the one-matrix emitter) per matrix of a batch: the
    leading axes flattened, one loop, the results reshaped back. A 2-d input goes to ``emit_one``
    as it is; solve takes a vector b (shared by every matrix) or a b of a's batch shape."""

    def emit(gen, node, ins: list[str], outs: list[str]) -> None:
        a = node.inputs[0]
        if a.ndim == 2 and all(v.ndim <= 2 for v in node.inputs):
            return emit_one(gen, node, ins, outs)
        solve_b = node.inputs[1] if isinstance(node.op, Solve) else None
        if a.ndim < 2 or (solve_b is not None and solve_b.ndim not in (1, a.ndim)):
            raise NotCompilable(f"{node.op} of {', '.join(str(v.type) for v in node.inputs)}: numba's batch form "
                                "takes b as one vector or with a's batch shape (no broadcast batches)")
        flat, i = gen.fresh("mats"), gen.fresh("i")
        n = f"{ins[0]}.shape[-1]"
        gen.line(f"{flat} = np.ascontiguousarray({ins[0]}).reshape((-1, {ins[0]}.shape[-2], {n}))")
        core_inputs = [TensorType(a.dtype, a.type.shape[-2:]).make_variable()]
        item_ins = [f"{flat}[{i}]"]
        if solve_b is not None:
            core_inputs.append(TensorType(solve_b.dtype, solve_b.type.shape[-1:] if solve_b.ndim == 1
                                          else solve_b.type.shape[-2:]).make_variable())
            if solve_b.ndim == 1:
                item_ins.append(ins[1])
                cores = ["({n},)"]
            else:
                rhs = gen.fresh("rhs")
                gen.line(f"if {ins[1]}.shape[:-2] != {ins[0]}.shape[:-2]:")
                gen.line("    raise ValueError('solve: the batch shapes of a and b differ')")
                gen.line(f"{rhs} = np.ascontiguousarray({ins[1]}).reshape((-1, {ins[1]}.shape[-2], "
                         f"{ins[1]}.shape[-1]))")
                item_ins.append(f"{rhs}[{i}]")
                cores = [f"({n}, {ins[1]}.shape[-1])"]
        elif type(node.op) in CORE_SHAPES:
            cores = [core.format(n=n) for core in CORE_SHAPES[type(node.op)](n)]
        else:
            raise NotCompilable(f"{node.op} of {a.type}: no numba form for a batch of matrices")
        core_node = node.op.make_node(*core_inputs)
        stacked = [gen.fresh("stack") for _ in outs]
        for name, var, core in zip(stacked, node.outputs, cores):
            gen.line(f"{name} = np.empty(({flat}.shape[0],) + {core}, dtype=np.{var.dtype})")
        gen.line(f"for {i} in range({flat}.shape[0]):")
        gen.indent += 1
        item_outs = [gen.fresh("item") for _ in outs]
        emit_one(gen, core_node, item_ins, item_outs)
        for name, item in zip(stacked, item_outs):
            gen.line(f"{name}[{i}] = {item}")
        gen.indent -= 1
        for out, name, core in zip(outs, stacked, cores):
            gen.line(f"{out} = {name}.reshape({ins[0]}.shape[:-2] + {core})")
        return None

    return emit


for _op_class in (MatrixInverse, Det, SlogDet, Solve, Cholesky, Eigh, Eigvalsh, Expm):
    NUMBA_EMITTERS[_op_class] = _batched(NUMBA_EMITTERS[_op_class])
