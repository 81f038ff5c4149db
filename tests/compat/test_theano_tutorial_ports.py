"""The deeplearning.net Theano tutorials (SdA, RBM with persistent CD, DBN, RNN-RBM, RNN-SLU,
LSTM, HMC) in compact form, ported by changing imports only and written in the tutorials' own
style: classes whose constructors make defaults with ``if not W:``, ``theano.shared(numpy.asarray(
..., dtype=theano.config.floatX), borrow=True)``, ``updates`` as lists of pairs, ``givens``
slicing shared data by ``index``, keyword calls and ``theano.scan`` for Gibbs chains and
recurrences. Each model trains on tiny synthetic data, and each deterministic step is checked
against numpy. (Logistic regression, the MLP and the dA are in test_theano_tutorials.py and
test_theano_function_keywords.py.)"""

from collections import OrderedDict

import numpy
import pytest

import symscan.compat.theano as theano
import symscan.compat.theano.tensor as T
from symscan.compat.theano.sandbox.rng_mrg import MRG_RandomStreams
from symscan.compat.theano.tensor.shared_randomstreams import RandomStreams

floatX = theano.config.floatX


def _shared_dataset(data_x, data_y=None):
    """The tutorials' ``shared_dataset``: data in shared variables, labels cast to int32."""
    shared_x = theano.shared(numpy.asarray(data_x, dtype=theano.config.floatX), borrow=True)
    if data_y is None:
        return shared_x
    shared_y = theano.shared(numpy.asarray(data_y, dtype=theano.config.floatX), borrow=True)
    return shared_x, T.cast(shared_y, "int32")


def _blobs(n, d, k, seed, scale=3.0):
    """``k`` well separated Gaussian blobs in ``d`` dimensions, squashed into (0, 1) by a sigmoid."""
    rng = numpy.random.default_rng(seed)
    labels = rng.integers(0, k, size=n)
    centres = rng.normal(size=(k, d)) * scale
    return 1 / (1 + numpy.exp(-(centres[labels] + rng.normal(size=(n, d))))), labels


def _binary_patterns(n, d, seed, flip=0.05):
    """Noisy copies of two complementary binary prototypes (what an RBM learns quickly)."""
    rng = numpy.random.default_rng(seed)
    prototype = (numpy.arange(d) % 2).astype(float)
    rows = numpy.where(rng.random(n)[:, None] < 0.5, prototype, 1 - prototype)
    return numpy.abs(rows - (rng.random((n, d)) < flip))


def _sigmoid(x):
    return 1 / (1 + numpy.exp(-x))


def _softmax_rows(x):
    e = numpy.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# ---------------------------------------------------------------------------- shared layers
class LogisticRegression:
    def __init__(self, input, n_in, n_out):
        self.W = theano.shared(value=numpy.zeros((n_in, n_out), dtype=theano.config.floatX), name="W", borrow=True)
        self.b = theano.shared(value=numpy.zeros((n_out,), dtype=theano.config.floatX), name="b", borrow=True)
        self.p_y_given_x = T.nnet.softmax(T.dot(input, self.W) + self.b)
        self.y_pred = T.argmax(self.p_y_given_x, axis=1)
        self.params = [self.W, self.b]
        self.input = input

    def negative_log_likelihood(self, y):
        return -T.mean(T.log(self.p_y_given_x)[T.arange(y.shape[0]), y])

    def errors(self, y):
        return T.mean(T.neq(self.y_pred, y))


class HiddenLayer:
    def __init__(self, rng, input, n_in, n_out, W=None, b=None, activation=T.tanh):
        self.input = input
        if W is None:
            W_values = numpy.asarray(rng.uniform(low=-numpy.sqrt(6.0 / (n_in + n_out)),
                                                 high=numpy.sqrt(6.0 / (n_in + n_out)), size=(n_in, n_out)),
                                     dtype=theano.config.floatX)
            if activation == theano.tensor.nnet.sigmoid:
                W_values *= 4
            W = theano.shared(value=W_values, name="W", borrow=True)
        if b is None:
            b = theano.shared(value=numpy.zeros((n_out,), dtype=theano.config.floatX), name="b", borrow=True)
        self.W, self.b = W, b
        lin_output = T.dot(input, self.W) + self.b
        self.output = lin_output if activation is None else activation(lin_output)
        self.params = [self.W, self.b]


# ---------------------------------------------------------------------------- SdA
class dA:  # noqa: N801  (the tutorial's name)
    def __init__(self, numpy_rng, theano_rng=None, input=None, n_visible=8, n_hidden=4, W=None, bhid=None,
                 bvis=None):
        self.n_visible, self.n_hidden = n_visible, n_hidden
        if not theano_rng:
            theano_rng = MRG_RandomStreams(numpy_rng.integers(2 ** 30))
        if not W:
            initial_W = numpy.asarray(numpy_rng.uniform(low=-4 * numpy.sqrt(6.0 / (n_hidden + n_visible)),
                                                        high=4 * numpy.sqrt(6.0 / (n_hidden + n_visible)),
                                                        size=(n_visible, n_hidden)), dtype=theano.config.floatX)
            W = theano.shared(value=initial_W, name="W", borrow=True)
        if not bvis:
            bvis = theano.shared(value=numpy.zeros(n_visible, dtype=theano.config.floatX), borrow=True)
        if not bhid:
            bhid = theano.shared(value=numpy.zeros(n_hidden, dtype=theano.config.floatX), name="b", borrow=True)
        self.W, self.b, self.b_prime = W, bhid, bvis
        self.W_prime = self.W.T
        self.theano_rng = theano_rng
        self.x = T.dmatrix(name="input") if input is None else input
        self.params = [self.W, self.b, self.b_prime]

    def get_corrupted_input(self, input, corruption_level):
        return self.theano_rng.binomial(size=input.shape, n=1, p=1 - corruption_level,
                                        dtype=theano.config.floatX) * input

    def get_hidden_values(self, input):
        return T.nnet.sigmoid(T.dot(input, self.W) + self.b)

    def get_reconstructed_input(self, hidden):
        return T.nnet.sigmoid(T.dot(hidden, self.W_prime) + self.b_prime)

    def get_cost_updates(self, corruption_level, learning_rate):
        tilde_x = self.get_corrupted_input(self.x, corruption_level)
        y = self.get_hidden_values(tilde_x)
        z = self.get_reconstructed_input(y)
        L = -T.sum(self.x * T.log(z) + (1 - self.x) * T.log(1 - z), axis=1)
        cost = T.mean(L)
        gparams = T.grad(cost, self.params)
        updates = [(param, param - learning_rate * gparam) for param, gparam in zip(self.params, gparams)]
        return cost, updates


