"""Pullbacks of the linear algebra ops: the standard matrix-calculus results, batched.

Batch axes a right-hand side or a matrix was broadcast along are summed back (``sum_to``). A
vector right-hand side is a one-column matrix here, so every solve's gradient is one batched
solve and one batched product. Ops that read one triangle of a matrix (cholesky,
solve_triangular, cho_solve) get a gradient that is zero in the other triangle, as finite
differences of the op see it.

The decompositions' gradients assume distinct eigenvalues (singular values): with a repeated
one the eigenvectors are not unique and the gradient through them is infinite or undefined
(F_ij = 1/(w_j - w_i) below); the gradient of the values alone is defined everywhere.
"""

from __future__ import annotations

from symscan.gradient.ops.math import length, swap_last
from symscan.gradient.registry import connections, pullback
from symscan.graph.basic import Variable
from symscan.tensor.assertion import assert_that
from symscan.tensor.broadcast import sum_to
from symscan.tensor.creation import arange, zeros_like
from symscan.tensor.elemwise import cast, eq, ge, gt, le, lt, switch
from symscan.tensor.linalg import (
    QR,
    SVD,
    Cholesky,
    ChoSolve,
    Det,
    Eig,
    Eigh,
    Eigvalsh,
    Expm,
    Lstsq,
    MatrixInverse,
    Pinv,
    SlogDet,
    Solve,
    SolveTriangular,
    cho_solve,
    expm,
    inv,
    pinv,
    solve,
    solve_triangular,
)
from symscan.tensor.math import matmul
from symscan.tensor.shape import concatenate, dimshuffle


def as_matrices(v: Variable) -> Variable:
    """A vector right-hand side (or its solution/cotangent) as a one-column matrix."""
    return dimshuffle(v, list(range(v.ndim)) + ["x"])


def as_vectors(v: Variable) -> Variable:
    return dimshuffle(v, list(range(v.ndim - 1)))


def with_matrix_axes(g: Variable) -> Variable:
    """A per-matrix value (..., ) broadcast against (..., n, n)."""
    return dimshuffle(g, list(range(g.ndim)) + ["x", "x"])


def triangle(x: Variable, lower: bool, diagonal: bool = True) -> Variable:
    """``x`` with zeros outside its lower (or upper) triangle; without the diagonal when not
    ``diagonal``."""
    n = length(x, -1)
    rows, cols = dimshuffle(arange(n), [0, "x"]), dimshuffle(arange(n), ["x", 0])
    keep = {(True, True): ge, (True, False): gt, (False, True): le, (False, False): lt}[(lower, diagonal)]
    return switch(keep(rows, cols), x, zeros_like(x))


def _rhs_gradients(node, gb: Variable, g_a: Variable) -> list[Variable]:
    """The (a, b) gradients summed back to their own batch shapes; ``gb``/``g_a`` in matrix form."""
    a, b = node.inputs
    gb = as_vectors(gb) if b.ndim == 1 else gb
    return [sum_to(g_a, a), sum_to(gb, b)]


# ---------------------------------------------------------------------------- pullbacks
@pullback(MatrixInverse)
def inv_pullback(node, cotangents):
    """d(A^-1) = -A^-1 dA A^-1, so gA = -A^-T G A^-T."""
    (g,), (x,) = cotangents, node.outputs
    x_t = swap_last(x)
    return [-matmul(matmul(x_t, g), x_t)]


@pullback(Det)
def det_pullback(node, cotangents):
    """Jacobi's formula: d det A = det A tr(A^-1 dA), so gA = g det A A^-T."""
    (g,), (a,), (d,) = cotangents, node.inputs, node.outputs
    return [with_matrix_axes(g * d) * swap_last(inv(a))]


@pullback(SlogDet)
def slogdet_pullback(node, cotangents):
    """d log|det A| = tr(A^-1 dA); the sign is piecewise constant: no gradient through it."""
    (_, g_log), (a,) = cotangents, node.inputs
    if g_log is None:
        return [None]
    return [with_matrix_axes(g_log) * swap_last(inv(a))]


@connections(SlogDet)
def slogdet_connections(node):
    return [[False, True]]


@pullback(Solve)
def solve_pullback(node, cotangents):
    """x = A^-1 b: gb = A^-T G, gA = -gb x^T."""
    (g,), (a, b), (x,) = cotangents, node.inputs, node.outputs
    vector = b.ndim == 1
    g2, x2 = (as_matrices(g), as_matrices(x)) if vector else (g, x)
    gb = solve(swap_last(a), g2)
    return _rhs_gradients(node, gb, -matmul(gb, swap_last(x2)))


