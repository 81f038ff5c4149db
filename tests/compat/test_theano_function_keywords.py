"""``theano.In`` / ``theano.Param`` inputs with defaults and keyword calls, as the deeplearning.net
tutorials use them: ``train_model(index=i)`` with ``theano.In(lr, value=0.1)``."""

import numpy as np
import pytest

import symscan.compat.theano as theano
import symscan.compat.theano.tensor as T
import symscan.compile


def test_in_and_param_are_theano_names():
    assert theano.In is symscan.compile.In and theano.compile.In is theano.In
    assert theano.compile.Param is theano.Param and issubclass(theano.Param, theano.In)


def test_param_is_deprecated_and_its_default_is_in_value(mode):
    lr = T.dscalar("lr")
    with pytest.warns(DeprecationWarning, match=r"Param\(x, default=v\) by theano.In\(x, value=v\)"):
        spec = theano.Param(lr, default=0.25, name="rate")
    f = theano.function([spec], lr * 4.0, mode=mode)
    assert f() == 1.0 and f(rate=2.0) == 8.0


def test_in_with_name_mutable_and_borrow(mode):
    x, scale = T.dvector("x"), T.dscalar("scale")
    f = theano.function([theano.In(x, mutable=True, borrow=True), theano.In(scale, name="k", value=3.0)],
                        x * scale, mode=mode)
    np.testing.assert_array_equal(f([1.0, 2.0]), [3.0, 6.0])
    np.testing.assert_array_equal(f(k=-1.0, x=[1.0, 2.0]), [-1.0, -2.0])


def test_keyword_errors_name_the_input():
    index, lr = T.lscalar("index"), T.dscalar("lr")
    f = theano.function([index, theano.In(lr, value=0.1)], index * lr, name="train_model")
    with pytest.raises(TypeError, match=r"'train_model' has no input named 'learning_rate'; its inputs are "
                                        r"\('index', 'lr'\)"):
        f(index=1, learning_rate=0.5)
    with pytest.raises(TypeError, match=r"'train_model' got two values for input 0 \('index'\)"):
        f(1, index=1)
    with pytest.raises(TypeError, match=r"'train_model' takes 2 input\(s\).*no value for input 0 \('index'\)"):
        f(lr=0.5)


def _blobs(n=200, d=5, k=3, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, k, size=n)
    return rng.normal(size=(k, d))[labels] * 3 + rng.normal(size=(n, d)), labels


def test_tutorial_mlp_trained_by_sgd_with_index_keyword_and_in_learning_rate(mode):
    """The MLP tutorial's training function (shared data sliced by ``givens``, labels cast to
    int32, SGD updates) called as ``train_model(index=i)``: the cost falls over 20 steps, and
    every cost and parameter matches a numpy implementation of the same steps."""
    data, labels = _blobs()
    n, d, k, hidden_size, batch_size = len(data), data.shape[1], 3, 8, 20
    w_hidden0 = np.random.default_rng(1).uniform(-0.5, 0.5, size=(d, hidden_size))
    train_set_x = theano.shared(data, name="train_set_x", borrow=True)
    train_set_y = T.cast(theano.shared(labels.astype("float64"), name="train_set_y"), "int32")
    index, lr = T.lscalar("index"), T.dscalar("lr")
    x, y = T.matrix("x"), T.ivector("y")
    W_h, b_h = theano.shared(w_hidden0, name="W_h"), theano.shared(np.zeros(hidden_size), name="b_h")
    W, b = theano.shared(np.zeros((hidden_size, k)), name="W"), theano.shared(np.zeros(k), name="b")
    p_y_given_x = T.nnet.softmax(T.dot(T.tanh(T.dot(x, W_h) + b_h), W) + b)
    cost = -T.mean(T.log(p_y_given_x)[T.arange(y.shape[0]), y])
    params = [W_h, b_h, W, b]
    updates = [(p, p - lr * g) for p, g in zip(params, T.grad(cost, params))]
    train_model = theano.function(
        inputs=[index, theano.In(lr, value=0.1)], outputs=cost, updates=updates, mode=mode,
        givens={x: train_set_x[index * batch_size:(index + 1) * batch_size],
                y: train_set_y[index * batch_size:(index + 1) * batch_size]})
    costs = [float(train_model(index=step % (n // batch_size))) for step in range(20)]
    expected_costs, expected_params = _numpy_mlp_sgd(data, labels, w_hidden0, k, batch_size, 0.1, 20)
    np.testing.assert_allclose(costs, expected_costs, rtol=1e-10)
    for param, expected in zip(params, expected_params):
        np.testing.assert_allclose(param.get_value(), expected, rtol=1e-9, atol=1e-12)
    assert costs[-1] < 0.6 * costs[0]
    assert float(train_model(0, lr=0.0)) == pytest.approx(float(train_model(index=0, lr=0.0)))


def _numpy_mlp_sgd(data, labels, w_hidden, k, batch_size, lr, steps):
    w_h, b_h = w_hidden.copy(), np.zeros(w_hidden.shape[1])
    w, b = np.zeros((w_hidden.shape[1], k)), np.zeros(k)
    costs, n_batches = [], len(data) // batch_size
    for step in range(steps):
        i = step % n_batches
        xb, yb = data[i * batch_size:(i + 1) * batch_size], labels[i * batch_size:(i + 1) * batch_size]
        hidden = np.tanh(xb @ w_h + b_h)
        logits = hidden @ w + b
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        costs.append(-np.mean(np.log(p[np.arange(len(yb)), yb])))
        d_logits = p.copy()
        d_logits[np.arange(len(yb)), yb] -= 1.0
        d_logits /= len(yb)
        d_hidden = (d_logits @ w.T) * (1 - hidden ** 2)
        grads = [xb.T @ d_hidden, d_hidden.sum(axis=0), hidden.T @ d_logits, d_logits.sum(axis=0)]
        w_h, b_h, w, b = (p_ - lr * g for p_, g in zip((w_h, b_h, w, b), grads))
    return costs, (w_h, b_h, w, b)
