"""Gradients through integer-valued outputs, with Theano 1.0's semantics: every op the cost
reaches is asked for its pullback, integer outputs included (theano/gradient.py,
``_populate_grad_dict``). A discrete random draw then says its gradient is undefined
(``RandomFunction.grad`` is ``grad_undefined`` for every input), while casts to an integer,
comparisons, argmax, floor and round give zero, and shapes stay disconnected.

Before, the traversal passed nothing back through integer outputs, so a draw of binomial,
integers, choice or multinomial gave a silent zero gradient."""

import numpy as np
import pytest
from gradient_checks import central_differences

import symscan as ss
import symscan.tensor as T
from symscan.gradient import NullType
from symscan.graph.traversal import toposort
from symscan.scan import Scan

from modes_tested import NUMBA

RANDOM_MODES = ("py", "fast") + (("numba",) if NUMBA else ())
"""Random draws have no ONNX export."""


def draws(stream, p):
    """One draw of each discrete distribution, every one a function of the float vector ``p``
    (3 probabilities), with the input position the error names."""
    n = T.cast(T.floor(p.sum() * 10), "int64")
    return {
        "binomial": (stream.binomial(size=(3,), n=5, p=p), "input 3"),
        "integers": (stream.integers(n, n + 4, size=(3,)), "input 2"),
        "choice": (stream.choice(3, size=(4,), p=p / p.sum()), "input 3"),
        "multinomial": (stream.multinomial(n=4, pvals=p / p.sum()), "input 3"),
    }


DISTRIBUTIONS = ["binomial", "integers", "choice", "multinomial"]


# ---------------------------------------------------------------------------- discrete draws
@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_a_discrete_draw_has_an_undefined_gradient(distribution):
    """As normal and uniform: NullTypeGradError naming the op and its input."""
    p = T.dvector("p")
    draw, position = draws(ss.RandomStream(1), p)[distribution]
    assert draw.dtype == "int64"
    with pytest.raises(ss.NullTypeGradError, match=rf"RandomVariable\{{{distribution}.*{position}"):
        ss.grad((draw * 1.0).sum(), p)
    assert isinstance(ss.grad((draw * 1.0).sum(), p, null_gradients="return").type, NullType)


INTEGER_STEPS = {
    "int cost": lambda d: d.sum(),
    "int product, then float": lambda d: (d * 2 + 1).sum() * 0.5,
    "cast": lambda d: T.cast(d, "float32").sum(),
    "slice of an int": lambda d: (d[1:] * 1.0).sum(),
    "comparison": lambda d: T.cast(d > 1, "float64").sum(),
    "argmax": lambda d: T.argmax(d.flatten()) * 1.0,
    "int max": lambda d: d.max() * 1.0,
    "int cumsum": lambda d: (T.cumsum(d.flatten()) * 1.0).sum(),
    "reshape and join": lambda d: (T.concatenate([d.flatten(), d.flatten()]).reshape((2, -1)) * 1.0).sum(),
}


@pytest.mark.parametrize("step", INTEGER_STEPS)
def test_integer_ops_between_a_draw_and_the_cost_still_ask_the_draw(step):
    """Undefined whatever integer ops lie between the draw and the cost (Theano: each of them
    passes back zeros, and the draw's gradient is undefined whatever it receives)."""
    p = T.dvector("p")
    draw, _ = draws(ss.RandomStream(2), p)["binomial"]
    with pytest.raises(ss.NullTypeGradError, match="binomial"):
        ss.grad(INTEGER_STEPS[step](draw), p)


def test_a_float_draw_seen_through_an_integer_cast_is_undefined():
    """Theano: the cast passes back zeros, and the normal draw's gradient is undefined."""
    mu = T.dscalar("mu")
    draw = ss.RandomStream(3).normal(size=(3,), avg=mu)
    with pytest.raises(ss.NullTypeGradError, match="normal"):
        ss.grad(T.cast(draw, "int64").sum(), mu)