class SdA:
    def __init__(self, numpy_rng, theano_rng=None, n_ins=8, hidden_layers_sizes=(6, 4), n_outs=3):
        self.sigmoid_layers, self.dA_layers, self.params = [], [], []
        self.n_layers = len(hidden_layers_sizes)
        if not theano_rng:
            theano_rng = MRG_RandomStreams(numpy_rng.integers(2 ** 30))
        self.x = T.matrix("x")
        self.y = T.ivector("y")
        for i in range(self.n_layers):
            input_size = n_ins if i == 0 else hidden_layers_sizes[i - 1]
            layer_input = self.x if i == 0 else self.sigmoid_layers[-1].output
            sigmoid_layer = HiddenLayer(rng=numpy_rng, input=layer_input, n_in=input_size,
                                        n_out=hidden_layers_sizes[i], activation=T.nnet.sigmoid)
            self.sigmoid_layers.append(sigmoid_layer)
            self.params.extend(sigmoid_layer.params)
            self.dA_layers.append(dA(numpy_rng=numpy_rng, theano_rng=theano_rng, input=layer_input,
                                     n_visible=input_size, n_hidden=hidden_layers_sizes[i],
                                     W=sigmoid_layer.W, bhid=sigmoid_layer.b))
        self.logLayer = LogisticRegression(input=self.sigmoid_layers[-1].output, n_in=hidden_layers_sizes[-1],
                                           n_out=n_outs)
        self.params.extend(self.logLayer.params)
        self.finetune_cost = self.logLayer.negative_log_likelihood(self.y)
        self.errors = self.logLayer.errors(self.y)

    def pretraining_functions(self, train_set_x, batch_size):
        index = T.lscalar("index")
        corruption_level = T.scalar("corruption")
        learning_rate = T.scalar("lr")
        batch_begin = index * batch_size
        batch_end = batch_begin + batch_size
        pretrain_fns = []
        for dA_layer in self.dA_layers:
            cost, updates = dA_layer.get_cost_updates(corruption_level, learning_rate)
            fn = theano.function(inputs=[index, theano.In(corruption_level, value=0.2),
                                         theano.In(learning_rate, value=0.1)],
                                 outputs=cost, updates=updates,
                                 givens={self.x: train_set_x[batch_begin:batch_end]})
            pretrain_fns.append(fn)
        return pretrain_fns

    def build_finetune_functions(self, train_set_x, train_set_y, batch_size, learning_rate):
        index = T.lscalar("index")
        gparams = T.grad(self.finetune_cost, self.params)
        updates = [(param, param - gparam * learning_rate) for param, gparam in zip(self.params, gparams)]
        train_fn = theano.function(inputs=[index], outputs=self.finetune_cost, updates=updates,
                                   givens={self.x: train_set_x[index * batch_size:(index + 1) * batch_size],
                                           self.y: train_set_y[index * batch_size:(index + 1) * batch_size]},
                                   name="train")
        error_fn = theano.function([], self.errors, givens={self.x: train_set_x, self.y: train_set_y})
        return train_fn, error_fn


def _numpy_da_step(x, W, b, b_prime, lr):
    """One SGD step of a dA without corruption: the cost before the step and the new parameters."""
    y = _sigmoid(x @ W + b)
    z = _sigmoid(y @ W.T + b_prime)
    cost = -numpy.mean(numpy.sum(x * numpy.log(z) + (1 - x) * numpy.log(1 - z), axis=1))
    d_z = (z - x) / len(x)  # through the sigmoid and the cross-entropy
    d_y = (d_z @ W) * y * (1 - y)
    gW = x.T @ d_y + (y.T @ d_z).T
    return cost, (W - lr * gW, b - lr * d_y.sum(axis=0), b_prime - lr * d_z.sum(axis=0))


def test_sda_pretrains_with_mrg_corruption_then_finetunes():
    numpy_rng = numpy.random.default_rng(89677)
    data, labels = _blobs(n=60, d=8, k=3, seed=1)
    train_set_x, train_set_y = _shared_dataset(data, labels)
    batch_size, n_batches = 20, 3
    sda = SdA(numpy_rng=numpy_rng, n_ins=8, hidden_layers_sizes=(6, 4), n_outs=3)
    pretraining_fns = sda.pretraining_functions(train_set_x=train_set_x, batch_size=batch_size)

    # Without corruption a pretraining step is deterministic: check it against numpy.
    first = sda.dA_layers[0]
    before = [p.get_value() for p in first.params]
    cost = pretraining_fns[0](index=1, corruption=0.0, lr=0.1)
    expected_cost, expected_params = _numpy_da_step(data[20:40], *before, lr=0.1)
    assert float(cost) == pytest.approx(expected_cost, rel=1e-10)
    for param, expected in zip(first.params, expected_params):
        numpy.testing.assert_allclose(param.get_value(), expected, rtol=1e-9, atol=1e-12)

    for i in range(sda.n_layers):
        costs = [numpy.mean([pretraining_fns[i](index=batch_index, corruption=0.2, lr=0.5)
                             for batch_index in range(n_batches)]) for _ in range(8)]
        assert costs[-1] < 0.8 * costs[0], (i, costs)

    train_fn, error_fn = sda.build_finetune_functions(train_set_x, train_set_y, batch_size, learning_rate=0.5)
    errors_before = float(error_fn())
    costs = [numpy.mean([train_fn(index=i) for i in range(n_batches)]) for _ in range(15)]
    assert costs[-1] < 0.5 * costs[0], costs
    assert float(error_fn()) < min(errors_before, 0.2)


