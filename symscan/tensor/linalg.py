"""Linear algebra with numpy.linalg's names and batching: ``inv``, ``det``, ``slogdet``,
``solve``, ``cholesky``, ``pinv``, the decompositions ``eigh``, ``eigvalsh``, ``qr`` and ``svd``, and scipy.linalg's
``solve_triangular`` and ``cho_solve`` (ops);
``diagonal``, ``trace``, ``diag``, ``kron``, ``matrix_power`` and ``norm`` (built from other ops).

Matrices are the last two axes; leading axes are a batch and broadcast as numpy.linalg does.
The ops' inputs must be float32/float64 (LAPACK's types; numpy would silently compute integers in
float64, which hides a dtype the user did not mean), square where the maths needs it: both
are checked when the graph is built. A singular or non-positive-definite matrix raises
``numpy.linalg.LinAlgError`` naming the op and its input.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Apply, Op, Variable, describe
from symscan.graph.type import TensorType
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.creation import arange, eye, ones_like, zeros
from symscan.tensor.elemwise import abs as absolute
from symscan.tensor.elemwise import cast, maximum, minimum, neq, sqrt
from symscan.tensor.math import matmul
from symscan.tensor.math import max as reduce_max
from symscan.tensor.math import min as reduce_min
from symscan.tensor.math import sum as reduce_sum
from symscan.tensor.shape import dimshuffle, reshape
from symscan.tensor.subtensor import set_subtensor

FLOATS = ("float32", "float64")


# ---------------------------------------------------------------------------- build-time checks
def _float_input(x, opname: str, role: str, min_ndim: int = 2) -> Variable:
    """``x`` as a float tensor with at least ``min_ndim`` axes, or an error saying how to fix it."""
    x = as_tensor_variable(x)
    if x.dtype not in FLOATS:
        raise TypeError(f"{opname}: {role} must be float32 or float64, got {describe(x)}; "
                        f"cast it with .astype('float64')")
    if x.ndim < min_ndim:
        what = "a matrix (or a stack of matrices)" if min_ndim == 2 else f"at least {min_ndim}-d"
        raise ValueError(f"{opname}: {role} must be {what}, got {x.ndim}-d {describe(x)}; "
                         "reshape it, or use T.diag / a 1x1 matrix for a scalar")
    return x


def _square(x: Variable, opname: str, role: str) -> None:
    rows, cols = x.type.shape[-2:]
    if rows is not None and cols is not None and rows != cols:
        raise ValueError(f"{opname}: {role} must be square in its last two axes, got shape "
                         f"{x.type.shape} ({describe(x)}); use a square matrix, or pinv for any shape")


def _square_matrix(x, opname: str, role: str = "a") -> Variable:
    x = _float_input(x, opname, role)
    _square(x, opname, role)
    return x


def _known(*lengths: int | None) -> int | None:
    return next((n for n in lengths if n is not None), None)


def _batch(sa: tuple, sb: tuple, opname: str, a: Variable, b: Variable) -> tuple:
    """The broadcast of two batch shapes (numpy's rules), checked where both lengths are known."""
    n = max(len(sa), len(sb))
    sa, sb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    out = []
    for x, y in zip(sa, sb):
        if x is not None and y is not None and x != 1 and y != 1 and x != y:
            raise ValueError(f"{opname}: the batch shapes of {describe(a)} and {describe(b)} do not broadcast "
                             f"({x} vs {y}); give them equal leading axes or length-1 ones")
        out.append(y if x == 1 else x if y == 1 else _known(x, y))
    return tuple(out)


def _check_rows(n_a: int | None, n_b: int | None, opname: str, a: Variable, b: Variable) -> None:
    if n_a is not None and n_b is not None and n_a != n_b:
        raise ValueError(f"{opname}: b has {n_b} rows but a is {n_a}x{n_a} ({describe(a)}, {describe(b)}); "
                         "b must have as many rows as a")


def _solve_shape(a: Variable, b: Variable, opname: str) -> tuple:
    """numpy.linalg.solve's rule (numpy >= 2): a 1-d b is one vector, otherwise b is a (stack of)
    matrices whose batch broadcasts with a's."""
    if b.ndim == 1:
        _check_rows(a.type.shape[-1], b.type.shape[0], opname, a, b)
        return a.type.shape[:-1]
    _check_rows(a.type.shape[-1], b.type.shape[-2], opname, a, b)
    rows = _known(a.type.shape[-2], a.type.shape[-1], b.type.shape[-2])
    return _batch(a.type.shape[:-2], b.type.shape[:-2], opname, a, b) + (rows, b.type.shape[-1])


def _result_dtype(*inputs: Variable) -> str:
    return np.result_type(*[v.dtype for v in inputs]).name


# ---------------------------------------------------------------------------- run-time errors
def _linalg_error(opname: str, role: str, what: str, err: Exception) -> np.linalg.LinAlgError:
    return np.linalg.LinAlgError(f"{opname}: {role} is {what} ({err}); check the input, or add a small "
                                 "multiple of the identity to regularise it")


def _scipy_linalg(opname: str):
    """scipy.linalg, imported on first use: symscan's core needs only numpy."""
    try:
        import scipy.linalg
    except ImportError as err:
        raise ImportError(f"{opname} needs scipy, which is not installed; install it with "
                          "`pip install symscan[numba]` (or `pip install scipy`)") from err
    return scipy.linalg


def _batched(fn, a: np.ndarray, b: np.ndarray, b_is_vector: bool) -> np.ndarray:
    """``fn(a2d, b)`` over numpy.linalg-style broadcast batches (scipy < 1.15 does not batch)."""
    if a.ndim == 2 and (b_is_vector or b.ndim == 2):
        return fn(a, b)
    core_b = 1 if b_is_vector else 2
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-core_b] if not b_is_vector else ())
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = b if b_is_vector else np.broadcast_to(b, batch + b.shape[-2:])
    first = None
    for index in np.ndindex(*batch):
        x = fn(a[index], b if b_is_vector else b[index])
        if first is None:
            first = np.empty(batch + x.shape, dtype=x.dtype)
        first[index] = x
    if first is None:  # an empty batch
        out_dtype = np.result_type(a.dtype, b.dtype)
        return np.empty(batch + (a.shape[-1],) + (() if b_is_vector else b.shape[-1:]), dtype=out_dtype)
    return first


