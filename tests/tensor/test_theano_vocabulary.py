"""Theano 1.0's tensor functions symscan lacked: the new elementwise ops (gamma, gammaln, psi,
isnan, isinf) and the compositions (tensordot, logsumexp, tile, ...) against numpy/scipy."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.onnx.context import ExportError
from symscan.tensor import nnet

sp = pytest.importorskip("scipy.special")

SPECIAL_VALUES = np.array([0.5, 1.4616, 3.0, -2.5, 12.7, 0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, 200.0])


def run(inputs, outputs, values, mode):
    return ss.function(inputs, outputs, mode=mode)(*values)


# ----------------------------------------------------------------------- new elementwise ops
@pytest.mark.parametrize("fn, reference", [(T.gamma, sp.gamma), (T.gammaln, sp.gammaln), (T.psi, sp.digamma)],
                         ids=["gamma", "gammaln", "psi"])
def test_special_functions_match_scipy_poles_included(fn, reference, mode):
    x = T.dvector("x")
    np.testing.assert_allclose(run([x], fn(x), [SPECIAL_VALUES], mode), reference(SPECIAL_VALUES),
                               rtol=1e-12, atol=1e-13)


def test_special_functions_keep_float32_and_make_ints_float64():
    assert T.gammaln(T.fvector()).dtype == "float32"
    assert T.gamma(T.ivector()).dtype == "float64"
    v = T.fvector("v")
    out = T.gamma(v).eval({v: np.float32([4.0])})
    assert out.dtype == np.float32 and out[0] == 6.0


def test_gamma_and_gammaln_gradients():
    ss.verify_grad(T.gamma, [np.array([0.7, 2.3, -1.5])])
    ss.verify_grad(T.gammaln, [np.array([0.7, 2.3, -1.5, 40.0])])


def test_psi_has_no_gradient_yet_and_says_so():
    x = T.dvector("x")
    with pytest.raises(NotImplementedError, match="psi"):
        ss.grad(T.sum(T.psi(x)), x)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool"])
def test_isnan_isinf_in_every_mode(dtype, mode):
    x = T.tensor(dtype, shape=(None,), name="x")
    raw = np.array([1.0, np.nan, -np.inf, np.inf, 0.0]) if dtype[0] == "f" else np.array([1, 0, 3, 2, 0])
    value = raw.astype(dtype)
    for m in (mode, "onnxruntime"):
        isnan, isinf = run([x], [T.isnan(x), T.isinf(x)], [value], m)
        assert isnan.dtype == isinf.dtype == np.bool_
        np.testing.assert_array_equal(isnan, np.isnan(value))
        np.testing.assert_array_equal(isinf, np.isinf(value))


def test_isnan_is_connected_with_zero_gradient():
    x = T.dvector("x")
    g = ss.grad(T.sum(T.switch(T.isnan(x), 0.0, x)), x)
    np.testing.assert_array_equal(g.eval({x: np.array([np.nan, 2.0])}), [0.0, 1.0])


def test_special_functions_refuse_onnx_export_naming_the_op():
    x = T.dvector("x")
    with pytest.raises(ExportError, match="gammaln"):
        ss.function([x], T.gammaln(x), mode="onnxruntime")


def test_bitwise_names_are_numpys(mode):
    a, b = T.ivector("a"), T.ivector("b")
    va, vb = np.int32([12, 5, -1]), np.int32([10, 3, 7])
    got = run([a, b], [T.bitwise_and(a, b), T.bitwise_or(a, b), T.bitwise_xor(a, b), T.bitwise_not(a)],
              [va, vb], mode)
    for out, want in zip(got, [va & vb, va | vb, va ^ vb, ~va]):
        np.testing.assert_array_equal(out, want)


# ----------------------------------------------------------------------- compositions
X = np.array([[0.3, -1.2, 2.5], [1.5, 0.2, -0.7]])
UNARY = [
    ("cosh", T.cosh, np.cosh),
    ("sinh", T.sinh, np.sinh),
    ("square", T.square, np.square),
    ("reciprocal", T.reciprocal, np.reciprocal),
    ("softsign", nnet.softsign, lambda v: v / (1 + np.abs(v))),
    ("hard_sigmoid", nnet.hard_sigmoid, lambda v: np.clip(0.2 * v + 0.5, 0, 1)),
    ("ptp", lambda v: T.ptp(v, axis=1), lambda v: np.ptp(v, axis=1)),
    ("logsumexp", lambda v: T.logsumexp(v, axis=1), lambda v: sp.logsumexp(v, axis=1)),
    ("logsumexp_all", T.logsumexp, sp.logsumexp),
    ("logsumexp_keepdims", lambda v: T.logsumexp(v, axis=0, keepdims=True),
     lambda v: sp.logsumexp(v, axis=0, keepdims=True)),
    ("log_softmax", nnet.log_softmax, lambda v: sp.log_softmax(v, axis=-1)),
    ("log_softmax_axis0", lambda v: nnet.log_softmax(v, axis=0), lambda v: sp.log_softmax(v, axis=0)),
    ("tile", lambda v: T.tile(v, (2, 1, 3)), lambda v: np.tile(v, (2, 1, 3))),
    ("shape_padaxis", lambda v: T.shape_padaxis(v, 1) * 2, lambda v: np.expand_dims(v, 1) * 2),
]


@pytest.mark.parametrize("name, fn, reference", UNARY, ids=[u[0] for u in UNARY])
def test_composition_matches_numpy(name, fn, reference, mode):
    x = T.dmatrix("x")
    out = run([x], fn(x), [X], mode)
    want = reference(X)
    assert out.shape == want.shape
    np.testing.assert_allclose(out, want, rtol=1e-12)


@pytest.mark.parametrize("name, fn, reference", UNARY, ids=[u[0] for u in UNARY])
def test_composition_gradient(name, fn, reference):
    ss.verify_grad(lambda v: fn(v), [X + 0.05])  # away from ptp/hard_sigmoid kinks and ties


def test_logsumexp_is_stable_and_handles_infinities():
    v = T.dvector("v")
    f = ss.function([v], [T.logsumexp(v), nnet.log_softmax(v)])
    big, log_softmax = f(np.array([1000.0, 1000.0]))
    np.testing.assert_allclose(big, 1000 + np.log(2))
    np.testing.assert_allclose(log_softmax, [-np.log(2)] * 2)
    assert f(np.array([-np.inf, -np.inf]))[0] == -np.inf
    assert f(np.array([np.inf, 1.0]))[0] == np.inf


@pytest.mark.parametrize("mode", ["py", "fast"])
def test_logsumexp_gradient_is_the_softmax_alone(mode, rng):
    """The max's shift cancels in the gradient, so none flows through it (as in JAX): the
    gradient is softmax(x), ties of the max included, and its graph holds no mask of where
    the max is (an ``eq`` against it)."""
    from symscan.graph.traversal import ancestors

    m = T.dmatrix("m")
    g = ss.grad(T.logsumexp(m, axis=0).sum(), m)
    ops = {str(v.owner.op) for v in ancestors([g]) if v.owner is not None}
    assert not any("eq" in name for name in ops), ops
    f = ss.function([m], g, mode=mode)
    for value in (rng.normal(size=(4, 3)), np.array([[2.0, 1.0], [2.0, -np.inf]])):
        softmax = np.exp(value - value.max(axis=0)) / np.exp(value - value.max(axis=0)).sum(axis=0)
        np.testing.assert_allclose(f(value), softmax, rtol=1e-14, atol=1e-15)


def test_logsumexp_log_softmax_tensordot_in_onnxruntime(rng):
    x, a, b = T.dmatrix("x"), T.dtensor3("a"), T.dtensor3("b")
    va, vb = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 3, 5))
    out = run([x, a, b], [T.logsumexp(x, axis=1), nnet.log_softmax(x), T.tensordot(a, b, [[1, 2], [1, 0]])],
              [X, va, vb], "onnxruntime")
    np.testing.assert_allclose(out[0], sp.logsumexp(X, axis=1))
    np.testing.assert_allclose(out[1], sp.log_softmax(X, axis=1))
    np.testing.assert_allclose(out[2], np.tensordot(va, vb, [[1, 2], [1, 0]]))


def test_ultra_fast_sigmoid_is_theanos_approximation(mode):
    def theano_piecewise(v):  # Theano 1.0's scalar definition, one value at a time
        half = 0.5 * abs(v)
        z = 1.5 * half / (1 + half) if half < 1.7 else (
            0.935409070603099 + 0.0458812946797165 * (half - 1.7) if half < 3 else 0.99505475368673)
        return 0.5 * (np.sign(v) * z + 1)

    values = np.array([-8.0, -4.0, -1.0, 0.0, 0.5, 3.3, 5.9, 7.0])
    x = T.dvector("x")
    out = run([x], nnet.ultra_fast_sigmoid(x), [values], mode)
    np.testing.assert_allclose(out, [theano_piecewise(v) for v in values])
    assert np.max(np.abs(out - sp.expit(values))) < 0.03
    ss.verify_grad(nnet.ultra_fast_sigmoid, [np.array([-4.0, -1.0, 0.5, 2.0])])


def test_sigmoid_binary_crossentropy_is_stable(mode):
    o, t = T.dvector("o"), T.dvector("t")
    logits, target = np.array([-800.0, -2.0, 0.4, 3.0, 800.0]), np.array([0.0, 0.3, 1.0, 0.5, 1.0])
    out = run([o, t], nnet.sigmoid_binary_crossentropy(o, t), [logits, target], mode)
    p = sp.expit(logits[1:4])
    np.testing.assert_allclose(out[1:4], -(target[1:4] * np.log(p) + (1 - target[1:4]) * np.log(1 - p)))
    np.testing.assert_allclose(out[[0, 4]], [0.0, 0.0], atol=1e-300)
    ss.verify_grad(nnet.sigmoid_binary_crossentropy, [logits[1:4], target[1:4]])


def test_isclose_allclose_follow_numpy(mode):
    a, b = T.dvector("a"), T.dvector("b")
    va = np.array([1.0, 1e10, np.inf, np.nan, np.inf, 1e-9])
    vb = np.array([1.0 + 1e-6, 1.00001e10, np.inf, np.nan, -np.inf, 0.0])
    outs = run([a, b], [T.isclose(a, b), T.isclose(a, b, equal_nan=True), T.allclose(a[:2], b[:2]),
                        T.allclose(a, b, rtol=0, atol=0)], [va, vb], mode)
    np.testing.assert_array_equal(outs[0], np.isclose(va, vb))
    np.testing.assert_array_equal(outs[1], np.isclose(va, vb, equal_nan=True))
    assert outs[2] == np.allclose(va[:2], vb[:2]) and outs[3] == np.False_
    assert T.isclose(T.ivector(), T.ivector()).dtype == "bool" and T.allclose(a, b).ndim == 0


def test_iround_modes(mode):
    x = T.dvector("x")
    values = np.array([0.5, 1.5, -0.5, -2.5, 2.4, -2.6])
    even, away = run([x], [T.iround(x), T.iround(x, "half_away_from_zero")], [values], mode)
    assert even.dtype == away.dtype == np.int64
    np.testing.assert_array_equal(even, [0, 2, 0, -2, 2, -3])
    np.testing.assert_array_equal(away, [1, 2, -1, -3, 2, -3])
    with pytest.raises(ValueError, match="half_away_from_zero"):
        T.iround(x, "up")


@pytest.mark.parametrize("axes", [2, 1, 0, [[1, 2], [1, 0]], [[0], [2]]])
def test_tensordot_matches_numpy(axes, mode, rng):
    a, b = T.dtensor3("a"), T.dtensor3("b")
    va, vb = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 3, 2))
    if axes == 2:
        vb = rng.normal(size=(3, 4, 2))
    np.testing.assert_allclose(run([a, b], T.tensordot(a, b, axes), [va, vb], mode), np.tensordot(va, vb, axes))


def test_tensordot_gradient_and_errors(rng):
    ss.verify_grad(lambda a, b: T.tensordot(a, b, [[1, 2], [1, 0]]), [rng.normal(size=(2, 3, 4)),
                                                                     rng.normal(size=(4, 3, 5))])
    a, b = T.tensor("float64", shape=(2, 3)), T.tensor("float64", shape=(4, 5))
    with pytest.raises(ValueError, match="cannot be contracted"):
        T.tensordot(a, b, 1)
    with pytest.raises(ValueError, match="pair 2 axes of a with 1"):
        T.tensordot(a, b, [[0, 1], [0]])
    with pytest.raises(ValueError, match="out of range"):
        T.tensordot(a, b, [[5], [0]])


@pytest.mark.parametrize("shapes, reference", [
    (((3, 2, 4), (3, 4, 5)), lambda a, b: np.matmul(a, b)),
    (((3, 4), (3, 4)), lambda a, b: np.sum(a * b, axis=1)),
    (((3, 2, 4), (3, 4)), lambda a, b: np.einsum("bij,bj->bi", a, b)),
    (((3,), (3, 4, 5)), lambda a, b: a[:, None, None] * b),
    (((3, 2, 2, 4), (3, 4, 5)), lambda a, b: np.einsum("bijk,bkl->bijl", a, b)),
])
def test_batched_dot_matches_a_loop_of_dots(shapes, reference, mode, rng):
    va, vb = (rng.normal(size=s) for s in shapes)
    a, b = T.tensor("float64", shape=(None,) * va.ndim), T.tensor("float64", shape=(None,) * vb.ndim)
    np.testing.assert_allclose(run([a, b], T.batched_dot(a, b), [va, vb], mode), reference(va, vb))
    ss.verify_grad(T.batched_dot, [va, vb])


def test_batched_tensordot_and_its_errors(rng):
    va, vb = rng.normal(size=(2, 3, 4, 5)), rng.normal(size=(2, 5, 4))
    a, b = T.dtensor4("a") if hasattr(T, "dtensor4") else T.tensor("float64", shape=(None,) * 4), T.dtensor3("b")
    out = T.batched_tensordot(a, b, [[2, 3], [2, 1]]).eval({a: va, b: vb})
    np.testing.assert_allclose(out, np.einsum("bijk,bkj->bi", va, vb))
    with pytest.raises(ValueError, match="batch axis"):
        T.batched_tensordot(a, b, [[0], [0]])
    with pytest.raises(TypeError, match="batch axis"):
        T.batched_dot(T.dscalar(), b)


def test_tile_forms_and_errors(mode):
    x = T.dmatrix("x")
    r, reps = T.iscalar("r"), T.ivector("reps")
    outs = run([x, r, reps], [T.tile(x, r), T.tile(x, reps, ndim=3), T.tile(x, [r, 2])],
               [X, np.int32(3), np.int32([2, 2])], mode)
    np.testing.assert_array_equal(outs[0], np.tile(X, 3))
    np.testing.assert_array_equal(outs[1], np.tile(X, (1, 2, 2)))
    np.testing.assert_array_equal(outs[2], np.tile(X, (3, 2)))
    with pytest.raises(ValueError, match="give ndim"):
        T.tile(x, reps)
    with pytest.raises(TypeError, match="reps"):
        T.tile(x, T.dvector())
    with pytest.raises(ValueError, match="ndim=1"):
        T.tile(x, 2, ndim=1)


def test_shape_pads_stacklists_grids_and_identity_like(mode):
    x = T.dmatrix("x")
    assert T.shape_padleft(x, 2).type.shape == (1, 1, None, None)
    assert T.shape_padright(x).type.shape == (None, None, 1)
    assert T.shape_padaxis(x, -1).type.shape == (None, None, 1)
    with pytest.raises(IndexError, match="out of range"):
        T.shape_padaxis(x, 3)
    a, b = T.dscalar("a"), T.dscalar("b")
    np.testing.assert_array_equal(run([a, b], T.stacklists([[a, b], [b, a]]), [1.0, 2.0], mode), [[1, 2], [2, 1]])
    n = T.lscalar("n")
    grids = run([n], T.mgrid[0:n, 1:5:2] + T.ogrid[0:n, 1:5:2], [3], mode)
    for got, want in zip(grids, list(np.mgrid[0:3, 1:5:2]) + list(np.ogrid[0:3, 1:5:2])):
        np.testing.assert_array_equal(got, want)
    eye = run([x], T.identity_like(x), [X], mode)
    np.testing.assert_array_equal(eye, np.eye(2, 3))
    with pytest.raises(TypeError, match="mgrid"):
        T.mgrid[0]


def test_max_and_argmax(mode):
    x = T.dmatrix("x")
    m, i = run([x], T.max_and_argmax(x, axis=1), [X], mode)
    np.testing.assert_array_equal(m, X.max(axis=1))
    np.testing.assert_array_equal(i, X.argmax(axis=1))
