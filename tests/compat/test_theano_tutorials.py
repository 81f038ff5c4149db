"""What the deeplearning.net Theano tutorials (logistic regression, MLP, dA, SdA, DBN, RBM,
RNN-RBM, RNN-SLU, LSTM, HMC) stopped on: module paths, ``config.warn``, ``scalar.upcast``,
Theano's softmax, ``xlogx``, truthy variables and ``MRG_RandomStreams``; and small tutorial-style
models that train."""

import subprocess
import sys

import numpy as np
import pytest

import symscan as ss
import symscan.compat.theano as theano
import symscan.compat.theano.tensor as T
from symscan.compat.theano.sandbox.rng_mrg import MRG_RandomStreams
from symscan.compat.theano.tensor.nnet import sigmoid
from symscan.compat.theano.tensor.shared_randomstreams import RandomStreams
from symscan.compat.theano.tensor.xlogx import xlogx, xlogy0


# ---------------------------------------------------------------------------- module paths
def test_import_paths_of_the_tutorials():
    assert sigmoid is T.nnet.sigmoid is ss.tensor.sigmoid
    assert RandomStreams is T.shared_randomstreams.RandomStreams is ss.RandomStream
    assert MRG_RandomStreams is theano.sandbox.rng_mrg.MRG_RandomStreams
    assert xlogx is T.xlogx.xlogx and xlogy0 is T.xlogx.xlogy0
    assert theano.scalar.upcast("float32", "int64") == "float64"


