"""Pullbacks of symscan.tensor.linalg: verify_grad on every differentiable op (batched and
broadcast forms, each triangle option), the closed forms against central differences, and a
Kalman-like covariance loop differentiated through scan in modes py, fast and numba."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.tensor import linalg

from modes_tested import MODES_TESTED


def spd(rng, *batch, n=3):
    m = rng.normal(size=batch + (n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def central_differences(fn, values: list, wrt: int, eps: float = 1e-6) -> np.ndarray:
    """d fn / d values[wrt] by central differences, element by element."""
    x = values[wrt]
    grad = np.zeros_like(x)
    for index in np.ndindex(*x.shape):
        shifted = [v.copy() for v in values]
        shifted[wrt][index] += eps
        up = fn(*shifted)
        shifted[wrt][index] -= 2 * eps
        grad[index] = (up - fn(*shifted)) / (2 * eps)
    return grad


def _grad_cases(rng):
    a, ab = spd(rng), spd(rng, 2)
    chol, chol_b = np.linalg.cholesky(a), np.linalg.cholesky(ab)
    b, v = rng.normal(size=(3, 2)), rng.normal(size=3)
    return {
        "inv": (linalg.inv, [ab]),
        "det": (linalg.det, [ab]),
        "slogdet logabsdet": (lambda x: linalg.slogdet(x)[1], [-ab]),
        "solve vector": (linalg.solve, [a, v]),
        "solve matrix": (linalg.solve, [a, b]),
        "solve batched a, shared vector b": (linalg.solve, [ab, v]),
        "solve broadcast batches": (linalg.solve, [ab[:, None], rng.normal(size=(4, 3, 2))]),
        "cholesky": (linalg.cholesky, [ab]),
        "cholesky upper": (lambda x: linalg.cholesky(x, lower=False), [a]),
        "solve_triangular lower": (lambda x, y: linalg.solve_triangular(x, y, lower=True), [a, b]),
        "solve_triangular upper trans": (lambda x, y: linalg.solve_triangular(x, y, trans=1), [a, v]),
        "solve_triangular unit diagonal": (
            lambda x, y: linalg.solve_triangular(x, y, lower=True, unit_diagonal=True), [a, b]),
        "solve_triangular batched": (lambda x, y: linalg.solve_triangular(x, y, lower=True), [ab, v]),
        "cho_solve": (lambda c, y: linalg.cho_solve((c, True), y), [chol + np.triu(a, 1), b]),
        "cho_solve upper batched": (lambda c, y: linalg.cho_solve((c, False), y),
                                    [np.swapaxes(chol_b, -1, -2), v]),
    }


@pytest.mark.parametrize("name", list(_grad_cases(np.random.default_rng(0))))
def test_verify_grad(name, rng):
    """The symbolic gradient agrees with finite differences of the op (a random projection)."""
    fn, point = _grad_cases(rng)[name]
    ss.verify_grad(fn, point, rng=rng)


def test_closed_forms_against_central_differences(rng):
    a, b = spd(rng), rng.normal(size=(3, 2))
    x, y = T.dmatrix("a"), T.dmatrix("b")
    w = rng.normal(size=(3, 2))
    cost = (linalg.solve(x, y) * w).sum() + linalg.det(x) + linalg.slogdet(x)[1] + linalg.inv(x).sum()
    ga, gb = ss.function([x, y], ss.grad(cost, [x, y]))(a, b)

    def numeric(a_, b_):
        return ((np.linalg.solve(a_, b_) * w).sum() + np.linalg.det(a_) + np.linalg.slogdet(a_)[1]
                + np.linalg.inv(a_).sum())

    inv_t = np.linalg.inv(a).T
    gb_closed = np.linalg.solve(a.T, w)
    ga_closed = (-gb_closed @ np.linalg.solve(a, b).T + np.linalg.det(a) * inv_t + inv_t
                 - inv_t @ np.ones((3, 3)) @ inv_t)
    np.testing.assert_allclose(ga, ga_closed, rtol=1e-10)
    np.testing.assert_allclose(gb, gb_closed, rtol=1e-10)
    np.testing.assert_allclose(ga, central_differences(numeric, [a, b], 0), rtol=1e-6, atol=1e-7)


def test_cholesky_gradient_is_zero_in_the_triangle_it_does_not_read(rng):
    x = T.dmatrix("a")
    g = ss.function([x], ss.grad(linalg.cholesky(x).sum(), x))(spd(rng))
    assert np.all(np.triu(g, 1) == 0) and np.any(np.tril(g) != 0)


def test_sign_of_slogdet_has_no_gradient(rng):
    x = T.dmatrix("a")
    with pytest.raises(ValueError, match="disconnected|not part"):
        ss.grad(linalg.slogdet(x)[0].sum(), x)


# ---------------------------------------------------------------------------- through a loop
def _kalman(a, h, q, r, p0, steps=4):
    """numpy: P = A P A^T + Q; K = P H^T inv(H P H^T + R); P = (I - K H) P; cost sum of K's."""
    p, cost = p0, 0.0
    for _ in range(steps):
        p = a @ p @ a.T + q
        k = p @ h.T @ np.linalg.inv(h @ p @ h.T + r)
        p = (np.eye(len(p)) - k @ h) @ p
        cost += k.sum()
    return cost


