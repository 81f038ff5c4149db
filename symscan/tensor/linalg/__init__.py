"""Linear algebra with numpy.linalg's and scipy.linalg's names and batching.

Matrices are the last two axes; leading axes are a batch and broadcast as numpy.linalg does.
One module per family: ``solvers`` (inv, det, slogdet, solve, cholesky, solve_triangular,
cho_solve, lstsq, tensorinv, tensorsolve), ``decompositions`` (eigh, eigvalsh, eig, qr, svd,
pinv), ``matrix_functions`` (expm) and ``products`` (diagonal, trace, diag, kron, matrix_power,
norm: compositions of other ops). ``checks`` holds the build-time checks and errors they share.
"""

from symscan.tensor.linalg.decompositions import QR, SVD, Eig, Eigh, Eigvalsh, Pinv, eig, eigh, eigvalsh, pinv, qr, svd
from symscan.tensor.linalg.matrix_functions import Expm, expm
from symscan.tensor.linalg.products import diag, diagonal, kron, matrix_power, norm, trace
from symscan.tensor.linalg.solvers import (
    TRANS,
    Cholesky,
    ChoSolve,
    Det,
    Lstsq,
    MatrixInverse,
    SlogDet,
    Solve,
    SolveTriangular,
    cho_solve,
    cholesky,
    det,
    inv,
    lstsq,
    slogdet,
    solve,
    solve_triangular,
    tensorinv,
    tensorsolve,
)
