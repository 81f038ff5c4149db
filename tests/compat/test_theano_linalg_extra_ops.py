"""theano.tensor.nlinalg, slinalg and extra_ops, and unbroadcast/addbroadcast/patternbroadcast:
each name against numpy/scipy in modes py and fast, gradients of the differentiable ones."""

import importlib

import numpy as np
import pytest
import scipy.linalg

import symscan as ss
import symscan.compat.theano as theano
import symscan.compat.theano.tensor as T
import symscan.tensor.linalg
from symscan.compat.theano.tensor import extra_ops, nlinalg, slinalg

import both_modes


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def spd(rng, n=4):
    a = rng.normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


def check(inputs, output, values, expected, rtol=1e-10):
    got = both_modes.function(inputs, output, rtol=rtol)(*values)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-12)
    return got


# ---------------------------------------------------------------------------- import paths
def test_submodules_import_as_theanos():
    for name in ("nlinalg", "slinalg", "extra_ops"):
        module = importlib.import_module(f"symscan.compat.theano.tensor.{name}")
        assert getattr(T, name) is module
        assert getattr(theano.tensor, name) is module
        for public in module.__all__:
            assert hasattr(module, public), f"{name}.{public}"
    assert (nlinalg, slinalg, extra_ops) == (T.nlinalg, T.slinalg, T.extra_ops)
    assert T.nlinalg.matrix_inverse is symscan.tensor.linalg.inv
    assert (T.nlinalg.eigh, T.nlinalg.qr, T.nlinalg.svd, T.nlinalg.pinv) == (
        symscan.tensor.linalg.eigh, symscan.tensor.linalg.qr, symscan.tensor.linalg.svd, symscan.tensor.linalg.pinv)
    assert theano.tensor.slinalg.solve is symscan.tensor.linalg.solve
    assert T.extra_ops.cumsum is ss.tensor.cumsum


# ---------------------------------------------------------------------------- nlinalg
def test_nlinalg_against_numpy(rng):
    a, b, c = T.dmatrices("a", "b", "c")
    v = T.dvector("v")
    A, B, C = rng.normal(size=(3, 4)), rng.normal(size=(4, 4)), rng.normal(size=(4, 2))
    S = spd(rng)
    V = rng.normal(size=5)
    check([b], nlinalg.matrix_inverse(b), [S], np.linalg.inv(S))
    check([b], nlinalg.det(b), [S], np.linalg.det(S))
    check([a, b, c], nlinalg.matrix_dot(a, b, c), [A, B, C], A @ B @ C)
    check([v], nlinalg.alloc_diag(v), [V], np.diag(V))
    check([a], nlinalg.extract_diag(a), [A], np.diag(A))
    check([v], nlinalg.diag(v), [V], np.diag(V))
    check([a], nlinalg.diag(a), [A], np.diag(A))
    check([a], nlinalg.trace(a), [A], np.trace(A))
    check([b], nlinalg.matrix_power(b, 3), [B], np.linalg.matrix_power(B, 3))
    for ord, np_ord in ((None, None), ("inf", np.inf), ("-inf", -np.inf), (1, 1), (3, 3)):
        check([v], nlinalg.norm(v, ord), [V], np.linalg.norm(V, np_ord))
    for ord, np_ord in ((None, None), ("fro", "fro"), ("inf", np.inf), ("-inf", -np.inf), (1, 1), (-1, -1)):
        check([a], nlinalg.norm(a, ord), [A], np.linalg.norm(A, np_ord))


def test_nlinalg_refuses_what_theano_refused():
    with pytest.raises(TypeError, match="diag: Theano's diag takes a vector or a matrix"):
        nlinalg.diag(T.dtensor3())
    with pytest.raises(TypeError, match="alloc_diag"):
        nlinalg.alloc_diag(T.dmatrix())
    with pytest.raises(ValueError, match="norm: Theano's norm"):
        nlinalg.norm(T.dtensor3(), None)
    with pytest.raises(ValueError, match="'nuc'"):
        nlinalg.norm(T.dmatrix(), "nuc")


def test_matrix_inverse_grad(rng):
    ss.verify_grad(nlinalg.matrix_inverse, [spd(rng)], rng=rng)


# ---------------------------------------------------------------------------- slinalg
def test_slinalg_against_scipy(rng):
    a, b = T.dmatrices("a", "b")
    S, B = spd(rng), rng.normal(size=(4, 3))
    L = np.linalg.cholesky(S)
    check([a], slinalg.cholesky(a), [S], scipy.linalg.cholesky(S, lower=True))
    check([a, b], slinalg.solve(a, b), [S, B], scipy.linalg.solve(S, B))
    check([a, b], slinalg.solve_symmetric(a, b), [S, B], scipy.linalg.solve(S, B, assume_a="sym"))
    check([a, b], slinalg.solve_lower_triangular(a, b), [L, B], scipy.linalg.solve_triangular(L, B, lower=True))
    check([a, b], slinalg.solve_upper_triangular(a, b), [L.T, B], scipy.linalg.solve_triangular(L.T, B))
    K1, K2 = rng.normal(size=(2, 3)), rng.normal(size=(3, 2))
    check([a, b], slinalg.kron(a, b), [K1, K2], np.kron(K1, K2))
    with pytest.raises(TypeError, match="symscan.tensor.linalg.kron"):
        slinalg.kron(T.dvector(), T.dmatrix())