def _kalman_graph(steps=4):
    a, h, q, r, p0 = (T.dmatrix(n) for n in ("A", "H", "Q", "R", "P0"))

    def step(p, a, h, q, r):
        p = T.dot(T.dot(a, p), a.T) + q
        k = T.dot(T.dot(p, h.T), linalg.inv(T.dot(T.dot(h, p), h.T) + r))
        return T.dot(T.eye(3, dtype="float64") - T.dot(k, h), p), k

    (_, ks), _ = ss.scan(step, outputs_info=[p0, None], non_sequences=[a, h, q, r], n_steps=steps)
    inputs = [a, h, q, r, p0]
    return inputs, ss.grad(ks.sum(), inputs)


def test_kalman_loop_gradient_in_every_mode(rng):
    values = [np.eye(3) + 0.1 * rng.normal(size=(3, 3)), rng.normal(size=(2, 3)), spd(rng) / 10,
              spd(rng, n=2) / 5, spd(rng)]
    inputs, grads = _kalman_graph()
    functions = {mode: ss.function(inputs, grads, mode=mode) for mode in MODES_TESTED}
    results = {mode: f(*values) for mode, f in functions.items()}
    for mode, got in results.items():
        for g, want in zip(got, results["py"]):
            np.testing.assert_allclose(g, want, rtol=1e-10, err_msg=mode)
    for i in (0, 2, 3):  # A, Q, R against central differences of the numpy loop
        np.testing.assert_allclose(results["py"][i], central_differences(_kalman, values, i), rtol=1e-5, atol=1e-7)
    if "numba" in MODES_TESTED:
        report = functions["numba"].backend_report()  # forward and reverse loops are kernels
        assert report and all(line.endswith(": numba") for line in report), report


def _derived_cases(rng):
    x, m, v, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(3, 3)), rng.normal(size=3), rng.normal(size=(2, 5))
    return {
        "diagonal": (lambda t: linalg.diagonal(t, -1, 2, 0), [x]),
        "trace": (lambda t: linalg.trace(t, 1, 1, 2), [x]),
        "diag of a vector": (lambda t: linalg.diag(t, 1), [v]),
        "kron": (linalg.kron, [m, b]),
        "matrix_power 3": (lambda t: linalg.matrix_power(t, 3), [m]),
        "matrix_power -2": (lambda t: linalg.matrix_power(t, -2), [spd(rng)]),
        "norm": (linalg.norm, [x]),
        "norm vector ord 3": (lambda t: linalg.norm(t, 3, axis=0), [x]),
        "norm matrix 1": (lambda t: linalg.norm(t, 1, axis=(1, 2)), [x]),
    }


