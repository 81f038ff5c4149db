"""Small matrices in kernels: products, solve, inverse and determinants as plain loops.

numba's ``np.dot`` and ``np.linalg`` call BLAS/LAPACK at every size; for the 2x2..8x8 matrices of
a Kalman filter each call costs 0.5-1.6 us (layout checks, Fortran-order copies, workspace and
pivot arrays), ten to fifty times the arithmetic, and a filter's step makes dozens of them. Below
a size limit these helpers compute in compiled loops (strided views read in place: a transpose
is not copied); above it they call what numba calls. The factorisation is LAPACK's getrf for a
small matrix: partial pivoting on the largest magnitude, the first one on ties; so results agree
with numpy's to rounding (the order of additions differs). A singular matrix raises in solve and
inv (the kernel's caller then reruns the call in mode fast, which raises numpy's LinAlgError with
the op's message) and gives numpy's 0 / (0, -inf) in det and slogdet.
"""

from __future__ import annotations

import numba
import numpy as np

DTYPES = ("float64",)
"""What kernels compute here. float32 keeps BLAS/LAPACK: their single-precision sums, in their
order, are what numpy gives (a loop's other order differs by 1e-7, not by 1e-16)."""

PRODUCT_LIMIT = 1024
"""Multiply-adds up to which a product loops here (16 x 8 by 8 x 8, say); BLAS above."""

LU_LIMIT = 16
"""The largest order factorised here; LAPACK above."""

jit = numba.njit(cache=True, nogil=True, error_model="numpy")


# ---------------------------------------------------------------------------- products
@jit
def small_product(a, b) -> bool:
    """Whether ``a @ b`` (a, b 1-d or 2-d) is small enough to loop here."""
    size = 1
    for n in a.shape:
        size *= n
    if b.ndim == 2:
        size *= b.shape[1]
    return size <= PRODUCT_LIMIT


@jit
def matmul_into(a, b, out):
    """out = a @ b for 2-d a, b (out of shape (a.shape[0], b.shape[1]), aliasing neither)."""
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    if b.shape[0] != k or out.shape[0] != m or out.shape[1] != n:
        raise ValueError("dot: shapes do not match")
    if k == 0:
        out[:, :] = 0.0
        return out
    for i in range(m):  # sums in a register: out may not be read while it is written
        for j in range(n):
            total = a[i, 0] * b[0, j]
            for p in range(1, k):
                total += a[i, p] * b[p, j]
            out[i, j] = total
    return out


@jit
def matmul(a, b):
    return matmul_into(a, b, np.empty((a.shape[0], b.shape[1]), dtype=a.dtype))


@jit
def vecmat_into(x, a, out):
    """out = x @ a for a 1-d x and a 2-d a."""
    k, n = a.shape
    if x.shape[0] != k or out.shape[0] != n:
        raise ValueError("dot: shapes do not match")
    if k == 0:
        out[:] = 0.0
        return out
    for j in range(n):
        total = x[0] * a[0, j]
        for p in range(1, k):
            total += x[p] * a[p, j]
        out[j] = total
    return out


@jit
def vecmat(x, a):
    return vecmat_into(x, a, np.empty(a.shape[1], dtype=a.dtype))


@jit
def matvec(a, x):
    """a @ x for a 2-d a and a 1-d x."""
    m, k = a.shape
    if x.shape[0] != k:
        raise ValueError("dot: shapes do not match")
    out = np.zeros(m, dtype=a.dtype)
    if k == 0:
        return out
    for i in range(m):
        total = a[i, 0] * x[0]
        for p in range(1, k):
            total += a[i, p] * x[p]
        out[i] = total
    return out


@jit
def vdot(x, y):
    """x @ y for 1-d x and y (a float64 sum: the caller converts it to the result's dtype)."""
    if x.shape[0] != y.shape[0]:
        raise ValueError("dot: shapes do not match")
    total = 0.0
    for p in range(x.shape[0]):
        total += x[p] * y[p]
    return total


