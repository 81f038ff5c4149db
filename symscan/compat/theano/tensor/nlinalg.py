"""``theano.tensor.nlinalg``: Theano's names over ``symscan.tensor.linalg``.

Theano's semantics where they differ from numpy's: ``diag`` takes a vector or a matrix only,
``trace`` sums a matrix's diagonal, ``norm(x, ord)`` takes Theano's ``'inf'``/``'-inf'`` spellings.
``eigh``, ``qr``, ``svd`` and ``pinv`` are numpy's, as Theano's were.
Missing (symscan has no op for them yet): ``eig``, ``tensorinv``, ``tensorsolve``, ``lstsq``.
"""

from __future__ import annotations

import numpy as np

from symscan.graph.basic import Variable, describe
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.linalg import det, diagonal, eigh, matrix_power, pinv, qr, svd
from symscan.tensor.linalg import diag as _numpy_diag
from symscan.tensor.linalg import inv as matrix_inverse
from symscan.tensor.linalg import norm as _numpy_norm
from symscan.tensor.math import dot
from symscan.tensor.math import sum as reduce_sum


def _of_ndim(x, ndim: int, opname: str, fix: str) -> Variable:
    x = as_tensor_variable(x)
    if x.ndim != ndim:
        kind = "vector" if ndim == 1 else "matrix"
        raise TypeError(f"{opname}: Theano's {opname} takes a {kind}, got {x.ndim}-d {describe(x)}; {fix}")
    return x


def alloc_diag(x) -> Variable:
    """The square matrix with the vector ``x`` on its diagonal."""
    return _numpy_diag(_of_ndim(x, 1, "alloc_diag", "use symscan.tensor.linalg.diag(v, k) for an offset"))


def extract_diag(x) -> Variable:
    """The main diagonal of the matrix ``x`` (of min(rows, cols) entries)."""
    return diagonal(_of_ndim(x, 2, "extract_diag", "use symscan.tensor.linalg.diagonal(a, offset, axis1, axis2)"))


def diag(x) -> Variable:
    """A vector's diagonal matrix, or a matrix's diagonal (numpy's ``diag`` without ``k``)."""
    x = as_tensor_variable(x)
    if x.ndim == 1:
        return alloc_diag(x)
    if x.ndim == 2:
        return extract_diag(x)
    raise TypeError(f"diag: Theano's diag takes a vector or a matrix, got {x.ndim}-d {describe(x)}; "
                    "use symscan.tensor.linalg.diagonal for stacks of matrices")


def trace(X) -> Variable:
    """The sum of the matrix ``X``'s main diagonal."""
    return reduce_sum(extract_diag(X))


def matrix_dot(*args) -> Variable:
    """``args[0] . args[1] . ... . args[-1]``, the dot products from the left."""
    if not args:
        raise TypeError("matrix_dot: give at least one matrix")
    result = as_tensor_variable(args[0])
    for a in args[1:]:
        result = dot(result, a)
    return result


_THEANO_ORD = {"inf": np.inf, "-inf": -np.inf, "fro": "fro", None: None}


def norm(x, ord=None) -> Variable:
    """The vector norm of a vector, the matrix norm of a matrix (Theano: ``ord`` None, ``'fro'``,
    ``'inf'``/``'-inf'``, a number; matrices: None, ``'fro'``, 1, -1, ``'inf'``, ``'-inf'``)."""
    x = as_tensor_variable(x)
    if x.ndim not in (1, 2):
        raise ValueError(f"norm: Theano's norm takes a vector or a matrix, got {x.ndim}-d {describe(x)}; "
                         "use symscan.tensor.linalg.norm(x, ord, axis=...) for other ranks")
    if isinstance(ord, str) and ord not in _THEANO_ORD:
        raise ValueError(f"norm: ord={ord!r} is not a norm Theano knows; use None, 'fro', 'inf', '-inf' or a number")
    return _numpy_norm(x, _THEANO_ORD.get(ord, ord) if isinstance(ord, str) or ord is None else ord)


__all__ = ["alloc_diag", "det", "diag", "eigh", "extract_diag", "matrix_dot", "matrix_inverse", "matrix_power",
           "norm", "pinv", "qr", "svd", "trace"]
