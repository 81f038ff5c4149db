"""Pullbacks of indexing: ``x[idx]`` scatters its cotangent back into zeros at the same
index (repeated integer positions accumulate); ``set_subtensor``/``inc_subtensor`` pass the
cotangent to x (zeroed where it was overwritten) and gather it at the index for y. The index
inputs are disconnected: they choose positions, they are not values of the result."""

from __future__ import annotations

from symscan.gradient.registry import connections, pullback
from symscan.graph.basic import Variable
from symscan.tensor.basic import constant
from symscan.tensor.broadcast import sum_to
from symscan.tensor.creation import arange, zeros_like
from symscan.tensor.elemwise import eq
from symscan.tensor.math import prod
from symscan.tensor.shape import reshape, shape
from symscan.tensor.subtensor import ARRAY, IncSubtensor, Subtensor


@connections(Subtensor)
def subtensor_connections(node):
    return [[i == 0] for i in range(len(node.inputs))]


@connections(IncSubtensor)
def inc_subtensor_connections(node):
    return [[i < 2] for i in range(len(node.inputs))]


@pullback(Subtensor)
def subtensor_pullback(node, cotangents):
    (g,), (x, *index) = cotangents, node.inputs
    g_x = IncSubtensor(node.op.spec)(zeros_like(x, dtype=g.dtype), g, *index)
    return [g_x] + [None] * len(index)


@pullback(IncSubtensor)
def inc_subtensor_pullback(node, cotangents):
    """With ``set_subtensor`` and a position repeated by integer arrays, only the last write
    of y reaches the result, so only it gets a gradient (Theano gives every write one)."""
    (g,), (_, y, *index), op = cotangents, node.inputs, node.op
    g_y = Subtensor(op.spec)(g, *index)
    if op.set_instead_of_inc:
        g_x = IncSubtensor(op.spec, True)(g, constant(0, dtype=g.dtype), *index)
        if ARRAY in op.spec:
            g_y = g_y * last_writes(g, g_y, op.spec, index)
    else:
        g_x = g
    return [g_x, sum_to(g_y, y)] + [None] * len(index)


def last_writes(g: Variable, picked: Variable, spec: tuple, index: list) -> Variable:
    """For each position of ``x[index]`` (shaped like ``picked``), whether an assignment
    through ``index`` leaves its value in the result: numbered writes are assigned, the
    number each position holds afterwards is read back and compared, so that the winner of
    a repeated position is whichever the backend's own assignment keeps."""
    numbers = reshape(arange(prod(shape(picked))), shape(picked), ndim=picked.ndim)
    written = IncSubtensor(spec, True)(zeros_like(g, dtype="int64"), numbers, *index)
    return eq(Subtensor(spec)(written, *index), numbers)
