"""Higher-order and composed gradients through scan (GRADIENTS.md §7 cases 8-11, 21-23):
derivatives of orders 1-4, second derivatives through mit-sot taps with some wrt left out,
verify_grad of a gradient, jacobian/hessian as scans of grad, nested scans, Rop, and the
same gradients with the rewrites on and off. Case 24 (scan_checkpoints) is tested elsewhere."""

import signal

import numpy as np
import pytest
from gradient_checks import central_difference

import rewrites
import symscan as ss
import symscan.tensor as T
from symscan.compile.modes import MODES as MODE_TABLE
from symscan.scan import Scan

MODES = ("py", "fast", "onnxruntime")


def in_modes(inputs, outputs, *values, modes=MODES, rtol=1e-9, atol=1e-12):
    """``outputs`` compiled in each mode; every mode agrees with the first; its values (a list)."""
    results = {}
    for mode in modes:
        got = ss.function(inputs, outputs, mode=mode)(*values)
        results[getattr(mode, "name", mode)] = [np.asarray(g) for g in (got if isinstance(got, list) else [got])]
    first = next(iter(results.values()))
    for mode, got in results.items():
        for i, (g, e) in enumerate(zip(got, first)):
            assert g.shape == e.shape, f"mode {mode}, output {i}: shape {g.shape} != {e.shape}"
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"mode {mode}, output {i}")
    return first


def central(f, points, wrt, step=1e-6):
    """d f / d points[i] for i in ``wrt``, by central differences."""
    return [central_difference(f, points, i, step) for i in wrt]


# ---------------------------------------------------------------------------- case 8: x**16, orders 1-4
def _power16(x):
    xs, _ = ss.scan(lambda h: h ** 2, outputs_info=x, n_steps=4)
    return xs[-1]


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_derivatives_of_x16_by_four_squarings(order):
    """Case 8: the order-n derivative of x**16 (four squarings, sit-sot) at 0.95 is 16*15*...*x^(16-n) exactly."""
    x = T.scalar("x")
    g = _power16(x)
    for _ in range(order):
        g = ss.grad(g, x)
    (got,) = in_modes([x], [g], 0.95)
    expected = np.prod(np.arange(16, 16 - order, -1)) * 0.95 ** (16 - order)
    np.testing.assert_allclose(got, expected, rtol=1e-11)


def test_third_derivative_of_the_last_state_and_of_every_state():
    """Case 8 (pitfall 3): third derivative of sum of all states x^2 + x^4 + x^8 + x^16, exact."""
    x = T.scalar("x")
    xs, _ = ss.scan(lambda h: h ** 2, outputs_info=x, n_steps=4)
    g = xs.sum()
    for _ in range(3):
        g = ss.grad(g, x)
    (got,) = in_modes([x], [g], 0.95)
    expected = sum(p * (p - 1) * (p - 2) * 0.95 ** (p - 3) for p in (2, 4, 8, 16))
    np.testing.assert_allclose(got, expected, rtol=1e-11)


# ---------------------------------------------------------------------------- case 9: mit-sot second derivatives
def _mit_sot_cost():
    """x_t = s_t z^2 + x_{t-2} x_{t-1} (taps [-2,-1], initial [a, b]), 3 steps; cost = sum_t x_t."""
    seq, z, x0 = T.vector("seq"), T.scalar("z"), T.vector("x0")
    x, _ = ss.scan(lambda s, x2, x1, z: s * z ** 2 + x2 * x1, sequences=seq,
                   outputs_info=dict(initial=x0, taps=[-2, -1]), non_sequences=z)
    return [seq, z, x0], x


POINT = [np.array([1.0, 2.0, 0.5]), 0.5, np.array([1.0, 2.0])]
"""s = [1, 2, 1/2], z = 1/2, [a, b] = [1, 2]: every value below is a dyadic rational (exact in float64)."""


def test_second_derivatives_through_mit_sot_taps_with_wrt_omitted():
    """Case 9: d/dz of the cost (seq, x0 omitted), then each second derivative: exactly 47, [12, 23/2], [14, 7/2, 1]."""
    (seq, z, x0), x = _mit_sot_cost()
    gz = ss.grad(x.sum(), z)
    got = in_modes([seq, z, x0], ss.grad(gz, [z, x0, seq]), *POINT)
    assert got[0] == 47.0
    np.testing.assert_array_equal(got[1], [12.0, 11.5])
    np.testing.assert_array_equal(got[2], [14.0, 3.5, 1.0])


