"""Backpropagation through time: ``ss.grad`` through ``ss.scan`` (GRADIENTS.md §7 cases 1,
12-20, 25), checked against hand-written numpy BPTT, exact values and central finite
differences in float64, with every gradient computed in modes py, fast and onnxruntime."""

import numpy as np
import pytest
from gradient_checks import central_differences, numpy_bptt, numpy_rnn

import symscan as ss
import symscan.tensor as T
from symscan.gradient import DisconnectedType, NullType
from symscan.scan import Scan

from modes_tested import NUMBA

MODES = ("py", "fast", "onnxruntime") + (("numba",) if NUMBA else ())
RANDOM_MODES = ("py", "fast") + (("numba",) if NUMBA else ())
"""Random draws have no ONNX export (the numpy generator stream has no ONNX equivalent)."""


def in_modes(inputs, outputs, *values, modes=MODES, rtol=1e-9, atol=1e-12, updates=None):
    """``outputs`` compiled in each mode; every mode agrees with the first; its values (a list)."""
    results = {}
    for mode in modes:
        got = ss.function(inputs, outputs, mode=mode, updates=updates)(*values)
        results[mode] = [np.asarray(g) for g in (got if isinstance(got, list) else [got])]
    first = results[modes[0]]
    for mode, got in results.items():
        assert len(got) == len(first)
        for i, (g, e) in enumerate(zip(got, first)):
            assert g.shape == e.shape, f"mode {mode}, output {i}: shape {g.shape} != {e.shape}"
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"mode {mode}, output {i}")
    return first


central = central_differences


def assert_fd(inputs, cost, wrt_positions, values, grads, rtol=1e-6, atol=1e-7):
    """``grads`` (numbers) equal central differences of the compiled ``cost`` at ``values``."""
    value = ss.function(inputs, cost, mode="py")
    fd = central(lambda *ps: float(value(*ps)), list(values), wrt=list(wrt_positions))
    for pos, g in zip(wrt_positions, grads):
        np.testing.assert_allclose(g, fd[pos], rtol=rtol, atol=atol, err_msg=f"input {pos}: against FD")


# ---------------------------------------------------------------------------- the Elman RNN and its numpy BPTT
H, D, STEPS = 3, 2, 6


def rnn(W, U, b, h0, xs, **scan_kwargs):
    """h_t = tanh(W h_{t-1} + U x_t + b)."""
    h, updates = ss.scan(lambda x, h: T.tanh(T.dot(W, h) + T.dot(U, x) + b), sequences=xs, outputs_info=h0,
                         **scan_kwargs)
    assert not updates
    return h


def rnn_values(seed=0, steps=STEPS):
    r = np.random.default_rng(seed)
    return [r.normal(scale=0.6, size=(H, H)), r.normal(scale=0.6, size=(H, D)), r.normal(scale=0.3, size=H),
            r.normal(scale=0.5, size=H), r.normal(size=(steps, D))]


def rnn_inputs():
    return T.matrix("W"), T.matrix("U"), T.vector("b"), T.vector("h0"), T.matrix("xs")


def test_numpy_bptt_reference_matches_central_differences():
    """The hand-written BPTT reference itself agrees with finite differences of numpy_rnn."""
    values = rnn_values(1)
    V = np.random.default_rng(2).uniform(0.5, 1.5, size=(STEPS, H))
    fd = central(lambda *ps: float((numpy_rnn(*ps) * V).sum()), values)
    for g, e in zip(numpy_bptt(*values, V), fd):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)


def test_elman_rnn_gradients_equal_numpy_bptt():
    """Case 1: grad of sum_t v_t.h_t w.r.t. W, U, b, h0, xs equals a hand numpy BPTT in every mode."""
    inputs = rnn_inputs()
    values = rnn_values(3)
    V = np.random.default_rng(4).uniform(0.5, 1.5, size=(STEPS, H))
    cost = (rnn(*inputs) * T.constant(V)).sum()
    grads = ss.grad(cost, list(inputs))
    assert all(g.dtype == "float64" for g in grads)
    got = in_modes(list(inputs), grads, *values)
    for name, g, e, v in zip("W U b h0 xs".split(), got, numpy_bptt(*values, V), values):
        assert g.shape == v.shape, name
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12, err_msg=name)


def test_elman_rnn_against_finite_differences(grad_check):
    """Case 1: the RNN's gradient (all states, random projection) agrees with FD and verify_grad."""
    grad_check(lambda W, U, b, h0, xs: rnn(W, U, b, h0, xs), *rnn_values(5))


