"""Mode numba's small-matrix products and LU (symscan/backends/numba/small.py): the helpers
against numpy (sizes on both sides of the loop/LAPACK limits, transposed views, singular
matrices), and loops using them (a Kalman filter) against mode py and a numpy loop, values and
gradients, with every loop a kernel."""

import numpy as np
import pytest
from gradient_checks import central_difference

import symscan as ss
import symscan.tensor as T
from symscan.tensor import linalg

pytest.importorskip("numba")

from symscan.backends.numba import small  # noqa: E402 - needs numba

SIZES = [0, 1, 2, 3, 5, small.LU_LIMIT, small.LU_LIMIT + 1]


def _square(rng, n, transposed):
    a = rng.normal(size=(n, n)) + n * np.eye(n)
    return a.T if transposed else a


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("n", SIZES)
def test_lu_helpers_agree_with_numpy(rng, n, transposed):
    a = _square(rng, n, transposed)
    b, B = rng.normal(size=n), rng.normal(size=(n, 3))
    np.testing.assert_allclose(small.solve(a, b), np.linalg.solve(a, b), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(small.solve(a, B.T.copy().T), np.linalg.solve(a, B), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(small.inv(a), np.linalg.inv(a), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(small.det(a), np.linalg.det(a), rtol=1e-12)
    sign, log_det = small.slogdet(a)
    assert (sign, pytest.approx(log_det, rel=1e-12, abs=1e-14)) == tuple(np.linalg.slogdet(a))


def test_a_negative_determinant_and_pivoting(rng):
    a = np.array([[0.0, 2.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.0, 3.0]])  # a zero first pivot: rows swap
    assert small.slogdet(a)[0] == np.linalg.slogdet(a)[0] == -1.0
    np.testing.assert_allclose(small.det(a), np.linalg.det(a), rtol=1e-14)
    np.testing.assert_allclose(small.inv(a), np.linalg.inv(a), rtol=1e-14)


def test_singular_matrices_as_numpy():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert small.det(a) == 0.0 and small.slogdet(a) == (0.0, -np.inf)
    with pytest.raises(np.linalg.LinAlgError):
        small.solve(a, np.ones(2))
    with pytest.raises(np.linalg.LinAlgError):
        small.inv(a)


@pytest.mark.parametrize("shapes", [((3, 0), (0, 2)), ((0,), (0, 3)), ((3, 4), (4, 2)), ((4,), (4, 3)),
                                    ((3, 4), (4,)), ((5,), (5,)), ((40, 40), (40, 40)), ((0, 3), (3, 2))])
def test_products_agree_with_numpy(rng, shapes):
    a, b = (rng.normal(size=s) for s in shapes)
    name = {(2, 2): "matmul", (1, 2): "vecmat", (2, 1): "matvec", (1, 1): "vdot"}[a.ndim, b.ndim]
    for x in (a, a.T.copy().T if a.ndim == 2 else a):
        np.testing.assert_allclose(getattr(small, name)(x, b), np.dot(x, b), rtol=1e-12, atol=1e-14)
    assert small.small_product(a, b) == (a.size * (b.shape[-1] if b.ndim == 2 else 1) <= small.PRODUCT_LIMIT)


# ---------------------------------------------------------------------------- in loops
def kalman(n_obs: int = 2):
    """The Kalman filter's log-likelihood as a scan (benchmark K1's step, at any size)."""
    y, Tm, Z, H, Q = T.matrix("y"), T.matrix("T"), T.matrix("Z"), T.matrix("H"), T.matrix("Q")
    a0, P0 = T.vector("a0"), T.matrix("P0")

    def step(y_t, a, P, ll, Tm, Z, Q, H):
        a, P = T.dot(Tm, a), T.dot(T.dot(Tm, P), Tm.T) + Q
        v, F = y_t - T.dot(Z, a), T.dot(T.dot(Z, P), Z.T) + H
        _, log_det = linalg.slogdet(F)
        ll = ll - 0.5 * (log_det + T.dot(v, linalg.solve(F, v))) + 0.0 * linalg.det(F)
        K = T.dot(T.dot(P, Z.T), linalg.inv(F))
        return a + T.dot(K, v), P - T.dot(T.dot(K, Z), P), ll

    (_, _, lls), _ = ss.scan(step, sequences=y, outputs_info=[a0, P0, T.constant(0.0)],
                             non_sequences=[Tm, Z, Q, H])
    return [y, Tm, Z, H, Q, a0, P0], lls[-1]


def kalman_loop(y, Tm, Z, H, Q, a0, P0):
    a, P, ll = a0, P0, 0.0
    for y_t in y:
        a, P = Tm @ a, Tm @ P @ Tm.T + Q
        v, F = y_t - Z @ a, Z @ P @ Z.T + H
        ll -= 0.5 * (np.linalg.slogdet(F)[1] + v @ np.linalg.solve(F, v))
        K = P @ Z.T @ np.linalg.inv(F)
        a, P = a + K @ v, P - K @ Z @ P
    return ll


def kalman_values(rng, steps=6, n=3, p=2):
    return [rng.normal(size=(steps, p)), 0.8 * np.eye(n) + 0.1 * rng.normal(size=(n, n)), rng.normal(size=(p, n)),
            0.5 * np.eye(p), 0.2 * np.eye(n), np.zeros(n), np.eye(n)]


def _runs_in_numba(f) -> bool:
    report = f.backend_report()
    return bool(report) and all(line.endswith(": numba") for line in report)


def test_kalman_filter_is_one_kernel_and_agrees(rng):
    inputs, ll = kalman()
    values = kalman_values(rng)
    f, py = ss.function(inputs, ll, mode="numba"), ss.function(inputs, ll, mode="py")
    got = f(*values)
    assert _runs_in_numba(f), f.backend_report()
    np.testing.assert_allclose(got, py(*values), rtol=1e-12)
    np.testing.assert_allclose(got, kalman_loop(*values), rtol=1e-12)


def test_kalman_gradient_reverse_loop_is_a_kernel_and_agrees(rng):
    """The pullbacks of solve, inv, slogdet, det and dot in the reverse loop, in numba, against
    mode py and central differences of the numpy loop."""
    inputs, ll = kalman()
    wrt = inputs[1:5]
    grads = ss.grad(ll, wrt)
    values = kalman_values(rng)
    f, py = ss.function(inputs, grads, mode="numba"), ss.function(inputs, grads, mode="py")
    got = f(*values)
    assert _runs_in_numba(f) and len(f.backend_report()) == 2, f.backend_report()
    for g, want, i in zip(got, py(*values), range(1, 5)):
        np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(g, central_difference(kalman_loop, values, i), rtol=1e-5, atol=1e-7)


def test_a_singular_matrix_in_a_kernel_raises_numpys_error(rng):
    """The kernel raises; the call reruns in mode fast, whose error names the node."""
    A, bs = T.matrix("A"), T.matrix("b")
    xs, _ = ss.scan(lambda b, A: linalg.solve(A, b), sequences=bs, non_sequences=A)
    f = ss.function([A, bs], xs, mode="numba")
    np.testing.assert_allclose(f(2 * np.eye(2), np.ones((3, 2))), np.full((3, 2), 0.5))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix.*Solve"):
        f(np.ones((2, 2)), np.ones((3, 2)))