# ---------------------------------------------------------------------------- ops
@dataclass(frozen=True)
class MatrixInverse(Op):
    """``numpy.linalg.inv`` of a (stack of) square matrices."""

    def make_node(self, a) -> Apply:
        a = _square_matrix(a, "inv")
        return Apply(self, [a], [TensorType(a.dtype, a.type.shape)])

    def perform(self, node, inputs):
        try:
            return [np.linalg.inv(inputs[0])]
        except np.linalg.LinAlgError as err:
            raise _linalg_error("inv", f"a ({describe(node.inputs[0])})", "singular", err) from None


@dataclass(frozen=True)
class Det(Op):
    """``numpy.linalg.det``: one determinant per matrix of the batch."""

    def make_node(self, a) -> Apply:
        a = _square_matrix(a, "det")
        return Apply(self, [a], [TensorType(a.dtype, a.type.shape[:-2])])

    def perform(self, node, inputs):
        return [np.asarray(np.linalg.det(inputs[0]))]


@dataclass(frozen=True)
class SlogDet(Op):
    """``numpy.linalg.slogdet``: (sign, log|det|), which do not overflow as det does."""

    def make_node(self, a) -> Apply:
        a = _square_matrix(a, "slogdet")
        out = TensorType(a.dtype, a.type.shape[:-2])
        return Apply(self, [a], [out, TensorType(a.dtype, a.type.shape[:-2])])

    def perform(self, node, inputs):
        sign, logabsdet = np.linalg.slogdet(inputs[0])
        return [np.asarray(sign), np.asarray(logabsdet)]


@dataclass(frozen=True)
class Solve(Op):
    """``numpy.linalg.solve(a, b)``: x with a @ x == b; a 1-d b is a vector (numpy >= 2)."""

    def make_node(self, a, b) -> Apply:
        a = _square_matrix(a, "solve")
        b = _float_input(b, "solve", "b", min_ndim=1)
        return Apply(self, [a, b], [TensorType(_result_dtype(a, b), _solve_shape(a, b, "solve"))])

    def perform(self, node, inputs):
        a, b = inputs
        try:
            return [np.linalg.solve(a, b).astype(node.outputs[0].dtype, copy=False)]
        except np.linalg.LinAlgError as err:
            raise _linalg_error("solve", f"a ({describe(node.inputs[0])})", "singular", err) from None