@pullback(SolveTriangular)
def solve_triangular_pullback(node, cotangents):
    """As solve's, with the transposed solve of the same triangle; gA keeps only the triangle
    the op reads (and no diagonal when it is taken as ones)."""
    (g,), (a, b), (x,), op = cotangents, node.inputs, node.outputs, node.op
    vector = b.ndim == 1
    g2, x2 = (as_matrices(g), as_matrices(x)) if vector else (g, x)
    gb = solve_triangular(a, g2, lower=op.lower, trans=1 - op.trans, unit_diagonal=op.unit_diagonal)
    g_a = -matmul(gb, swap_last(x2)) if op.trans == 0 else -matmul(x2, swap_last(gb))
    return _rhs_gradients(node, gb, triangle(g_a, op.lower, diagonal=not op.unit_diagonal))


@pullback(ChoSolve)
def cho_solve_pullback(node, cotangents):
    """x = (C C^T)^-1 b (C lower; C^T C for upper): gb = cho_solve(C, G), and the gradient of
    A = C C^T, -gb x^T, taken to C by dA = dC C^T + C dC^T: gC = (gA + gA^T) C (C (gA + gA^T)
    for an upper C), in C's triangle."""
    (g,), (c, b), (x,), lower = cotangents, node.inputs, node.outputs, node.op.lower
    vector = b.ndim == 1
    g2, x2 = (as_matrices(g), as_matrices(x)) if vector else (g, x)
    gb = cho_solve((c, lower), g2)
    g_a = -matmul(gb, swap_last(x2))
    g_sym = g_a + swap_last(g_a)
    c = triangle(c, lower)  # the op reads only this triangle of c
    g_c = matmul(g_sym, c) if lower else matmul(c, g_sym)
    return _rhs_gradients(node, gb, triangle(g_c, lower))


@pullback(Cholesky)
def cholesky_pullback(node, cotangents):
    """Murray (2016), as PyTensor: S = L^-T Phi(L^T G) L^-1 with Phi the lower triangle with its
    diagonal halved; the op reads A's lower triangle, so gA = tril(S + S^T) - diag(S). An upper
    factor is the lower factor of A^T, transposed."""
    (g,), (chol,), lower = cotangents, node.outputs, node.op.lower
    factor, g = (chol, g) if lower else (swap_last(chol), swap_last(g))
    p = matmul(swap_last(factor), g)
    phi = triangle(p, lower=True, diagonal=False) + triangle(triangle(p, True), False) * 0.5
    m = solve_triangular(factor, phi, lower=True, trans=1)  # L^-T Phi
    s = swap_last(solve_triangular(factor, swap_last(m), lower=True, trans=1))  # (L^-T (L^-T Phi)^T)^T
    g_a = triangle(s + swap_last(s), lower=True, diagonal=False) + triangle(triangle(s, True), False)
    return [g_a if lower else swap_last(g_a)]


# ---------------------------------------------------------------------------- decompositions
def identity_for(w: Variable) -> Variable:
    """The n x n identity for a (..., n) w, in w's dtype. Built from arange rather than Eye,
    which has no numba form: the reverse loop of a scan stays in numba's kernel."""
    index = arange(length(w, -1))
    return cast(eq(dimshuffle(index, [0, "x"]), dimshuffle(index, ["x", 0])), w.dtype)


def off_diagonal_reciprocal(w: Variable) -> Variable:
    """F with F[..., i, j] = 1 / (w_j - w_i) off the diagonal and 0 on it (inf for a repeated w)."""
    identity = identity_for(w)
    diff = dimshuffle(w, list(range(w.ndim - 1)) + ["x", w.ndim - 1]) - with_last_axis(w)
    return (1 - identity) / (diff + identity)


def with_last_axis(w: Variable) -> Variable:
    """(..., n) as (..., n, 1): a column per matrix of the batch."""
    return dimshuffle(w, list(range(w.ndim)) + ["x"])


def scale_columns(v: Variable, w: Variable) -> Variable:
    """v @ diag(w), batched."""
    return v * dimshuffle(w, list(range(w.ndim - 1)) + ["x", w.ndim - 1])


def fold_to_triangle(g: Variable, lower: bool) -> Variable:
    """The gradient of a symmetric matrix built from one triangle of a: an entry off the diagonal
    stands for two, so it gets g_ij + g_ji; the other triangle is zero."""
    return triangle(g + swap_last(g), lower, diagonal=False) + triangle(triangle(g, True), False)