def test_elman_rnn_last_state_only(grad_check):
    """Case 1: a cost on the last state only (cotangent zero on every other row) agrees with FD."""
    grad_check(lambda W, U, b, h0, xs: rnn(W, U, b, h0, xs)[-1], *rnn_values(6))


# ---------------------------------------------------------------------------- case 12: duplicate inner outputs
def test_duplicate_inner_outputs_sum_their_cotangents():
    """Case 12: one inner variable returned as a nit-sot and as a mit-sot (tap -3): exact gradients."""
    seq, out_init, non_seq = T.matrix("seq"), T.matrix("out_init"), T.vector("non_seq")

    def step(s, y_tm3, ns):
        total = s + y_tm3 + ns
        return total, total

    outs, _ = ss.scan(step, sequences=seq, outputs_info=[None, dict(initial=out_init, taps=[-3])],
                      non_sequences=non_seq)
    wrt = [seq, out_init, non_seq]
    grads = ss.grad(outs[0].sum(), wrt) + ss.grad(outs[1].sum(), wrt)
    r = np.random.default_rng(7)
    got = in_modes(wrt, grads, r.random((10, 3)), r.random((3, 3)), r.random(3))
    expected_seq = np.repeat(np.array([4, 3, 3, 3, 2, 2, 2, 1, 1, 1.0])[:, None], 3, axis=1)
    for k in (0, 3):
        np.testing.assert_array_equal(got[k], expected_seq)
        np.testing.assert_array_equal(got[k + 1], expected_seq[:3])
        np.testing.assert_array_equal(got[k + 2], [22.0, 22.0, 22.0])


# ---------------------------------------------------------------------------- case 13: disconnected initial states
def _connectivity_scan(n_steps=3):
    x0, y0, z0 = T.vector("x0"), T.vector("y0"), T.vector("z0")
    (x, y, z), _ = ss.scan(lambda x, y, z: [x ** 2, y, x + 1], outputs_info=[x0, y0, z0], n_steps=n_steps)
    return (x0, y0, z0), (x, y, z)


def test_an_unused_initial_state_raises_disconnected():
    """Case 13: z0 is never read, so grad w.r.t. it raises; y0 does not reach x."""
    (x0, y0, z0), (x, y, z) = _connectivity_scan()
    cost = (x + y + z).sum()
    ss.grad(cost, x0)
    ss.grad(cost, y0)
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(cost, z0)
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(x.sum(), y0)
    assert issubclass(ss.DisconnectedInputError, ValueError)


def test_connected_initial_states_get_exact_gradients():
    """Case 13: x_t = x_{t-1}^2, y_t = y_{t-1}, z_t = x_{t-1} + 1 over 3 steps: exact d/dx0, d/dy0."""
    (x0, y0, z0), (x, y, z) = _connectivity_scan()
    cost = (x + y + z).sum()
    gx0, gy0 = in_modes([x0, y0, z0], ss.grad(cost, [x0, y0]), np.array([0.9, -0.7]), np.array([1.5, 2.5]),
                        np.zeros(2))
    a = np.array([0.9, -0.7])
    expected = sum(2 ** (t + 1) * a ** (2 ** (t + 1) - 1) for t in range(3)) + sum(2 ** t * a ** (2 ** t - 1)
                                                                                 for t in range(3))
    np.testing.assert_allclose(gx0, expected, rtol=1e-12)
    np.testing.assert_array_equal(gy0, [3.0, 3.0])


def test_disconnected_initial_state_ignore_none_and_disconnected():
    """Case 13: 'ignore' gives float zeros of z0's shape; 'None' gives None; 'Disconnected' a DisconnectedType."""
    (x0, y0, z0), (x, y, z) = _connectivity_scan()
    cost = (x + y).sum()
    gx0, gz0 = ss.grad(cost, [x0, z0], disconnected_inputs="ignore")
    values = in_modes([x0, y0, z0], [gx0, gz0], np.array([0.5, 0.6, 0.7]), np.array([1.0, 2.0, 3.0]),
                      np.array([1.0, 2.0, 3.0]))
    a = np.array([0.5, 0.6, 0.7])
    np.testing.assert_allclose(values[0], 2 * a + 4 * a ** 3 + 8 * a ** 7, rtol=1e-12)
    assert values[1].dtype == np.float64 and values[1].shape == (3,) and not values[1].any()
    assert ss.grad(cost, [x0, z0], disconnected_inputs="ignore", return_disconnected="None")[1] is None
    g = ss.grad(cost, [x0, z0], disconnected_inputs="ignore", return_disconnected="Disconnected")[1]
    assert isinstance(g.type, DisconnectedType)


