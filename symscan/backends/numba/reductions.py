"""Reductions over one axis of a matrix in kernels: the max, min, sum and product of its
rows or columns, as ``np.max(x, axis=...)`` etc. compute them (numba's own ``np.max`` takes
no axis). A loop body with ``logsumexp`` or ``softmax`` over an axis needs them at every step.

numpy's semantics are kept: a NaN wins a max or min, and a max or min over an empty axis
raises (the kernel's caller then reruns the call in mode fast, which raises numpy's error).
"""

from __future__ import annotations

import numba
import numpy as np

KINDS = {"sum": 0, "prod": 1, "max": 2, "min": 3}
"""The reductions here, by the ``kind`` number the helper takes."""

jit = numba.njit(cache=True, nogil=True, error_model="numpy")


@jit
def _combine(kind, acc, v):
    if kind == 0:
        return acc + v
    if kind == 1:
        return acc * v
    if kind == 2:
        return v if v > acc or v != v else acc  # a NaN, once taken, is never replaced
    return v if v < acc or v != v else acc


@jit
def reduce_matrix_into(x, axis, kind, out):
    """out[j] = the ``kind`` reduction of x[:, j] (axis 0) or of x[j, :] (axis 1); x 2-d,
    out 1-d of the kept axis' length, in the result's dtype."""
    rows, cols = x.shape
    length, kept = (rows, cols) if axis == 0 else (cols, rows)
    if out.shape[0] != kept:
        raise ValueError("reduce: the output does not fit")
    if kind >= 2 and length == 0 and kept > 0:
        raise ValueError("zero-size array to reduction operation which has no identity")
    for j in range(kept):
        if kind == 0:
            out[j] = 0
        elif kind == 1:
            out[j] = 1
        else:
            out[j] = x[0, j] if axis == 0 else x[j, 0]
    if axis == 0:  # row by row: the inner loop runs along memory for a C-order x
        for i in range(1 if kind >= 2 else 0, rows):
            for j in range(cols):
                out[j] = _combine(kind, out[j], x[i, j])
    else:
        for j in range(rows):
            acc = out[j]
            for i in range(1 if kind >= 2 else 0, cols):
                acc = _combine(kind, acc, x[j, i])
            out[j] = acc
    return out


@jit
def sum_to_matrix(x, rows, cols):
    """x (2-d) summed over each axis where (rows, cols) has length 1 and x does not: the
    reverse of broadcasting, ``SumToShape`` when a length-1 axis shows only at run time."""
    if (rows != x.shape[0] and rows != 1) or (cols != x.shape[1] and cols != 1):
        raise ValueError("sum_to: the shapes do not broadcast")
    out = np.zeros((rows, cols), dtype=x.dtype)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[i if rows != 1 else 0, j if cols != 1 else 0] += x[i, j]
    return out


@jit
def sum_to_vector(x, length):
    """x (1-d) summed to ``length`` (1, or its own)."""
    if length != x.shape[0] and length != 1:
        raise ValueError("sum_to: the shapes do not broadcast")
    out = np.zeros(length, dtype=x.dtype)
    for i in range(x.shape[0]):
        out[i if length != 1 else 0] += x[i]
    return out