@pullback(Eigh)
def eigh_pullback(node, cotangents):
    """a = V diag(w) V^T: gA = V (diag(gw) + F o (V^T gV)) V^T, F_ij = 1/(w_j - w_i), folded onto
    the UPLO triangle. A repeated eigenvalue gives an infinite or undefined gradient through V."""
    (g_w, g_v), (w, v) = cotangents, node.outputs
    inner = 0
    if g_v is not None:
        inner = off_diagonal_reciprocal(w) * matmul(swap_last(v), g_v)
    if g_w is not None:
        inner = inner + identity_for(w) * with_last_axis(g_w)
    return [fold_to_triangle(matmul(matmul(v, inner), swap_last(v)), node.op.UPLO == "L")]


@pullback(Eigvalsh)
def eigvalsh_pullback(node, cotangents):
    """dw_i = v_i^T dA v_i: gA = V diag(gw) V^T (V from an eigh of the same triangle)."""
    (g_w,), (a,) = cotangents, node.inputs
    _, v = Eigh(node.op.UPLO)(a)
    return [fold_to_triangle(matmul(scale_columns(v, g_w), swap_last(v)), node.op.UPLO == "L")]


def copy_lower_to_upper(m: Variable) -> Variable:
    """m's lower triangle, mirrored onto its upper one."""
    return triangle(m, lower=True) + swap_last(triangle(m, lower=True, diagonal=False))


@pullback(QR)
def qr_pullback(node, cotangents):
    """For m >= n (reduced factors): M = R gR^T - gQ^T Q, gA = (gQ + Q copyltu(M)) R^-T. A wide
    a, or a tall one's complete q, is refused: when the build cannot tell, at run time."""
    (a,), op = node.inputs, node.op
    if op.mode == "r":
        (q, r), g_q, (g_r,) = QR("reduced")(a), None, cotangents
    else:
        (q, r), (g_q, g_r) = node.outputs, cotangents
    rows, cols = length(a, -2), length(a, -1)
    needs = "m == n (a square a)" if op.mode == "complete" else "m >= n (a tall or square a)"
    message = (f"qr: the gradient of QR(mode={op.mode!r}) is implemented for {needs}; a is {{}}; use "
               "mode='reduced' with a tall a, or differentiate qr of a's transpose")
    holds = eq(rows, cols) if op.mode == "complete" else ge(rows, cols)
    if isinstance(rows, int) and isinstance(cols, int):
        if not (rows == cols if op.mode == "complete" else rows >= cols):
            raise NotImplementedError(message.format(f"{rows} x {cols}"))
        holds = None
    m = 0
    if g_r is not None:
        m = matmul(r, swap_last(g_r))
    if g_q is not None:
        m = m - matmul(swap_last(g_q), q)
    b = matmul(q, copy_lower_to_upper(m))
    if g_q is not None:
        b = b + g_q
    if holds is not None:  # checked before the solve, which would fail on a wide a's r
        r = assert_that(r, holds, message=message.format("wide (m < n)" if op.mode != "complete" else "not square"))
    # B R^-T = (R^-1 B^T)^T; a general solve keeps the gradient in numba's kernel (scipy's is not)
    return [swap_last(solve(r, swap_last(b)))]