# ---------------------------------------------------------------------------- case 14: connectivity
def test_connection_found_through_the_recurrence():
    """Case 14: m2_t = u_{t-1} + v with u_t = x_t + u_{t-1}: m reaches m2 only through u; exact values."""
    v, m = T.vector("v"), T.matrix("m")
    (u, m2), _ = ss.scan(lambda x, u: [x + u, u + v], sequences=m, outputs_info=[T.zeros((4,)), None])
    gm, gv = ss.grad(m2.sum(), [m, v])
    got = in_modes([m, v], [gm, gv], np.random.default_rng(8).normal(size=(5, 4)), np.ones(4))
    np.testing.assert_array_equal(got[0], np.repeat(np.array([4, 3, 2, 1, 0.0])[:, None], 4, axis=1))
    np.testing.assert_array_equal(got[1], np.full(4, 5.0))


def test_a_disconnected_nit_sot_cotangent_is_skipped():
    """Case 14: only the second of two nit-sots is in the cost: d out2.sum() / dv == 1."""
    v = T.vector("v")
    (out1, out2), _ = ss.scan(lambda s: [s + 1, (s + 1) * 2.0], sequences=v)
    (got,) = in_modes([v], [ss.grad(out2.sum(), v)], np.arange(5.0))
    np.testing.assert_array_equal(got, np.full(5, 2.0))


# ---------------------------------------------------------------------------- case 15: shared variables
def test_grad_wrt_a_shared_non_sequence():
    """Case 15: y_t = v_t * x1 with x1 shared (found implicitly): d sum(y) / d x1 == 5 at v=[2, 3]."""
    x1 = ss.shared(3.0, name="x1")
    x2 = T.vector("x2")
    y, _ = ss.scan(lambda v: v * x1, sequences=x2)
    (got,) = in_modes([x2], [ss.grad(y.sum(), x1)], np.array([2.0, 3.0]))
    assert got == 5.0


def test_a_shared_variable_updated_by_the_loop_is_differentiable():
    """Case 15: s <- s + 1 ten times: d(final s)/d(initial s) == 1 (Theano's test_grad_numeric_shared)."""
    s = ss.shared(np.float64(1.0), name="s")
    _, updates = ss.scan(lambda: {s: s + 1.0}, n_steps=10)
    (got,) = in_modes([], [ss.grad(updates[s], s)])
    assert got == 1.0


def test_a_shared_update_with_a_parameter_has_exact_gradients():
    """Case 15: s <- s*w + 1 four times: final = s w^4 + w^3 + w^2 + w + 1; exact d/ds and d/dw."""
    s = ss.shared(np.float64(1.5), name="s")
    w = T.scalar("w")
    _, updates = ss.scan(lambda: {s: s * w + 1.0}, n_steps=4)
    gs, gw = in_modes([w], ss.grad(updates[s], [s, w]), 0.7)
    np.testing.assert_allclose(gs, 0.7 ** 4, rtol=1e-12)
    np.testing.assert_allclose(gw, 4 * 1.5 * 0.7 ** 3 + 3 * 0.7 ** 2 + 2 * 0.7 + 1, rtol=1e-12)
    assert s.get_value() == 1.5  # no updates were given to the compiled functions


def test_a_shared_state_read_by_an_output_and_updated():
    """Case 15: out_t = x_t * s_t with s <- 0.5 s each step; cost sum(out) + final s: exact d/ds0 and d/dx."""
    s = ss.shared(np.float64(2.0), name="s")
    xs = T.vector("xs")
    out, updates = ss.scan(lambda x: (x * s, {s: s * 0.5}), sequences=xs)
    xv = np.array([1.0, -2.0, 3.0, 0.5])
    gs, gx = in_modes([xs], ss.grad(out.sum() + updates[s], [s, xs]), xv)
    halves = 0.5 ** np.arange(4)
    np.testing.assert_allclose(gs, (xv * halves).sum() + 0.5 ** 4, rtol=1e-14)
    np.testing.assert_allclose(gx, 2.0 * halves, rtol=1e-14)


