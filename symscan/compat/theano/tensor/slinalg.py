"""``theano.tensor.slinalg``: Theano's names over ``symscan.tensor.linalg``.

``solve_symmetric`` is ``solve`` (Theano's structure flag chose the same LAPACK result);
``eigvalsh(a, b, lower)`` is scipy's (generalized when ``b`` is given); ``expm`` is scipy's.
"""

from __future__ import annotations

from symscan.graph.basic import Variable, describe
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.linalg import cholesky, expm, solve, solve_triangular
from symscan.tensor.linalg import eigvalsh as _numpy_eigvalsh
from symscan.tensor.linalg import kron as _numpy_kron

solve_symmetric = solve


def solve_lower_triangular(a, b) -> Variable:
    """x with a @ x == b, reading only the lower triangle of a."""
    return solve_triangular(a, b, lower=True)


def solve_upper_triangular(a, b) -> Variable:
    """x with a @ x == b, reading only the upper triangle of a."""
    return solve_triangular(a, b, lower=False)


def eigvalsh(a, b=None, lower: bool = True) -> Variable:
    """The ascending eigenvalues of the symmetric a, or of a v = w b v for a symmetric positive
    definite b (``scipy.linalg.eigvalsh``), reading the lower (or upper) triangles."""
    return _numpy_eigvalsh(a, b, UPLO="L" if lower else "U")


def kron(a, b) -> Variable:
    """The Kronecker product of two matrices (``numpy.kron``, old ``scipy.linalg.kron``). Theano gave other ranks a
    shape of its own (a.ndim + b.ndim - 2 axes), unlike numpy and scipy, so they are refused."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim != 2 or b.ndim != 2:
        raise TypeError(f"kron: theano.tensor.slinalg.kron here takes two matrices, got {describe(a)} and "
                        f"{describe(b)}; use symscan.tensor.linalg.kron for numpy.kron's other ranks")
    return _numpy_kron(a, b)


__all__ = ["cholesky", "eigvalsh", "expm", "kron", "solve", "solve_lower_triangular", "solve_symmetric",
           "solve_upper_triangular"]
