"""Linear algebra, sorting and arg-reductions in mode jax (``jax.numpy.linalg``, ``jax.scipy``).

numpy raises ``LinAlgError`` for a singular matrix (inv, solve: an exact zero pivot of the LU
factorisation; solve_triangular: a zero on the diagonal) or one that is not positive definite
(cholesky: NaNs from finite input in XLA); XLA returns infs and NaNs instead. These conditions
are checked after the call (``graph.Deferred``) and raise the error mode py gives. Like
LAPACK, cholesky and eigh read one triangle only (JAX would average the matrix with its
transpose first).
"""

from __future__ import annotations

import numpy as np

from symscan.backends.jax.graph import Deferred
from symscan.backends.jax.ops import jax_lowers
from symscan.graph.basic import describe
from symscan.tensor.linalg import (
    QR,
    SVD,
    Cholesky,
    ChoSolve,
    Det,
    Eigh,
    Eigvalsh,
    Expm,
    MatrixInverse,
    Pinv,
    SlogDet,
    Solve,
    SolveTriangular,
)
from symscan.tensor.math import ArgReduce
from symscan.tensor.sort import ArgSort, Sort


def _raise_after(trace, node, name: str, what: str, holds) -> None:
    message = (f"{name}: a ({describe(node.inputs[0])}) is {what}; check the input, or add a small multiple of "
               "the identity to regularise it")
    trace.deferred.append(Deferred(message, np.linalg.LinAlgError, [holds]))


def _diagonal(a):
    """The last two axes' diagonal, branch-free (``jnp.diagonal`` lowers to a conditional on the
    platform, one more program for XLA to compile per check)."""
    import jax.numpy as jnp

    return jnp.sum(jnp.where(jnp.eye(a.shape[-1], dtype=bool), a, 0), axis=-1)


def _nonsingular_lu(trace, node, name: str, a) -> tuple:
    """a's LU factorisation (lu, permutation), with numpy's LinAlgError where it finds an
    exact zero pivot (as LAPACK's getrf does). inv and solve reuse it: one factorisation."""
    from jax import lax

    lu, _, permutation = lax.linalg.lu(a)
    _raise_after(trace, node, name, "singular", (_diagonal(lu) != 0).all())
    return lu, permutation


def _lu_solve(lu, permutation, b):
    """``solve`` from a's factorisation, b as numpy's solve reads it (``_batched``): the rows
    permuted, then the two triangular solves."""
    import jax.numpy as jnp
    from jax import lax

    def solve(lu2, p2, b2):
        rows = b2[p2] if b2.ndim == 2 else b2[p2][:, None]
        rows = lax.linalg.triangular_solve(lu2, rows, left_side=True, lower=True, unit_diagonal=True)
        rows = lax.linalg.triangular_solve(lu2, rows, left_side=True, lower=False)
        return rows if b2.ndim == 2 else rows[:, 0]

    signature = "(n,n),(n),(n)->(n)" if b.ndim == 1 else "(n,n),(n),(n,k)->(n,k)"
    return jnp.vectorize(solve, signature=signature)(lu, permutation, b)


@jax_lowers(MatrixInverse)
def _inv(node, inputs, trace):
    import jax.numpy as jnp

    a = jnp.asarray(inputs[0]).astype(node.outputs[0].dtype)
    lu, permutation = _nonsingular_lu(trace, node, "inv", a)
    return [_lu_solve(lu, permutation, jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=lu.dtype), a.shape))]


@jax_lowers(Solve)
def _solve(node, inputs, trace):
    import jax.numpy as jnp

    a, b = (jnp.asarray(v).astype(node.outputs[0].dtype) for v in inputs)
    lu, permutation = _nonsingular_lu(trace, node, "solve", a)
    return [_lu_solve(lu, permutation, b)]