def test_a_random_draw_whose_parameter_depends_on_wrt_is_undefined():
    """Case 15: y_t ~ normal(avg=w x_t) inside fn: grad w.r.t. w raises NullTypeGradError (or is returned)."""
    stream = ss.RandomStream(5)
    w, xs = T.scalar("w"), T.vector("xs")
    y, _ = ss.scan(lambda x: stream.normal(avg=w * x), sequences=xs)
    with pytest.raises(ss.NullTypeGradError):
        ss.grad(y.sum(), w)
    assert isinstance(ss.grad(y.sum(), w, null_gradients="return").type, NullType)


def test_random_draws_in_nested_scans_give_undefined_gradients():
    """Case 15: Theano's test_crash_nonseq_grad: draws depending on inp inside a scan inside a scan."""
    stream = ss.RandomStream(11)
    inp = T.matrix("inp")
    norm_inp = inp / inp.sum(axis=0)

    def outer_step(i):
        pooled, inner_updates = ss.scan(lambda j: inp + stream.normal(avg=norm_inp),
                                        sequences=T.arange(inp.shape[0]))
        return pooled + stream.uniform(size=pooled.shape), inner_updates

    out, _ = ss.scan(outer_step, sequences=T.arange(inp.shape[0]))
    with pytest.raises(ss.NullTypeGradError):
        ss.grad(out.sum(), inp)


@pytest.mark.parametrize("noise_is_an_output", [True, False])
def test_backward_uses_the_samples_the_forward_drew(noise_is_an_output):
    """Case 15: h_t = w*h_{t-1} + noise_t, y_t = w*noise_t: gradients equal numpy BPTT on the forward's samples."""
    stream = ss.RandomStream(1234)
    w, h0 = T.scalar("w"), T.vector("h0")

    def step(h):
        noise = stream.normal(size=(2,))
        return [w * h + noise, w * noise] + ([noise] if noise_is_an_output else [])

    outs, updates = ss.scan(step, outputs_info=[h0, None] + ([None] if noise_is_an_output else []), n_steps=5)
    h, y = outs[0], outs[1]
    c = np.random.default_rng(9).uniform(0.5, 1.5, size=(5, 2))
    cost = (h * T.constant(c)).sum() + y.sum()
    gw, gh0 = ss.grad(cost, [w, h0])
    wv, h0v = 0.8, np.array([0.3, -0.4])
    for mode in RANDOM_MODES:
        f = ss.function([w, h0], [h, y, gw, gh0], updates=updates, mode=mode)
        seen = []
        for _ in range(2):  # a second call draws new samples; its gradient follows them
            hv, yv, gwv, gh0v = f(wv, h0v)
            nv = yv / wv  # the samples this call drew
            prev = [h0v] + list(hv[:-1])
            np.testing.assert_allclose(hv, [wv * p + n for p, n in zip(prev, nv)], rtol=1e-12)
            carry, expected_gw = np.zeros(2), nv.sum()  # y = w * noise
            for t in reversed(range(5)):
                gh = c[t] + carry
                expected_gw += gh @ prev[t]
                carry = wv * gh
            np.testing.assert_allclose(gwv, expected_gw, rtol=1e-10, err_msg=mode)
            np.testing.assert_allclose(gh0v, carry, rtol=1e-10, err_msg=mode)
            seen.append(nv)
        assert not np.allclose(seen[0], seen[1])


# ---------------------------------------------------------------------------- case 16: go_backwards with taps
W_IN2, W_REC, W_OUT = (np.random.default_rng(10).uniform(-0.2, 0.2, size=s) for s in [(2,), (2, 2), (2,)])


def _taps_rnn(go_backwards):
    W_in2, W, W_out = ss.shared(W_IN2, name="win2"), ss.shared(W_REC, name="w"), ss.shared(W_OUT, name="wout")

    def fun(u1, u2, x0, y0, W_in1):
        def step(u1_t, u2_tm1, u2_t, u2_tp1, x_tm1, y_tm1, y_tm3, W_in1):
            return [T.dot(u1_t, W_in1) + (u2_t + u2_tm1 * u2_tp1) * W_in2 + T.dot(x_tm1, W),
                    (y_tm1 + y_tm3) * T.dot(x_tm1, W_out)]

        (x, y), _ = ss.scan(step, sequences=[u1, dict(input=u2, taps=[-1, 0, 1])],
                            outputs_info=[x0, dict(initial=y0, taps=[-1, -3])], non_sequences=W_in1,
                            go_backwards=go_backwards)
        return T.concatenate([x, y[:, None]], axis=1)

    return fun


