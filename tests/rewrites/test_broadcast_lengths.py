"""proven_same_shape: sum_to and fill steps removed where broadcasting proves the shapes equal,
kept where a length the graph does not tie (a label vector that may have length 1) may
broadcast; numbers as mode "py", with the rule and without, and the same errors."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from rewrites.broadcast_lengths import axis_lengths, proven_equal
from symscan.tensor.broadcast import SumToShape
from symscan.tensor.elemwise import Elemwise
from symscan.tensor.shape import DimShuffle

OFF = ["-proven_same_shape"]


def _logistic_regression():
    X, y, w, b = T.matrix("X"), T.vector("y"), T.vector("w"), T.scalar("b")
    p = T.sigmoid(T.dot(X, w) + b)
    cost = -(y * T.log(p) + (1 - y) * T.log(1 - p)).mean()
    return [X, y, w, b], ss.grad(cost, [w, b])


def _softmax_cross_entropy():
    X, y, W, b = T.matrix("X"), T.ivector("y"), T.matrix("W"), T.vector("b")
    p = T.softmax(T.dot(X, W) + b)
    cost = -T.log(p[T.arange(y.shape[0]), y]).mean()
    return [X, y, W, b], ss.grad(cost, [W, b])


def _count(f, op_class) -> int:
    return sum(isinstance(n.op, op_class) for n in f.fgraph.apply_nodes)


def _results(build, values, mode, rewrites=None):
    inputs, grads = build()
    return [np.asarray(v) for v in ss.function(inputs, grads, mode=mode, rewrites=rewrites)(*values)]


def _logistic_values(rng, rows, labels):
    return [rng.normal(size=(rows, 3)), rng.uniform(size=labels), rng.normal(size=3), np.float64(0.3)]


def _softmax_values(rng, rows, classes, biases):
    return [rng.normal(size=(rows, 4)), rng.integers(0, classes, size=rows).astype(np.int32),
            rng.normal(size=(4, classes)), rng.normal(size=biases)]


@pytest.mark.parametrize("rows, labels", [(5, 5), (5, 1), (1, 4), (0, 1)])
def test_logistic_regression_agrees_with_py_with_the_rule_and_without(rng, rows, labels):
    values = _logistic_values(rng, rows, labels)
    expected = _results(_logistic_regression, values, "py")
    for rewrites in (None, OFF):
        for got, want in zip(_results(_logistic_regression, values, "fast", rewrites), expected):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("biases", [3, 1])
def test_softmax_cross_entropy_agrees_with_py_with_the_rule_and_without(rng, biases):
    values = _softmax_values(rng, 6, 3, biases)
    expected = _results(_softmax_cross_entropy, values, "py")
    for rewrites in (None, OFF):
        for got, want in zip(_results(_softmax_cross_entropy, values, "fast", rewrites), expected):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_the_rule_removes_the_sum_to_steps_broadcasting_proves_useless():
    counts = {}
    for name, build in (("logistic", _logistic_regression), ("softmax", _softmax_cross_entropy)):
        for rule in ("on", "off"):
            inputs, grads = build()
            f = ss.function(inputs, grads, mode="fast", rewrites=None if rule == "on" else OFF)
            counts[name, rule] = (len(f.fgraph.apply_nodes), _count(f, SumToShape))
    # kept: the sums to p's length of terms multiplied by y (y may have length 1 and broadcast),
    # softmax's sums to the row maxima and row sums (real reductions), to b and to X @ W (b may
    # have length 1)
    assert counts == {("logistic", "on"): (17, 2), ("logistic", "off"): (27, 5),
                      ("softmax", "on"): (30, 4), ("softmax", "off"): (38, 6)}
    assert any(r.rule == "proven_same_shape" for r in ss.function(*_logistic_regression(), mode="fast")
               .rewrite_report().fired)


@pytest.mark.parametrize("rewrites", [None, OFF])
def test_mismatched_lengths_still_raise(rng, rewrites):
    values = _logistic_values(rng, 5, 3)
    with pytest.raises(ValueError, match="broadcast"):
        _results(_logistic_regression, values, "py")
    with pytest.raises(ValueError, match="broadcast"):
        _results(_logistic_regression, values, "fast", rewrites)
    a, b = T.vector("a"), T.vector("b")
    f = ss.function([a, b], ss.grad((T.exp(a) * b).sum(), [a, b]), mode="fast", rewrites=rewrites)
    with pytest.raises(ValueError, match="broadcast"):
        f(np.ones(3), np.ones(4))


def test_proofs_follow_broadcasting_not_order():
    a, b, m = T.vector("a"), T.vector("b"), T.matrix("m")
    assert proven_equal(T.exp(a) * b, b + a * 2)
    assert not proven_equal(a * b, a)  # b may be longer than a length-1 a
    assert proven_equal(m + a, (a * m).T.T)
    assert not proven_equal(m + a, m.T + a)
    assert proven_equal(T.dot(m, a) + 1, T.exp(T.dot(m, b)))  # m's rows, however long a and b
    row_sums = m.sum(axis=1, keepdims=True)
    assert axis_lengths(row_sums)[1] == frozenset() and axis_lengths(row_sums)[0] == axis_lengths(m)[0]
    assert proven_equal((m * row_sums) / row_sums, m)


def test_shapes_of_fills_are_read_from_what_they_fill(rng):
    w, k = T.matrix("w"), T.scalar("k")
    for rewrites, seconds in ((None, 0), (OFF, 1)):
        f = ss.function([w, k], (T.zeros_like(w) + k).shape, mode="fast", rewrites=rewrites)
        assert sum(n.op == Elemwise("second") for n in f.fgraph.apply_nodes) == seconds
        np.testing.assert_array_equal(f(np.ones((2, 3)), 1.5), [2, 3])


@pytest.mark.parametrize("rewrites", [None, OFF])
def test_the_shape_of_a_value_that_cannot_be_computed_still_raises(rewrites):
    a, b, c = T.vector("a"), T.vector("b"), T.vector("c")
    f = ss.function([a, b, c], (a * (b * c) + 1).shape, mode="fast", rewrites=rewrites)
    np.testing.assert_array_equal(f(np.ones(3), np.ones(3), np.ones(1)), [3])
    with pytest.raises(ValueError, match="broadcast"):
        f(np.ones(3), np.ones(3), np.ones(2))


def test_lengths_of_a_transpose_are_read_from_its_input():
    m = T.matrix("m")
    shuffled = m.T.dimshuffle(0, "x", 1)
    outputs = [shuffled.shape[0] * 10 + shuffled.shape[1], shuffled.shape[-1]]
    for rewrites, shuffles in ((None, 0), (OFF, 1)):
        f = ss.function([m], outputs, mode="fast", rewrites=rewrites)
        assert sum(isinstance(n.op, DimShuffle) for n in f.fgraph.apply_nodes) == shuffles
        assert [int(v) for v in f(np.ones((2, 3)))] == [31, 2]


@pytest.mark.parametrize("rewrites", [None, OFF])
def test_an_operand_whose_computation_may_raise_is_still_computed(rewrites):
    x, y = T.lvector("x"), T.vector("y")
    raises = x ** -1  # numpy: integers to negative integer powers are not allowed
    outputs = [Elemwise("second")(raises, y * x), (raises + y * x).shape]
    for output in outputs:
        f = ss.function([x, y], output, mode="fast", rewrites=rewrites)
        with pytest.raises(ValueError, match="negative integer powers"):
            f(np.array([1, 2]), np.ones(2))


@pytest.mark.parametrize("rewrites", [None, OFF])
def test_a_dimshuffle_that_checks_a_length_is_still_computed(rewrites):
    m, v = T.matrix("m"), T.vector("v")
    dropped = m.dimshuffle(1)  # checks at run time that m has one row
    outputs = [dropped.shape[0], (T.exp(dropped) + v).shape, Elemwise("second")(dropped * 2.0, v * 3.0)]
    for output in outputs:
        f = ss.function([m, v], output, mode="fast", rewrites=rewrites)
        f(np.ones((1, 3)), np.ones(3))
        with pytest.raises(ValueError, match="cannot be dropped"):
            f(np.ones((2, 3)), np.ones(3))