@pullback(SVD)
def svd_pullback(node, cotangents):
    """Values only: gA = U diag(gs) V^T (reduced U, V). With vectors (reduced, or full of a
    square a), with E_ij = 1/(s_j^2 - s_i^2) off the diagonal:
    gA = U [(E o (U^T gU - gU^T U)) S + S (E o (V^T gV - gV^T V)) + diag(gs)] V^T
         + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T).
    A repeated (or, with vectors, zero) singular value gives an infinite or undefined gradient."""
    (a,), op = node.inputs, node.op
    if not op.compute_uv:
        (g_s,) = cotangents
        u, _, vh = SVD(full_matrices=False)(a)
        return [matmul(scale_columns(u, g_s), vh)]
    rows, cols = length(a, -2), length(a, -1)
    holds = None
    if op.full_matrices:
        message = ("svd: the gradient through u or vh with full_matrices=True is implemented for a square a; "
                   "a is {}; use svd(a, full_matrices=False), whose u and vh span the same singular vectors")
        if isinstance(rows, int) and isinstance(cols, int):
            if rows != cols:
                raise NotImplementedError(message.format(f"{rows} x {cols}"))
        else:
            holds = eq(rows, cols)
    (g_u, g_s, g_vh), (u, s, vh) = cotangents, node.outputs
    if holds is not None:  # checked where it is used, before the shapes go wrong
        u = assert_that(u, holds, message=message.format("not square"))
    v = swap_last(vh)
    squares = s * s
    e = off_diagonal_reciprocal(squares)
    inner = 0 if g_s is None else identity_for(s) * with_last_axis(g_s)
    outer = 0
    if g_u is not None:
        u_t_g = matmul(swap_last(u), g_u)
        inner = inner + scale_columns(e * (u_t_g - swap_last(u_t_g)), s)
        g_u_s = scale_columns(g_u, 1 / s)
        outer = g_u_s - matmul(u, matmul(swap_last(u), g_u_s))  # (I - U U^T) gU S^-1
        outer = matmul(outer, vh)
    if g_vh is not None:
        g_v = swap_last(g_vh)
        v_t_g = matmul(vh, g_v)
        inner = inner + with_last_axis(s) * (e * (v_t_g - swap_last(v_t_g)))
        g_v_s = scale_columns(g_v, 1 / s)
        projected = g_v_s - matmul(v, matmul(vh, g_v_s))  # (I - V V^T) gV S^-1
        outer = outer + matmul(u, swap_last(projected))
    return [matmul(matmul(u, inner), vh) + outer]


@pullback(Pinv)
def pinv_pullback(node, cotangents):
    """Golub and Pereyra (1973), for a of constant rank: with X = A^+,
    gA = -X^T G X^T + (I - A X) G^T X X^T + X^T X G^T (I - X A)."""
    (g,), (a,), (x,) = cotangents, node.inputs, node.outputs
    x_t, g_t = swap_last(x), swap_last(g)
    first = -matmul(matmul(x_t, g), x_t)
    h = matmul(g_t, matmul(x, x_t))
    second = h - matmul(a, matmul(x, h))
    k = matmul(matmul(x_t, x), g_t)
    third = k - matmul(matmul(k, x), a)
    return [first + second + third]


@pullback(Expm)
def expm_pullback(node, cotangents):
    """The adjoint of expm's Fréchet derivative at A is the derivative at A^T: gA = L(A^T, G), the
    top-right block of expm([[A^T, G], [0, A^T]]) (Mathias' block form; the gradient of the
    gradient then follows from expm's own)."""
    (g,), (a,) = cotangents, node.inputs
    a_t, n = swap_last(a), length(a, -1)
    g = cast(g, a.dtype)
    block = concatenate([concatenate([a_t, g], axis=-1), concatenate([zeros_like(a), a_t], axis=-1)], axis=-2)
    return [expm(block)[(slice(None),) * (a.ndim - 2) + (slice(0, n), slice(n, None))]]


@pullback(Eig)
def eig_pullback(node, cotangents):
    raise NotImplementedError("eig has no gradient in symscan: its outputs are complex and symscan's gradients "
                              "are real; for a symmetric matrix use eigh (or eigvalsh), whose gradients exist")


@pullback(Lstsq)
def lstsq_pullback(node, cotangents):
    """For a of full column rank, x = A^+ b: gb = A^+T gx, and gA from pinv's pullback of gx b^T;
    s gets svd's (gA = U diag(gs) V^T). The residuals, whose length depends on the rank, are
    refused; rank is an integer."""
    (g_x, g_res, _, g_s), (a, b) = cotangents, node.inputs
    if g_res is not None:
        raise NotImplementedError("lstsq: the gradient through residuals (its length depends on a's rank) is not "
                                  "implemented; compute ((b - a @ x) ** 2).sum(axis=0) from x instead")
    g_a, g_b = 0, None
    if g_x is not None:
        a_plus = pinv(a)
        vector = b.ndim == 1
        g_x2, b2 = (as_matrices(g_x), as_matrices(b)) if vector else (g_x, b)
        g_b = matmul(swap_last(a_plus), g_x2)
        g_b = as_vectors(g_b) if vector else g_b
        (g_a,) = pinv_pullback(a_plus.owner, [matmul(g_x2, swap_last(b2))])
    if g_s is not None:
        (g_a_s,) = svd_pullback(SVD(compute_uv=False)(a).owner, [g_s])
        g_a = g_a + g_a_s
    return [g_a, g_b]


@connections(Lstsq)
def lstsq_connections(node):
    """rank is an integer: no gradient flows from it."""
    return [[True, True, False, True], [True, True, False, False]]