@pytest.mark.parametrize("go_backwards", [False, True])
def test_sequence_taps_and_mit_sot_taps_against_finite_differences(grad_check, go_backwards):
    """Case 16: sequence taps [-1,0,1], mit-sot taps [-1,-3], forwards and go_backwards: FD and verify_grad."""
    r = np.random.default_rng(11)
    n = 5
    grad_check(_taps_rnn(go_backwards), r.uniform(-0.2, 0.2, size=(n, 2)), r.uniform(-0.2, 0.2, size=(n + 2, 2)),
               r.uniform(-0.2, 0.2, size=2), r.uniform(size=3), r.uniform(-0.2, 0.2, size=(2, 2)))


# ---------------------------------------------------------------------------- case 17: negative n_steps
def _direction_rnn(W, h0, xs, **kwargs):
    h, _ = ss.scan(lambda x, h: T.tanh(T.dot(W, h) + x), sequences=xs, outputs_info=h0, **kwargs)
    return h


@pytest.mark.parametrize("k", [6, 4])
def test_negative_n_steps_equals_go_backwards(k):
    """Case 17: n_steps=-k (constant and symbolic, given -k at run time) == go_backwards=True, n_steps=k; and FD."""
    W, h0, xs, n = T.matrix("W"), T.vector("h0"), T.matrix("xs"), T.iscalar("n")
    r = np.random.default_rng(13)
    values = [r.normal(scale=0.5, size=(3, 3)), r.normal(size=3), r.normal(size=(6, 3))]
    c = T.constant(r.uniform(0.5, 1.5, size=(k, 3)))
    wrt = [W, h0, xs]
    reference = (_direction_rnn(W, h0, xs, go_backwards=True, n_steps=k) * c).sum()
    expected = in_modes(wrt, ss.grad(reference, wrt), *values)
    assert_fd(wrt, reference, [0, 1, 2], values, expected)
    constant = (_direction_rnn(W, h0, xs, n_steps=-k) * c).sum()
    symbolic = (_direction_rnn(W, h0, xs, n_steps=n) * c).sum()
    for got in (in_modes(wrt, ss.grad(constant, wrt), *values),
                in_modes(wrt + [n], ss.grad(symbolic, wrt), *values, np.int32(-k))):
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)


def test_symbolic_n_steps_sign_switches_the_gradient_direction():
    """Case 17: one graph with symbolic n_steps: +k gives the forward gradient, -k the backward one."""
    W, h0, xs, n = T.matrix("W"), T.vector("h0"), T.matrix("xs"), T.iscalar("n")
    r = np.random.default_rng(14)
    values = [r.normal(scale=0.5, size=(3, 3)), r.normal(size=3), r.normal(size=(5, 3))]
    wrt = [W, h0, xs]
    cost = _direction_rnn(W, h0, xs, n_steps=n)[-1].sum()
    symbolic = ss.grad(cost, wrt)
    results = []
    for sign, go_backwards in ((1, False), (-1, True)):
        expected = in_modes(wrt, ss.grad(_direction_rnn(W, h0, xs, go_backwards=go_backwards)[-1].sum(), wrt),
                            *values)
        got = in_modes(wrt + [n], symbolic, *values, np.int32(sign * 5))
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)
        assert_fd(wrt + [n], cost, [0, 1, 2], values + [np.int32(sign * 5)], got)
        results.append(got[2])
    assert not np.allclose(results[0], results[1])


def test_negative_n_steps_with_go_backwards_runs_forward():
    """Case 17: go_backwards=True with n_steps=-k walks forward: same gradient as the plain forward loop."""
    W, h0, xs = T.matrix("W"), T.vector("h0"), T.matrix("xs")
    r = np.random.default_rng(15)
    values = [r.normal(scale=0.5, size=(3, 3)), r.normal(size=3), r.normal(size=(4, 3))]
    wrt = [W, h0, xs]
    got = in_modes(wrt, ss.grad(_direction_rnn(W, h0, xs, go_backwards=True, n_steps=-4).sum(), wrt), *values)
    expected = in_modes(wrt, ss.grad(_direction_rnn(W, h0, xs).sum(), wrt), *values)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------- case 18: zero steps
def _buffer(out):
    """The Scan's full buffer (initial rows, then the steps) behind the returned output."""
    buffer = out.owner.inputs[0]
    assert isinstance(buffer.owner.op, Scan)
    return buffer


