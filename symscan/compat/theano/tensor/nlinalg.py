"""``theano.tensor.nlinalg``: Theano's names over ``symscan.tensor.linalg``.

Theano's semantics where they differ from numpy's: ``diag`` takes a vector or a matrix only,
``trace`` sums a matrix's diagonal, ``norm(x, ord)`` takes Theano's ``'inf'``/``'-inf'`` spellings.
``eigh``, ``qr``, ``svd``, ``pinv``, ``tensorinv`` and ``tensorsolve`` are numpy's, as Theano's were;
``eig`` is always complex (see ``symscan.tensor.linalg.eig``); ``lstsq`` keeps Theano's spelling,
``lstsq()(a, b, rcond)``.
"""

from __future__ import annotations

import numpy as np

from symscan.graph.basic import Variable, describe
from symscan.tensor.basic import NotConstantError, as_tensor_variable, get_scalar_constant_value
from symscan.tensor.linalg import det, diagonal, eig, eigh, matrix_power, pinv, qr, svd, tensorinv, tensorsolve
from symscan.tensor.linalg import diag as _numpy_diag
from symscan.tensor.linalg import inv as matrix_inverse
from symscan.tensor.linalg import lstsq as _numpy_lstsq
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


class lstsq:  # noqa: N801  (Theano's name: an op class instantiated, then called)
    """Theano's ``lstsq()(a, b, rcond)``: [x, residuals, rank, s] as ``numpy.linalg.lstsq``; ``rcond``
    must be known when the graph is built (a number, or a constant)."""

    def __call__(self, a, b, rcond=None) -> list[Variable]:
        if isinstance(rcond, Variable):
            try:
                rcond = float(get_scalar_constant_value(rcond))
            except NotConstantError:
                raise TypeError(f"lstsq: rcond must be a number known when the graph is built, got {describe(rcond)}; "
                                "pass a Python float") from None
        return list(_numpy_lstsq(a, b, rcond))


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


__all__ = ["alloc_diag", "det", "diag", "eig", "eigh", "extract_diag", "lstsq", "matrix_dot", "matrix_inverse",
           "matrix_power", "norm", "pinv", "qr", "svd", "tensorinv", "tensorsolve", "trace"]
