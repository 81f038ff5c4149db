"""The matrix exponential (``scipy.linalg.expm``), batched over leading axes.

One algorithm for every mode: the degree-13 Padé approximant with scaling and squaring
(Higham, "The scaling and squaring method for the matrix exponential revisited", 2005), computed
in float64 and returned in the input's dtype. ``pade_expm`` is written with the numpy calls
numba compiles, so a loop's kernel runs the same code as mode py, and scipy stays optional.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Apply, Op, Variable
from symscan.graph.type import TensorType
from symscan.tensor.linalg.checks import _square_matrix

PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
          10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
"""The coefficients of the degree-13 Padé approximant of exp."""

THETA13 = 5.371920351148152
"""The largest 1-norm for which Padé 13 is accurate to float64's unit roundoff (Higham's table)."""


def pade_expm(a: np.ndarray) -> np.ndarray:
    """expm of one float64 matrix: scale by 2^-s so that |a|_1 <= THETA13, Padé 13, square s times.
    (Plain numpy that numba compiles: ``symscan.backends.numba.linalg_kernels`` jits it.)"""
    n = a.shape[0]
    norm = np.max(np.sum(np.abs(a), axis=0)) if n else 0.0
    squarings = 0
    if norm > THETA13:
        squarings = int(np.ceil(np.log2(norm / THETA13)))
    a = a / 2.0 ** squarings
    b = PADE13
    ident = np.eye(n)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident
    r = np.linalg.solve(v - u, v + u)
    for _ in range(squarings):
        r = r @ r
    return r


def expm_batched(a: np.ndarray) -> np.ndarray:
    """``pade_expm`` over the leading axes, in float64, returned in a's dtype."""
    wide = np.asarray(a, dtype=np.float64)
    out = np.empty(wide.shape)
    for index in np.ndindex(*wide.shape[:-2]):
        out[index] = pade_expm(wide[index])
    return out.astype(a.dtype, copy=False)


@dataclass(frozen=True)
class Expm(Op):
    """``scipy.linalg.expm`` of a (stack of) square matrices: sum_k a^k / k!. A matrix with
    inf/nan gives nan (no error: the series has no singular case)."""

    def make_node(self, a) -> Apply:
        a = _square_matrix(a, "expm")
        return Apply(self, [a], [TensorType(a.dtype, a.type.shape)])

    def perform(self, node, inputs):
        with np.errstate(all="ignore"):
            return [expm_batched(inputs[0])]


def expm(a) -> Variable:
    """The matrix exponential of a (stack of) square matrices (``scipy.linalg.expm``)."""
    return Expm()(a)