def test_zero_steps_sit_sot():
    """Case 18: n_steps=0: xs and w get zeros; h0 gets exactly the cotangent on the buffer's initial row."""
    xs, h0, w, n = T.matrix("xs"), T.vector("h0"), T.scalar("w"), T.iscalar("n")
    h, _ = ss.scan(lambda x, h, w: T.tanh(h * w + x), sequences=xs, outputs_info=h0, non_sequences=w, n_steps=n)
    buffer = _buffer(h)
    C = np.random.default_rng(16).uniform(0.5, 1.5, size=(6, 3))
    cost = (buffer * T.constant(C)[:buffer.shape[0]]).sum()
    wrt = [xs, h0, w]
    values = [np.random.default_rng(17).normal(size=(5, 3)), np.array([0.1, 0.2, 0.3]), 0.7]
    gxs, gh0, gw = in_modes(wrt + [n], ss.grad(cost, wrt), *values, np.int32(0))
    assert gxs.shape == (5, 3) and gw.shape == () and gh0.shape == (3,)
    np.testing.assert_array_equal(gxs, np.zeros((5, 3)))
    assert gw == 0.0
    np.testing.assert_array_equal(gh0, C[0])
    # the same graph with steps: finite differences (so the graph is a real gradient, not zeros)
    got = in_modes(wrt + [n], ss.grad(cost, wrt), *values, np.int32(3))
    assert_fd(wrt + [n], cost, [0, 1, 2], values + [np.int32(3)], got)


def test_zero_steps_mit_sot_and_nit_sot():
    """Case 18: n_steps=0 with a mit-sot (taps [-2,-1]) and a nit-sot: initial rows get their cotangent, the rest 0."""
    xs, init, w, n = T.matrix("xs"), T.matrix("init"), T.vector("w"), T.iscalar("n")
    (y, z), _ = ss.scan(lambda x, a, b: [a * b * w + x, T.sin(x) * w], sequences=xs,
                        outputs_info=[dict(initial=init, taps=[-2, -1]), None], n_steps=n)
    buffer = _buffer(y)
    C = np.random.default_rng(18).uniform(0.5, 1.5, size=(7, 3))
    cost = (buffer * T.constant(C)[:buffer.shape[0]]).sum() + z.sum()
    wrt = [xs, init, w]
    r = np.random.default_rng(19)
    values = [r.normal(size=(5, 3)), r.normal(size=(2, 3)), r.normal(size=3)]
    gxs, ginit, gw = in_modes(wrt + [n], ss.grad(cost, wrt), *values, np.int32(0))
    np.testing.assert_array_equal(gxs, np.zeros((5, 3)))
    np.testing.assert_array_equal(gw, np.zeros(3))
    np.testing.assert_array_equal(ginit, C[:2])


def test_zero_steps_as_a_constant():
    """Case 18: a constant n_steps=0 too: the sequence and non-sequence get zeros, h0 the direct cotangent."""
    xs, h0, w = T.vector("xs"), T.scalar("h0"), T.scalar("w")
    h, _ = ss.scan(lambda x, h: h * w + x, sequences=xs, outputs_info=h0, n_steps=0)
    cost = h.sum() + 2.5 * h0
    got = in_modes([xs, h0, w], ss.grad(cost, [xs, h0, w]), np.arange(3.0), 0.5, 1.5)
    np.testing.assert_array_equal(got[0], np.zeros(3))
    assert got[1] == 2.5 and got[2] == 0.0


# ---------------------------------------------------------------------------- case 19: sequences longer than n_steps
def _polynomial():
    c, x = T.vector("c"), T.scalar("x")
    components, _ = ss.scan(lambda coeff, power, free_var: coeff * free_var ** power,
                            sequences=[c, T.arange(1000)], non_sequences=x)
    return c, x, components.sum()


def test_sequences_longer_than_the_steps():
    """Case 19: P = sum_i c_i x^i over [c, arange(1000)]: dP/dx == 38 and dP/dc_i == x^i at c=[1,2,-3,4], x=2."""
    c, x, P = _polynomial()
    gx, gc = in_modes([c, x], ss.grad(P, [x, c]), np.array([1.0, 2.0, -3.0, 4.0]), 2.0)
    assert gx == 38.0
    np.testing.assert_array_equal(gc, [1.0, 2.0, 4.0, 8.0])