@jax_lowers(Cholesky)
def _cholesky(node, inputs, trace):
    import jax.numpy as jnp

    a = inputs[0] if node.op.lower else jnp.swapaxes(inputs[0], -1, -2)
    result = jnp.linalg.cholesky(a, symmetrize_input=False)
    _raise_after(trace, node, "cholesky", "not positive definite",
                 ~jnp.all(jnp.isfinite(a)) | ~jnp.any(jnp.isnan(result)))
    return [result if node.op.lower else jnp.swapaxes(result, -1, -2)]


def _batched(solve, a, b):
    """``solve`` over a's leading axes as numpy's batched solvers do: a 1-d b is one vector, a
    b of two or more axes a stack of matrices."""
    import jax.numpy as jnp

    signature = "(n,n),(n)->(n)" if b.ndim == 1 else "(n,n),(n,k)->(n,k)"
    return jnp.vectorize(solve, signature=signature)(a, b)


@jax_lowers(SolveTriangular)
def _solve_triangular(node, inputs, trace):
    import jax.numpy as jnp
    import jax.scipy.linalg as linalg

    op, (a, b) = node.op, inputs
    if not op.unit_diagonal:
        _raise_after(trace, node, "solve_triangular", "singular",
                     jnp.all(_diagonal(a) != 0))
    return [_batched(lambda a2, b2: linalg.solve_triangular(a2, b2, lower=op.lower, trans=op.trans,
                                                           unit_diagonal=op.unit_diagonal), a, b)]


@jax_lowers(ChoSolve)
def _cho_solve(node, inputs, trace):
    import jax.scipy.linalg as linalg

    return [_batched(lambda c2, b2: linalg.cho_solve((c2, node.op.lower), b2), *inputs)]


@jax_lowers(Det)
def _det(node, inputs, trace):
    import jax.numpy as jnp

    return [jnp.linalg.det(inputs[0])]


@jax_lowers(SlogDet)
def _slogdet(node, inputs, trace):
    import jax.numpy as jnp

    return list(jnp.linalg.slogdet(inputs[0]))


@jax_lowers(Eigh)
def _eigh(node, inputs, trace):
    import jax.numpy as jnp

    return list(jnp.linalg.eigh(inputs[0], UPLO=node.op.UPLO, symmetrize_input=False))


@jax_lowers(Eigvalsh)
def _eigvalsh(node, inputs, trace):
    import jax.numpy as jnp

    return [jnp.linalg.eigvalsh(inputs[0], UPLO=node.op.UPLO, symmetrize_input=False)]


@jax_lowers(QR)
def _qr(node, inputs, trace):
    import jax.numpy as jnp

    result = jnp.linalg.qr(inputs[0], mode=node.op.mode)
    return [result] if node.op.mode == "r" else list(result)


@jax_lowers(SVD)
def _svd(node, inputs, trace):
    import jax.numpy as jnp

    result = jnp.linalg.svd(inputs[0], full_matrices=node.op.full_matrices, compute_uv=node.op.compute_uv)
    return list(result) if node.op.compute_uv else [result]


@jax_lowers(Pinv)
def _pinv(node, inputs, trace):
    import jax.numpy as jnp

    return [jnp.linalg.pinv(inputs[0], rtol=1e-15)]  # numpy's rcond


@jax_lowers(Expm)
def _expm(node, inputs, trace):
    import jax.numpy as jnp
    import jax.scipy.linalg as linalg

    return [jnp.vectorize(linalg.expm, signature="(n,n)->(n,n)")(inputs[0])]


@jax_lowers(ArgReduce)
def _arg_reduce(node, inputs, trace):
    import jax.numpy as jnp

    fn = jnp.argmax if node.op.kind == "argmax" else jnp.argmin
    return [fn(inputs[0], axis=node.op.axis, keepdims=node.op.keepdims)]


@jax_lowers(Sort)
def _sort(node, inputs, trace):
    import jax.numpy as jnp

    return [jnp.sort(inputs[0], axis=node.op.axis, stable=True)]


@jax_lowers(ArgSort)
def _argsort(node, inputs, trace):
    import jax.numpy as jnp

    return [jnp.argsort(inputs[0], axis=node.op.axis, stable=True)]