# ---------------------------------------------------------------------------- RBM with persistent CD
class RBM:
    def __init__(self, input=None, n_visible=12, n_hidden=6, W=None, hbias=None, vbias=None, numpy_rng=None,
                 theano_rng=None):
        self.n_visible, self.n_hidden = n_visible, n_hidden
        if numpy_rng is None:
            numpy_rng = numpy.random.default_rng(1234)
        if theano_rng is None:
            theano_rng = RandomStreams(int(numpy_rng.integers(2 ** 30)))
        if W is None:
            initial_W = numpy.asarray(numpy_rng.uniform(low=-4 * numpy.sqrt(6.0 / (n_hidden + n_visible)),
                                                        high=4 * numpy.sqrt(6.0 / (n_hidden + n_visible)),
                                                        size=(n_visible, n_hidden)), dtype=theano.config.floatX)
            W = theano.shared(value=initial_W, name="W", borrow=True)
        if hbias is None:
            hbias = theano.shared(value=numpy.zeros(n_hidden, dtype=theano.config.floatX), name="hbias", borrow=True)
        if vbias is None:
            vbias = theano.shared(value=numpy.zeros(n_visible, dtype=theano.config.floatX), name="vbias", borrow=True)
        self.input = input
        if not input:
            self.input = T.matrix("input")
        self.W, self.hbias, self.vbias = W, hbias, vbias
        self.theano_rng = theano_rng
        self.params = [self.W, self.hbias, self.vbias]

    def free_energy(self, v_sample):
        wx_b = T.dot(v_sample, self.W) + self.hbias
        vbias_term = T.dot(v_sample, self.vbias)
        hidden_term = T.sum(T.log(1 + T.exp(wx_b)), axis=1)
        return -hidden_term - vbias_term

    def propup(self, vis):
        pre_sigmoid_activation = T.dot(vis, self.W) + self.hbias
        return [pre_sigmoid_activation, T.nnet.sigmoid(pre_sigmoid_activation)]

    def sample_h_given_v(self, v0_sample):
        pre_sigmoid_h1, h1_mean = self.propup(v0_sample)
        h1_sample = self.theano_rng.binomial(size=h1_mean.shape, n=1, p=h1_mean, dtype=theano.config.floatX)
        return [pre_sigmoid_h1, h1_mean, h1_sample]

    def propdown(self, hid):
        pre_sigmoid_activation = T.dot(hid, self.W.T) + self.vbias
        return [pre_sigmoid_activation, T.nnet.sigmoid(pre_sigmoid_activation)]

    def sample_v_given_h(self, h0_sample):
        pre_sigmoid_v1, v1_mean = self.propdown(h0_sample)
        v1_sample = self.theano_rng.binomial(size=v1_mean.shape, n=1, p=v1_mean, dtype=theano.config.floatX)
        return [pre_sigmoid_v1, v1_mean, v1_sample]

    def gibbs_vhv(self, v0_sample):
        pre_sigmoid_h1, h1_mean, h1_sample = self.sample_h_given_v(v0_sample)
        pre_sigmoid_v1, v1_mean, v1_sample = self.sample_v_given_h(h1_sample)
        return [pre_sigmoid_h1, h1_mean, h1_sample, pre_sigmoid_v1, v1_mean, v1_sample]

    def gibbs_hvh(self, h0_sample):
        pre_sigmoid_v1, v1_mean, v1_sample = self.sample_v_given_h(h0_sample)
        pre_sigmoid_h1, h1_mean, h1_sample = self.sample_h_given_v(v1_sample)
        return [pre_sigmoid_v1, v1_mean, v1_sample, pre_sigmoid_h1, h1_mean, h1_sample]

    def get_cost_updates(self, lr=0.1, persistent=None, k=1):
        pre_sigmoid_ph, ph_mean, ph_sample = self.sample_h_given_v(self.input)
        chain_start = ph_sample if persistent is None else persistent
        ([pre_sigmoid_nvs, nv_means, nv_samples, pre_sigmoid_nhs, nh_means, nh_samples], updates) = theano.scan(
            self.gibbs_hvh, outputs_info=[None, None, None, None, None, chain_start], n_steps=k, name="gibbs_hvh")
        chain_end = nv_samples[-1]
        cost = T.mean(self.free_energy(self.input)) - T.mean(self.free_energy(chain_end))
        gparams = T.grad(cost, self.params, consider_constant=[chain_end])
        for gparam, param in zip(gparams, self.params):
            updates[param] = param - gparam * T.cast(lr, dtype=theano.config.floatX)
        if persistent:
            updates[persistent] = nh_samples[-1]
            monitoring_cost = self.get_pseudo_likelihood_cost(updates)
        else:
            monitoring_cost = self.get_reconstruction_cost(updates, pre_sigmoid_nvs[-1])
        return monitoring_cost, updates

    def get_pseudo_likelihood_cost(self, updates):
        bit_i_idx = theano.shared(value=0, name="bit_i_idx")
        xi = T.round(self.input)
        fe_xi = self.free_energy(xi)
        xi_flip = T.set_subtensor(xi[:, bit_i_idx], 1 - xi[:, bit_i_idx])
        fe_xi_flip = self.free_energy(xi_flip)
        cost = T.mean(self.n_visible * T.log(T.nnet.sigmoid(fe_xi_flip - fe_xi)))
        updates[bit_i_idx] = (bit_i_idx + 1) % self.n_visible
        return cost

    def get_reconstruction_cost(self, updates, pre_sigmoid_nv):
        return T.mean(T.sum(self.input * T.log(T.nnet.sigmoid(pre_sigmoid_nv))
                            + (1 - self.input) * T.log(1 - T.nnet.sigmoid(pre_sigmoid_nv)), axis=1))


def _numpy_free_energy(v, W, hbias, vbias):
    return -numpy.log1p(numpy.exp(v @ W + hbias)).sum(axis=1) - v @ vbias


def _numpy_pseudo_likelihood(x, bit, W, hbias, vbias):
    xi = numpy.round(x)
    flipped = xi.copy()
    flipped[:, bit] = 1 - flipped[:, bit]
    gap = _numpy_free_energy(flipped, W, hbias, vbias) - _numpy_free_energy(xi, W, hbias, vbias)
    return numpy.mean(x.shape[1] * numpy.log(_sigmoid(gap)))


def _mean_field_reconstruction(data, W, hbias, vbias):
    """The deterministic reconstruction cross-entropy of ``data`` through the RBM's means."""
    z = _sigmoid(_sigmoid(data @ W + hbias) @ W.T + vbias)
    return -numpy.mean(numpy.sum(data * numpy.log(z) + (1 - data) * numpy.log(1 - z), axis=1))


def test_rbm_trained_by_persistent_cd_k():
    n_visible, n_hidden, batch_size, n_batches = 12, 6, 10, 4
    data = _binary_patterns(batch_size * n_batches, n_visible, seed=3)
    train_set_x = _shared_dataset(data)
    index = T.lscalar()
    x = T.matrix("x")
    rbm = RBM(input=x, n_visible=n_visible, n_hidden=n_hidden, numpy_rng=numpy.random.default_rng(123))
    persistent_chain = theano.shared(numpy.zeros((batch_size, n_hidden), dtype=theano.config.floatX), borrow=True)
    cost, updates = rbm.get_cost_updates(lr=0.1, persistent=persistent_chain, k=3)
    train_rbm = theano.function([index], cost, updates=updates,
                                givens={x: train_set_x[index * batch_size:(index + 1) * batch_size]}, name="train_rbm")

    # The monitoring cost reads the parameters and the flipped bit before the step's updates.
    first_params = [p.get_value() for p in rbm.params]
    reconstruction_before = _mean_field_reconstruction(data, *first_params)
    pseudo_likelihoods = []
    for epoch in range(15):
        for batch_index in range(n_batches):
            params = [p.get_value() for p in rbm.params]
            step = epoch * n_batches + batch_index
            pseudo_likelihoods.append(float(train_rbm(batch_index)))
            expected = _numpy_pseudo_likelihood(data[batch_index * batch_size:(batch_index + 1) * batch_size],
                                                step % n_visible, *params)
            assert pseudo_likelihoods[-1] == pytest.approx(expected, rel=1e-9), step
    chain = persistent_chain.get_value()
    assert chain.shape == (batch_size, n_hidden) and set(numpy.unique(chain)) <= {0.0, 1.0}

    # Sampling from the trained RBM as the tutorial does: a scan of Gibbs steps from a shared
    # chain of visible units, whose last sample becomes the chain's next value.
    persistent_vis_chain = theano.shared(numpy.asarray(data[:4], dtype=theano.config.floatX))
    ([presig_hids, hid_mfs, hid_samples, presig_vis, vis_mfs, vis_samples], updates) = theano.scan(
        rbm.gibbs_vhv, outputs_info=[None, None, None, None, None, persistent_vis_chain], n_steps=5, name="gibbs_vhv")
    updates.update({persistent_vis_chain: vis_samples[-1]})
    sample_fn = theano.function([], [vis_mfs[-1], vis_samples[-1]], updates=updates, name="sample_fn")
    vis_mf, vis_sample = sample_fn()
    numpy.testing.assert_array_equal(persistent_vis_chain.get_value(), vis_sample)
    assert vis_mf.shape == (4, n_visible) and ((0 < vis_mf) & (vis_mf < 1)).all()
    # The prototypes alternate bits: a sample close to one of them is what the RBM learned.
    prototype = numpy.arange(n_visible) % 2
    distance = numpy.minimum(numpy.abs(vis_sample - prototype).sum(axis=1),
                             numpy.abs(vis_sample - (1 - prototype)).sum(axis=1))
    assert distance.mean() < 3
    assert not numpy.array_equal(rbm.W.get_value(), first_params[0])
    assert numpy.mean(pseudo_likelihoods[-n_batches:]) > 0.5 * numpy.mean(pseudo_likelihoods[:n_batches])
    assert _mean_field_reconstruction(data, *(p.get_value() for p in rbm.params)) < 0.5 * reconstruction_before


