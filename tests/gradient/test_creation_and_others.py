"""Pullbacks of alloc, arange, eye, random draws, scan's check ops, and the loop ops (whose
gradients are not implemented yet); and a check that every op class has a pullback."""

import importlib
import pkgutil

import numpy as np
import pytest
from gradient_checks import grads_in_modes

import symscan as ss
import symscan.tensor as T
from symscan.gradient import NullType
from symscan.gradient.registry import PULLBACKS
from symscan.graph.basic import Op
from symscan.scan.checks import (
    AfterChecks,
    CheckRowShape,
    CheckSequenceLength,
    CheckStepShape,
    InitialRows,
    StepCount,
)
from symscan.scan.recurrences import Accumulate, LinearRecurrence

RNG = np.random.default_rng(11)
MODES = ("py", "fast", "onnxruntime")


def normal(*shape):
    return RNG.normal(size=shape)


def gradients(inputs, cost, wrt, points, modes=MODES):
    return grads_in_modes(inputs, cost, wrt, points, modes)


# ---------------------------------------------------------------------------- alloc
@pytest.mark.parametrize("value_shape", [(), (3,), (1, 3), (2, 1)])
def test_alloc(grad_check, value_shape):
    grad_check(lambda v: T.alloc(v, 2, 3), normal(*value_shape))


def test_alloc_to_symbolic_lengths(grad_check):
    grad_check(lambda v, like: T.alloc(v, like.shape[0], 2, like.shape[1]), normal(1, 1), normal(3, 1), wrt=[0])


def test_alloc_lengths_are_disconnected():
    v, n = T.dscalar("v"), T.lscalar("n")
    cost = T.alloc(v, n, 2).sum()
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(cost, n)
    (g,) = gradients([v, n], cost, [v], [np.array(0.5), np.array(4)])
    assert g == 8.0


def test_zeros_and_ones_take_no_gradient_from_their_shape():
    x = T.dmatrix("x")
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(T.ones(x.shape).sum(), x)


# ---------------------------------------------------------------------------- arange
def test_float_arange_start_and_step(grad_check):
    """out[i] = start + i * step; 5.0 is not reached by a step within 1e-6 of the points."""
    grad_check(lambda start, step: T.arange(start, 5.0, step), np.array(0.3), np.array(0.7))


def test_float_arange_exact():
    start, step = T.dscalar("start"), T.dscalar("step")
    w = np.array([1.0, 2.0, 3.0])
    g_start, g_step = gradients([start, step], (T.constant(w) * T.arange(start, 3.0, step)).sum(), [start, step],
                                [np.array(0.0), np.array(1.0)])
    assert g_start == 6.0 and g_step == 1.0 * 2.0 + 2.0 * 3.0


def test_arange_stop_is_disconnected():
    stop = T.dscalar("stop")
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(T.arange(0.0, stop, 1.0).sum(), stop)


def test_integer_arange_gives_zero():
    """An integer output passes back nothing: its start is connected, with gradient 0."""
    start, x = T.lscalar("start"), T.dvector("x")
    g = ss.grad((x * T.arange(start, 5)).sum(), start)
    assert g.dtype == "float64"
    assert ss.function([start, x], g)(2, np.ones(3)) == 0.0


# ---------------------------------------------------------------------------- eye
def test_eye_lengths_are_disconnected():
    n = T.lscalar("n")
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(T.eye(n).sum(), n)


def test_eye_in_a_product(grad_check):
    grad_check(lambda x: T.dot(T.eye(3, 4, 1), x), normal(4, 2))


# ---------------------------------------------------------------------------- random draws
def test_random_parameter_gradient_is_undefined():
    mu = T.dscalar("mu")
    draw = T.RandomStream(1).normal(size=(3,), avg=mu)
    with pytest.raises(ss.NullTypeGradError, match="random draw"):
        ss.grad(draw.sum(), mu)
    g = ss.grad(draw.sum(), mu, null_gradients="return")
    assert isinstance(g.type, NullType)


def test_random_draw_is_a_value_for_other_variables():
    mu, w = T.dscalar("mu"), T.dvector("w")
    draw = T.RandomStream(2).normal(size=(3,), avg=mu)
    g = ss.grad((w * draw).sum(), w)
    for mode in ("py", "fast"):  # onnxruntime cannot run numpy's generators (an ExportError)
        value, grad = ss.function([mu, w], [draw, g], mode=mode)(0.5, np.ones(3))
        np.testing.assert_array_equal(grad, value)


