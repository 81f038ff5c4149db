"""Which variables have the same shape, known from the graph's structure (not from static
lengths): an elementwise result has the shape of its full-rank operands when they all have
one shape; a gradient's ``SumToShape`` has its target's. Gradient graphs are full of ``fill``
and ``sum_to`` steps that this proves useless (``canonicalize`` removes them)."""

from __future__ import annotations

from symscan.graph.basic import Variable
from symscan.tensor.broadcast import SumToShape
from symscan.tensor.elemwise import Cast, Elemwise
from symscan.tensor.gradient_markers import GradientMarker
from symscan.tensor.math import Dot, MatMul, Outer
from symscan.tensor.shape import shape

_SAME_SHAPE_OPS = (Elemwise, Cast, GradientMarker)


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


def product_shape(var: Variable) -> list[Variable] | None:
    """The lengths of a product's result from its operands' shapes (matrix and vector
    operands), or None for other ops."""
    op, inputs = var.owner.op, var.owner.inputs
    if isinstance(op, Outer) and all(v.ndim == 1 for v in inputs):
        return [shape(inputs[0])[0], shape(inputs[1])[0]]
    if not isinstance(op, (Dot, MatMul)) or not all(1 <= v.ndim <= 2 for v in inputs):
        return None
    a, b = inputs
    return ([shape(a)[0]] if a.ndim == 2 else []) + ([shape(b)[1]] if b.ndim == 2 else [])