# ---------------------------------------------------------------------------- DBN
class DBN:
    def __init__(self, numpy_rng, theano_rng=None, n_ins=8, hidden_layers_sizes=(6, 4), n_outs=3):
        self.sigmoid_layers, self.rbm_layers, self.params = [], [], []
        self.n_layers = len(hidden_layers_sizes)
        if not theano_rng:
            theano_rng = MRG_RandomStreams(int(numpy_rng.integers(2 ** 30)))
        self.x = T.matrix("x")
        self.y = T.ivector("y")
        for i in range(self.n_layers):
            input_size = n_ins if i == 0 else hidden_layers_sizes[i - 1]
            layer_input = self.x if i == 0 else self.sigmoid_layers[-1].output
            sigmoid_layer = HiddenLayer(rng=numpy_rng, input=layer_input, n_in=input_size,
                                        n_out=hidden_layers_sizes[i], activation=T.nnet.sigmoid)
            self.sigmoid_layers.append(sigmoid_layer)
            self.params.extend(sigmoid_layer.params)
            self.rbm_layers.append(RBM(numpy_rng=numpy_rng, theano_rng=theano_rng, input=layer_input,
                                       n_visible=input_size, n_hidden=hidden_layers_sizes[i],
                                       W=sigmoid_layer.W, hbias=sigmoid_layer.b))
        self.logLayer = LogisticRegression(input=self.sigmoid_layers[-1].output, n_in=hidden_layers_sizes[-1],
                                           n_out=n_outs)
        self.params.extend(self.logLayer.params)
        self.finetune_cost = self.logLayer.negative_log_likelihood(self.y)
        self.errors = self.logLayer.errors(self.y)

    def pretraining_functions(self, train_set_x, batch_size, k):
        index = T.lscalar("index")
        learning_rate = T.scalar("lr")
        batch_begin = index * batch_size
        batch_end = batch_begin + batch_size
        pretrain_fns = []
        for rbm in self.rbm_layers:
            cost, updates = rbm.get_cost_updates(learning_rate, persistent=None, k=k)
            fn = theano.function(inputs=[index, theano.In(learning_rate, value=0.1)], outputs=cost,
                                 updates=updates, givens={self.x: train_set_x[batch_begin:batch_end]})
            pretrain_fns.append(fn)
        return pretrain_fns


def test_dbn_pretrains_rbm_layers_with_cd_then_finetunes():
    numpy_rng = numpy.random.default_rng(123)
    data, labels = _blobs(n=60, d=8, k=3, seed=2)
    train_set_x, train_set_y = _shared_dataset(data, labels)
    batch_size, n_batches = 20, 3
    dbn = DBN(numpy_rng=numpy_rng, n_ins=8, hidden_layers_sizes=(6, 4), n_outs=3)
    pretraining_fns = dbn.pretraining_functions(train_set_x=train_set_x, batch_size=batch_size, k=1)
    for i in range(dbn.n_layers):
        rbm = dbn.rbm_layers[i]
        layer_input = theano.function([], rbm.input, givens={dbn.x: train_set_x})
        before = _mean_field_reconstruction(layer_input(), *(p.get_value() for p in rbm.params))
        for _ in range(10):
            for batch_index in range(n_batches):
                pretraining_fns[i](index=batch_index, lr=0.1)
        after = _mean_field_reconstruction(layer_input(), *(p.get_value() for p in rbm.params))
        assert after < 0.7 * before, (i, before, after)

    index = T.lscalar("index")
    gparams = T.grad(dbn.finetune_cost, dbn.params)
    train_fn = theano.function(
        inputs=[index], outputs=dbn.finetune_cost,
        updates=[(param, param - gparam * 2.0) for param, gparam in zip(dbn.params, gparams)],
        givens={dbn.x: train_set_x[index * batch_size:(index + 1) * batch_size],
                dbn.y: train_set_y[index * batch_size:(index + 1) * batch_size]})
    # The first finetuning cost is the forward pass of the pretrained stack: check it against numpy.
    (W1, b1), (W2, b2) = ([p.get_value() for p in layer.params] for layer in dbn.sigmoid_layers)
    hidden = _sigmoid(_sigmoid(data[:20] @ W1 + b1) @ W2 + b2)
    expected = -numpy.mean(numpy.log(_softmax_rows(hidden @ numpy.zeros((4, 3))))[numpy.arange(20), labels[:20]])
    costs = [float(train_fn(index=0))]
    assert costs[0] == pytest.approx(expected, rel=1e-12)
    for _ in range(15):
        costs.append(numpy.mean([train_fn(index=i) for i in range(n_batches)]))
    assert costs[-1] < 0.3 * costs[0], costs


# ---------------------------------------------------------------------------- RNN-RBM
def build_rbm(v, W, bv, bh, k, rng):
    """The RNN-RBM tutorial's RBM: a k-step Gibbs chain from ``v``, the free-energy cost and the
    cross-entropy monitor (``xlogy0``)."""

    def gibbs_step(v):
        mean_h = T.nnet.sigmoid(T.dot(v, W) + bh)
        h = rng.binomial(size=mean_h.shape, n=1, p=mean_h, dtype=theano.config.floatX)
        mean_v = T.nnet.sigmoid(T.dot(h, W.T) + bv)
        v = rng.binomial(size=mean_v.shape, n=1, p=mean_v, dtype=theano.config.floatX)
        return mean_v, v

    chain, updates = theano.scan(lambda v: gibbs_step(v)[1], outputs_info=[v], n_steps=k)
    v_sample = chain[-1]
    mean_v = gibbs_step(v_sample)[0]
    monitor = T.xlogx.xlogy0(v, mean_v) + T.xlogx.xlogy0(1 - v, 1 - mean_v)
    monitor = monitor.sum() / v.shape[0]

    def free_energy(v):
        return -(v * bv).sum() - T.log(1 + T.exp(T.dot(v, W) + bh)).sum()

    cost = (free_energy(v) - free_energy(v_sample)) / v.shape[0]
    return v_sample, cost, monitor, updates


def shared_normal(num_rows, num_cols, scale=1, rng=None):
    return theano.shared(numpy.asarray(rng.normal(scale=scale / numpy.sqrt(num_rows + num_cols),
                                                  size=(num_rows, num_cols)), dtype=theano.config.floatX))


def shared_zeros(*shape):
    return theano.shared(numpy.zeros(shape, dtype=theano.config.floatX))