@dataclass(frozen=True)
class Cholesky(Op):
    """The Cholesky factor of a (stack of) symmetric positive-definite matrices: L with
    a = L L^T (``lower``, read from a's lower triangle), or U = L^T (read from its upper one)."""

    lower: bool = True

    def make_node(self, a) -> Apply:
        a = _square_matrix(a, "cholesky")
        return Apply(self, [a], [TensorType(a.dtype, a.type.shape)])

    def perform(self, node, inputs):
        (a,) = inputs
        try:
            if self.lower:
                return [np.linalg.cholesky(a)]
            return [np.swapaxes(np.linalg.cholesky(np.swapaxes(a, -1, -2)), -1, -2)]
        except np.linalg.LinAlgError as err:
            raise _linalg_error("cholesky", f"a ({describe(node.inputs[0])})", "not positive definite",
                                err) from None


@dataclass(frozen=True)
class SolveTriangular(Op):
    """``scipy.linalg.solve_triangular``: only a's ``lower`` (or upper) triangle is read; ``trans``
    1 solves a^T x = b; ``unit_diagonal`` takes a's diagonal as ones. Batched as ``solve``."""

    lower: bool = False
    trans: int = 0
    unit_diagonal: bool = False

    def make_node(self, a, b) -> Apply:
        a = _square_matrix(a, "solve_triangular")
        b = _float_input(b, "solve_triangular", "b", min_ndim=1)
        shape = _solve_shape(a, b, "solve_triangular")
        return Apply(self, [a, b], [TensorType(_result_dtype(a, b), shape)])

    def perform(self, node, inputs):
        linalg = _scipy_linalg("solve_triangular")
        a, b = inputs

        def solve(a2, b2):
            return linalg.solve_triangular(a2, b2, lower=self.lower, trans=self.trans,
                                           unit_diagonal=self.unit_diagonal)

        try:
            x = _batched(solve, a, b, b_is_vector=b.ndim == 1)
        except np.linalg.LinAlgError as err:
            raise _linalg_error("solve_triangular", f"a ({describe(node.inputs[0])})", "singular", err) from None
        return [np.asarray(x, dtype=node.outputs[0].dtype)]


@dataclass(frozen=True)
class ChoSolve(Op):
    """``scipy.linalg.cho_solve((c, lower), b)``: x with (c c^T) x = b for a lower factor c
    (c^T c for an upper one); only c's triangle is read."""

    lower: bool = True

    def make_node(self, c, b) -> Apply:
        c = _square_matrix(c, "cho_solve", "c")
        b = _float_input(b, "cho_solve", "b", min_ndim=1)
        return Apply(self, [c, b], [TensorType(_result_dtype(c, b), _solve_shape(c, b, "cho_solve"))])

    def perform(self, node, inputs):
        linalg = _scipy_linalg("cho_solve")
        c, b = inputs

        def solve(c2, b2):
            return linalg.cho_solve((c2, self.lower), b2)

        try:
            x = _batched(solve, c, b, b_is_vector=b.ndim == 1)
        except np.linalg.LinAlgError as err:
            raise _linalg_error("cho_solve", f"c ({describe(node.inputs[0])})", "singular", err) from None
        return [np.asarray(x, dtype=node.outputs[0].dtype)]


# ---------------------------------------------------------------------------- decompositions
UPLOS = ("L", "U")
QR_MODES = ("reduced", "complete", "r")


def _uplo(uplo: str, opname: str) -> str:
    if uplo not in UPLOS:
        raise ValueError(f"{opname}: UPLO must be 'L' or 'U' (the triangle of a that is read), got {uplo!r}")
    return uplo


def _rows_cols(a: Variable) -> tuple:
    """(m, n, min(m, n)) of a's matrices, each None where not known when the graph is built."""
    m, n = a.type.shape[-2:]
    return m, n, (min(m, n) if m is not None and n is not None else 0 if 0 in (m, n) else None)