# ---------------------------------------------------------------------------- LU
@jit
def eliminate(a, x):
    """Gaussian elimination with partial pivoting on [a | x]: returns (u, sign, singular), u
    the upper factor in a new array, sign that of the row permutation; x (n x m, C order) is
    overwritten with a^-1 x unless a is singular. One pass, no pivot array: the row swaps
    apply to x as they are made."""
    n, m = x.shape
    u = np.empty((n, n), dtype=a.dtype)
    for i in range(n):
        for j in range(n):
            u[i, j] = a[i, j]
    sign, singular = 1.0, False
    for k in range(n):
        best, row = abs(u[k, k]), k
        for i in range(k + 1, n):
            if abs(u[i, k]) > best:
                best, row = abs(u[i, k]), i
        if row != k:
            sign = -sign
            for j in range(k, n):
                u[k, j], u[row, j] = u[row, j], u[k, j]
            for j in range(m):
                x[k, j], x[row, j] = x[row, j], x[k, j]
        pivot = u[k, k]
        if pivot == 0.0:
            singular = True
            continue
        for i in range(k + 1, n):
            factor = u[i, k] / pivot
            for j in range(k + 1, n):
                u[i, j] -= factor * u[k, j]
            for j in range(m):
                x[i, j] -= factor * x[k, j]
    if m and not singular:
        for i in range(n - 1, -1, -1):  # U x = y
            for p in range(i + 1, n):
                f = u[i, p]
                for j in range(m):
                    x[i, j] -= f * x[p, j]
            d = u[i, i]
            for j in range(m):
                x[i, j] /= d
    return u, sign, singular


@jit
def solve(a, b):
    """``np.linalg.solve(a, b)`` for a 2-d a and a 1-d or 2-d b."""
    n = a.shape[0]
    if n > LU_LIMIT:
        return np.linalg.solve(a, b)
    if a.shape[1] != n or b.shape[0] != n:
        raise ValueError("solve: a must be square with as many rows as b")
    columns = 1 if b.ndim == 1 else b.shape[b.ndim - 1]
    x = np.empty((n, columns), dtype=a.dtype)
    given = np.ascontiguousarray(b).reshape((n, columns))  # a view when b is contiguous
    for i in range(n):
        for j in range(columns):
            x[i, j] = given[i, j]
    if eliminate(a, x)[2]:
        raise np.linalg.LinAlgError("Singular matrix")
    return x.reshape(b.shape)


@jit
def inv(a):
    """``np.linalg.inv`` of a 2-d a."""
    n = a.shape[0]
    if n > LU_LIMIT:
        return np.linalg.inv(a)
    if a.shape[1] != n:
        raise ValueError("inv: a must be square")
    x = np.zeros((n, n), dtype=a.dtype)
    for i in range(n):
        x[i, i] = 1.0
    if eliminate(a, x)[2]:
        raise np.linalg.LinAlgError("Singular matrix")
    return x


@jit
def slogdet(a):
    """``np.linalg.slogdet`` of a 2-d a: (sign, log|det|), (0, -inf) when singular."""
    n = a.shape[0]
    if n > LU_LIMIT:
        return np.linalg.slogdet(a)
    if a.shape[1] != n:
        raise ValueError("slogdet: a must be square")
    u, sign, singular = eliminate(a, np.empty((n, 0), dtype=a.dtype))
    if singular:
        return 0.0 * sign, -np.inf
    total = 0.0
    for i in range(n):
        d = u[i, i]
        if d < 0:
            sign = -sign
        total += np.log(abs(d))
    return sign, total


@jit
def det(a):
    """``np.linalg.det`` of a 2-d a."""
    n = a.shape[0]
    if n > LU_LIMIT:
        return np.linalg.det(a)
    if a.shape[1] != n:
        raise ValueError("det: a must be square")
    u, total, _ = eliminate(a, np.empty((n, 0), dtype=a.dtype))
    for i in range(n):
        total *= u[i, i]
    return total