def build_rnnrbm(n_visible, n_hidden, n_hidden_recurrent, n_generate, rng, numpy_rng):
    W = shared_normal(n_visible, n_hidden, 0.01, numpy_rng)
    bv, bh = shared_zeros(n_visible), shared_zeros(n_hidden)
    Wuh = shared_normal(n_hidden_recurrent, n_hidden, 0.0001, numpy_rng)
    Wuv = shared_normal(n_hidden_recurrent, n_visible, 0.0001, numpy_rng)
    Wvu = shared_normal(n_visible, n_hidden_recurrent, 0.0001, numpy_rng)
    Wuu = shared_normal(n_hidden_recurrent, n_hidden_recurrent, 0.0001, numpy_rng)
    bu = shared_zeros(n_hidden_recurrent)
    params = W, bv, bh, Wuh, Wuv, Wvu, Wuu, bu
    v = T.matrix()
    u0 = T.zeros((n_hidden_recurrent,))

    def recurrence(v_t, u_tm1):
        bv_t = bv + T.dot(u_tm1, Wuv)
        bh_t = bh + T.dot(u_tm1, Wuh)
        generate = v_t is None
        if generate:
            v_t, _, _, updates = build_rbm(T.zeros((n_visible,)), W, bv_t, bh_t, k=5, rng=rng)
        u_t = T.tanh(bu + T.dot(v_t, Wvu) + T.dot(u_tm1, Wuu))
        return ([v_t, u_t], updates) if generate else [u_t, bv_t, bh_t]

    (u_t, bv_t, bh_t), updates_train = theano.scan(lambda v_t, u_tm1, *_: recurrence(v_t, u_tm1), sequences=v,
                                                   outputs_info=[u0, None, None], non_sequences=params)
    v_sample, cost, monitor, updates_rbm = build_rbm(v, W, bv_t[:], bh_t[:], k=3, rng=rng)
    updates_train.update(updates_rbm)
    (v_t, u_t_generated), updates_generate = theano.scan(lambda u_tm1, *_: recurrence(None, u_tm1),
                                                         outputs_info=[None, u0], non_sequences=params,
                                                         n_steps=n_generate)
    return v, v_sample, cost, monitor, params, updates_train, v_t, updates_generate, (u_t, bv_t, bh_t)


class RnnRbm:
    def __init__(self, n_visible=10, n_hidden=8, n_hidden_recurrent=6, lr=0.1, n_generate=12, seed=0):
        numpy_rng = numpy.random.default_rng(seed)
        rng = RandomStreams(seed=int(numpy_rng.integers(1 << 30)))
        (v, v_sample, cost, monitor, params, updates_train, v_t, updates_generate,
         recurrence) = build_rnnrbm(n_visible, n_hidden, n_hidden_recurrent, n_generate, rng, numpy_rng)
        self.params = params
        gradient = T.grad(cost, params, consider_constant=[v_sample])
        updates_train.update(((p, p - lr * g) for p, g in zip(params, gradient)))
        self.train_function = theano.function([v], monitor, updates=updates_train)
        self.generate_function = theano.function([], v_t, updates=updates_generate)
        self.recurrence_function = theano.function([v], list(recurrence))


def _numpy_rnnrbm_recurrence(sequence, W, bv, bh, Wuh, Wuv, Wvu, Wuu, bu):
    u, us, bvs, bhs = numpy.zeros(len(bu)), [], [], []
    for v_t in sequence:
        bvs.append(bv + u @ Wuv)
        bhs.append(bh + u @ Wuh)
        u = numpy.tanh(bu + v_t @ Wvu + u @ Wuu)
        us.append(u)
    return numpy.array(us), numpy.array(bvs), numpy.array(bhs)


def test_rnnrbm_trains_and_generates_with_a_gibbs_scan_inside_the_recurrence():
    """Training: the RNN's recurrence, then one batched Gibbs chain over every time step.
    Generation: a scan whose step runs the RBM's Gibbs chain (a nested scan with random draws)."""
    rng = numpy.random.default_rng(5)
    n_visible, n_steps = 10, 16
    # A "piano roll": one of two chords that alternate from one time step to the next.
    chords = numpy.array([numpy.arange(n_visible) % 3 == 0, numpy.arange(n_visible) % 3 == 1], dtype=float)
    sequence = numpy.abs(chords[numpy.arange(n_steps) % 2] - (rng.random((n_steps, n_visible)) < 0.03))
    model = RnnRbm(n_visible=n_visible, lr=1.0)

    # The recurrence has no random draw: check it against numpy.
    expected = _numpy_rnnrbm_recurrence(sequence, *(p.get_value() for p in model.params))
    for got, want in zip(model.recurrence_function(sequence), expected):
        numpy.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)

    monitors = [float(model.train_function(sequence)) for _ in range(20)]
    assert numpy.mean(monitors[-3:]) > 0.5 * numpy.mean(monitors[:3]), monitors  # cross-entropies are negative
    generated = model.generate_function()
    assert generated.shape == (12, n_visible) and set(numpy.unique(generated)) <= {0.0, 1.0}
    assert not numpy.array_equal(generated, model.generate_function())  # the generator's state advanced


# ---------------------------------------------------------------------------- RNN for slot filling
def contextwin(sentence, win):
    """The tutorial's context windows: for each word, the ``win`` indices around it, padded with -1."""
    padded = win // 2 * [-1] + list(sentence) + win // 2 * [-1]
    return [padded[i:i + win] for i in range(len(sentence))]


class RNNSLU:
    """The Elman network of the slot-filling tutorial: embeddings of a context window, a
    sigmoid recurrence, a softmax per word, and SGD on one sentence at a time."""

    def __init__(self, nh, nc, ne, de, cs, rng):
        def uniform(*shape, scale=0.2):
            return numpy.asarray(scale * rng.uniform(-1.0, 1.0, shape), dtype=theano.config.floatX)

        self.emb = theano.shared(name="embeddings", value=uniform(ne + 1, de))  # index -1 is the padding
        self.wx = theano.shared(name="wx", value=uniform(de * cs, nh))
        self.wh = theano.shared(name="wh", value=uniform(nh, nh))
        self.w = theano.shared(name="w", value=uniform(nh, nc))
        self.bh = theano.shared(name="bh", value=numpy.zeros(nh, dtype=theano.config.floatX))
        self.b = theano.shared(name="b", value=numpy.zeros(nc, dtype=theano.config.floatX))
        self.h0 = theano.shared(name="h0", value=numpy.zeros(nh, dtype=theano.config.floatX))
        self.params = [self.emb, self.wx, self.wh, self.w, self.bh, self.b, self.h0]

        idxs = T.imatrix()
        x = self.emb[idxs].reshape((idxs.shape[0], de * cs))
        y_sentence = T.ivector("y_sentence")

        def recurrence(x_t, h_tm1):
            h_t = T.nnet.sigmoid(T.dot(x_t, self.wx) + T.dot(h_tm1, self.wh) + self.bh)
            s_t = T.nnet.softmax(T.dot(h_t, self.w) + self.b)
            return [h_t, s_t]

        [h, s], _ = theano.scan(fn=recurrence, sequences=x, outputs_info=[self.h0, None], n_steps=x.shape[0])
        p_y_given_x_sentence = s[:, 0, :]
        y_pred = T.argmax(p_y_given_x_sentence, axis=1)
        lr = T.scalar("lr")
        sentence_nll = -T.mean(T.log(p_y_given_x_sentence)[T.arange(x.shape[0]), y_sentence])
        sentence_gradients = T.grad(sentence_nll, self.params)
        sentence_updates = OrderedDict((p, p - lr * g) for p, g in zip(self.params, sentence_gradients))

        self.classify = theano.function(inputs=[idxs], outputs=y_pred)
        self.sentence_train = theano.function(inputs=[idxs, y_sentence, lr], outputs=sentence_nll,
                                              updates=sentence_updates)
        self.normalize = theano.function(inputs=[], updates={
            self.emb: self.emb / T.sqrt((self.emb ** 2).sum(axis=1)).dimshuffle(0, "x")})

    def train(self, x, y, window_size, learning_rate):
        words = numpy.asarray(contextwin(x, window_size)).astype("int32")
        nll = self.sentence_train(words, numpy.asarray(y, dtype="int32"), learning_rate)
        self.normalize()
        return nll