def test_second_derivatives_from_one_initial_row():
    """Case 9: d/da and d/db of the cost (z, seq omitted), then one row's second derivative with others omitted."""
    (seq, z, x0), x = _mit_sot_cost()
    ga, gb = ss.grad(x.sum(), x0)[0], ss.grad(x.sum(), x0)[1]
    got = in_modes([seq, z, x0], [ss.grad(ga, x0), ss.grad(gb, z), ss.grad(gb, seq)], *POINT)
    np.testing.assert_array_equal(got[0], [16.0, 31.5])
    assert got[1] == 11.5
    np.testing.assert_array_equal(got[2], [2.375, 0.25, 0.0])


def test_second_derivative_of_a_sequence_gradient_row():
    """Case 9: d/dseq (z, x0 omitted), one row of it differentiated w.r.t. x0 and z: [1/2, 1/4] and 7/2."""
    (seq, z, x0), x = _mit_sot_cost()
    gs = ss.grad(x.sum(), seq)
    got = in_modes([seq, z, x0], [ss.grad(gs[1], x0), ss.grad(gs[1], z)], *POINT)
    np.testing.assert_array_equal(got[0], [0.5, 0.25])
    assert got[1] == 3.5


def test_second_derivatives_of_the_last_state_only():
    """Case 9: cost = last state (cotangent 0 on the other rows): d2/dz2 = 37, d2/dz da = 12, d2/db2 = 13."""
    (seq, z, x0), x = _mit_sot_cost()
    gz, gx0 = ss.grad(x[-1], [z, x0])
    got = in_modes([seq, z, x0], [ss.grad(gz, z), ss.grad(gz, x0)[0], ss.grad(gx0[1], x0)[1]], *POINT)
    assert [float(g) for g in got] == [37.0, 12.0, 13.0]


# ---------------------------------------------------------------------------- case 10: verify_grad of a gradient
def _sum_of_grad_sit_sot(inp):
    outputs, _ = ss.scan(lambda h: T.sin(h) * 2.0 + h * 0.5, outputs_info=inp, n_steps=5)
    return ss.grad(outputs.sum(), inp).sum()


def _sum_of_grad_mit_sot(input0, input1):
    def step(m2, s):
        output = (m2 + s) ** 1.02
        return output, output

    (a, b), _ = ss.scan(step, outputs_info=[dict(initial=input0, taps=[-2]), input1], n_steps=3)
    return ss.grad(a.sum(), input0).sum() + ss.grad(b.sum(), input1).sum()


