"""Decompositions: eigh, eigvalsh (with scipy's generalized form), eig, qr, svd and pinv (numpy.linalg's),
batched over leading axes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Apply, Op, Variable
from symscan.graph.type import TensorType
from symscan.tensor.creation import arange, zeros_like
from symscan.tensor.elemwise import ge, gt, le, lt, switch
from symscan.tensor.linalg.checks import (
    QR_MODES,
    _did_not_converge,
    _float_input,
    _known,
    _rows_cols,
    _square_matrix,
    _uplo,
)
from symscan.tensor.linalg.solvers import cholesky, solve
from symscan.tensor.shape import dimshuffle


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

COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}


@dataclass(frozen=True)
class Eig(Op):
    """``numpy.linalg.eig`` of a (stack of) general square matrices: eigenvalues w and eigenvector
    columns v (unit length, in LAPACK's order). Always complex (complex64 for float32, complex128
    for float64): numpy returns real arrays when every eigenvalue happens to be real, a dtype that
    depends on the values, which a graph's types cannot."""

    def make_node(self, a) -> Apply:
        a = _square_matrix(a, "eig")
        n = _known(*a.type.shape[-2:])
        batch, dtype = a.type.shape[:-2], COMPLEX_OF[a.dtype]
        return Apply(self, [a], [TensorType(dtype, batch + (n,)), TensorType(dtype, batch + (n, n))])

    def perform(self, node, inputs):
        try:
            w, v = np.linalg.eig(inputs[0])
        except np.linalg.LinAlgError as err:
            raise _did_not_converge("eig", node, err) from None
        dtype = node.outputs[0].dtype
        return [w.astype(dtype, copy=False), v.astype(dtype, copy=False)]



def eigh(a, UPLO: str = "L") -> tuple[Variable, Variable]:
    """(w, v): ascending eigenvalues and eigenvector columns of a (stack of) symmetric matrices
    (``numpy.linalg.eigh``; only the UPLO triangle is read)."""
    w, v = Eigh(_uplo(UPLO, "eigh"))(a)
    return w, v


def eigvalsh(a, b=None, UPLO: str = "L") -> Variable:
    """The ascending eigenvalues of a (stack of) symmetric matrices (``numpy.linalg.eigvalsh``);
    with ``b`` (symmetric positive definite), scipy's generalized problem a v = w b v. A string
    in b's place is numpy's positional UPLO (``eigvalsh(a, "U")``). Only the UPLO triangles of
    a and b are read."""
    if isinstance(b, str):
        b, UPLO = None, b
    UPLO = _uplo(UPLO, "eigvalsh")
    if b is None:
        return Eigvalsh(UPLO)(a)
    return _generalized_eigvalsh(a, b, UPLO == "L")


def _generalized_eigvalsh(a, b, lower: bool) -> Variable:
    """eigvalsh(L^-1 a L^-T) with b = L L^T, LAPACK's own reduction (sygst), written with ops
    that have gradients and numba forms: a general solve of the triangular L keeps the loop in
    numba's kernel (scipy's triangular solve is not compiled)."""
    a = _square_matrix(a, "eigvalsh")
    b = _square_matrix(b, "eigvalsh", "b")
    chol = cholesky(b, lower=lower)
    factor = chol if lower else swap_last(chol)
    half = solve(factor, _symmetric_from(a, lower))
    return Eigvalsh("L")(solve(factor, swap_last(half)))


def swap_last(x: Variable) -> Variable:
    """x with its last two axes swapped."""
    return dimshuffle(x, list(range(x.ndim - 2)) + [x.ndim - 1, x.ndim - 2])


def _symmetric_from(a: Variable, lower: bool) -> Variable:
    """The symmetric matrix whose lower (or upper) triangle is a's."""
    n = a.shape[-1]
    rows, cols = dimshuffle(arange(n), [0, "x"]), dimshuffle(arange(n), ["x", 0])
    kept = switch(ge(rows, cols) if lower else le(rows, cols), a, zeros_like(a))
    strict = switch(gt(rows, cols) if lower else lt(rows, cols), a, zeros_like(a))
    return kept + swap_last(strict)


def eig(a) -> tuple[Variable, Variable]:
    """(w, v): the eigenvalues and eigenvector columns of a (stack of) general square matrices
    (``numpy.linalg.eig``), always complex. No gradient (symscan's gradients are real): for a
    symmetric matrix use eigh, which has one."""
    w, v = Eig()(a)
    return w, v


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