def _numpy_rnnslu_nll(words, labels, emb, wx, wh, w, bh, b, h0):
    x = emb[words].reshape(len(words), -1)
    h, nll = h0, 0.0
    for x_t, y_t in zip(x, labels):
        h = _sigmoid(x_t @ wx + h @ wh + bh)
        nll -= numpy.log(_softmax_rows(h @ w + b)[y_t])
    return nll / len(words)


def test_elman_rnn_for_slot_filling_trains():
    """Labels depend on the word and on the previous word (which the recurrence must carry)."""
    rng = numpy.random.default_rng(7)
    vocabulary, n_classes, window = 12, 3, 3
    sentences = [rng.integers(0, vocabulary, size=rng.integers(5, 9)) for _ in range(8)]
    labels = [numpy.r_[0, (s[1:] % 3 == 0) + (s[:-1] < 4)].astype("int32") for s in sentences]
    rnn = RNNSLU(nh=8, nc=n_classes, ne=vocabulary, de=5, cs=window, rng=rng)

    words = numpy.asarray(contextwin(sentences[0], window), dtype="int32")
    assert words.shape == (len(sentences[0]), window) and words[0, 0] == -1
    before = [p.get_value() for p in rnn.params]
    nll = rnn.train(sentences[0], labels[0], window, 0.1)
    assert float(nll) == pytest.approx(_numpy_rnnslu_nll(words, labels[0], *before), rel=1e-10)
    emb = rnn.emb.get_value()
    numpy.testing.assert_allclose(numpy.linalg.norm(emb, axis=1), 1.0, rtol=1e-12)  # normalized after the update

    def epoch_nll(learning_rate):
        return numpy.mean([rnn.train(s, y, window, learning_rate) for s, y in zip(sentences, labels)])

    nlls = [epoch_nll(0.5) for _ in range(15)]
    assert nlls[-1] < 0.4 * nlls[0], nlls
    predictions = numpy.concatenate([rnn.classify(numpy.asarray(contextwin(s, window), dtype="int32"))
                                     for s in sentences])
    assert (predictions == numpy.concatenate(labels)).mean() > 0.8


# ---------------------------------------------------------------------------- LSTM for sentiment
SEED = 123


def numpy_floatX(data):
    return numpy.asarray(data, dtype=theano.config.floatX)


def _p(pp, name):
    return f"{pp}_{name}"


def ortho_weight(ndim, rng):
    u, _, _ = numpy.linalg.svd(rng.normal(size=(ndim, ndim)))
    return u.astype(theano.config.floatX)


def init_params(options, rng):
    params = OrderedDict()
    # The tutorial's 0.01 * rand: adadelta then needs hundreds of steps to leave the plateau.
    params["Wemb"] = rng.normal(size=(options["n_words"], options["dim_proj"])).astype(theano.config.floatX)
    dim = options["dim_proj"]
    params[_p("lstm", "W")] = numpy.concatenate([ortho_weight(dim, rng) for _ in range(4)], axis=1)
    params[_p("lstm", "U")] = numpy.concatenate([ortho_weight(dim, rng) for _ in range(4)], axis=1)
    params[_p("lstm", "b")] = numpy.zeros((4 * dim,), dtype=theano.config.floatX)
    params["U"] = 0.01 * rng.normal(size=(dim, options["ydim"])).astype(theano.config.floatX)
    params["b"] = numpy.zeros((options["ydim"],)).astype(theano.config.floatX)
    return params


def init_tparams(params):
    return OrderedDict((kk, theano.shared(pp, name=kk)) for kk, pp in params.items())


def lstm_layer(tparams, state_below, options, prefix="lstm", mask=None):
    nsteps = state_below.shape[0]
    n_samples = state_below.shape[1] if state_below.ndim == 3 else 1
    assert mask is not None
    dim_proj = options["dim_proj"]

    def _slice(_x, n, dim):
        if _x.ndim == 3:
            return _x[:, :, n * dim:(n + 1) * dim]
        return _x[:, n * dim:(n + 1) * dim]

    def _step(m_, x_, h_, c_):
        preact = T.dot(h_, tparams[_p(prefix, "U")])
        preact += x_
        i = T.nnet.sigmoid(_slice(preact, 0, dim_proj))
        f = T.nnet.sigmoid(_slice(preact, 1, dim_proj))
        o = T.nnet.sigmoid(_slice(preact, 2, dim_proj))
        c = T.tanh(_slice(preact, 3, dim_proj))
        c = f * c_ + i * c
        c = m_[:, None] * c + (1.0 - m_)[:, None] * c_
        h = o * T.tanh(c)
        h = m_[:, None] * h + (1.0 - m_)[:, None] * h_
        return h, c

    state_below = T.dot(state_below, tparams[_p(prefix, "W")]) + tparams[_p(prefix, "b")]
    rval, updates = theano.scan(_step, sequences=[mask, state_below],
                                outputs_info=[T.alloc(numpy_floatX(0.0), n_samples, dim_proj),
                                              T.alloc(numpy_floatX(0.0), n_samples, dim_proj)],
                                name=_p(prefix, "_layers"), n_steps=nsteps)
    return rval[0]


def dropout_layer(state_before, use_noise, trng):
    return T.switch(use_noise,
                    state_before * trng.binomial(state_before.shape, p=0.5, n=1, dtype=state_before.dtype),
                    state_before * 0.5)


def build_model(tparams, options):
    trng = RandomStreams(SEED)
    use_noise = theano.shared(numpy_floatX(0.0))
    x = T.matrix("x", dtype="int64")
    mask = T.matrix("mask", dtype=theano.config.floatX)
    y = T.vector("y", dtype="int64")
    n_timesteps, n_samples = x.shape[0], x.shape[1]
    emb = tparams["Wemb"][x.flatten()].reshape([n_timesteps, n_samples, options["dim_proj"]])
    proj = lstm_layer(tparams, emb, options, prefix="lstm", mask=mask)
    proj = (proj * mask[:, :, None]).sum(axis=0)
    proj = proj / mask.sum(axis=0)[:, None]
    if options["use_dropout"]:
        proj = dropout_layer(proj, use_noise, trng)
    pred = T.nnet.softmax(T.dot(proj, tparams["U"]) + tparams["b"])
    f_pred_prob = theano.function([x, mask], pred, name="f_pred_prob")
    f_pred = theano.function([x, mask], pred.argmax(axis=1), name="f_pred")
    off = 1e-8 if pred.dtype == "float16" else 1e-6
    cost = -T.log(pred[T.arange(n_samples), y] + off).mean()
    return use_noise, x, mask, y, f_pred_prob, f_pred, cost