@pytest.mark.parametrize("name", list(_derived_cases(np.random.default_rng(0))))
def test_verify_grad_derived(name, rng):
    fn, point = _derived_cases(rng)[name]
    ss.verify_grad(fn, point, rng=rng)


# ---------------------------------------------------------------------------- decompositions
def symmetric(rng, *batch, n=4):
    """Symmetric matrices with well-separated eigenvalues (-1.5, 0, 1.5, ...)."""
    q, _ = np.linalg.qr(rng.normal(size=batch + (n, n)))
    return (q * (1.5 * np.arange(n) - 1.5)) @ np.swapaxes(q, -1, -2)


def transposed(x):
    return T.dimshuffle(x, list(range(x.ndim - 2)) + [x.ndim - 1, x.ndim - 2])


def rows(w):
    """(..., n) as (..., 1, n): scales the columns of a matrix it multiplies."""
    return T.dimshuffle(w, list(range(w.ndim - 1)) + ["x", w.ndim - 1])


def _decomposition_grad_cases(rng):
    """Costs of eigen/singular vectors are gauge invariant: squares of entries, or a matrix
    function such as V diag(w^3) V^T, which do not change when a vector flips sign."""
    a, ab = symmetric(rng), symmetric(rng, 2)
    weights = rng.uniform(0.5, 1.5, size=(4, 4))
    tall, q_weights, r_weights = rng.normal(size=(2, 5, 3)), rng.uniform(size=(5, 3)), rng.uniform(size=(3, 3))
    wide, square = rng.normal(size=(3, 5)), rng.normal(size=(4, 4))

    def svd_cost(full_matrices, k):
        """k = min(m, n): with full_matrices, only the vectors of the k singular values."""
        def cost(x):
            u, s, vh = linalg.svd(x, full_matrices)
            return (T.matmul(u[..., :, :k] * rows(s ** 2), transposed(u[..., :, :k])) * 1.3).sum() + s.sum() \
                + T.matmul(transposed(vh[..., :k, :]) * rows(s ** 3), vh[..., :k, :]).sum() \
                + ((u * u)[..., :2, :k] * 1.7).sum() + ((vh * vh)[..., :k, :2] * 0.7).sum()
        return cost

    def eigh_cost(uplo):
        def cost(x):
            w, v = linalg.eigh(x, uplo)
            return (v * v * weights).sum() + T.matmul(v * rows(w ** 3), transposed(v)).sum() + w.sum()
        return cost

    return {
        "eigh": (eigh_cost("L"), [ab]),
        "eigh upper": (eigh_cost("U"), [a]),
        "eigh values only": (lambda x: linalg.eigh(x)[0], [a]),
        "eigvalsh": (linalg.eigvalsh, [ab]),
        "eigvalsh upper": (lambda x: linalg.eigvalsh(x, "U"), [a]),
        "qr q and r": (lambda x: (linalg.qr(x)[0] * q_weights).sum() + (linalg.qr(x)[1] * r_weights).sum(), [tall]),
        "qr r": (lambda x: linalg.qr(x, mode="r"), [tall]),
        "qr complete of a square a": (lambda x: linalg.qr(x, "complete")[0], [tall[0, :3]]),
        "svd reduced tall": (svd_cost(False, 3), [tall]),
        "svd reduced wide": (svd_cost(False, 3), [wide]),
        "svd full square": (svd_cost(True, 4), [square]),
        "svd values": (lambda x: linalg.svd(x, compute_uv=False), [tall]),
        "pinv tall": (linalg.pinv, [tall]),
        "pinv wide": (linalg.pinv, [wide]),
    }


@pytest.mark.parametrize("name", list(_decomposition_grad_cases(np.random.default_rng(0))))
def test_verify_grad_decompositions(name, rng):
    fn, point = _decomposition_grad_cases(rng)[name]
    ss.verify_grad(fn, point, rng=rng)


