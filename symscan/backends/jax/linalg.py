"""Linear algebra, sorting and arg-reductions in mode jax (``jax.numpy.linalg``, ``jax.scipy``).

numpy raises ``LinAlgError`` for a singular matrix (inv, solve) or one that is not positive
definite (cholesky); XLA returns infs and nans instead. Such a result from finite inputs is
checked after the call (``graph.Deferred``) and raises the error mode py gives.
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


def _failed_when_finite(trace, node, name: str, what: str, inputs: list, result) -> None:
    """numpy's error, raised after the call where finite inputs gave a non-finite result."""
    import jax.numpy as jnp

    finite_in = jnp.all(jnp.stack([jnp.all(jnp.isfinite(v)) for v in inputs]))
    message = (f"{name}: a ({describe(node.inputs[0])}) is {what}; check the input, or add a small multiple of "
               "the identity to regularise it")
    trace.deferred.append(Deferred(message, np.linalg.LinAlgError, [~finite_in | jnp.all(jnp.isfinite(result))]))


@jax_lowers(MatrixInverse)
def _inv(node, inputs, trace):
    import jax.numpy as jnp

    result = jnp.linalg.inv(inputs[0])
    _failed_when_finite(trace, node, "inv", "singular", inputs, result)
    return [result]


@jax_lowers(Solve)
def _solve(node, inputs, trace):
    import jax.numpy as jnp

    result = jnp.linalg.solve(*inputs)
    _failed_when_finite(trace, node, "solve", "singular", inputs, result)
    return [result]


@jax_lowers(Cholesky)
def _cholesky(node, inputs, trace):
    import jax.numpy as jnp

    a = inputs[0] if node.op.lower else jnp.swapaxes(inputs[0], -1, -2)
    result = jnp.linalg.cholesky(a)
    _failed_when_finite(trace, node, "cholesky", "not positive definite", inputs, result)
    return [result if node.op.lower else jnp.swapaxes(result, -1, -2)]


@jax_lowers(SolveTriangular)
def _solve_triangular(node, inputs, trace):
    import jax.scipy.linalg as linalg

    op = node.op
    return [linalg.solve_triangular(*inputs, lower=op.lower, trans=op.trans, unit_diagonal=op.unit_diagonal)]


@jax_lowers(ChoSolve)
def _cho_solve(node, inputs, trace):
    import jax.scipy.linalg as linalg

    return [linalg.cho_solve((inputs[0], node.op.lower), inputs[1])]


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

    return list(jnp.linalg.eigh(inputs[0], UPLO=node.op.UPLO))


@jax_lowers(Eigvalsh)
def _eigvalsh(node, inputs, trace):
    import jax.numpy as jnp

    return [jnp.linalg.eigvalsh(inputs[0], UPLO=node.op.UPLO)]


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

    return [jnp.linalg.pinv(inputs[0])]


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
