"""``theano.tensor.extra_ops``: Theano's names, as symscan.tensor functions or short
compositions of them (indexing, comparisons, sums), so every backend and gradient already has
their parts.

``searchsorted``, ``repeat`` with a vector of repeats and ``compress`` compare every pair of
entries (memory n * m), where Theano had ops of their own: fine for the sizes Theano code
used them at. ``unique`` is numpy's (``Unique(return_index, return_inverse, return_counts)`` the
Theano spelling of the op); ``bartlett`` is numpy's window.
"""

from __future__ import annotations

from symscan.config import config
from symscan.graph.basic import Variable, describe
from symscan.tensor.assertion import assert_that
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.creation import arange, bartlett, zeros
from symscan.tensor.elemwise import and_, cast, clip, eq, floor_div, ge, le, lt, maximum, minimum, mod, neq
from symscan.tensor.extra_ops import _axis, _length, _take, diff, repeat
from symscan.tensor.math import all as reduce_all
from symscan.tensor.math import cumprod, cumsum
from symscan.tensor.math import max as reduce_max
from symscan.tensor.math import sum as reduce_sum
from symscan.tensor.shape import dimshuffle, flatten, squeeze
from symscan.tensor.subtensor import inc_subtensor, set_subtensor
from symscan.tensor.unique import Unique as _UniqueOp
from symscan.tensor.unique import unique


def to_one_hot(y, nb_class: int, dtype=None) -> Variable:
    """The (len(y), nb_class) matrix with a 1 at column y[i] of row i (dtype floatX by default)."""
    y = as_tensor_variable(y)
    if y.ndim != 1 or y.dtype[0] not in "iu":
        raise TypeError(f"to_one_hot: y must be an int vector of class indices, got {describe(y)}")
    return cast(eq(dimshuffle(y, [0, "x"]), dimshuffle(arange(nb_class), ["x", 0])), dtype or config.floatX)


def _check_equal_lengths(a: Variable, opname: str):
    if a.ndim < 2:
        raise ValueError(f"{opname}: a must be at least 2-d, got {a.ndim}-d {describe(a)}")
    if a.ndim > 2:
        known = {n for n in a.type.shape if n is not None}
        if len(known) > 1:
            raise ValueError(f"{opname}: a {a.ndim}-d a must have all its lengths equal (as numpy's), "
                             f"got {describe(a)}")


def fill_diagonal(a, val) -> Variable:
    """A copy of ``a`` with the scalar ``val`` on its main diagonal (``numpy.fill_diagonal``
    without wrap: min(rows, cols) entries of a matrix; all lengths equal beyond 2-d)."""
    return fill_diagonal_offset(a, val, 0) if as_tensor_variable(a).ndim == 2 else _fill_nd(a, val)


def _fill_nd(a, val) -> Variable:
    a = as_tensor_variable(a)
    _check_equal_lengths(a, "fill_diagonal")
    index = arange(_length(a, 0))
    return set_subtensor(a[(index,) * a.ndim], val)


def fill_diagonal_offset(a, val, offset: int) -> Variable:
    """A copy of the matrix ``a`` with the scalar ``val`` on its ``offset``-th diagonal (above
    the main one when positive)."""
    a = as_tensor_variable(a)
    if a.ndim != 2:
        raise ValueError(f"fill_diagonal_offset: a must be a matrix, got {a.ndim}-d {describe(a)}")
    offset = int(offset)
    rows, cols = _length(a, 0), _length(a, 1)
    if isinstance(rows, int) and isinstance(cols, int):
        count = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    else:
        count = maximum(0, minimum(rows + min(offset, 0), cols - max(offset, 0)))
    index = arange(count)
    return set_subtensor(a[index - min(offset, 0), index + max(offset, 0)], val)


def bincount(x, weights=None, minlength=None, assert_nonneg: bool = False) -> Variable:
    """How often each value 0..max(x) occurs in the int vector ``x`` (the sum of ``weights`` at
    them if given); Theano's dtype: x's (weights' with weights)."""
    x = as_tensor_variable(x)
    if x.ndim != 1 or x.dtype[0] not in "iu":
        raise TypeError(f"bincount: x must be an int vector, got {describe(x)}")
    if assert_nonneg:
        x = assert_that(x, reduce_all(ge(x, 0)), message="bincount: x has negative values")
    length = cast(reduce_max(x) + 1, "int64")
    if minlength is not None:
        length = maximum(length, cast(minlength, "int64"))
    if weights is None:
        return inc_subtensor(zeros((length,), dtype=x.dtype)[x], 1)
    weights = as_tensor_variable(weights)
    return inc_subtensor(zeros((length,), dtype=weights.dtype)[x], weights)