def test_sandbox_is_an_attribute_after_import_theano_alone():
    code = ("import symscan.compat.theano as theano\n"
            "rng = theano.sandbox.rng_mrg.MRG_RandomStreams(1234)\n"
            "print(theano.tensor.nnet.softmax, rng.uniform((2,)).dtype)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "float64" in out.stdout


def test_nnet_has_no_convolution():
    """Only what symscan has: Theano's ``nnet.conv`` is not pretended."""
    with pytest.raises(ImportError):
        from symscan.compat.theano.tensor.nnet import conv  # noqa: F401


# ---------------------------------------------------------------------------- config.warn, upcast
def test_warn_flags_set_at_import_time():
    warn = theano.config.warn
    saved = warn.subtensor_merge_bug, warn.sum_div_dimshuffle_bug
    warn.subtensor_merge_bug = False
    warn.sum_div_dimshuffle_bug = False
    assert warn.subtensor_merge_bug is False and warn.inc_subtensor1_opt is True and warn.ignore_bug_before == "0.9"
    warn.subtensor_merge_bug, warn.sum_div_dimshuffle_bug = saved


def test_unknown_config_names_raise():
    with pytest.raises(AttributeError, match="config.warn has no flag 'subtensor_merge_bugg'.*subtensor_merge_bug"):
        theano.config.warn.subtensor_merge_bugg = False
    with pytest.raises(AttributeError, match="no flag 'nope'"):
        _ = theano.config.warn.nope
    with pytest.raises(AttributeError):
        _ = theano.config.no_such_flag


@pytest.mark.parametrize("dtypes, expected", [(("float32", "float32"), "float32"), (("float32", "int64"), "float64"),
                                              (("int8", "uint8"), "int16"), (("int32", "float64"), "float64"),
                                              (("bool", "int8", "float16"), "float16")])
def test_upcast(dtypes, expected):
    assert theano.scalar.upcast(*dtypes) == expected


def test_upcast_reads_floatx(floatX):
    assert theano.scalar.upcast("floatX", "int8") == floatX


# ---------------------------------------------------------------------------- softmax
def test_softmax_of_a_vector_is_a_row(mode):
    x = T.dvector("x")
    s = T.nnet.softmax(x)
    assert s.type.shape[0] == 1 and s.ndim == 2
    values = np.array([1.0, 2.0, 0.5])
    expected = np.exp(values) / np.exp(values).sum()
    np.testing.assert_allclose(ss.function([x], s, mode=mode)(values), expected[None, :], rtol=1e-12)


def test_softmax_in_an_rnn_slu_loop(mode):
    """RNN-SLU: the step returns ``softmax(...)`` of a vector and reads ``s[:, 0, :]``."""
    x, W = T.dmatrix("x"), T.dmatrix("W")
    s, _ = theano.scan(lambda x_t: T.nnet.softmax(T.dot(x_t, W)), sequences=x)
    p_y = s[:, 0, :]
    xv, Wv = np.arange(6.0).reshape(3, 2) / 6, np.array([[1.0, -1.0, 0.5], [0.2, 0.3, -0.4]])
    logits = xv @ Wv
    expected = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    got = ss.function([x, W], [p_y, T.argmax(p_y, axis=1)], mode=mode)(xv, Wv)
    np.testing.assert_allclose(got[0], expected, rtol=1e-12)
    np.testing.assert_array_equal(got[1], expected.argmax(axis=1))


def test_softmax_rows_and_refused_ranks():
    m = T.dmatrix("m")
    values = np.array([[1.0, 2.0], [3.0, 5.0]])
    np.testing.assert_allclose(T.nnet.softmax(m).eval({m: values}),
                               np.exp(values) / np.exp(values).sum(axis=1, keepdims=True), rtol=1e-12)
    with pytest.raises(ValueError, match="vector or a matrix of floats"):
        T.nnet.softmax(T.dtensor3("t"))
    assert ss.tensor.nnet.softmax(T.dvector("v")).ndim == 1  # symscan's own keeps numpy's shape


def test_nnet_crossentropies_and_relu():
    o, t, y = T.dmatrix("o"), T.dmatrix("t"), T.ivector("y")
    ov = np.array([[0.2, 0.8], [0.6, 0.4]])
    tv, yv = np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([1, 0], dtype=np.int32)
    f = ss.function([o, t, y], [T.nnet.binary_crossentropy(o, t), T.nnet.categorical_crossentropy(o, t),
                                T.nnet.categorical_crossentropy(o, y), T.nnet.relu(o - 0.5), T.nnet.relu(o - 0.5, 0.1)])
    bce, cce, cce_int, relu, leaky = f(ov, tv, yv)
    np.testing.assert_allclose(bce, -(tv * np.log(ov) + (1 - tv) * np.log(1 - ov)))
    np.testing.assert_allclose(cce, -np.log([0.8, 0.6]))
    np.testing.assert_allclose(cce_int, -np.log([0.8, 0.6]))
    np.testing.assert_allclose(relu, np.maximum(ov - 0.5, 0), atol=1e-15)
    np.testing.assert_allclose(leaky, np.where(ov > 0.5, ov - 0.5, 0.1 * (ov - 0.5)), atol=1e-15)


# ---------------------------------------------------------------------------- xlogx
def test_xlogx_values_and_gradients(mode):
    x, y = T.dvector("x"), T.dvector("y")
    xv, yv = np.array([0.0, 0.5, 1.0, 2.0]), np.array([0.0, 0.3, 2.0, 4.0])
    outs = [xlogx(x), xlogy0(x, y), ss.grad(xlogx(x).sum(), x), *ss.grad(xlogy0(x, y).sum(), [x, y])]
    got = ss.function([x, y], outs, mode=mode)(xv, yv)
    with np.errstate(all="ignore"):
        expected = [np.where(xv == 0, 0, xv * np.log(xv)), np.where(xv == 0, 0, xv * np.log(yv)),
                    np.where(xv == 0, 0, 1 + np.log(xv)), np.where(xv == 0, 0, np.log(yv)),
                    np.where(xv == 0, 0, xv / yv)]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12)
    assert not any(np.isnan(g).any() for g in got)


def test_xlogx_verify_grad(rng):
    ss.verify_grad(lambda x: xlogx(x), [rng.uniform(0.1, 2.0, size=5)], rng=rng)
    ss.verify_grad(lambda x, y: xlogy0(x, y), [rng.uniform(0.1, 2.0, size=5), rng.uniform(0.1, 2.0, size=5)], rng=rng)


def test_xlogx_onnxruntime():
    pytest.importorskip("onnxruntime")
    x = T.dvector("x")
    got = ss.function([x], [xlogx(x), ss.grad(xlogx(x).sum(), x)], mode="onnxruntime")(np.array([0.0, 0.5, 2.0]))
    np.testing.assert_allclose(got[0], [0.0, 0.5 * np.log(0.5), 2 * np.log(2.0)], rtol=1e-12)
    np.testing.assert_allclose(got[1], [0.0, 1 + np.log(0.5), 1 + np.log(2.0)], rtol=1e-12)


# ---------------------------------------------------------------------------- truthy variables
class HiddenLayer:
    """The tutorials' constructor: ``if W is None`` / ``if not W`` to make defaults."""

    def __init__(self, rng, input, n_in, n_out, W=None, b=None):
        if not W:
            W = theano.shared(rng.uniform(-0.1, 0.1, size=(n_in, n_out)), name="W")
        if not b:
            b = theano.shared(np.zeros(n_out), name="b")
        self.input = input or T.dmatrix("input")
        self.W, self.b = W, b
        self.output = T.tanh(T.dot(self.input, self.W) + self.b)