@pytest.mark.parametrize("mode", MODES)
def test_verify_grad_of_a_sit_sot_gradient(mode):
    """Case 10: verify_grad of grad(scan(...).sum(), init).sum() (a second derivative), sit-sot."""
    point = np.random.default_rng(0).random(3)
    ss.verify_grad(_sum_of_grad_sit_sot, [point], rng=np.random.default_rng(1), mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_verify_grad_of_a_mit_sot_gradient(mode):
    """Case 10: verify_grad of the summed gradients of a mit-sot (tap -2) and a sit-sot w.r.t. their initial values."""
    r = np.random.default_rng(2)
    ss.verify_grad(_sum_of_grad_mit_sot, [r.random((2, 3)), r.random(3)], rng=r, mode=mode)


def test_second_derivative_of_a_sit_sot_against_finite_differences(grad_check):
    """Case 10: the same sit-sot second derivative, central differences and three modes (grad_check)."""
    grad_check(_sum_of_grad_sit_sot, np.random.default_rng(3).random(3))


# ---------------------------------------------------------------------------- case 11: jacobian and hessian
def test_hessian_by_rows_as_a_scan_of_grad():
    """Case 11: Theano's test_scan_extra_inputs_hessian: rows grad(gy[i] * fc2, x) give [[3.6,1.8],[1.8,0.9]]."""
    x, A = T.vector("x"), T.matrix("A")
    fc1, fc2 = ss.shared(0.5, name="fc1"), ss.shared(0.9, name="fc2")
    y = fc1 * T.dot(x * x, T.dot(A, x))
    gy = ss.grad(y, x)
    hy, _ = ss.scan(lambda i, gy, x: ss.grad(gy[i] * fc2, x), sequences=T.arange(gy.shape[0]), non_sequences=[gy, x])
    (got,) = in_modes([x, A], [hy], np.array([1.0, 1.0]), np.array([[1.0, 1.0], [1.0, 0.0]]))
    np.testing.assert_allclose(got, [[3.6, 1.8], [1.8, 0.9]], rtol=1e-14)
    (got,) = in_modes([x, A], [ss.hessian(y * fc2, x)], np.array([1.0, 1.0]), np.array([[1.0, 1.0], [1.0, 0.0]]))
    np.testing.assert_allclose(got, [[3.6, 1.8], [1.8, 0.9]], rtol=1e-14)


def test_hessian_of_a_scan_nested_in_a_scan():
    """Case 11: Theano's test_hessian_bug_grad_grad_two_scans: cost = n * sum(W^2) through two scans, H = 2n I."""
    W, n = T.vector("W"), T.iscalar("n")

    def loss_outer(sum_outer, W):
        inner, _ = ss.scan(lambda sum_inner, W: sum_inner + (W ** 2).sum(), outputs_info=T.constant(0.0),
                           non_sequences=[W], n_steps=1)
        return sum_outer + inner[-1]

    outer, _ = ss.scan(loss_outer, outputs_info=T.constant(0.0), non_sequences=[W], n_steps=n, return_list=True)
    H = ss.hessian(outer[0][-1], W)
    for steps in (1, 3):
        (got,) = in_modes([W, n], [H], np.linspace(-1, 1, 8), np.int32(steps))
        np.testing.assert_allclose(got, 2 * steps * np.eye(8), rtol=1e-14, atol=1e-14)


def test_hessian_of_a_nonlinear_scan():
    """Case 11: hessian of a tanh recurrence's last state w.r.t. the initial vector equals FD of its gradient."""
    h0, W = T.vector("h0"), T.matrix("W")
    h, _ = ss.scan(lambda h: T.tanh(T.dot(W, h)), outputs_info=h0, n_steps=3)
    cost = (h[-1] ** 2).sum()
    r = np.random.default_rng(4)
    values = [r.normal(size=3), r.normal(scale=0.8, size=(3, 3))]
    (H,) = in_modes([h0, W], [ss.hessian(cost, h0)], *values)
    np.testing.assert_allclose(H, H.T, rtol=1e-10, atol=1e-12)
    g = ss.function([h0, W], ss.grad(cost, h0), mode="py")
    fd = np.array([central(lambda p, w, i=i: g(p, w)[i], values, [0])[0] for i in range(3)])
    np.testing.assert_allclose(H, fd, rtol=1e-6, atol=1e-8)


def test_jacobian_of_a_scan_output():
    """Case 11: jacobian of an RNN's last state w.r.t. h0 and W (a scan of grads of a scan) equals FD."""
    h0, W, xs = T.vector("h0"), T.matrix("W"), T.matrix("xs")
    h, _ = ss.scan(lambda x, h: T.tanh(T.dot(W, h) + x), sequences=xs, outputs_info=h0)
    Jh, JW = ss.jacobian(h[-1], [h0, W])
    r = np.random.default_rng(5)
    values = [r.normal(size=3), r.normal(scale=0.7, size=(3, 3)), r.normal(size=(4, 3))]
    gh, gW = in_modes([h0, W, xs], [Jh, JW], *values)
    assert gh.shape == (3, 3) and gW.shape == (3, 3, 3)
    last = ss.function([h0, W, xs], h[-1], mode="py")
    for i in range(3):
        fd = central(lambda *ps, i=i: last(*ps)[i], values, [0, 1])
        np.testing.assert_allclose(gh[i], fd[0], rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gW[i], fd[1], rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------------------- case 21: nested scans
TARGETS = np.eye(3)[[[0, 2], [1, 1], [2, 0], [0, 1]]]  # one-hot, (time 4, batch 2, classes 3)


def _map_then_loss_map(W, x):
    """Theano's test_grad_two_scans: y_t = softmax(x_t W) by one scan, the loss by a second scan over y."""
    y, _ = ss.scan(lambda x_t: T.nnet.softmax(T.dot(x_t, W)), sequences=x)
    losses, _ = ss.scan(lambda y_t, t_t: -(t_t * T.log(y_t)).sum(axis=1).mean(),
                        sequences=[y, T.constant(TARGETS)])
    return losses


def test_a_map_followed_by_a_loss_map(grad_check):
    """Case 21: gradient through two chained scans (Theano #2619 crashed) agrees with FD and verify_grad."""
    r = np.random.default_rng(6)
    grad_check(_map_then_loss_map, r.normal(size=(2, 3)), r.normal(size=(4, 2, 2)))


def _scan_in_scan(w, h0, xs):
    """Outer step over rows x_t: an inner scan s_j = tanh(s_{j-1} w + x_t[j]) from h_{t-1}; h_t mixes its last value."""
    def outer_step(x_t, h, w):
        s, _ = ss.scan(lambda x_j, s, w: T.tanh(s * w + x_j), sequences=x_t, outputs_info=h, non_sequences=w)
        return s[-1] * 0.9 + h * 0.1

    h, _ = ss.scan(outer_step, sequences=xs, outputs_info=h0, non_sequences=w)
    return h


def test_a_scan_whose_step_contains_a_scan(grad_check):
    """Case 21: nested scans (the inner loop's initial state is the outer state): FD and verify_grad."""
    r = np.random.default_rng(7)
    grad_check(_scan_in_scan, np.array(0.8), np.array(0.2), r.normal(size=(4, 3)))


def test_second_derivative_through_nested_scans(grad_check):
    """Case 21: the gradient of the nested scans w.r.t. w, differentiated again, agrees with FD."""
    r = np.random.default_rng(8)
    xs = T.constant(r.normal(size=(3, 3)))
    grad_check(lambda w, h0: ss.grad(_scan_in_scan(w, h0, xs).sum(), w), np.array(0.8), np.array(0.2))


# ---------------------------------------------------------------------------- case 22: Rop
def test_rop_of_an_rnn_last_state():
    """Case 22: Rop of an RNN's last state w.r.t. u, h0 and W equals the Jacobian-vector product (jacobian and FD)."""
    u, h0, W = T.matrix("u"), T.vector("h0"), T.matrix("W")
    eu, eh0, eW = T.matrix("eu"), T.vector("eh0"), T.matrix("eW")
    o, _ = ss.scan(lambda u_t, y, W: T.tanh(T.dot(W, u_t + y)), sequences=u, outputs_info=h0, non_sequences=W)
    o = o[-1]
    rops = [ss.Rop(o, u, eu), ss.Rop(o, h0, eh0), ss.Rop(o, W, eW)]
    Ju, Jh, JW = ss.jacobian(o, [u, h0, W])
    jvps = [(Ju * eu).sum(axis=2).sum(axis=1), T.dot(Jh, eh0), (JW * eW).sum(axis=2).sum(axis=1)]
    r = np.random.default_rng(9)
    values = [r.uniform(-0.5, 0.5, size=(5, 4)), r.uniform(-0.5, 0.5, size=4), r.uniform(-0.5, 0.5, size=(4, 4))]
    directions = [r.uniform(-0.5, 0.5, size=(5, 4)), r.uniform(-0.5, 0.5, size=4), r.uniform(-0.5, 0.5, size=(4, 4))]
    inputs = [u, h0, W, eu, eh0, eW]
    got = in_modes(inputs, rops + jvps, *values, *directions)
    last = ss.function([u, h0, W], o, mode="py")
    for i in range(3):
        np.testing.assert_allclose(got[i], got[i + 3], rtol=1e-10, atol=1e-12)
        plus = [v + 1e-6 * d if j == i else v for j, (v, d) in enumerate(zip(values, directions))]
        minus = [v - 1e-6 * d if j == i else v for j, (v, d) in enumerate(zip(values, directions))]
        np.testing.assert_allclose(got[i], (last(*plus) - last(*minus)) / 2e-6, rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------------------- case 23: rewrites on and off
def _rnn_grads():
    W, h0, xs = T.matrix("W"), T.vector("h0"), T.matrix("xs")
    h, _ = ss.scan(lambda x, h: T.tanh(T.dot(W, h) + x), sequences=xs, outputs_info=h0)
    ht, _ = ss.scan(lambda x, h: T.tanh(T.dot(W, h) + x), sequences=xs, outputs_info=h0, truncate_gradient=2)
    r = np.random.default_rng(10)
    values = [r.normal(scale=0.6, size=(3, 3)), r.normal(size=3), r.normal(size=(5, 3))]
    return [W, h0, xs], ss.grad(h.sum(), [W, h0, xs]) + ss.grad((ht * 2.0).sum(), [W, xs]), values


def _until_grads():
    y, x0 = T.vector("y"), T.scalar("x0")
    x, _ = ss.scan(lambda y_t, x: (1.3 * x + y_t, ss.until(1.3 * x + y_t > 5.0)), sequences=y, outputs_info=x0)
    return [y, x0], ss.grad((x ** 2).sum(), [y, x0]), [np.full(10, 0.5), 1.0]


def _second_order_grads():
    x = T.scalar("x")
    g = ss.grad(ss.grad(_power16(x), x), x)
    return [x], [g], [0.95]


def _nested_grads():
    w, h0, xs = T.scalar("w"), T.scalar("h0"), T.matrix("xs")
    h = _scan_in_scan(w, h0, xs)
    return [w, h0, xs], ss.grad(h.sum(), [w, h0, xs]), [0.8, 0.2, np.random.default_rng(11).normal(size=(3, 3))]


def _mit_sot_second_grads():
    inputs, x = _mit_sot_cost()
    gz = ss.grad(x.sum(), inputs[1])
    return inputs, ss.grad(gz, inputs), POINT


def _until_truncated_grads():
    x, u = T.vector("x"), T.lscalar("u")
    r, _ = ss.scan(lambda a, b, u: (a * b, ss.until(b > u)), sequences=dict(input=x, taps=[-2, 0]),
                   non_sequences=[u], truncate_gradient=3)
    return [x, u], [ss.grad((r ** 2).sum(), x)], [np.linspace(0.0, 7.0, 15), np.int64(4)]


GRAPHS = {"rnn": _rnn_grads, "until": _until_grads, "until_truncated": _until_truncated_grads,
          "x16_second_order": _second_order_grads, "nested": _nested_grads,
          "mit_sot_second_order": _mit_sot_second_grads}
"""Third-order graphs: compile time is checked below; their values in every mode by the tests above."""


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_gradients_are_the_same_with_rewrites_on_and_off(name):
    """Case 23: gradients in "fast" (every rewrite) and "fast" without each rewrite equal "py" (no rewrites)."""
    inputs, grads, values = GRAPHS[name]()
    reference = [np.asarray(g) for g in ss.function(inputs, grads, mode="py")(*values)]
    variants = {"fast": ss.function(inputs, grads, mode="fast"),
                "fast, no rewrites": ss.function(inputs, grads, mode="fast", rewrites=[])}
    variants.update({f"fast without {rule}": ss.function(inputs, grads, mode=MODE_TABLE["fast"].without(rule))
                     for rule in sorted(rewrites.REGISTRY)})
    for label, f in variants.items():
        for i, (g, e) in enumerate(zip(f(*values), reference)):
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12, err_msg=f"{label}, gradient {i}")


def test_grad_of_a_save_mem_rewritten_scan_raises():
    """Case 23 (pitfall 7): grad of a graph whose scan keeps a ring buffer (save_mem ran) raises, naming save_mem."""
    A, k = T.vector("A"), T.iscalar("k")
    result, _ = ss.scan(lambda p, A: T.tanh(p * A), outputs_info=T.ones_like(A), non_sequences=A, n_steps=k)
    f = ss.function([A, k], result[-1], mode="fast", rewrites=["save_mem"])
    rings = [n.op.info.rings for n in f.fgraph.apply_nodes if isinstance(n.op, Scan)]
    assert rings == [(1,)]
    with pytest.raises(ValueError, match="save_mem"):
        ss.grad(f.fgraph.outputs[0].sum(), f.fgraph.inputs[0])


class CompileTooSlow(Exception):
    pass


def _compile_within(seconds, inputs, outputs, mode):
    def give_up(signum, frame):
        raise CompileTooSlow(f"compiling in mode {mode!r} took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, give_up)
    signal.alarm(seconds)
    try:
        return ss.function(inputs, outputs, mode=mode)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("order", [3, 4])
def test_high_order_gradients_compile_promptly_with_every_rewrite(order):
    """Case 23: the order-3/4 derivative of x**16 (scans nested 3-4 deep) compiles in "fast" within 10 s."""
    # merge_inouts once took ~100 s on the third derivative (tree-shaped keys of the nested scans)
    x = T.scalar("x")
    g = _power16(x)
    for _ in range(order):
        g = ss.grad(g, x)
    f = _compile_within(10, [x], g, "fast")
    np.testing.assert_allclose(f(0.95), np.prod(np.arange(16, 16 - order, -1)) * 0.95 ** (16 - order), rtol=1e-11)