@pytest.mark.parametrize("mode", MODES_TESTED)
def test_decomposition_gradients_in_a_loop_agree_with_closed_forms(mode, rng):
    """Through scan in every mode (numba's kernel), against numpy closed forms: eigvalsh's
    V diag(gw) V^T folded onto the lower triangle."""
    a, w = T.dtensor3("a"), rng.uniform(0.5, 1.5, size=4)
    values = symmetric(rng, 2)
    out, _ = ss.scan(lambda m: (linalg.eigvalsh(m) * w).sum(), sequences=a)
    f = ss.function([a], ss.grad(out.sum(), a), mode=mode)
    got = f(values)
    _, v = np.linalg.eigh(values)
    full = (v * w) @ np.swapaxes(v, -1, -2)
    np.testing.assert_allclose(got, np.tril(2 * full) - np.eye(4) * full, rtol=1e-9, atol=1e-12)
    if mode == "numba":
        assert all(line.endswith(": numba") for line in f.backend_report()), f.backend_report()


@pytest.mark.parametrize("mode", MODES_TESTED)
def test_decomposition_gradients_of_one_loop_agree_across_modes(mode, rng):
    """qr, svd and pinv differentiated through scan: numba runs both loops in its kernel, and
    every mode gives py's gradient (which verify_grad checks above); svd's values against
    U diag(gs) V^T."""
    a, w = T.dtensor3("a"), rng.uniform(0.5, 1.5, size=(5, 3))

    def step(m):
        u, s, vh = linalg.svd(m, full_matrices=False)
        vectors = (u * u * w).sum() + (vh * vh * w[:3]).sum()  # no slices: their gradient leaves numba's kernel
        return (linalg.qr(m)[1] * w[:3]).sum() + (linalg.pinv(m) * w.T).sum() + vectors, (s * w[0]).sum()

    (out, values_only), _ = ss.scan(step, sequences=a)
    point = rng.normal(size=(2, 5, 3))
    grads = [ss.grad(out.sum(), a), ss.grad(values_only.sum(), a)]
    f = ss.function([a], grads, mode=mode)
    got = f(point)
    for g, want in zip(got, ss.function([a], grads, mode="py")(point)):
        np.testing.assert_allclose(g, want, rtol=1e-9, atol=1e-12)
    u, _, vh = np.linalg.svd(point, full_matrices=False)
    np.testing.assert_allclose(got[1], (u * w[0]) @ vh, rtol=1e-9, atol=1e-12)
    if mode == "numba":
        assert all(line.endswith(": numba") for line in f.backend_report()), f.backend_report()


def test_svd_vector_gradient_of_a_full_non_square_svd_is_refused(rng):
    tall = T.tensor("float64", (5, 3))
    with pytest.raises(NotImplementedError, match=r"svd: .*full_matrices=True .* a square a; a is 5 x 3.*"
                                                  r"full_matrices=False"):
        ss.grad(linalg.svd(tall)[0].sum(), tall)
    a = T.dmatrix("a")
    f = ss.function([a], ss.grad(linalg.svd(a)[2].sum(), a))
    with pytest.raises(ValueError, match=r"svd: the gradient .* a is not square"):
        f(rng.normal(size=(5, 3)))


def test_qr_gradient_refuses_what_it_does_not_implement(rng):
    """m < n (or a tall a's complete q) is not implemented: at build time when the shapes say so,
    else at run time."""
    wide = T.dmatrix("wide")
    f = ss.function([wide], ss.grad(linalg.qr(wide)[1].sum(), wide))
    with pytest.raises(ValueError, match=r"qr: the gradient .* m >= n .* a is wide"):
        f(rng.normal(size=(2, 4)))
    tall = T.tensor("float64", (5, 3))
    with pytest.raises(NotImplementedError, match=r"QR\(mode='complete'\) .* m == n .* a is 5 x 3"):
        ss.grad(linalg.qr(tall, "complete")[0].sum(), tall)
