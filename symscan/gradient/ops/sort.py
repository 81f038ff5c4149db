"""Pullbacks of sort and argsort. Sorting permutes: the cotangent of the sorted values goes
back to the positions they came from (a scatter through the stable argsort permutation). The
argsort output is an integer: connected to x, with gradient zero."""

from __future__ import annotations

import numpy as np

from symscan.gradient.grad import float_dtype
from symscan.gradient.ops.math import length
from symscan.gradient.registry import pullback
from symscan.gradient.types import NullType
from symscan.graph.basic import Variable
from symscan.tensor.creation import arange, zeros_like
from symscan.tensor.shape import dimshuffle, flatten, reshape, shape
from symscan.tensor.sort import ArgSort, Sort
from symscan.tensor.subtensor import set_subtensor
from symscan.tensor.unique import Unique


def along_axis_index(x: Variable, positions: Variable, axis: int) -> tuple:
    """The numpy index reading ``x`` at ``positions`` along ``axis`` (take_along_axis): a
    broadcast arange for every other axis. ``positions`` has ``x``'s shape."""
    if x.ndim == 1:
        return (positions,)
    index = []
    for i in range(x.ndim):
        if i == axis:
            index.append(positions)
        else:
            index.append(dimshuffle(arange(length(x, i)), ["x" if j != i else 0 for j in range(x.ndim)]))
    return tuple(index)


@pullback(Sort)
def sort_pullback(node, cotangents):
    """``out = x[argsort(x)]`` along the axis, so ``x``'s gradient is the cotangent written at
    the permutation's positions. The permutation is recomputed from ``x`` itself, not read off
    the node: inside a gradient's loop the output is the forward's saved value."""
    (g,), (x,), axis = cotangents, node.inputs, node.op.axis
    if np.dtype(x.dtype).kind not in "fc":  # an integer output: grad takes this as zero
        return [zeros_like(x, dtype=float_dtype(x))]
    values = x if axis is not None else flatten(x, 1)
    axis = 0 if axis is None else axis
    order = ArgSort(axis)(values)
    g_values = set_subtensor(zeros_like(values)[along_axis_index(values, order, axis)], g)
    return [g_values if node.op.axis is not None else reshape(g_values, shape(x), ndim=x.ndim)]


@pullback(ArgSort)
def argsort_pullback(node, cotangents):
    """The output is an integer: connected (it depends on x's values) but zero."""
    (x,) = node.inputs
    return [zeros_like(x, dtype=float_dtype(x))]


@pullback(Unique)
def unique_pullback(node, cotangents):
    """Undefined: any change that splits equal entries changes the number of values."""
    why = "unique's values change in number when equal entries move apart; sort(x) has a gradient"
    return [NullType(why).make_variable()]
