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