def test_second_derivative_of_a_state_with_longer_sequences():
    """Case 19: d2P/dx2 == 42 (grad of the gradient scan)."""
    c, x, P = _polynomial()
    (got,) = in_modes([c, x], [ss.grad(ss.grad(P, x), x)], np.array([1.0, 2.0, -3.0, 4.0]), 2.0)
    assert got == 42.0


# ---------------------------------------------------------------------------- case 20: integer dtypes
def test_an_int32_state_beside_float_states():
    """Case 20: Theano's test_grad_dtype_change made a real test: gradients agree with FD; int state gets 0."""
    c, x, y = T.iscalar("c"), T.scalar("x"), T.scalar("y")

    def step(cond, x, y):
        return [T.cast(T.switch(cond, x, y), "int32"), T.switch(cond, T.sigmoid(y * x), x),
                T.switch(cond, y, T.sigmoid(x))]

    (conds, xs, ys), _ = ss.scan(step, outputs_info=[c, x, y], n_steps=10)
    assert conds.dtype == "int32"
    cost = xs.sum() + 0.5 * ys.sum()
    values = [np.int32(1), 1.3, 0.5]
    gx, gy = in_modes([c, x, y], ss.grad(cost, [x, y]), *values)
    assert gx.dtype == gy.dtype == np.float64
    value = ss.function([c, x, y], cost, mode="py")
    fd = central(lambda xv, yv: float(value(values[0], xv, yv)), [1.3, 0.5])
    np.testing.assert_allclose([gx, gy], [fd[0], fd[1]], rtol=1e-6, atol=1e-8)
    (gc,) = in_modes([c, x, y], [ss.grad(cost, c, disconnected_inputs="ignore")], *values)
    assert gc.dtype == np.float64 and gc == 0.0


def test_an_int_sequence_used_through_a_cast_gets_the_float_gradient():
    """Case 20: grad w.r.t. an int32 sequence read through cast equals grad w.r.t. the same float sequence."""
    a = T.scalar("a")

    def loop(s):
        h, _ = ss.scan(lambda s_t, h: T.tanh(h * a + T.cast(s_t, "float64") * 0.3), sequences=s,
                       outputs_info=T.constant(0.1))
        return (h * T.constant([1.0, 2.0, 0.5, 1.5, 1.0])).sum()

    si, sf = T.ivector("si"), T.vector("sf")
    seq = np.array([1, -2, 3, 0, 2])
    gi = ss.grad(loop(si), si)
    gf = ss.grad(loop(sf), sf)
    assert gi.dtype == "float64"
    (got_int,) = in_modes([si, a], [gi], seq.astype("int32"), 0.6)
    (got_float,) = in_modes([sf, a], [gf], seq.astype("float64"), 0.6)
    np.testing.assert_allclose(got_int, got_float, rtol=1e-14)
    assert_fd([sf, a], loop(sf), [0], [seq.astype("float64"), 0.6], [got_float])
    assert np.all(got_float != 0)


# ---------------------------------------------------------------------------- case 25: API edge cases
def test_a_scan_output_is_not_a_scalar_cost():
    """Case 25: grad of a whole scan output (a matrix) raises TypeError."""
    inputs = rnn_inputs()
    with pytest.raises(TypeError, match="cost must be a scalar"):
        ss.grad(rnn(*inputs), inputs[0])


def test_known_grads_only_on_a_scan_output():
    """Case 25: grad(None, known_grads={h: G}) is the vector-Jacobian product: numpy BPTT with V=G."""
    inputs = rnn_inputs()
    h = rnn(*inputs)
    G = T.matrix("G")
    grads = ss.grad(None, list(inputs), known_grads={h: G})
    values = rnn_values(20)
    Gv = np.random.default_rng(21).normal(size=(STEPS, H))
    got = in_modes(list(inputs) + [G], grads, *values, Gv)
    for g, e in zip(got, numpy_bptt(*values, Gv)):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def test_consider_constant_on_a_sequence():
    """Case 25: consider_constant=[seq] (seq = 2 xs): W's gradient unchanged, xs disconnected."""
    inputs = rnn_inputs()
    W, U, b, h0, xs = inputs
    seq = xs * 2.0
    cost = rnn(W, U, b, h0, seq).sum()
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(cost, xs, consider_constant=[seq])
    values = rnn_values(22)
    got, expected = (in_modes(list(inputs), [ss.grad(cost, W, **kw)], *values)[0]
                     for kw in ({"consider_constant": [seq]}, {}))
    np.testing.assert_allclose(got, expected, rtol=1e-14)


