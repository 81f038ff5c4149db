"""Decompositions: eigh, eigvalsh, qr, svd and pinv (numpy.linalg's), batched over leading axes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Apply, Op, Variable
from symscan.graph.type import TensorType
from symscan.tensor.linalg.checks import (
    QR_MODES,
    _did_not_converge,
    _float_input,
    _known,
    _rows_cols,
    _square_matrix,
    _uplo,
)


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
