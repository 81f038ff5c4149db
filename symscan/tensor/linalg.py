"""Linear algebra with numpy.linalg's names and batching: ``inv``, ``det``, ``slogdet``,
``solve``, ``cholesky``, and scipy.linalg's ``solve_triangular`` and ``cho_solve``.

Matrices are the last two axes; leading axes are a batch and broadcast as numpy.linalg does.
Inputs must be float32/float64 (LAPACK's types; numpy would silently compute integers in
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
                         f"{x.type.shape} ({describe(x)}); use a square matrix (lstsq/pinv are not in symscan yet)")


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