def adadelta(lr, tparams, grads, x, mask, y, cost):
    zipped_grads = [theano.shared(p.get_value() * numpy_floatX(0.0), name=f"{k}_grad") for k, p in tparams.items()]
    running_up2 = [theano.shared(p.get_value() * numpy_floatX(0.0), name=f"{k}_rup2") for k, p in tparams.items()]
    running_grads2 = [theano.shared(p.get_value() * numpy_floatX(0.0), name=f"{k}_rgrad2")
                      for k, p in tparams.items()]
    zgup = [(zg, g) for zg, g in zip(zipped_grads, grads)]
    rg2up = [(rg2, 0.95 * rg2 + 0.05 * (g ** 2)) for rg2, g in zip(running_grads2, grads)]
    f_grad_shared = theano.function([x, mask, y], cost, updates=zgup + rg2up, name="adadelta_f_grad_shared")
    updir = [-T.sqrt(ru2 + 1e-6) / T.sqrt(rg2 + 1e-6) * zg
             for zg, ru2, rg2 in zip(zipped_grads, running_up2, running_grads2)]
    ru2up = [(ru2, 0.95 * ru2 + 0.05 * (ud ** 2)) for ru2, ud in zip(running_up2, updir)]
    param_up = [(p, p + ud) for p, ud in zip(tparams.values(), updir)]
    f_update = theano.function([lr], [], updates=ru2up + param_up, on_unused_input="ignore",
                               name="adadelta_f_update")
    return f_grad_shared, f_update, (zipped_grads, running_up2, running_grads2)


def prepare_data(seqs, labels):
    """Sequences as columns of a (max length, samples) int64 matrix, with a float mask."""
    lengths = [len(s) for s in seqs]
    x = numpy.zeros((max(lengths), len(seqs))).astype("int64")
    x_mask = numpy.zeros((max(lengths), len(seqs))).astype(theano.config.floatX)
    for idx, s in enumerate(seqs):
        x[:lengths[idx], idx] = s
        x_mask[:lengths[idx], idx] = 1.0
    return x, x_mask, numpy.asarray(labels, dtype="int64")


def _numpy_lstm_cost(x, mask, y, params, dim):
    emb = params["Wemb"][x]
    h = c = numpy.zeros((x.shape[1], dim))
    total = numpy.zeros_like(h)
    for m, e in zip(mask, emb):
        preact = h @ params["lstm_U"] + e @ params["lstm_W"] + params["lstm_b"]
        i, f, o = (_sigmoid(preact[:, n * dim:(n + 1) * dim]) for n in range(3))
        c_new = f * c + i * numpy.tanh(preact[:, 3 * dim:])
        c = m[:, None] * c_new + (1 - m)[:, None] * c
        h = m[:, None] * (o * numpy.tanh(c)) + (1 - m)[:, None] * h
        total += h * m[:, None]
    proj = total / mask.sum(axis=0)[:, None] * 0.5  # dropout off: the expected scale
    pred = _softmax_rows(proj @ params["U"] + params["b"])
    return -numpy.mean(numpy.log(pred[numpy.arange(len(y)), y] + 1e-6))


def test_lstm_for_sentiment_trains_with_adadelta():
    """Sentiment = whether "good" words (ids < 5) outnumber "bad" ones in a variable-length
    sequence; masks pad the batch, dropout runs while training."""
    rng = numpy.random.default_rng(11)
    options = dict(n_words=10, dim_proj=6, ydim=2, use_dropout=True)
    tparams = init_tparams(init_params(options, rng))
    use_noise, x, mask, y, f_pred_prob, f_pred, cost = build_model(tparams, options)
    weight_decay = theano.shared(numpy_floatX(1e-4), name="decay_c")
    weight_decay *= (tparams["U"] ** 2).sum()
    cost += weight_decay
    f_cost = theano.function([x, mask, y], cost, name="f_cost")
    grads = T.grad(cost, wrt=list(tparams.values()))
    f_grad = theano.function([x, mask, y], grads, name="f_grad")
    lr = T.scalar(name="lr")
    f_grad_shared, f_update, (zipped_grads, running_up2, running_grads2) = adadelta(lr, tparams, grads, x, mask, y,
                                                                                  cost)
    seqs = [rng.integers(0, 10, size=rng.integers(3, 8)) for _ in range(32)]
    labels = [int((s < 5).sum() > (s >= 5).sum()) for s in seqs]
    batches = [prepare_data(seqs[i:i + 16], labels[i:i + 16]) for i in range(0, 32, 16)]

    # Without dropout the cost is deterministic: check it against numpy.
    use_noise.set_value(0.0)
    x0, mask0, y0 = batches[0]
    assert x0.shape[1] == 16 and mask0.dtype == theano.config.floatX and (mask0[-1] == 0).any()
    params0 = {k: p.get_value() for k, p in tparams.items()}
    expected_cost = _numpy_lstm_cost(x0, mask0, y0, params0, 6) + 1e-4 * (params0["U"] ** 2).sum()
    assert float(f_cost(x0, mask0, y0)) == pytest.approx(expected_cost, rel=1e-10)
    assert f_pred_prob(x0, mask0).shape == (16, 2)

    # One adadelta step (without dropout) against numpy, from the gradients it stored.
    f_grad_shared(x0, mask0, y0)
    g = [zg.get_value() for zg in zipped_grads]
    for stored, direct in zip(g, f_grad(x0, mask0, y0)):
        numpy.testing.assert_array_equal(stored, direct)
    f_update(0.0001)
    for p0, gk, p in zip(params0.values(), g, tparams.values()):
        rg2 = 0.05 * gk ** 2
        step = -numpy.sqrt(1e-6) / numpy.sqrt(rg2 + 1e-6) * gk
        numpy.testing.assert_allclose(p.get_value(), p0 + step, rtol=1e-10, atol=1e-14)
    for ru2, gk in zip(running_up2, g):
        numpy.testing.assert_allclose(ru2.get_value(), 0.05 * (numpy.sqrt(1e-6) / numpy.sqrt(0.05 * gk ** 2 + 1e-6)
                                                               * gk) ** 2, rtol=1e-10, atol=1e-20)

    def train_cost():
        use_noise.set_value(0.0)
        return numpy.mean([f_cost(*batch) for batch in batches])

    costs = [train_cost()]
    for _ in range(8):
        use_noise.set_value(1.0)
        for _ in range(12):
            for batch in batches:
                f_grad_shared(*batch)
                f_update(lr=0.0001)
        costs.append(train_cost())
    assert costs[-1] < 0.6 * costs[0], costs
    accuracy = numpy.mean(numpy.concatenate([f_pred(x_, mask_) == y_ for x_, mask_, y_ in batches]))
    assert accuracy > 0.85


# ---------------------------------------------------------------------------- HMC sampler
def sharedX(value, name):
    return theano.shared(numpy.asarray(value, dtype=theano.config.floatX), name=name)


def kinetic_energy(vel):
    return 0.5 * (vel ** 2).sum(axis=1)


def hamiltonian(pos, vel, energy_fn):
    return energy_fn(pos) + kinetic_energy(vel)


def metropolis_hastings_accept(energy_prev, energy_next, s_rng):
    ediff = energy_prev - energy_next
    return (T.exp(ediff) - s_rng.uniform(size=energy_prev.shape)) >= 0


