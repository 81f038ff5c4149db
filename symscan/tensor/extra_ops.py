"""numpy's ``diff`` and ``repeat`` (Theano's ``extra_ops`` names too), written with slicing,
comparisons and sums, so every backend and gradient already has their parts."""

from __future__ import annotations

import numpy as np

from symscan.graph.basic import Variable, describe
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.creation import arange, ones
from symscan.tensor.elemwise import cast, le
from symscan.tensor.math import cumsum
from symscan.tensor.math import sum as reduce_sum
from symscan.tensor.shape import dimshuffle, flatten, reshape


def _axis(axis: int, x: Variable, opname: str) -> int:
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{opname}: axis={axis} is out of range for {x.ndim}-d {describe(x)}; "
                         f"use an axis in [-{x.ndim}, {x.ndim})")
    return int(axis) % x.ndim


def _take(x: Variable, index: Variable, axis: int) -> Variable:
    """``numpy.take(x, index, axis)`` for an int vector ``index``."""
    return x[(slice(None),) * axis + (index,)]


def _length(x: Variable, axis: int):
    n = x.type.shape[axis]
    return n if n is not None else x.shape[axis]


def diff(x, n: int = 1, axis: int = -1) -> Variable:
    """``numpy.diff``: ``x[1:] - x[:-1]`` along ``axis``, ``n`` times."""
    x = as_tensor_variable(x)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"diff: n must be a non-negative Python int (the number of differences), got {n!r}")
    axis = _axis(axis, x, "diff")
    before = (slice(None),) * axis
    for _ in range(int(n)):
        x = x[before + (slice(1, None),)] - x[before + (slice(None, -1),)]
    return x


def _repeat_index(repeats: Variable) -> Variable:
    """``numpy.repeat(arange(len(repeats)), repeats)``: output position p comes from the count
    of cumulative repeats at or below p."""
    ends = cumsum(repeats)
    positions = arange(reduce_sum(repeats))
    return reduce_sum(cast(le(dimshuffle(ends, ["x", 0]), dimshuffle(positions, [0, "x"])), "int64"), axis=1)


def repeat(x, repeats, axis=None) -> Variable:
    """``numpy.repeat``: each entry along ``axis`` (of the flattened x when None) ``repeats``
    times; ``repeats`` is an int or an int vector of one count per entry."""
    x = as_tensor_variable(x)
    if axis is None:
        x, axis = flatten(x, 1), 0
    axis = _axis(axis, x, "repeat")
    if isinstance(repeats, (int, np.integer)) and not isinstance(repeats, bool):
        if repeats < 0:
            raise ValueError(f"repeat: repeats must be non-negative, got {repeats}")
        # a new axis after ``axis``, broadcast to ``repeats`` and merged into it
        tiled = dimshuffle(x, list(range(axis + 1)) + ["x"] + list(range(axis + 1, x.ndim)))
        tiled = tiled * np.ones((1,) * (axis + 1) + (int(repeats),) + (1,) * (x.ndim - axis - 1), dtype=x.dtype)
        shape = [_length(x, i) for i in range(x.ndim)]
        shape[axis] = shape[axis] * int(repeats)
        return reshape(tiled, shape)
    repeats = as_tensor_variable(repeats)
    if repeats.dtype[0] not in "iu" or repeats.ndim > 1:
        raise TypeError(f"repeat: repeats must be an int or an int vector, got {describe(repeats)}")
    if repeats.ndim == 0:
        repeats = ones((_length(x, axis),), dtype=repeats.dtype) * repeats
    return _take(x, _repeat_index(repeats), axis)


__all__ = ["diff", "repeat"]
