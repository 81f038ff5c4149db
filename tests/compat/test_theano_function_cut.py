"""``theano.function([h], ...)`` with a computed ``h``: Theano cuts the graph at ``h`` and takes
its value from the caller; nothing above the cut is computed, read or updated by default.
``ss.function`` keeps refusing such inputs."""

import numpy as np
import pytest

import symscan as ss
import symscan.compat.theano as theano
import symscan.compat.theano.tensor as T


def _layer():
    x = T.dmatrix("x")
    W = theano.shared(np.array([[1.0, -1.0], [0.5, 2.0]]), name="W")
    h = T.tanh(T.dot(x, W))
    h.name = "h"
    return x, W, h


def test_the_value_given_for_a_computed_input_is_used(mode):
    x, W, h = _layer()
    f = theano.function([h], (h ** 2).sum(axis=1), mode=mode)
    given = np.array([[3.0, -1.0], [0.0, 2.0]])
    np.testing.assert_array_equal(f(given), (given ** 2).sum(axis=1))
    np.testing.assert_array_equal(f(h=given), (given ** 2).sum(axis=1))
    assert f.fgraph.shared_variables == []  # W, above the cut, is not even read
    assert [v.name for v in f.inputs] == ["h"] and f.inputs[0] is not h and f.inputs[0].owner is None


def test_ss_function_still_refuses_a_computed_input():
    x, W, h = _layer()
    with pytest.raises(TypeError, match=r"inputs\[0\] 'h' .* is not a root variable"):
        ss.function([h], h * 2.0)


def test_the_cut_also_applies_to_updates_and_givens_values(mode):
    x, W, h = _layer()
    acc = theano.shared(0.0, name="acc")
    y = T.dmatrix("y")
    f = theano.function([h], y + h, mode=mode, givens={y: h * 3.0}, updates={acc: acc + h.sum()})
    given = np.array([[1.0, 2.0]])
    np.testing.assert_array_equal(f(given), 4.0 * given)
    assert acc.get_value() == 3.0


def test_explicit_updates_above_the_cut_run_but_default_updates_do_not(mode):
    """An explicit update is always computed (as in Theano); a random draw above the cut is not
    part of the function, so its generator's default update does not run."""
    x = T.dvector("x")
    stream = T.shared_randomstreams.RandomStreams(5)
    noisy = x + stream.normal(size=(2,))
    noisy.name = "noisy"
    rng = [v for v in ss.graph.graph_inputs([noisy]) if isinstance(v, ss.graph.SharedVariable)][0]
    state = rng.get_value().bit_generator.state
    scale = theano.shared(2.0, name="scale")
    f = theano.function([noisy], noisy * scale, mode=mode, updates={scale: scale + 1.0})
    np.testing.assert_array_equal(f([1.0, 2.0]), [2.0, 4.0])
    assert rng.get_value().bit_generator.state == state
    assert scale.get_value() == 3.0
    g = theano.function([x], noisy, mode=mode)  # the uncut graph draws and advances
    g([0.0, 0.0])
    assert rng.get_value().bit_generator.state != state


def test_a_root_input_read_only_above_the_cut_is_unused(mode):
    x, W, h = _layer()
    with pytest.raises(theano.compile.UnusedInputError, match=r"inputs\[0\] 'x'"):
        theano.function([x, h], h * 2.0, mode=mode)
    f = theano.function([x, h], h + x, mode=mode)  # both read below the cut: independent values
    np.testing.assert_array_equal(f(np.ones((1, 2)), np.full((1, 2), 5.0)), [[6.0, 6.0]])


def test_an_in_of_a_computed_variable_with_a_default(mode):
    x, W, h = _layer()
    f = theano.function([theano.In(h, value=np.zeros((1, 2)))], h + 1.0, mode=mode)
    np.testing.assert_array_equal(f(), [[1.0, 1.0]])
    np.testing.assert_array_equal(f(h=[[2.0, 3.0]]), [[3.0, 4.0]])


def test_an_output_that_is_the_computed_input(mode):
    x, W, h = _layer()
    f = theano.function([h], [h, h * 2.0], mode=mode)
    given = np.array([[1.0, 7.0]])
    same, double = f(given)
    np.testing.assert_array_equal(same, given)
    np.testing.assert_array_equal(double, 2.0 * given)
    same[0, 0] = 0.0
    assert given[0, 0] == 1.0


def test_givens_that_replace_an_input_are_refused_as_in_theano():
    x, W, h = _layer()
    z = T.dmatrix("z")
    with pytest.raises(ValueError, match=r"givens replaces 'h' .*which is an input of the function, so the "
                                         r"replacement would have no effect; compile function\(\[new\], \.\.\., "
                                         r"givens=\{h: g\(new\)\}\)"):
        theano.function([h], h * 2.0, givens={h: z})
    with pytest.raises(ValueError, match="givens replaces 'x'"):
        theano.function([x], x * 2.0, givens=[(x, z)])


def test_tutorial_top_layer_trained_on_given_hidden_activations(mode):
    """As the tutorials' stacked models do: a logistic layer over a computed hidden
    representation, compiled as a function of that representation; its predictions on
    encoded data match the whole network's, and training it alone lowers its cost."""
    rng = np.random.default_rng(7)
    data = rng.normal(size=(60, 4))
    labels = (data[:, 0] + data[:, 1] > 0).astype("int32")
    x, y, lr = T.dmatrix("x"), T.ivector("y"), T.dscalar("lr")
    W_h = theano.shared(rng.normal(size=(4, 6)), name="W_h")
    hidden = T.nnet.sigmoid(T.dot(x, W_h))
    hidden.name = "hidden"
    W, b = theano.shared(np.zeros((6, 2)), name="W"), theano.shared(np.zeros(2), name="b")
    p_y = T.nnet.softmax(T.dot(hidden, W) + b)
    cost = -T.mean(T.log(p_y)[T.arange(y.shape[0]), y])
    encode = theano.function([x], hidden, mode=mode)
    whole = theano.function([x], p_y, mode=mode)
    top = theano.function([hidden], p_y, mode=mode)
    train_top = theano.function([hidden, y, theano.In(lr, value=0.5)], cost, mode=mode,
                                updates=[(p, p - lr * g) for p, g in zip([W, b], T.grad(cost, [W, b]))])
    codes = encode(data)
    np.testing.assert_allclose(codes, 1 / (1 + np.exp(-data @ W_h.get_value())), rtol=1e-12)
    costs = [float(train_top(hidden=codes, y=labels)) for _ in range(20)]
    assert costs[-1] < 0.7 * costs[0]
    np.testing.assert_allclose(top(codes), whole(data), rtol=1e-12)
    logits = codes @ W.get_value() + b.get_value()
    expected = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(top(codes), expected, rtol=1e-12)