def test_constructor_with_if_not_on_variables(rng):
    x = T.dmatrix("x")
    first = HiddenLayer(rng, x, 3, 2)
    tied = HiddenLayer(rng, first.output, 2, 3, W=first.W.T)  # a computed variable as W: truthy
    assert tied.W.owner is not None and tied.input is first.output
    xv = rng.normal(size=(4, 3))
    Wv = first.W.get_value()
    expected = np.tanh(np.tanh(xv @ Wv) @ Wv.T)
    np.testing.assert_allclose(theano.function([x], tied.output)(xv), expected, rtol=1e-12)
    with pytest.raises(TypeError, match="T.and_"):
        if x.sum() > 0:
            pass


# ---------------------------------------------------------------------------- MRG_RandomStreams
def test_mrg_draws_dtypes_and_shapes(floatX):
    rng = MRG_RandomStreams(1234)
    m = T.matrix("m")
    draws = {
        "uniform": rng.uniform(size=m.shape, low=-1.0, high=1.0),
        "normal": rng.normal(size=(2, 3), avg=1.0, std=0.5),
        "binomial": rng.binomial(size=m.shape, n=1, p=0.3, dtype=floatX),
        "binomial_int": rng.binomial(size=(5,), p=0.5),
        "truncated": rng.normal(size=(1000,), truncate=True),
        "truncated_normal": rng.truncated_normal(size=(3,), std=2.0),
    }
    assert [d.dtype for d in draws.values()] == [floatX, floatX, floatX, "int64", floatX, floatX]
    assert draws["uniform"].dtype == theano.scalar.upcast(floatX)
    assert rng.uniform((2,), dtype="float64").dtype == "float64"
    assert rng.uniform((2,), low=np.float64(0.0)).dtype == "float64"  # a float64 value upcasts, as in Theano
    values = theano.function([m], list(draws.values()))(np.zeros((4, 5), dtype=floatX))
    assert [v.shape for v in values] == [(4, 5), (2, 3), (4, 5), (5,), (1000,), (3,)]
    assert ((-1 <= values[0]) & (values[0] < 1)).all() and set(np.unique(values[2])) <= {0, 1}
    assert np.abs(values[4]).max() <= 2.0 and values[4].std() > 0.7


def test_mrg_same_seed_same_draws_and_reseeding():
    def draws(seed):
        rng = MRG_RandomStreams(seed)
        f = theano.function([], [rng.uniform((3,)), rng.normal((2,))])
        return rng, f

    rng1, f1 = draws(42)
    _, f2 = draws(42)
    _, f3 = draws(43)
    first = f1()
    np.testing.assert_array_equal(first[0], f2()[0])
    assert not np.array_equal(first[0], f3()[0])
    assert not np.array_equal(first[0], f1()[0])  # each call advances the state
    rng1.seed()  # back to the constructor's seed
    np.testing.assert_array_equal(f1()[0], first[0])
    assert len(rng1.updates()) == 2


@pytest.mark.parametrize("seed, error", [(0, ValueError), (2147462579, ValueError), ([1, 2, 3, 0, 0, 0], ValueError),
                                         ([1, 2], TypeError), ("7", TypeError)])
def test_mrg_seed_checks(seed, error):
    with pytest.raises(error):
        MRG_RandomStreams(seed)


def test_mrg_six_int_seed_and_argument_checks():
    rng = MRG_RandomStreams([1, 2, 3, 4, 5, 6])
    with pytest.raises(TypeError, match="unexpected keyword arguments"):
        rng.uniform((2,), nonsense=1)
    rng.uniform((2,), target="cpu", nstreams=64)  # accepted, changes nothing
    with pytest.raises(ValueError, match="ndim=3"):
        rng.uniform((2, 2), ndim=3)
    with pytest.raises(ValueError, match="pass ndim"):
        rng.uniform(T.lvector("shape"))
    assert rng.uniform(T.lvector("shape"), ndim=2).ndim == 2
    with pytest.raises(NotImplementedError, match="replace=False"):
        rng.choice(size=1, p=[[0.5, 0.5]])
    with pytest.raises(ValueError, match="size or ndim"):
        rng.multinomial(size=(2,), pvals=[[0.5, 0.5]])