def test_random_size_and_generator_are_disconnected():
    n = T.lscalar("n")
    stream = T.RandomStream(3)
    draw = stream.uniform(size=(n,))
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(draw.sum(), n)
    rng = draw.owner.inputs[0]
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(draw.sum(), rng)


# ---------------------------------------------------------------------------- scan's checks
def test_check_sequence_length(grad_check):
    grad_check(lambda x: CheckSequenceLength("xs", (0, 1), 2)(x), normal(3, 2))


@pytest.mark.parametrize("taps, initial_shape", [((-2, -1), (4, 2)), ((-3, -1), (3, 2)), ((-1,), (2, 2))])
def test_initial_rows_of_a_mit_sot(grad_check, taps, initial_shape):
    """The rows are the first ``span`` rows: their gradient is padded back with zeros."""
    grad_check(lambda x: InitialRows("h", taps, False)(x), normal(*initial_shape))


def test_initial_rows_padding_exact():
    x = T.dmatrix("x")
    w = np.array([[1.0, 2.0], [3.0, 4.0]])
    (g,) = gradients([x], (T.constant(w) * InitialRows("h", (-2, -1), False)(x)).sum(), [x], [np.zeros((4, 2))])
    np.testing.assert_array_equal(g, [[1, 2], [3, 4], [0, 0], [0, 0]])


def test_initial_rows_of_a_sit_sot(grad_check):
    grad_check(lambda x: InitialRows("h", (-1,), True)(x), normal(3))


def test_check_row_and_step_shapes_pass_values_through(grad_check):
    grad_check(lambda v, row: CheckRowShape("h")(v, row, T.constant(np.int64(2))), normal(3), normal(2, 3), wrt=[0])
    grad_check(lambda v, row: CheckStepShape("h")(v, row), normal(2, 3), normal(2, 3), wrt=[0])


def test_check_inputs_are_disconnected():
    v, row, steps = T.dvector("v"), T.dmatrix("row"), T.lscalar("steps")
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(CheckRowShape("h")(v, row, steps).sum(), row)
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(CheckRowShape("h")(v, row, steps).sum(), steps)
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(CheckStepShape("h")(v, row).sum(), row)
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(AfterChecks()(v, row).sum(), row)


def test_after_checks(grad_check):
    grad_check(lambda v, check: AfterChecks()(v, CheckSequenceLength("xs", (0,), 1)(check)), normal(2), normal(3),
               wrt=[0])


def test_step_count_is_an_integer():
    """The count depends on n_steps (connected, zero gradient), on sequences only by length."""
    x, seq, n = T.dvector("x"), T.dmatrix("seq"), T.lscalar("n")
    cost = x.sum() * StepCount((("xs", (0,)),))(n, seq)
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(cost, seq)
    g_x, g_n = ss.function([x, seq, n], ss.grad(cost, [x, n]))(np.ones(2), np.ones((4, 1)), 3)
    np.testing.assert_array_equal(g_x, [3.0, 3.0])
    assert g_n == 0.0


# ---------------------------------------------------------------------------- loops
@pytest.mark.parametrize("make", [
    lambda init, values, steps: Accumulate("add")(init, values, steps),
    lambda init, values, steps: LinearRecurrence((1,), (False, True))(init[None], T.constant(0.5), values, steps),
])
def test_recurrence_ops_say_where_they_come_from(make):
    init, values = T.dvector("init"), T.dmatrix("values")
    out = make(init, values, T.constant(np.int64(2)))
    with pytest.raises(ss.NullTypeGradError, match="vectorize|compiled"):
        ss.grad(out.sum(), values)


# ---------------------------------------------------------------------------- coverage
def test_every_op_class_has_a_pullback():
    import symscan

    for module in pkgutil.walk_packages(symscan.__path__, "symscan."):
        importlib.import_module(module.name)

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    ops = {cls for cls in subclasses(Op) if cls.__module__.startswith("symscan.")}
    assert len(ops) > 25
    missing = sorted(cls.__qualname__ for cls in ops if cls not in PULLBACKS)
    assert not missing, f"ops without a pullback: {missing}"
