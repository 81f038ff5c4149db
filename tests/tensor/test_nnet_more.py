"""Theano's nnet functions added with the vocabulary: the fused softmax cross-entropies,
h_softmax (against a numpy two-level softmax, every output and the targets' only), elu, selu
and softmax_graph, in every mode and in onnxruntime, with their gradients."""

import numpy as np
import pytest

import symscan as ss
import symscan.compat.theano as theano
import symscan.tensor as T
from symscan.tensor import nnet

from modes_tested import MODES_TESTED


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_h_softmax(x, n_outputs, w1, b1, w2, b2):
    """p(class | x) p(output | class, x) for every output, in label order."""
    classes = np_softmax(x @ w1 + b1)
    within = np_softmax(np.einsum("bd,cdo->bco", x, w2) + b2)
    return (classes[:, :, None] * within).reshape(len(x), -1)[:, :n_outputs]


def _h_values(rng, batch=5, d=4, n_classes=3, per_class=4):
    return [rng.normal(size=(batch, d)), rng.normal(size=(d, n_classes)), rng.normal(size=n_classes),
            rng.normal(size=(n_classes, d, per_class)), rng.normal(size=(n_classes, per_class))]


@pytest.mark.parametrize("mode", MODES_TESTED + ["onnxruntime"])
def test_values_match_numpy(mode, rng):
    x, b, y = T.dmatrix("x"), T.dvector("b"), T.lvector("y")
    xv, bv, yv = rng.normal(size=(4, 5)) * 3, rng.normal(size=5), np.array([0, 4, 2, 2])
    nll, sm = nnet.crossentropy_softmax_1hot(x, y)
    nll_b, sm_b, am_b = nnet.crossentropy_softmax_argmax_1hot_with_bias(x, b, y)
    outs = [nll, sm, nll_b, sm_b, am_b, nnet.elu(x, 0.5), nnet.selu(x), nnet.softmax_graph(x)]
    got = ss.function([x, b, y], outs, mode=mode)(xv, bv, yv)
    p, p_b = np_softmax(xv), np_softmax(xv + bv)
    scale, alpha = nnet.SELU_SCALE, nnet.SELU_ALPHA
    want = [-np.log(p[np.arange(4), yv]), p, -np.log(p_b[np.arange(4), yv]), p_b, np.argmax(xv + bv, axis=1),
            np.where(xv > 0, xv, 0.5 * np.expm1(xv)), scale * np.where(xv > 0, xv, alpha * np.expm1(xv)),
            np.exp(xv) / np.exp(xv).sum(axis=-1, keepdims=True)]
    for g, w, out in zip(got, want, outs):
        assert g.dtype == w.dtype and g.shape == w.shape, (out, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-12, err_msg=str(out))


@pytest.mark.parametrize("mode", MODES_TESTED + ["onnxruntime"])
def test_h_softmax_every_output_and_the_targets_only(mode, rng):
    values = _h_values(rng)
    x, w1, b1, w2, b2 = (T.tensor("float64", (None,) * v.ndim, name=n) for v, n in
                         zip(values, ["x", "W1", "b1", "W2", "b2"]))
    target = T.lmatrix("target")
    n_outputs = 10  # of 3 classes * 4: the last two are ignored
    every = nnet.h_softmax(x, 5, n_outputs, 3, 4, w1, b1, w2, b2)
    targeted = nnet.h_softmax(x, 5, n_outputs, 3, 4, w1, b1, w2, b2, target)
    targets = np.array([[0], [9], [4], [5], [7]])
    got_every, got_targeted = ss.function([x, w1, b1, w2, b2, target], [every, targeted], mode=mode)(
        *values, targets)
    want = np_h_softmax(values[0], n_outputs, *values[1:])
    np.testing.assert_allclose(got_every, want, rtol=1e-12)
    assert got_targeted.shape == (5,)  # Theano's code returns a vector
    np.testing.assert_allclose(got_targeted, want[np.arange(5), targets[:, 0]], rtol=1e-12)
    assert np.all(want.sum(axis=1) < 1)  # two of the twelve outputs are dropped


def test_gradients():
    rng = np.random.default_rng(3)
    y = np.array([1, 0, 2])
    ss.verify_grad(lambda x: nnet.crossentropy_softmax_1hot(x, y)[0], [rng.normal(size=(3, 4))], rng=rng)
    ss.verify_grad(lambda x, b: nnet.crossentropy_softmax_1hot_with_bias(x, b, y)[0],
                   [rng.normal(size=(3, 4)), rng.normal(size=4)], rng=rng)
    ss.verify_grad(lambda x: nnet.elu(x, 0.7) + nnet.selu(x) + nnet.softmax_graph(x),
                   [np.array([[-1.5, -0.2, 0.3, 2.0]])], rng=rng)
    targets = np.array([0, 9, 4, 5, 7])
    ss.verify_grad(lambda *v: nnet.h_softmax(v[0], 5, 10, 3, 4, *v[1:], target=targets), _h_values(rng), rng=rng)
    ss.verify_grad(lambda *v: nnet.h_softmax(v[0], 5, 10, 3, 4, *v[1:]), _h_values(rng), rng=rng)


def test_theano_names():
    for name in ("crossentropy_softmax_1hot", "crossentropy_softmax_1hot_with_bias", "h_softmax", "elu", "selu",
                 "softmax_graph", "categorical_crossentropy", "binary_crossentropy"):
        assert getattr(theano.tensor.nnet, name) is getattr(nnet, name)


@pytest.mark.parametrize("build, match", [
    (lambda: nnet.crossentropy_softmax_1hot(T.dvector("x"), T.lvector()), r"x must be a float matrix"),
    (lambda: nnet.crossentropy_softmax_1hot(T.dmatrix(), T.dvector("y")), r"y_idx must be an int vector"),
    (lambda: nnet.h_softmax(T.dmatrix(), 2, 20, 3, 4, T.dmatrix(), T.dvector(), T.dtensor3(), T.dmatrix()),
     r"h_softmax: n_classes \* n_outputs_per_class = 3 \* 4 is below n_outputs = 20"),
    (lambda: nnet.h_softmax(T.dmatrix(), 2, 10, 3, 4, T.dmatrix(), T.dvector(), T.dtensor3(), T.dmatrix(),
                            T.dvector("t")), r"h_softmax: target must be int class indices"),
])
def test_errors(build, match):
    with pytest.raises((TypeError, ValueError), match=match):
        build()