def test_mrg_multinomial_and_choice():
    rng = MRG_RandomStreams(7)
    p = T.dmatrix("p")
    pv = np.array([[0.7, 0.2, 0.1, 0.0], [0.0, 0.0, 0.5, 0.5]])
    counts, picks, old = theano.function([p], [rng.multinomial(n=3, pvals=p), rng.choice(size=2, replace=False, p=p),
                                                rng.multinomial_wo_replacement(n=2, pvals=p)])(pv)
    assert counts.shape == (2, 4) and counts.dtype == np.int64 and (counts.sum(axis=1) == 3).all()
    assert (counts[0, 3] == 0) and (counts[1, :2] == 0).all()
    for rows in (picks, old):
        assert rows.shape == (2, 2) and rows.dtype == np.int64
        assert (rows[:, 0] != rows[:, 1]).all() and set(rows[1]) == {2, 3} and 3 not in rows[0]


def test_mrg_choice_distribution():
    """Without replacement, proportional to what is left: with p = (0.6, 0.3, 0.1) the first
    draw is 0 about 60% of the time, and the second is 1 about 0.6 * 0.3 / 0.4 + 0.1 * 0.3 / 0.9
    of the time."""
    rng = MRG_RandomStreams(11)
    picks = theano.function([], rng.choice(size=2, replace=False, p=np.tile([0.6, 0.3, 0.1], (20000, 1))))()
    assert abs((picks[:, 0] == 0).mean() - 0.6) < 0.015
    assert abs((picks[:, 1] == 1).mean() - (0.6 * 0.3 / 0.4 + 0.1 * 0.3 / 0.9)) < 0.015


# ---------------------------------------------------------------------------- tutorial-style models that train
def test_denoising_autoencoder_with_mrg_corruption_trains():
    """The dA tutorial: ``theano_rng.binomial(size=input.shape, n=1, p=1 - corruption_level,
    dtype=floatX) * input``, tied weights, cross-entropy cost, 20 steps of SGD."""
    numpy_rng = np.random.RandomState(123)
    theano_rng = MRG_RandomStreams(numpy_rng.randint(2 ** 30))
    n_visible, n_hidden = 8, 4
    data = (numpy_rng.uniform(size=(32, n_visible)) < 0.3).astype("float64")
    x = T.matrix("x")
    W = theano.shared(numpy_rng.uniform(-0.3, 0.3, size=(n_visible, n_hidden)), name="W")
    b_hid = theano.shared(np.zeros(n_hidden), name="b_hid")
    b_vis = theano.shared(np.zeros(n_visible), name="b_vis")
    tilde_x = theano_rng.binomial(size=x.shape, n=1, p=1 - 0.3, dtype=theano.config.floatX) * x
    y = T.nnet.sigmoid(T.dot(tilde_x, W) + b_hid)
    z = T.nnet.sigmoid(T.dot(y, W.T) + b_vis)
    L = -T.sum(x * T.log(z) + (1 - x) * T.log(1 - z), axis=1)
    cost = T.mean(L, dtype=theano.config.floatX)
    params = [W, b_hid, b_vis]
    updates = [(p, p - 0.5 * g) for p, g in zip(params, T.grad(cost, params))]
    train = theano.function([x], cost, updates=updates)
    costs = [float(train(data)) for _ in range(20)]
    assert costs[-1] < 0.8 * costs[0]


def test_logistic_regression_with_theano_softmax_trains():
    """The logistic-regression tutorial's model: ``softmax(dot(x, W) + b)``, the negative log
    likelihood by advanced indexing, errors by ``T.neq``'s mean."""
    rng = np.random.default_rng(0)
    xv = rng.normal(size=(40, 3))
    yv = (xv @ np.array([1.0, -2.0, 0.5]) > 0).astype("int32")
    x, y = T.matrix("x"), T.ivector("y")
    W, b = theano.shared(np.zeros((3, 2)), name="W"), theano.shared(np.zeros(2), name="b")
    p_y_given_x = T.nnet.softmax(T.dot(x, W) + b)
    nll = -T.mean(T.log(p_y_given_x)[T.arange(y.shape[0]), y])
    errors = T.mean(T.neq(T.argmax(p_y_given_x, axis=1), y), dtype="float64")
    gW, gb = T.grad(nll, [W, b])
    train = theano.function([x, y], [nll, errors], updates=[(W, W - 0.5 * gW), (b, b - 0.5 * gb)])
    first = train(xv, yv)
    for _ in range(30):
        last = train(xv, yv)
    assert last[0] < 0.5 * first[0] and last[1] < first[1]