def searchsorted(x, v, side: str = "left", sorter=None) -> Variable:
    """``numpy.searchsorted``: where each entry of ``v`` would go in the sorted vector ``x``
    (``x[sorter]`` sorted when ``sorter`` is given), int64."""
    x, v = as_tensor_variable(x), as_tensor_variable(v)
    if x.ndim != 1:
        raise TypeError(f"searchsorted: x must be a vector, got {describe(x)}")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        x = x[as_tensor_variable(sorter)]
    before = (lt if side == "left" else le)(x, dimshuffle(v, list(range(v.ndim)) + ["x"]))
    return reduce_sum(cast(before, "int64"), axis=-1)


def compress(condition, x, axis=None) -> Variable:
    """``numpy.compress``: the entries of ``x`` along ``axis`` (of the flattened x when None)
    where the vector ``condition`` is nonzero."""
    x, condition = as_tensor_variable(x), as_tensor_variable(condition)
    if condition.ndim != 1:
        raise TypeError(f"compress: condition must be a vector, got {describe(condition)}")
    if axis is None:
        x, axis = flatten(x, 1), 0
    axis = _axis(axis, x, "compress")
    kept = cast(neq(condition, 0), "int64")
    counts = cumsum(kept)  # the j-th kept entry is the first where counts reaches j + 1
    positions = arange(reduce_sum(kept))
    index = reduce_sum(cast(le(dimshuffle(counts, ["x", 0]), dimshuffle(positions, [0, "x"])), "int64"), axis=1)
    return _take(x, index, axis)


def _dims(dims, opname: str) -> list:
    if isinstance(dims, Variable) and dims.ndim == 1 and dims.type.shape[0] is not None:
        return [dims[i] for i in range(dims.type.shape[0])]
    if isinstance(dims, Variable):
        raise TypeError(f"{opname}: dims must be a tuple of ints or an int vector of static length, "
                        f"got {describe(dims)}")
    return [d if isinstance(d, Variable) else int(d) for d in dims]


def _strides(dims: list, order: str, opname: str) -> list:
    if order not in ("C", "F"):
        raise ValueError(f"{opname}: order must be 'C' or 'F', got {order!r}")
    walk = dims[::-1] if order == "C" else dims
    strides, step = [], 1
    for d in walk:
        strides.append(step)
        step = step * d
    return strides[::-1] if order == "C" else strides


def ravel_multi_index(multi_index, dims, mode: str = "raise", order: str = "C") -> Variable:
    """``numpy.ravel_multi_index``: the flat index of each tuple of indices into an array of
    shape ``dims`` (mode 'raise' checks the bounds when it runs, 'wrap' and 'clip' as numpy)."""
    dims = _dims(dims, "ravel_multi_index")
    multi_index = [as_tensor_variable(i) for i in multi_index]
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(multi_index)} index arrays for {len(dims)} dims; "
                         "give one index array per dimension")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"ravel_multi_index: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    fixed, checks = [], []
    for index, d in zip(multi_index, dims):
        if mode == "wrap":
            index = mod(index, d)
        elif mode == "clip":
            index = clip(index, 0, d - 1)
        else:
            checks.append(reduce_all(and_(ge(index, 0), lt(index, d))))
        fixed.append(cast(index, "int64"))
    flat = sum(index * stride for index, stride in zip(fixed, _strides(dims, order, "ravel_multi_index")))
    if checks:
        flat = assert_that(flat, *checks, message="ravel_multi_index: invalid entry in coordinates array")
    return flat


def unravel_index(indices, dims, order: str = "C", ndim=None) -> tuple:
    """``numpy.unravel_index``: the tuple of index arrays that the flat ``indices`` point at in
    an array of shape ``dims`` (checked to be in range when it runs). ``ndim``, which Theano
    needed for a symbolic ``dims``, must match when given."""
    dims = _dims(dims, "unravel_index")
    if ndim is not None and ndim != len(dims):
        raise ValueError(f"unravel_index: ndim={ndim} but dims has {len(dims)} entries")
    indices = cast(as_tensor_variable(indices), "int64")
    size = 1
    for d in dims:
        size = size * d
    indices = assert_that(indices, reduce_all(and_(ge(indices, 0), lt(indices, size))),
                          message="unravel_index: an index is out of bounds for an array of shape dims")
    strides = _strides(dims, order, "unravel_index")
    return tuple(mod(floor_div(indices, stride), d) for stride, d in zip(strides, dims))


def Unique(return_index: bool = False, return_inverse: bool = False, return_counts: bool = False):  # noqa: N802
    """Theano's ``Unique(return_index, return_inverse, return_counts)(x)``: the op (numpy's unique
    of the flattened x), whose call gives the values alone or a list with the flagged outputs.
    Theano's ``axis`` (unique rows) is not implemented."""
    return _UniqueOp(bool(return_index), bool(return_inverse), bool(return_counts))


__all__ = ["Unique", "bartlett", "bincount", "compress", "cumprod", "cumsum", "diff", "fill_diagonal",
           "fill_diagonal_offset", "ravel_multi_index", "repeat", "searchsorted", "squeeze", "to_one_hot", "unique",
           "unravel_index"]