def test_the_shape_of_a_draw_stays_disconnected():
    """Only the draw's values depend on p: its shape does not (Theano's Shape is disconnected)."""
    p = T.dvector("p")
    draw, _ = draws(ss.RandomStream(4), p)["binomial"]
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(draw.shape[0] * 1.0, p)


def test_a_draw_is_a_value_for_the_other_inputs():
    """The draw is undefined w.r.t. its parameters only: w gets the sample as its gradient."""
    p, w = T.dvector("p"), T.dvector("w")
    draw, _ = draws(ss.RandomStream(5), p)["binomial"]
    g = ss.grad((w * draw).sum(), w)
    for mode in RANDOM_MODES:
        sample, gw = ss.function([p, w], [draw, g], mode=mode)(np.array([0.2, 0.5, 0.7]), np.ones(3))
        np.testing.assert_array_equal(gw, sample)


# ---------------------------------------------------------------------------- still zero
ZERO_THROUGH_INTEGERS = {
    "cast to int": lambda x: T.cast(x * 3, "int64").sum(),
    "comparison": lambda x: T.cast(x > 0.5, "float64").sum(),
    "argmax": lambda x: T.argmax(x) * 1.0,
    "floor": lambda x: T.floor(x * 3).sum(),
    "round": lambda x: T.round(x * 3).sum(),
    "int product": lambda x: T.cast(T.cast(x * 3, "int64") * 2, "float64").sum(),
}


@pytest.mark.parametrize("name", ZERO_THROUGH_INTEGERS)
def test_integer_and_rounding_ops_give_zero(name):
    """Connected with gradient zero, as in Theano, and the same zeros in every mode; with a
    float term beside them, that term's gradient alone (against finite differences)."""
    x = T.dvector("x")
    xv = np.array([0.15, 0.8, 0.41])
    discrete = ZERO_THROUGH_INTEGERS[name](x)
    cost = discrete + (x * x).sum()
    value = ss.function([x], cost, mode="py")
    (fd,) = central_differences(lambda v: float(value(v)), [xv])
    for mode in ("py", "fast", "onnxruntime"):
        g_discrete, g_cost = ss.function([x], ss.grad(discrete, [x]) + ss.grad(cost, [x]), mode=mode)(xv)
        assert g_discrete.dtype == np.float64
        np.testing.assert_array_equal(g_discrete, np.zeros(3))
        np.testing.assert_allclose(g_cost, fd, rtol=1e-6)
        np.testing.assert_allclose(g_cost, 2 * xv, rtol=1e-12)


def test_an_input_reached_only_through_a_shape_is_still_disconnected():
    x = T.dvector("x")
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(T.cast(x.shape[0], "float64"), x)
    g = ss.grad(T.cast(x.shape[0], "float64"), x, disconnected_inputs="ignore")
    np.testing.assert_array_equal(ss.function([x], g)(np.ones(2)), np.zeros(2))


# ---------------------------------------------------------------------------- inside loops
def nit_sot_draw(stream, p, distribution):
    out, updates = ss.scan(lambda: draws(stream, p)[distribution][0], n_steps=4)
    return out, updates


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_a_discrete_draw_in_a_loop_has_an_undefined_gradient(distribution):
    """An integer nit-sot output: the loop's pullback asks its body through it."""
    p = T.dvector("p")
    out, _ = nit_sot_draw(ss.RandomStream(6), p, distribution)
    assert out.dtype == "int64"
    with pytest.raises(ss.NullTypeGradError, match=distribution):
        ss.grad((out * 1.0).sum(), p)


def test_a_draw_accumulated_in_an_integer_state_is_undefined():
    """k_t = k_{t-1} + binomial(p): an integer sit-sot; the cost reads k."""
    p, k0 = T.dvector("p"), T.lvector("k0")
    k, _ = ss.scan(lambda k: k + ss.RandomStream(7).binomial(size=(3,), p=p), outputs_info=k0, n_steps=4)
    with pytest.raises(ss.NullTypeGradError, match="binomial"):
        ss.grad((k * 1.0).sum(), p)