def _did_not_converge(opname: str, node, err: Exception) -> np.linalg.LinAlgError:
    return np.linalg.LinAlgError(f"{opname}: LAPACK did not converge on a ({describe(node.inputs[0])}) ({err}); "
                                 "check the input for inf/nan or extreme scaling")


@dataclass(frozen=True)
class Eigh(Op):
    """``numpy.linalg.eigh``: ascending eigenvalues w and orthonormal eigenvectors v (columns) of
    a (stack of) symmetric matrices; only the ``UPLO`` triangle of a is read."""

    UPLO: str = "L"

    def make_node(self, a) -> Apply:
        a = _square_matrix(a, "eigh")
        n = _known(*a.type.shape[-2:])
        batch = a.type.shape[:-2]
        return Apply(self, [a], [TensorType(a.dtype, batch + (n,)), TensorType(a.dtype, batch + (n, n))])

    def perform(self, node, inputs):
        try:
            w, v = np.linalg.eigh(inputs[0], UPLO=self.UPLO)
        except np.linalg.LinAlgError as err:
            raise _did_not_converge("eigh", node, err) from None
        return [w, v]


@dataclass(frozen=True)
class Eigvalsh(Op):
    """``numpy.linalg.eigvalsh``: the ascending eigenvalues of a (stack of) symmetric matrices."""

    UPLO: str = "L"

    def make_node(self, a) -> Apply:
        a = _square_matrix(a, "eigvalsh")
        return Apply(self, [a], [TensorType(a.dtype, a.type.shape[:-2] + (_known(*a.type.shape[-2:]),))])

    def perform(self, node, inputs):
        try:
            return [np.linalg.eigvalsh(inputs[0], UPLO=self.UPLO)]
        except np.linalg.LinAlgError as err:
            raise _did_not_converge("eigvalsh", node, err) from None


@dataclass(frozen=True)
class QR(Op):
    """``numpy.linalg.qr``: a = q r with orthonormal columns q and upper-triangular r; ``mode``
    "reduced" (q m x k, r k x n, k = min(m, n)), "complete" (q m x m, r m x n) or "r" (r alone)."""

    mode: str = "reduced"

    def make_node(self, a) -> Apply:
        a = _float_input(a, "qr", "a")
        m, n, k = _rows_cols(a)
        batch = a.type.shape[:-2]
        if self.mode == "r":
            return Apply(self, [a], [TensorType(a.dtype, batch + (k, n))])
        q_cols = m if self.mode == "complete" else k
        r_rows = m if self.mode == "complete" else k
        return Apply(self, [a], [TensorType(a.dtype, batch + (m, q_cols)), TensorType(a.dtype, batch + (r_rows, n))])

    def perform(self, node, inputs):
        result = np.linalg.qr(inputs[0], mode=self.mode)
        return [result] if self.mode == "r" else list(result)


@dataclass(frozen=True)
class SVD(Op):
    """``numpy.linalg.svd``: a = u diag(s) vh with descending s; u m x m and vh n x n with
    ``full_matrices``, else m x k and k x n (k = min(m, n)); s alone without ``compute_uv``."""

    full_matrices: bool = True
    compute_uv: bool = True

    def make_node(self, a) -> Apply:
        a = _float_input(a, "svd", "a")
        m, n, k = _rows_cols(a)
        batch = a.type.shape[:-2]
        s = TensorType(a.dtype, batch + (k,))
        if not self.compute_uv:
            return Apply(self, [a], [s])
        u_cols, vh_rows = (m, n) if self.full_matrices else (k, k)
        u, vh = TensorType(a.dtype, batch + (m, u_cols)), TensorType(a.dtype, batch + (vh_rows, n))
        return Apply(self, [a], [u, s, vh])

    def perform(self, node, inputs):
        try:
            result = np.linalg.svd(inputs[0], full_matrices=self.full_matrices, compute_uv=self.compute_uv)
        except np.linalg.LinAlgError as err:
            raise _did_not_converge("svd", node, err) from None
        return list(result) if self.compute_uv else [result]


