"""The gradient through ss.ifelse: against central differences and verify_grad for both branch
outcomes, outside and inside a scan (BPTT), lists of outputs, a captured value one branch does
not read, nesting, the condition's zero gradient, laziness of the backward pass, Lop/Rop and a
second derivative."""

import numpy as np
import pytest
from gradient_checks import central_differences

import symscan as ss
import symscan.tensor as T
from symscan.scan.ifelse import IfElse
from symscan.tensor.assertion import assert_that

MODES = ("py", "fast", "numba")


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_both_outcomes_against_finite_differences(grad_check, sign):
    def fun(x, y):
        return ss.ifelse(x.sum() > 0, T.exp(x) * y.sum(), x ** 2 - T.sin(y))

    # the condition keeps its value under the finite-difference steps
    grad_check(fun, sign * np.array([0.5, 1.0, 0.25]), np.array([0.3, -0.7, 1.1]), modes=MODES)


def test_the_gradient_is_an_ifelse_on_the_same_condition():
    x, c = T.vector("x"), T.scalar("c")
    out = ss.ifelse(c > 0, T.exp(x).sum(), (x ** 2).sum())
    g = ss.grad(out, x)
    assert isinstance(g.owner.op, IfElse) and g.owner.inputs[0] is out.owner.inputs[0]


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_lists_of_outputs_and_an_unused_output(grad_check, sign):
    def fun(x, y):
        a, b, unused = ss.ifelse(x[0] > 0, [x * y, T.tanh(y), y * 7.0], [y - x, x.sum() * y, x])
        return a * 2.0 + b ** 2

    grad_check(fun, np.array([sign * 0.8, 0.3]), np.array([1.5, -0.4]), modes=MODES)


@pytest.mark.parametrize("c", [1.0, -1.0])
def test_a_value_only_one_branch_reads(c):
    x, y, cond = T.vector("x"), T.vector("y"), T.scalar("c")
    cost = ss.ifelse(cond > 0, (x * 3.0).sum(), (y ** 2).sum())
    gx, gy = ss.grad(cost, [x, y])
    xv, yv = np.array([1.0, 2.0]), np.array([-1.0, 0.5])
    for mode in MODES:
        got_x, got_y = ss.function([cond, x, y], [gx, gy], mode=mode)(c, xv, yv)
        np.testing.assert_allclose(got_x, [3.0, 3.0] if c > 0 else [0.0, 0.0])
        np.testing.assert_allclose(got_y, [0.0, 0.0] if c > 0 else 2 * yv)


def test_the_condition_gets_a_zero_gradient():
    x, c = T.scalar("x"), T.scalar("c")
    cost = ss.ifelse(c * x > 0, x ** 2, c * 3.0)
    gc = ss.grad(cost, c)  # c reaches the cost through the else branch and the condition
    f = ss.function([c, x], gc, mode="fast")
    assert f(2.0, 1.5) == 0.0 and f(-2.0, 1.5) == 3.0


def test_a_captured_value_no_branch_differentiates_is_disconnected():
    x, c = T.vector("x"), T.scalar("c")
    n = T.cast(x.shape[0], "float64")
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(ss.ifelse(c > 0, c * 2.0, c * 3.0), x)
    assert ss.grad(ss.ifelse(c > 0, c * n, c), x, disconnected_inputs="ignore") is not None


@pytest.mark.parametrize("point", [(2.0, 4.0), (2.0, -3.0), (-1.5, 4.0)])
def test_nested_ifelse(grad_check, point):
    def fun(a, b):
        inner = ss.ifelse(b > 0, T.sqrt(b) * a, -b * a ** 2)
        return ss.ifelse(a > 0, inner * a, T.log(-a) + b)

    grad_check(fun, np.array(point[0]), np.array(point[1]), modes=MODES)


@pytest.mark.parametrize("xs", [[1.0, -2.0, 3.0, -0.5], [-1.0, -1.0, -2.0]])
def test_inside_a_scan_bptt(grad_check, xs):
    def fun(xs, w, h0):
        def step(x, h, w):
            grow = T.tanh(h * w + x)
            shrink = h * 0.5 - w * x
            return ss.ifelse(x > 0, grow, shrink)

        hs, _ = ss.scan(step, sequences=xs, outputs_info=h0, non_sequences=w)
        return hs

    grad_check(fun, np.array(xs), np.array(0.7), np.array(0.2), modes=MODES)


def test_the_branch_not_taken_is_not_differentiated():
    y, w = T.vector("y"), T.scalar("w")
    needs_three = T.dot(T.ones((3,)), y * w)  # a shape error unless len(y) == 3, forward and backward
    cost = ss.ifelse(T.eq(y.shape[0], 3), needs_three, (y * w).sum() ** 2)
    gy, gw = ss.grad(cost, [y, w])
    for mode in MODES:
        f = ss.function([y, w], [gy, gw], mode=mode)
        got_y, got_w = f(np.arange(5.0), 2.0)
        s = np.arange(5.0).sum()
        np.testing.assert_allclose(got_y, np.full(5, 2 * (s * 2.0) * 2.0))
        np.testing.assert_allclose(got_w, 2 * (s * 2.0) * s)
        np.testing.assert_allclose(f(np.arange(3.0), 2.0)[0], [2.0, 2.0, 2.0])


def test_lazy_gradient_inside_a_loop_in_numba():
    xs, w = T.vector("xs"), T.scalar("w")

    def step(x, acc, w):
        return ss.ifelse(x > 0, acc + T.log(assert_that(x * w, x * w > 0, message="x * w > 0")), acc * w)

    hs, _ = ss.scan(step, sequences=xs, outputs_info=T.constant(1.0), non_sequences=w)
    g = ss.grad(hs[-1], w)
    values = (np.array([1.0, -2.0, 3.0, 0.0]), 1.5)
    f = ss.function([xs, w], g, mode="numba")
    want = ss.function([xs, w], g, mode="py")(*values)
    np.testing.assert_allclose(f(*values), want)
    expected = central_differences(lambda xv, wv: float(ss.function([xs, w], hs[-1], mode="py")(xv, wv)),
                                   [values[0], np.array(values[1])], wrt=[1])[1]
    np.testing.assert_allclose(want, expected, rtol=1e-6)
    assert all(line.endswith(": numba") for line in f.backend_report()), f.backend_report()
    assert f._evaluate._fast is None, "a kernel raised and the call was rerun in mode fast"


def test_lop_and_rop():
    x, v = T.vector("x"), T.vector("v")
    out = ss.ifelse(x.sum() > 0, T.exp(x) * x, x ** 3)
    lop = ss.Lop(out, x, v)
    rop = ss.Rop(out, x, v)
    xv, vv = np.array([0.3, 0.9]), np.array([1.0, -2.0])
    f = ss.function([x, v], [lop, rop], mode="fast")
    jac = np.diag(np.exp(xv) * (1 + xv))
    got_l, got_r = f(xv, vv)
    np.testing.assert_allclose(got_l, vv @ jac)
    np.testing.assert_allclose(got_r, jac @ vv)
    got_l, got_r = f(-xv, vv)
    np.testing.assert_allclose(got_l, 3 * xv ** 2 * vv)
    np.testing.assert_allclose(got_r, 3 * xv ** 2 * vv)


def test_second_derivative():
    x = T.scalar("x")
    out = ss.ifelse(x > 0, x ** 3, T.sin(x))
    g2 = ss.grad(ss.grad(out, x), x)
    f = ss.function([x], g2, mode="fast")
    np.testing.assert_allclose(f(2.0), 12.0)
    np.testing.assert_allclose(f(-1.0), -np.sin(-1.0))
