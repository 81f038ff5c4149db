"""Which variables have the same shape, known from the graph's structure (not from static
lengths): an elementwise result has the shape of its full-rank operands when they all have
one shape; a gradient's ``SumToShape`` has its target's. Gradient graphs are full of ``fill``
and ``sum_to`` steps that this proves useless (``canonicalize`` removes them)."""

from __future__ import annotations

from symscan.graph.basic import Variable
from symscan.tensor.basic import constant
from symscan.tensor.broadcast import SumToShape
from symscan.tensor.elemwise import Cast, Elemwise, maximum
from symscan.tensor.gradient_markers import GradientMarker
from symscan.tensor.linalg import Cholesky, ChoSolve, MatrixInverse, Solve, SolveTriangular
from symscan.tensor.math import Dot, MatMul, Outer
from symscan.tensor.shape import DimShuffle, shape
from symscan.tensor.subtensor import Subtensor

_SAME_SHAPE_OPS = (Elemwise, Cast, GradientMarker)
SOLVES = (Solve, SolveTriangular, ChoSolve)
"""x with a x = b: b's shape when a is one matrix."""


def shape_source(var: Variable) -> Variable:
    """A variable with ``var``'s shape, as far up the graph as the structure shows (``var``
    itself when nothing is known)."""
    seen = 0
    while var.owner is not None and seen < 64:  # bounded: shape chains are short in practice
        seen += 1
        op, inputs = var.owner.op, var.owner.inputs
        if isinstance(op, SumToShape):
            if op.from_shape:
                return var
            var = inputs[1]
            continue
        if not isinstance(op, _SAME_SHAPE_OPS):
            return var
        operands = inputs[:1] if isinstance(op, GradientMarker) else inputs
        full = [v for v in operands if v.ndim == var.ndim and not all_ones(v)]
        sources = {shape_source(v) for v in full}
        # an operand of lower rank might be longer along an axis of length 1: unknown then
        if len(sources) != 1 or any(v not in full and not all_ones(v) for v in operands):
            return var
        var = sources.pop()
    return var


def all_ones(v: Variable) -> bool:
    """All static lengths 1 (or a scalar): broadcasting it never grows a result."""
    return all(n == 1 for n in v.type.shape)


def same_shape(a: Variable, b: Variable) -> bool:
    """Whether ``a`` and ``b`` provably have the same shape (equal static shapes included)."""
    if a.ndim != b.ndim:
        return False
    if None not in a.type.shape and a.type.shape == b.type.shape:
        return True
    return shape_source(a) is shape_source(b)


def computed_shape(var: Variable, depth: int = 0) -> list[Variable] | None:
    """``var``'s lengths as expressions of cheaper variables' shapes (static lengths, the
    operands of products, elementwise ops and dimshuffles; inputs and views read as they are),
    so that whoever needs only the shape does not compute ``var``; None when unknown."""
    if var.owner is None or isinstance(var.owner.op, (Subtensor, DimShuffle)) and var.owner.inputs[0].owner is None:
        return [constant(n, dtype="int64") if n is not None else shape(var)[i] for i, n in enumerate(var.type.shape)]
    if depth > 16:
        return None
    op, inputs = var.owner.op, var.owner.inputs
    if isinstance(op, (MatrixInverse, Cholesky)) or (isinstance(op, SOLVES) and inputs[0].ndim == 2
                                                     and inputs[1].ndim <= 2):
        return computed_shape(inputs[-1], depth + 1)  # a's shape, or b's for one matrix a
    operands = [computed_shape(v, depth + 1) for v in inputs] if isinstance(op, (Elemwise, Cast, Dot, MatMul,
                                                                                 Outer, DimShuffle)) else None
    if operands is None or any(o is None for o in operands):
        return None
    if isinstance(op, DimShuffle):
        lengths = [constant(1, dtype="int64") if axis == "x" else operands[0][axis] for axis in op.new_order]
    elif isinstance(op, (Elemwise, Cast)):
        lengths = _broadcast_lengths(var, inputs, operands)
    else:
        lengths = _product_lengths(op, inputs, operands)
    if lengths is None:
        return None
    return [constant(n, dtype="int64") if n is not None else length for n, length in zip(var.type.shape, lengths)]


def _broadcast_lengths(var: Variable, inputs: list, operands: list) -> list:
    """Each axis: the length of the operands that have it (not statically 1), their maximum."""
    lengths = []
    for axis in range(var.ndim):
        found = []
        for v, lens in zip(inputs, operands):
            k = axis - (var.ndim - v.ndim)
            if k >= 0 and v.type.shape[k] != 1:
                found.append(lens[k])
        length = found[0] if found else constant(1, dtype="int64")
        for other in found[1:]:
            length = maximum(length, other)
        lengths.append(length)
    return lengths


def _product_lengths(op, inputs: list, operands: list) -> list | None:
    """A product's lengths from its (matrix or vector) operands'."""
    if isinstance(op, Outer):
        return [operands[0][0], operands[1][0]] if all(v.ndim == 1 for v in inputs) else None
    (a, b), (la, lb) = inputs, operands
    if a.ndim > 2 and b.ndim == 2:  # a stack of matrices times one matrix (dot and matmul alike)
        return la[:-1] + [lb[1]]
    if not all(1 <= v.ndim <= 2 for v in inputs):
        return None
    return ([la[0]] if a.ndim == 2 else []) + ([lb[1]] if b.ndim == 2 else [])

