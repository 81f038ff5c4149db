"""Pullbacks of the shape ops: each moves the cotangent back to the input's layout. Shape
arguments (a reshape's target, a specify_shape's lengths) are disconnected: they decide
where values go, not what they are."""

from __future__ import annotations

from symscan.gradient.ops.math import length
from symscan.gradient.registry import connections, pullback
from symscan.tensor.assertion import Assert
from symscan.tensor.shape import (
    DimShuffle,
    Flatten,
    Join,
    MakeVector,
    Reshape,
    Shape,
    SpecifyShape,
    dimshuffle,
    reshape,
    shape,
)


def value_only(node) -> list[list[bool]]:
    """The first input reaches the output; the others (shapes) do not."""
    return [[i == 0] for i in range(len(node.inputs))]


connections(Reshape, SpecifyShape, Assert)(value_only)


@connections(Shape)
def shape_connections(node):
    return [[False]]  # the shape does not depend on the values


@pullback(Shape)
def shape_pullback(node, cotangents):
    return [None]


@pullback(MakeVector)
def make_vector_pullback(node, cotangents):
    (g,) = cotangents
    return [g[i] for i in range(len(node.inputs))]


@pullback(Reshape)
def reshape_pullback(node, cotangents):
    (g,), (x, _) = cotangents, node.inputs
    return [reshape(g, shape(x), ndim=x.ndim), None]


@pullback(SpecifyShape, Assert)
def specify_shape_pullback(node, cotangents):
    (g,) = cotangents
    return [g] + [None] * (len(node.inputs) - 1)


@pullback(DimShuffle)
def dimshuffle_pullback(node, cotangents):
    """The inverse permutation: the inserted axes of g are dropped, the dropped axes of x
    (length 1) are put back."""
    (g,), op = cotangents, node.op
    return [dimshuffle(g, [op.new_order.index(a) if a in op.new_order else "x" for a in range(op.input_ndim)])]


@pullback(Flatten)
def flatten_pullback(node, cotangents):
    (g,), (x,) = cotangents, node.inputs
    return [reshape(g, shape(x), ndim=x.ndim)]


@pullback(Join)
def join_pullback(node, cotangents):
    """g split along the axis at the inputs' lengths (integer inputs too, as in Theano: the
    output is a float they were merely converted into)."""
    (g,), axis = cotangents, node.op.axis
    grads, start = [], None
    for position, x in enumerate(node.inputs):
        last = position == len(node.inputs) - 1
        stop = None if last else length(x, axis) if start is None else start + length(x, axis)
        grads.append(g[(slice(None),) * axis + (slice(start, stop),)])
        start = stop
    return grads