@dataclass(frozen=True)
class Pinv(Op):
    """``numpy.linalg.pinv``: the Moore-Penrose pseudo-inverse (n x m for an m x n a), singular
    values below max(m, n) * eps * the largest taken as zero (numpy's default)."""

    def make_node(self, a) -> Apply:
        a = _float_input(a, "pinv", "a")
        m, n = a.type.shape[-2:]
        return Apply(self, [a], [TensorType(a.dtype, a.type.shape[:-2] + (n, m))])

    def perform(self, node, inputs):
        try:
            return [np.linalg.pinv(inputs[0])]
        except np.linalg.LinAlgError as err:
            raise _did_not_converge("pinv", node, err) from None


# ---------------------------------------------------------------------------- functions
def inv(a) -> Variable:
    """The inverse of a (stack of) square matrices (``numpy.linalg.inv``)."""
    return MatrixInverse()(a)


def det(a) -> Variable:
    """The determinant of a (stack of) square matrices (``numpy.linalg.det``)."""
    return Det()(a)


def slogdet(a) -> tuple[Variable, Variable]:
    """(sign, log|det|) of a (stack of) square matrices (``numpy.linalg.slogdet``)."""
    sign, logabsdet = SlogDet()(a)
    return sign, logabsdet


def solve(a, b) -> Variable:
    """x with a @ x == b (``numpy.linalg.solve``; a 1-d b is a vector)."""
    return Solve()(a, b)


def cholesky(a, lower: bool = True) -> Variable:
    """The Cholesky factor: lower L with a = L L^T, or with ``lower=False`` upper U = L^T."""
    return Cholesky(bool(lower))(a)


TRANS = {0: 0, 1: 1, 2: 1, "N": 0, "T": 1, "C": 1}
"""scipy's ``trans`` spellings; for real matrices "C" (conjugate transpose) is "T"."""


def solve_triangular(a, b, lower: bool = False, trans: int | str = 0, unit_diagonal: bool = False) -> Variable:
    """x with a @ x == b for a triangular a (``scipy.linalg.solve_triangular``)."""
    if trans not in TRANS:
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    return SolveTriangular(bool(lower), TRANS[trans], bool(unit_diagonal))(a, b)


def cho_solve(c_and_lower, b) -> Variable:
    """x with a @ x == b given a's Cholesky factor (``scipy.linalg.cho_solve((c, lower), b)``)."""
    try:
        c, lower = c_and_lower
    except (TypeError, ValueError):
        raise TypeError("cho_solve: the first argument must be the pair (c, lower), as scipy's; "
                        "write cho_solve((c, True), b)") from None
    return ChoSolve(bool(lower))(c, b)



def eigh(a, UPLO: str = "L") -> tuple[Variable, Variable]:
    """(w, v): ascending eigenvalues and eigenvector columns of a (stack of) symmetric matrices
    (``numpy.linalg.eigh``; only the UPLO triangle is read)."""
    w, v = Eigh(_uplo(UPLO, "eigh"))(a)
    return w, v


def eigvalsh(a, UPLO: str = "L") -> Variable:
    """The ascending eigenvalues of a (stack of) symmetric matrices (``numpy.linalg.eigvalsh``)."""
    return Eigvalsh(_uplo(UPLO, "eigvalsh"))(a)


def qr(a, mode: str = "reduced"):
    """(q, r) with a = q @ r (``numpy.linalg.qr``); r alone for ``mode="r"``."""
    if mode not in QR_MODES:
        raise ValueError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r} ('raw' and the "
                         "deprecated modes are not in symscan)")
    out = QR(mode)(a)
    return out if mode == "r" else tuple(out)


def svd(a, full_matrices: bool = True, compute_uv: bool = True):
    """(u, s, vh) with a = u @ diag(s) @ vh (``numpy.linalg.svd``); s alone without ``compute_uv``."""
    out = SVD(bool(full_matrices), bool(compute_uv))(a)
    return tuple(out) if compute_uv else out


def pinv(a) -> Variable:
    """The Moore-Penrose pseudo-inverse of a (stack of) matrices (``numpy.linalg.pinv``)."""
    return Pinv()(a)

# ---------------------------------------------------------------------------- built from other ops
# These are compositions of indexing, products and reductions: every backend (numba, ONNX
# included) and every gradient already exists for their parts, so they need no op of their own.
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
