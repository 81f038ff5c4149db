"""Pullbacks of array creation: alloc's value gets the cotangent summed back to its shape;
lengths are disconnected (they give the shape, not values)."""

from __future__ import annotations

import numpy as np

from symscan.gradient.registry import connections, pullback
from symscan.tensor.broadcast import sum_to
from symscan.tensor.creation import Alloc, Arange, Eye, arange
from symscan.tensor.math import sum as reduce_sum


@connections(Alloc)
def alloc_connections(node):
    return [[i == 0] for i in range(len(node.inputs))]


@pullback(Alloc)
def alloc_pullback(node, cotangents):
    (g,), (value, *lengths) = cotangents, node.inputs
    return [sum_to(g, value)] + [None] * len(lengths)


@connections(Arange)
def arange_connections(node):
    return [[True], [False], [True]]  # stop only decides the length


@pullback(Arange)
def arange_pullback(node, cotangents):
    """``out[i] = start + i * step``. Theano's arange is integer and gives zeros; a float
    arange's values do depend on start and step, so they get their derivatives. (The length
    changes in jumps with start and step; between jumps it is constant.)"""
    (g,), out = cotangents, node.outputs[0]
    if g is None or np.dtype(out.dtype).kind not in "fc":
        return [None, None, None]
    positions = arange(0, g.shape[0], 1, dtype=g.dtype)
    return [reduce_sum(g), None, reduce_sum(g * positions)]


@connections(Eye)
def eye_connections(node):
    return [[False], [False], [False]]  # integer lengths and diagonal offset


@pullback(Eye)
def eye_pullback(node, cotangents):
    return [None, None, None]