def test_a_float_output_reading_an_integer_state_fed_by_a_draw_is_undefined():
    """y_t = w * k_{t-1} with k_t = k_{t-1} + binomial(p): the cost reads only y, which
    depends on p through the integer state. w's gradient is defined: sum_t k_{t-1}."""
    p, w, k0 = T.dvector("p"), T.dvector("w"), T.lvector("k0")
    stream = ss.RandomStream(8)
    (k, y), updates = ss.scan(lambda k: [k + stream.binomial(size=(3,), p=p), k * w], outputs_info=[k0, None],
                              n_steps=4)
    with pytest.raises(ss.NullTypeGradError, match="binomial"):
        ss.grad(y.sum(), [w, p])
    gw, gk0 = ss.grad(y.sum(), [w, k0])
    values = [np.array([0.3, 0.6, 0.9]), np.array([1.0, 2.0, 0.5]), np.array([1, 0, 2])]
    for mode in RANDOM_MODES:
        kv, gwv, gk0v = ss.function([p, w, k0], [k, gw, gk0], updates=updates, mode=mode)(*values)
        previous = np.vstack([values[2], kv[:-1]])
        np.testing.assert_array_equal(gwv, previous.sum(axis=0))
        np.testing.assert_array_equal(gk0v, np.zeros(3))  # an integer state: connected, zero


def test_a_nested_loop_drawing_integers_is_undefined():
    p = T.dvector("p")
    stream = ss.RandomStream(9)

    def outer_step():
        inner, updates = ss.scan(lambda: stream.binomial(size=(3,), p=p), n_steps=2)
        return inner.sum(axis=0), updates

    out, _ = ss.scan(outer_step, n_steps=3)
    with pytest.raises(ss.NullTypeGradError, match="binomial"):
        ss.grad((out * 1.0).sum(), p)


def test_integer_outputs_of_a_loop_give_zero_beside_float_ones():
    """An integer nit-sot (a comparison) and an integer sit-sot (a counter) beside a float
    state: the float state's gradient is unchanged (finite differences), the integer parts
    give zero, and no loop is built for them."""
    a, h0 = T.dscalar("a"), T.dvector("h0")

    def step(h, count):
        new = T.tanh(a * h)
        return [new, count + 1, new > 0]

    (h, counts, positive), _ = ss.scan(step, outputs_info=[h0, T.constant(np.int64(0)), None], n_steps=5)
    assert counts.dtype == "int64" and positive.dtype == "bool"
    cost = (h * T.constant([1.0, 2.0])).sum() + (counts * 1.0).sum() + T.cast(positive, "float64").sum()
    grads = ss.grad(cost, [a, h0])
    values = [0.7, np.array([0.4, -0.3])]
    got = [ss.function([a, h0], grads, mode=mode)(*values) for mode in ("py", "fast", "onnxruntime")]
    value = ss.function([a, h0], cost, mode="py")
    fd = central_differences(lambda *ps: float(value(*ps)), values)
    for ga, gh0 in got:
        np.testing.assert_allclose(ga, fd[0], rtol=1e-6)
        np.testing.assert_allclose(gh0, fd[1], rtol=1e-6)
    float_only = ss.grad((h * T.constant([1.0, 2.0])).sum(), [a, h0])
    for g, e in zip(got[0], ss.function([a, h0], float_only, mode="py")(*values)):
        np.testing.assert_allclose(g, e, rtol=1e-14)
    assert scans(grads) == scans(float_only) == 2  # the forward and one reverse loop
    g_int = ss.grad((counts * 1.0).sum() + T.cast(positive, "float64").sum(), a)
    assert ss.function([a, h0], g_int)(*values) == 0.0


def scans(outputs) -> int:
    return sum(isinstance(node.op, Scan) for node in toposort(outputs))
