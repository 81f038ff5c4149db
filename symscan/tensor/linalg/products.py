"""diagonal, trace, diag, kron, matrix_power and norm: compositions of indexing, products and
reductions, so every backend (numba, ONNX included) and every gradient already exists for their
parts and they need no op of their own."""

from __future__ import annotations

import numpy as np

from symscan.graph.basic import Variable, describe
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.creation import arange, eye, ones_like, zeros
from symscan.tensor.elemwise import abs as absolute
from symscan.tensor.elemwise import cast, maximum, minimum, neq, sqrt
from symscan.tensor.linalg.checks import FLOATS, _square_matrix
from symscan.tensor.linalg.solvers import inv
from symscan.tensor.math import matmul
from symscan.tensor.math import max as reduce_max
from symscan.tensor.math import min as reduce_min
from symscan.tensor.math import sum as reduce_sum
from symscan.tensor.shape import dimshuffle, reshape
from symscan.tensor.subtensor import set_subtensor


def _length(x: Variable, axis: int):
    n = x.type.shape[axis]
    return n if n is not None else x.shape[axis]


def _axis(axis: int, ndim: int, opname: str, role: str, x: Variable) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"{opname}: {role}={axis} is out of range for {x.ndim}-d {describe(x)}; "
                         f"use an axis in [-{ndim}, {ndim})")
    return axis % ndim


def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
    """``numpy.diagonal``: the diagonal of the (axis1, axis2) planes as the last axis."""
    a = as_tensor_variable(a)
    if a.ndim < 2:
        raise ValueError(f"diagonal: a must be at least 2-d, got {a.ndim}-d {describe(a)}; "
                         "use diag(v) to build a matrix from a vector")
    axis1, axis2 = (_axis(ax, a.ndim, "diagonal", name, a) for ax, name in ((axis1, "axis1"), (axis2, "axis2")))
    if axis1 == axis2:
        raise ValueError(f"diagonal: axis1 and axis2 are both {axis1}; give two different axes")
    offset = int(offset)
    rest = [i for i in range(a.ndim) if i not in (axis1, axis2)]
    planes = dimshuffle(a, rest + [axis1, axis2])
    rows, cols = _length(a, axis1), _length(a, axis2)
    if isinstance(rows, int) and isinstance(cols, int):  # a static length: builtins on ints
        count = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    else:
        count = maximum(0, minimum(rows + min(offset, 0), cols - max(offset, 0)))
    index = arange(count)
    return planes[(slice(None),) * len(rest) + (index - min(offset, 0), index + max(offset, 0))]


def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
    """``numpy.trace``: the sum of ``diagonal(a, offset, axis1, axis2)``."""
    return reduce_sum(diagonal(a, offset, axis1, axis2), axis=-1)


def diag(v, k: int = 0) -> Variable:
    """``numpy.diag``: a 1-d v on the k-th diagonal of a square matrix; a 2-d v's k-th diagonal."""
    v = as_tensor_variable(v)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError(f"diag: v must be 1-d or 2-d, got {v.ndim}-d {describe(v)}; use diagonal() for stacks")
    k = int(k)
    n = _length(v, 0)
    index = arange(n)
    matrix = zeros((n + abs(k), n + abs(k)), dtype=v.dtype)
    return set_subtensor(matrix[index - min(k, 0), index + max(k, 0)], v)


def kron(a, b) -> Variable:
    """``numpy.kron``: the block matrix of a's entries times b (the smaller ndim padded on the left)."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    n = max(a.ndim, b.ndim, 1)
    a = dimshuffle(a, ["x"] * (n - a.ndim) + list(range(a.ndim)))
    b = dimshuffle(b, ["x"] * (n - b.ndim) + list(range(b.ndim)))
    # a[i, j] * b[k, l] at axes (i, k, j, l), then (i, k) and (j, l) merged
    blocks = (dimshuffle(a, [p for i in range(n) for p in (i, "x")])
              * dimshuffle(b, [p for i in range(n) for p in ("x", i)]))
    return reshape(blocks, [_length(a, i) * _length(b, i) for i in range(n)])


def matrix_power(a, n: int) -> Variable:
    """``numpy.linalg.matrix_power`` for a Python int n: repeated squaring (inv first for n < 0)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"matrix_power: n must be a Python int (the number of products is part of the graph), "
                        f"got {n!r}; for a symbolic exponent use a scan")
    a = _square_matrix(a, "matrix_power")
    if n == 0:
        return eye(_length(a, -1), dtype=a.dtype) * ones_like(a)
    base, result, n = (inv(a) if n < 0 else a), None, abs(int(n))
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


def norm(x, ord=None, axis=None, keepdims: bool = False) -> Variable:
    """``numpy.linalg.norm`` for vector norms (any ord) and the matrix norms without an SVD
    (None/'fro', 1, -1, inf, -inf); integers compute in float64 as numpy's."""
    x = as_tensor_variable(x)
    if x.dtype not in FLOATS and x.dtype != "float16":
        x = cast(x, "float64")
    if axis is None:
        if ord is None:
            return _keep(sqrt(reduce_sum(x * x)), x.ndim, tuple(range(x.ndim)), keepdims)
        if x.ndim not in (1, 2):
            raise ValueError(f"norm: ord={ord!r} without axis needs a 1-d or 2-d x, got {x.ndim}-d {describe(x)}; "
                             "pass axis")
        axis = tuple(range(x.ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = tuple(_axis(int(ax), x.ndim, "norm", "axis", x) for ax in axes)
    if len(axes) == 1:
        (ax,) = axes
        mag = absolute(x)
        if ord is None or ord == 2:
            result = sqrt(reduce_sum(x * x, axis=ax))
        elif ord == np.inf:
            result = reduce_max(mag, axis=ax)
        elif ord == -np.inf:
            result = reduce_min(mag, axis=ax)
        elif ord == 0:
            result = cast(reduce_sum(neq(x, 0), axis=ax), x.dtype)
        elif isinstance(ord, str):
            raise ValueError(f"norm: ord={ord!r} is a matrix norm; a vector norm takes a number")
        else:
            result = reduce_sum(mag ** ord, axis=ax) ** (1.0 / ord)
        return _keep(result, x.ndim, axes, keepdims)
    if len(axes) != 2 or axes[0] == axes[1]:
        raise ValueError(f"norm: axis must be an int or two different ints, got {axis!r}")
    rows, cols = axes
    if ord in (None, "fro"):
        result = sqrt(reduce_sum(x * x, axis=axes))
    elif ord in (1, -1, np.inf, -np.inf):
        # 1: the largest column sum of |x|; inf: the largest row sum (the smallest for -1, -inf)
        summed, other = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = reduce_sum(absolute(x), axis=summed)
        pick = reduce_max if ord > 0 else reduce_min
        result = pick(sums, axis=other - (other > summed))
    else:
        raise ValueError(f"norm: the matrix norm ord={ord!r} needs singular values, which norm does not compute; "
                         "use ord=None/'fro', 1, -1, inf or -inf, or reduce svd(x, compute_uv=False) yourself")
    return _keep(result, x.ndim, axes, keepdims)


def _keep(result: Variable, ndim: int, axes: tuple, keepdims: bool) -> Variable:
    """A reduction's result with its reduced axes back as length-1 axes (numpy's ``keepdims``)."""
    if not keepdims:
        return result
    rest = iter(range(result.ndim))
    return dimshuffle(result, ["x" if i in axes else next(rest) for i in range(ndim)])
