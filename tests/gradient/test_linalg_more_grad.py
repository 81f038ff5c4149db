"""Pullbacks of expm, lstsq, tensorinv, tensorsolve and the generalized eigvalsh: verify_grad, closed
forms against central differences, through a loop in every mode; eig and lstsq's residuals refuse
by name."""

import numpy as np
import pytest
import scipy.linalg
from gradient_checks import central_difference

import symscan as ss
import symscan.tensor as T
from symscan.tensor import linalg

from modes_tested import MODES_TESTED


def spd(rng, n=4):
    m = rng.normal(size=(n, n))
    return m @ m.T + n * np.eye(n)


def _cases(rng):
    a = rng.normal(size=(4, 4))
    return {
        "expm batched": (linalg.expm, [rng.normal(size=(2, 3, 3))]),
        "expm scaled and squared": (linalg.expm, [3 * rng.normal(size=(3, 3))]),
        "lstsq x, vector b": (lambda x, y: linalg.lstsq(x, y)[0], [rng.normal(size=(5, 3)), rng.normal(size=5)]),
        "lstsq x, matrix b": (lambda x, y: linalg.lstsq(x, y)[0], [rng.normal(size=(5, 3)), rng.normal(size=(5, 2))]),
        "lstsq x, square a": (lambda x, y: linalg.lstsq(x, y)[0], [spd(rng, 3), rng.normal(size=3)]),
        "lstsq s": (lambda x: linalg.lstsq(x, T.ones((5,), dtype="float64"))[3], [rng.normal(size=(5, 3))]),
        "eigvalsh generalized": (linalg.eigvalsh, [a + a.T, spd(rng)]),
        "eigvalsh generalized upper": (lambda x, y: linalg.eigvalsh(x, y, UPLO="U"), [a + a.T, spd(rng)]),
        "tensorinv": (lambda x: linalg.tensorinv(x, 1), [rng.normal(size=(6, 2, 3)) + 3 * np.eye(6).reshape(6, 2, 3)]),
        "tensorsolve": (linalg.tensorsolve, [rng.normal(size=(2, 3, 6)) + 3 * np.eye(6).reshape(2, 3, 6),
                                             rng.normal(size=(2, 3))]),
    }


@pytest.mark.parametrize("name", list(_cases(np.random.default_rng(0))))
def test_verify_grad(name, rng):
    fn, point = _cases(rng)[name]
    ss.verify_grad(fn, point, rng=rng)


def test_expm_gradient_against_central_differences_of_scipy(rng):
    a, w = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    x = T.dmatrix("a")
    got = ss.function([x], ss.grad((linalg.expm(x) * w).sum(), x))(a)
    want = central_difference(lambda m: (scipy.linalg.expm(m) * w).sum(), [a], 0)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    # the same as scipy's Fréchet derivative of the transpose
    np.testing.assert_allclose(got, scipy.linalg.expm_frechet(a.T, w, compute_expm=False), rtol=1e-10)


def test_lstsq_gradient_against_central_differences(rng):
    a, b, w = rng.normal(size=(6, 3)), rng.normal(size=6), rng.normal(size=3)
    x, y = T.dmatrix("a"), T.dvector("b")
    solution, _, _, s = linalg.lstsq(x, y)
    ga, gb = ss.function([x, y], ss.grad((solution * w).sum() + s.sum(), [x, y]))(a, b)

    def numeric(a_, b_):
        sol, _, _, s_ = np.linalg.lstsq(a_, b_, rcond=None)
        return (sol * w).sum() + s_.sum()

    np.testing.assert_allclose(ga, central_difference(numeric, [a, b], 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb, central_difference(numeric, [a, b], 1), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", MODES_TESTED)
def test_expm_gradient_through_a_loop_agrees_across_modes(mode, rng):
    """A discretised linear system: h_t = expm(A dt) h_(t-1); d sum(h) / dA."""
    a, h0 = T.dmatrix("A"), T.dvector("h0")
    hs, _ = ss.scan(lambda h, m: T.dot(linalg.expm(m * 0.1), h), outputs_info=h0, non_sequences=a, n_steps=4)
    grad = ss.grad(hs.sum(), a)
    values = [rng.normal(size=(3, 3)), rng.normal(size=3)]
    got = ss.function([a, h0], grad, mode=mode)(*values)

    def numeric(m, h):
        step, total = scipy.linalg.expm(m * 0.1), 0.0
        for _ in range(4):
            h = step @ h
            total += h.sum()
        return total

    np.testing.assert_allclose(got, central_difference(numeric, values, 0), rtol=1e-6, atol=1e-8)


def test_refused_gradients_name_the_op():
    a = T.dmatrix("a")
    with pytest.raises(NotImplementedError, match=r"eig has no gradient .* use eigh"):
        ss.grad(abs(linalg.eig(a)[0]).sum(), a)
    with pytest.raises(NotImplementedError, match=r"lstsq: the gradient through residuals .* from x instead"):
        ss.grad(linalg.lstsq(a, T.dvector("b"))[1].sum(), a)