def test_slinalg_grads(rng):
    S, B = spd(rng), rng.normal(size=(4, 2))
    ss.verify_grad(slinalg.solve, [S, B], rng=rng)
    ss.verify_grad(lambda a: slinalg.cholesky(0.5 * (a + a.T)), [S], rng=rng)
    L = np.linalg.cholesky(S)
    ss.verify_grad(lambda b: slinalg.solve_lower_triangular(L, b), [B], rng=rng)


# ---------------------------------------------------------------------------- extra_ops
def test_cumulative_and_diff(rng):
    x = T.dmatrix("x")
    X = rng.normal(size=(3, 5))
    check([x], extra_ops.cumsum(x), [X], np.cumsum(X))
    check([x], extra_ops.cumsum(x, axis=0), [X], np.cumsum(X, axis=0))
    check([x], extra_ops.cumprod(x, axis=1), [X], np.cumprod(X, axis=1))
    check([x], extra_ops.diff(x), [X], np.diff(X))
    check([x], extra_ops.diff(x, n=2, axis=1), [X], np.diff(X, n=2, axis=1))
    check([x], extra_ops.diff(x, n=1, axis=0), [X], np.diff(X, axis=0))
    check([x], extra_ops.diff(x, n=0), [X], X)
    with pytest.raises(ValueError, match="diff: axis=2"):
        extra_ops.diff(x, axis=2)


def test_diff_and_cumsum_grads(rng):
    ss.verify_grad(lambda x: extra_ops.diff(x, n=2, axis=0), [rng.normal(size=(5, 3))], rng=rng)
    ss.verify_grad(lambda x: extra_ops.cumsum(x, axis=1), [rng.normal(size=(3, 4))], rng=rng)


def test_repeat(rng):
    x = T.dmatrix("x")
    r = T.lvector("r")
    n = T.lscalar("n")
    X = rng.normal(size=(3, 2))
    check([x], extra_ops.repeat(x, 2), [X], np.repeat(X, 2))
    check([x], extra_ops.repeat(x, 3, axis=0), [X], np.repeat(X, 3, axis=0))
    check([x], extra_ops.repeat(x, 0, axis=1), [X], np.repeat(X, 0, axis=1))
    check([x, r], extra_ops.repeat(x, r, axis=0), [X, np.array([2, 0, 3])], np.repeat(X, [2, 0, 3], axis=0))
    check([x, n], extra_ops.repeat(x, n, axis=1), [X, np.array(2)], np.repeat(X, 2, axis=1))
    ss.verify_grad(lambda x: extra_ops.repeat(x, np.array([1, 2, 3]), axis=0), [X], rng=rng)


def test_squeeze_to_one_hot_and_fill_diagonal(rng):
    x = T.tensor("float64", (None, 1, 3), name="x")
    X = rng.normal(size=(2, 1, 3))
    check([x], extra_ops.squeeze(x), [X], np.squeeze(X, axis=1))
    y = T.lvector("y")
    Y = np.array([2, 0, 1, 2])
    one_hot = both_modes.function([y], extra_ops.to_one_hot(y, 3))(Y)
    assert one_hot.dtype == ss.config.floatX
    np.testing.assert_array_equal(one_hot, np.eye(3)[Y])
    assert extra_ops.to_one_hot(y, 3, dtype="int32").dtype == "int32"
    a = T.dmatrix("a")
    for shape in ((3, 3), (4, 2), (2, 5)):
        A = rng.normal(size=shape)
        expected = A.copy()
        np.fill_diagonal(expected, 5.0)
        check([a], extra_ops.fill_diagonal(a, 5.0), [A], expected)
        for offset in (-1, 1):
            expected = A.copy()
            rows = np.arange(max(0, min(shape[0] + min(offset, 0), shape[1] - max(offset, 0))))
            expected[rows - min(offset, 0), rows + max(offset, 0)] = 5.0
            check([a], extra_ops.fill_diagonal_offset(a, 5.0, offset), [A], expected)
    t = T.dtensor3("t")
    A3 = rng.normal(size=(3, 3, 3))
    expected = A3.copy()
    np.fill_diagonal(expected, -1.0)
    check([t], extra_ops.fill_diagonal(t, -1.0), [A3], expected)
    ss.verify_grad(lambda a, v: extra_ops.fill_diagonal(a, v), [rng.normal(size=(3, 4)), np.array(2.0)], rng=rng)