def simulate_dynamics(initial_pos, initial_vel, stepsize, n_steps, energy_fn):
    """Leapfrog: a half step of the velocity, full steps in a scan, a last half step."""

    def leapfrog(pos, vel, step):
        dE_dpos = T.grad(energy_fn(pos).sum(), pos)
        new_vel = vel - step * dE_dpos
        new_pos = pos + step * new_vel
        return [new_pos, new_vel], {}

    initial_energy = energy_fn(initial_pos)
    dE_dpos = T.grad(initial_energy.sum(), initial_pos)
    vel_half_step = initial_vel - 0.5 * stepsize * dE_dpos
    pos_full_step = initial_pos + stepsize * vel_half_step
    (all_pos, all_vel), scan_updates = theano.scan(leapfrog, outputs_info=[dict(initial=pos_full_step),
                                                                           dict(initial=vel_half_step)],
                                                   non_sequences=[stepsize], n_steps=n_steps - 1)
    final_pos, final_vel = all_pos[-1], all_vel[-1]
    assert not scan_updates
    energy = energy_fn(final_pos)
    final_vel = final_vel - 0.5 * stepsize * T.grad(energy.sum(), final_pos)
    return final_pos, final_vel


def hmc_move(s_rng, positions, energy_fn, stepsize, n_steps):
    initial_vel = s_rng.normal(size=positions.shape)
    final_pos, final_vel = simulate_dynamics(initial_pos=positions, initial_vel=initial_vel, stepsize=stepsize,
                                             n_steps=n_steps, energy_fn=energy_fn)
    accept = metropolis_hastings_accept(energy_prev=hamiltonian(positions, initial_vel, energy_fn),
                                        energy_next=hamiltonian(final_pos, final_vel, energy_fn), s_rng=s_rng)
    return accept, final_pos


def hmc_updates(positions, stepsize, avg_acceptance_rate, final_pos, accept, target_acceptance_rate, stepsize_inc,
                stepsize_dec, stepsize_min, stepsize_max, avg_acceptance_slowness):
    accept_matrix = accept.dimshuffle(0, *(("x",) * (final_pos.ndim - 1)))
    new_positions = T.switch(accept_matrix, final_pos, positions)
    _new_stepsize = T.switch(avg_acceptance_rate > target_acceptance_rate, stepsize * stepsize_inc,
                             stepsize * stepsize_dec)
    new_stepsize = T.clip(_new_stepsize, stepsize_min, stepsize_max)
    mean_dtype = theano.scalar.upcast(accept.dtype, avg_acceptance_rate.dtype)
    new_acceptance_rate = T.add(avg_acceptance_slowness * avg_acceptance_rate,
                                (1.0 - avg_acceptance_slowness) * accept.mean(dtype=mean_dtype))
    return [(positions, new_positions), (stepsize, new_stepsize), (avg_acceptance_rate, new_acceptance_rate)]


class HMC_sampler:  # noqa: N801  (the tutorial's name)
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    @classmethod
    def new_from_shared_positions(cls, shared_positions, energy_fn, initial_stepsize=0.01,
                                  target_acceptance_rate=0.9, n_steps=20, stepsize_dec=0.98, stepsize_min=0.001,
                                  stepsize_max=0.25, stepsize_inc=1.02, avg_acceptance_slowness=0.9, seed=12345):
        stepsize = sharedX(initial_stepsize, "hmc_stepsize")
        avg_acceptance_rate = sharedX(target_acceptance_rate, "avg_acceptance_rate")
        s_rng = T.shared_randomstreams.RandomStreams(seed)
        accept, final_pos = hmc_move(s_rng, shared_positions, energy_fn, stepsize, n_steps)
        simulate_updates = hmc_updates(shared_positions, stepsize, avg_acceptance_rate, final_pos=final_pos,
                                       accept=accept, stepsize_min=stepsize_min, stepsize_max=stepsize_max,
                                       stepsize_inc=stepsize_inc, stepsize_dec=stepsize_dec,
                                       target_acceptance_rate=target_acceptance_rate,
                                       avg_acceptance_slowness=avg_acceptance_slowness)
        simulate = theano.function([], [], updates=simulate_updates)
        return cls(positions=shared_positions, stepsize=stepsize, stepsize_min=stepsize_min,
                   stepsize_max=stepsize_max, avg_acceptance_rate=avg_acceptance_rate,
                   target_acceptance_rate=target_acceptance_rate, s_rng=s_rng, _updates=simulate_updates,
                   simulate=simulate)

    def draw(self, **kwargs):
        self.simulate()
        return self.positions.get_value(borrow=False)


def _gaussian(dim, rng):
    mu = rng.uniform(-1.0, 1.0, size=dim)
    a = rng.normal(size=(dim, dim))
    cov = a @ a.T / dim + 0.5 * numpy.eye(dim)
    return mu, cov, numpy.linalg.inv(cov)


def test_hmc_leapfrog_matches_numpy():
    """``simulate_dynamics`` has no random draw: its scan of leapfrog steps, with ``T.grad``
    inside the step, against numpy's."""
    rng = numpy.random.default_rng(17)
    mu, _, cov_inv = _gaussian(3, rng)
    pos, vel = T.matrix("pos"), T.matrix("vel")
    stepsize = T.scalar("stepsize")

    def gaussian_energy(x):
        return 0.5 * (T.dot((x - mu), cov_inv) * (x - mu)).sum(axis=1)

    final = simulate_dynamics(pos, vel, stepsize, n_steps=6, energy_fn=gaussian_energy)
    f = theano.function([pos, vel, theano.In(stepsize, value=0.1)], list(final))
    pos0, vel0 = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))

    def grad_energy(x):
        return (x - mu) @ cov_inv

    p, v = pos0.copy(), vel0 - 0.05 * grad_energy(pos0)
    p = p + 0.1 * v
    for _ in range(5):
        v = v - 0.1 * grad_energy(p)
        p = p + 0.1 * v
    v = v - 0.05 * grad_energy(p)
    got_pos, got_vel = f(pos=pos0, vel=vel0)
    numpy.testing.assert_allclose(got_pos, p, rtol=1e-12)
    numpy.testing.assert_allclose(got_vel, v, rtol=1e-12)


def test_hmc_samples_a_gaussian():
    """The tutorial's test: 20 chains sample a 3-d Gaussian whose mean and covariance are known
    (entries of the mean up to 0.9 from 0, variances 0.8 to 1.3), to within 0.1 and 0.2; the
    stepsize adapts to the acceptance rate."""
    batchsize, dim, n_samples, burnin = 20, 3, 200, 50
    rng = numpy.random.default_rng(123)
    mu, cov, cov_inv = _gaussian(dim, rng)

    def gaussian_energy(x):
        return 0.5 * (T.dot((x - mu), cov_inv) * (x - mu)).sum(axis=1)

    position = theano.shared(rng.normal(size=(batchsize, dim)).astype(theano.config.floatX))
    sampler = HMC_sampler.new_from_shared_positions(position, gaussian_energy, initial_stepsize=0.1,
                                                    stepsize_max=0.5, n_steps=10)
    for _ in range(burnin):
        sampler.draw()
    samples = numpy.asarray([sampler.draw() for _ in range(n_samples)]).reshape(-1, dim)
    stepsize, acceptance = float(sampler.stepsize.get_value()), float(sampler.avg_acceptance_rate.get_value())
    assert stepsize == pytest.approx(0.5)  # acceptance above the 0.9 target: grown from 0.1 up to stepsize_max
    assert 0.9 < acceptance < 1.0
    numpy.testing.assert_allclose(samples.mean(axis=0), mu, atol=0.1)
    numpy.testing.assert_allclose(numpy.cov(samples.T), cov, atol=0.2)