@pytest.mark.parametrize("marker", ["zero_grad", "disconnected_grad"])
def test_gradient_stops_inside_the_step(marker):
    """Case 25: h_t = stop(h_{t-1}) * w + x_t: each step's gradient is local only (exact values)."""
    stop = getattr(ss, marker)
    xs, h0, w = T.vector("xs"), T.scalar("h0"), T.scalar("w")
    h, _ = ss.scan(lambda x, h: stop(h) * w + x, sequences=xs, outputs_info=h0)
    c = np.array([1.0, 2.0, 3.0, 4.0])
    cost = (h * T.constant(c)).sum()
    wrt = [xs, w, h0]
    if marker == "disconnected_grad":
        with pytest.raises(ss.DisconnectedInputError):
            ss.grad(cost, h0)
        wrt = wrt[:2]
    xv, h0v, wv = np.array([0.5, -1.0, 2.0, 0.25]), 0.3, 1.5
    got = in_modes([xs, h0, w], ss.grad(cost, wrt), xv, h0v, wv)
    hv = numpy_linear(xv, h0v, wv)
    prev = np.concatenate([[h0v], hv[:-1]])
    np.testing.assert_allclose(got[0], c, rtol=1e-14)
    np.testing.assert_allclose(got[1], (c * prev).sum(), rtol=1e-14)
    if marker == "zero_grad":
        assert got[2] == 0.0


def numpy_linear(xv, h0v, wv):
    hs, h = [], h0v
    for x in xv:
        h = h * wv + x
        hs.append(h)
    return np.array(hs)


def test_grad_scale_and_grad_clip_inside_the_step():
    """Case 25: grad_scale on x_t halves its gradient; grad_clip on h_{t-1} clips each step's carried cotangent."""
    xs, h0, w = T.vector("xs"), T.scalar("h0"), T.scalar("w")
    c = np.array([3.0, -2.0, 1.0, 4.0])
    xv, h0v, wv = np.array([0.5, -1.0, 2.0, 0.25]), 0.3, 1.5
    scaled, _ = ss.scan(lambda x, h: h * w + ss.grad_scale(x, 0.5), sequences=xs, outputs_info=h0)
    clipped, _ = ss.scan(lambda x, h: ss.grad_clip(h, -1.0, 1.0) * w + x, sequences=xs, outputs_info=h0)
    wrt = [xs, h0, w]
    g_scaled = in_modes(wrt, ss.grad((scaled * T.constant(c)).sum(), wrt), xv, h0v, wv)
    g_clipped = in_modes(wrt, ss.grad((clipped * T.constant(c)).sum(), wrt), xv, h0v, wv)
    prev = np.concatenate([[h0v], numpy_linear(xv, h0v, wv)[:-1]])
    carry, gx, gw_scaled = 0.0, np.zeros(4), 0.0
    for t in reversed(range(4)):  # unclipped BPTT
        gh = c[t] + carry
        gx[t], gw_scaled, carry = gh, gw_scaled + gh * prev[t], gh * wv
    np.testing.assert_allclose(g_scaled[0], gx * 0.5, rtol=1e-14)
    np.testing.assert_allclose(g_scaled[1:], [carry, gw_scaled], rtol=1e-14)
    carry, gx, gw = 0.0, np.zeros(4), 0.0
    for t in reversed(range(4)):  # the cotangent reaching h_{t-1} through the clip is clipped
        gh = c[t] + carry
        gx[t], gw, carry = gh, gw + gh * prev[t], np.clip(gh * wv, -1.0, 1.0)
    np.testing.assert_allclose(g_clipped[0], gx, rtol=1e-14)
    np.testing.assert_allclose(g_clipped[1:], [carry, gw], rtol=1e-14)
    assert not np.allclose(g_clipped[0], g_scaled[0] * 2)  # the clip really acted


def test_undefined_grad_inside_the_step():
    """Case 25: undefined_grad inside fn raises NullTypeGradError; null_gradients='return' gives a NullType."""
    xs, h0 = T.vector("xs"), T.scalar("h0")
    h, _ = ss.scan(lambda x, h: ss.undefined_grad(h) + x, sequences=xs, outputs_info=h0)
    with pytest.raises(ss.NullTypeGradError):
        ss.grad(h.sum(), h0)
    assert isinstance(ss.grad(h.sum(), h0, null_gradients="return").type, NullType)
