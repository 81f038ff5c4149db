"""Inverse, determinants and solves (numpy.linalg's, scipy.linalg's triangular and Cholesky
solves), batched over leading axes as numpy.linalg."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Apply, Op, Variable, describe
from symscan.graph.type import TensorType
from symscan.tensor.linalg.checks import (
    _batched,
    _float_input,
    _linalg_error,
    _result_dtype,
    _scipy_linalg,
    _solve_shape,
    _square_matrix,
)
from symscan.tensor.shape import dimshuffle, reshape


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




# ---------------------------------------------------------------------------- least squares, tensors
@dataclass(frozen=True)
class Lstsq(Op):
    """``numpy.linalg.lstsq(a, b, rcond)``: (x, residuals, rank, s) for one m x n matrix a (numpy
    does not batch it). ``residuals`` holds the squared 2-norm of each column of b - a x when a
    has full rank n < m, and is empty otherwise: its length is known only at run time. ``rank``
    is int32, as numpy's; ``rcond`` None is numpy's default (eps * max(m, n))."""

    rcond: float | None = None

    def make_node(self, a, b) -> Apply:
        a = _float_input(a, "lstsq", "a")
        b = _float_input(b, "lstsq", "b", min_ndim=1)
        if a.ndim != 2 or b.ndim > 2:
            raise ValueError(f"lstsq: a must be a matrix and b a vector or a matrix (numpy's lstsq has no batch), "
                             f"got {describe(a)} and {describe(b)}; use a scan over the batch")
        m, n = a.type.shape
        if m is not None and b.type.shape[0] is not None and m != b.type.shape[0]:
            raise ValueError(f"lstsq: b has {b.type.shape[0]} rows but a has {m} ({describe(a)}, {describe(b)}); "
                             "b must have as many rows as a")
        dtype = _result_dtype(a, b)
        k = min(m, n) if m is not None and n is not None else None
        x = TensorType(dtype, (n,) + b.type.shape[1:])
        return Apply(self, [a, b], [x, TensorType(dtype, (None,)), TensorType("int32", ()), TensorType(dtype, (k,))])

    def perform(self, node, inputs):
        a, b = inputs
        try:
            x, residuals, rank, s = np.linalg.lstsq(a, b, rcond=self.rcond)
        except np.linalg.LinAlgError as err:
            raise _linalg_error("lstsq", f"a ({describe(node.inputs[0])})", "not decomposable (the SVD did not "
                                "converge)", err) from None
        dtypes = [v.dtype for v in node.outputs]
        return [np.asarray(v, dtype=d) for v, d in zip((x, residuals, rank, s), dtypes)]


def lstsq(a, b, rcond: float | None = None) -> tuple[Variable, Variable, Variable, Variable]:
    """(x, residuals, rank, s): the least-squares solution of a @ x == b (``numpy.linalg.lstsq``)."""
    x, residuals, rank, s = Lstsq(None if rcond is None else float(rcond))(a, b)
    return x, residuals, rank, s


def _static_product(lengths: tuple) -> int | None:
    return None if None in lengths else int(np.prod(lengths, dtype=np.int64))


def _lengths(x: Variable, axes: range) -> list:
    return [x.type.shape[i] if x.type.shape[i] is not None else x.shape[i] for i in axes]


def _product(lengths: list):
    result = 1
    for n in lengths:
        result = result * n
    return result


def tensorinv(a, ind: int = 2) -> Variable:
    """``numpy.linalg.tensorinv``: the inverse of a as a map from its last ``a.ndim - ind`` axes to
    its first ``ind`` (the product of each group's lengths must agree); shape
    ``a.shape[ind:] + a.shape[:ind]``. A reshape, ``inv`` and a reshape back."""
    a = _float_input(a, "tensorinv", "a", min_ndim=1)
    if isinstance(ind, bool) or not isinstance(ind, (int, np.integer)) or not 0 < ind < max(a.ndim, 1):
        raise ValueError(f"tensorinv: ind must be an int in [1, {a.ndim}) for {a.ndim}-d {describe(a)}, got {ind!r}")
    rows, cols = _static_product(a.type.shape[:ind]), _static_product(a.type.shape[ind:])
    if rows is not None and cols is not None and rows != cols:
        raise ValueError(f"tensorinv: the first {ind} axes of {describe(a)} hold {rows} entries and the others "
                         f"{cols}; they must hold as many (a square matrix once reshaped)")
    first, rest = _lengths(a, range(ind)), _lengths(a, range(ind, a.ndim))
    inverse = inv(reshape(a, [_product(first), _product(rest)]))
    return reshape(inverse, rest + first)


def tensorsolve(a, b, axes=None) -> Variable:
    """``numpy.linalg.tensorsolve``: x with ``tensordot(a, x, x.ndim) == b``; a's first ``b.ndim``
    axes match b and the rest are x's shape (``axes``: a's axes moved to the end first)."""
    a = _float_input(a, "tensorsolve", "a", min_ndim=1)
    b = _float_input(b, "tensorsolve", "b", min_ndim=0)
    if axes is not None:
        moved = [int(ax) % a.ndim for ax in axes]
        a = dimshuffle(a, [i for i in range(a.ndim) if i not in moved] + moved)
    if b.ndim >= a.ndim:
        raise ValueError(f"tensorsolve: a ({describe(a)}) must have more axes than b ({describe(b)}); a's first "
                         "b.ndim axes match b, the others are the solution's")
    for i, (n_a, n_b) in enumerate(zip(a.type.shape, b.type.shape)):
        if n_a is not None and n_b is not None and n_a != n_b:
            raise ValueError(f"tensorsolve: axis {i} of a has length {n_a} but b's has {n_b} ({describe(a)}, "
                             f"{describe(b)}); a's first b.ndim axes must be b's shape")
    rows, cols = _static_product(a.type.shape[:b.ndim]), _static_product(a.type.shape[b.ndim:])
    if rows is not None and cols is not None and rows != cols:
        raise ValueError(f"tensorsolve: b holds {rows} entries but the solution would hold {cols} ({describe(a)}); "
                         "the problem must be square once reshaped")
    solution = _lengths(a, range(b.ndim, a.ndim))
    size = _product(solution)
    x = solve(reshape(a, [size, size]), reshape(b, [size]))
    return reshape(x, solution)