def test_bincount_searchsorted_compress():
    x = T.lvector("x")
    w = T.dvector("w")
    X, W = np.array([1, 3, 1, 0, 5]), np.array([0.5, 1.0, 2.0, 3.0, 4.0])
    check([x], extra_ops.bincount(x), [X], np.bincount(X))
    check([x, w], extra_ops.bincount(x, weights=w), [X, W], np.bincount(X, weights=W))
    check([x], extra_ops.bincount(x, minlength=9), [X], np.bincount(X, minlength=9))
    f = both_modes.function([x], extra_ops.bincount(x, assert_nonneg=True))
    with pytest.raises(ValueError, match="negative"):
        f(np.array([1, -1]))
    s, v = T.dvector("s"), T.dmatrix("v")
    S, V = np.array([1.0, 2.0, 2.0, 4.0]), np.array([[0.0, 2.0, 3.0], [2.0, 5.0, 1.0]])
    for side in ("left", "right"):
        check([s, v], extra_ops.searchsorted(s, v, side=side), [S, V], np.searchsorted(S, V, side=side))
    order = np.array([3, 0, 2, 1])
    check([s, v], extra_ops.searchsorted(s, v, sorter=order), [S[order], V], np.searchsorted(S, V))
    c = T.lvector("c")
    m = T.dmatrix("m")
    M = np.arange(12.0).reshape(3, 4)
    for cond, axis in (([0, 1, 1], 0), ([1, 0, 0, 1], 1), ([1, 0, 1, 0, 0, 1], None), ([0, 0], 0)):
        check([c, m], extra_ops.compress(c, m, axis=axis), [np.array(cond), M], np.compress(cond, M, axis=axis))


def test_ravel_and_unravel_index():
    i, j = T.lvectors("i", "j")
    I, J = np.array([0, 2, 1]), np.array([3, 0, 4])
    for order in ("C", "F"):
        check([i, j], extra_ops.ravel_multi_index((i, j), (3, 5), order=order), [I, J],
              np.ravel_multi_index((I, J), (3, 5), order=order))
        flat = np.array([0, 7, 14, 9])
        outs = both_modes.function([i], list(extra_ops.unravel_index(i, (3, 5), order=order)))(flat)
        for got, expected in zip(outs, np.unravel_index(flat, (3, 5), order=order)):
            np.testing.assert_array_equal(got, expected)
    Jbad = np.array([3, 0, 7])
    for mode in ("wrap", "clip"):
        check([i, j], extra_ops.ravel_multi_index((i, j), (3, 5), mode=mode), [I, Jbad],
              np.ravel_multi_index((I, Jbad), (3, 5), mode=mode))
    with pytest.raises(ValueError, match="invalid entry"):
        both_modes.function([i, j], extra_ops.ravel_multi_index((i, j), (3, 5)))(I, Jbad)
    with pytest.raises(ValueError, match="out of bounds"):
        both_modes.function([i], extra_ops.unravel_index(i, (3, 5))[0])(np.array([15]))
    dims = T.lvector("dims")
    dims_static = T.specify_shape(dims, (2,))
    outs = both_modes.function([i, dims], list(extra_ops.unravel_index(i, dims_static, ndim=2)))(
        np.array([0, 7]), np.array([3, 5]))
    np.testing.assert_array_equal(outs, np.unravel_index([0, 7], (3, 5)))


# ---------------------------------------------------------------------------- broadcastable patterns
def test_unbroadcast_addbroadcast_patternbroadcast():
    x = T.dmatrix("x")
    assert T.unbroadcast(x, 0, -1) is x
    with pytest.raises(ValueError, match="unbroadcast: axis 2 is out of range"):
        T.unbroadcast(x, 2)
    row = T.addbroadcast(x, 0)
    assert row.type.shape == (1, None)
    assert T.addbroadcast(row, 0) is row
    f = both_modes.function([x], row)
    np.testing.assert_array_equal(f(np.ones((1, 3))), np.ones((1, 3)))
    with pytest.raises(ValueError):
        f(np.ones((2, 3)))
    assert T.patternbroadcast(x, (False, True)).type.shape == (None, 1)
    assert T.patternbroadcast(x, (False, False)) is x
    with pytest.raises(ValueError, match="one bool per axis"):
        T.patternbroadcast(x, (True,))


def test_nlinalg_and_slinalg_newer_names_against_numpy_and_scipy(rng):
    a, b = T.dmatrices("a", "b")
    v = T.dvector("v")
    A, S, V = rng.normal(size=(5, 3)), spd(rng), rng.normal(size=5)
    x, residuals, rank, s = nlinalg.lstsq()(a, v, -1.0)
    got = theano.function([a, v], [x, residuals, rank, s])(A, V)
    for g, want in zip(got, np.linalg.lstsq(A, V, rcond=-1.0)):
        np.testing.assert_allclose(g, want, rtol=1e-10)
    sym = S - 2 * np.eye(len(S))
    np.testing.assert_allclose(theano.function([a, b], slinalg.eigvalsh(a, b))(sym, S),
                               scipy.linalg.eigvalsh(sym, S), rtol=1e-10)
    np.testing.assert_allclose(theano.function([a], slinalg.expm(a))(S / 10), scipy.linalg.expm(S / 10), rtol=1e-10)
    with pytest.raises(TypeError, match=r"lstsq: rcond must be a number known when the graph is built"):
        nlinalg.lstsq()(a, v, T.dscalar("r"))
