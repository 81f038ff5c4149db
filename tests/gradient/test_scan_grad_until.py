"""Truncated backpropagation (``truncate_gradient=k``: only the last k executed steps run
backwards) and gradients of ``until`` loops (only the executed steps; the rest of a sequence
gets zeros): GRADIENTS.md §7 cases 2-7, against hand-truncated numpy BPTT, exact values and
central finite differences, in modes py, fast and onnxruntime."""

import numpy as np
import pytest
from gradient_checks import central_difference, numpy_bptt, numpy_rnn

import symscan as ss
import symscan.tensor as T

MODES = ("py", "fast", "onnxruntime")


def in_modes(inputs, outputs, *values, modes=MODES, rtol=1e-9, atol=1e-12):
    """``outputs`` compiled in each mode; every mode agrees with "py"; py's values (a list)."""
    results = {}
    for mode in modes:
        got = ss.function(inputs, outputs, mode=mode)(*values)
        results[mode] = [np.asarray(g) for g in (got if isinstance(got, list) else [got])]
    for mode, got in results.items():
        for i, (g, e) in enumerate(zip(got, results["py"])):
            assert g.shape == e.shape, f"mode {mode}, output {i}: shape {g.shape} != {e.shape}"
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"mode {mode}, output {i}")
    return results["py"]


def central(f, points, wrt, step=1e-6):
    """d f / d points[i] for i in ``wrt``, by central differences."""
    return [central_difference(f, points, i, step) for i in wrt]


# ---------------------------------------------------------------------------- case 2: truncated Elman RNN
H, D, STEPS = 3, 2, 6


def rnn(W, U, b, h0, xs, truncate_gradient=-1):
    h, _ = ss.scan(lambda x, h: T.tanh(T.dot(W, h) + T.dot(U, x) + b), sequences=xs, outputs_info=h0,
                   truncate_gradient=truncate_gradient)
    return h


def rnn_case(seed):
    r = np.random.default_rng(seed)
    values = [r.normal(scale=0.6, size=(H, H)), r.normal(scale=0.6, size=(H, D)), r.normal(scale=0.3, size=H),
              r.normal(scale=0.5, size=H), r.normal(size=(STEPS, D))]
    return values, r.uniform(0.5, 1.5, size=(STEPS, H))


def test_truncated_reference_with_k_at_least_t_is_full_bptt():
    """The numpy reference with k >= T agrees with central differences of the numpy RNN."""
    values, V = rnn_case(0)
    fd = central(lambda *ps: float((numpy_rnn(*ps) * V).sum()), values, range(5))
    for g, e in zip(numpy_bptt(*values, V, last=STEPS), fd):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("k", [1, 3, STEPS, STEPS + 5])
def test_truncate_gradient_runs_only_the_last_k_steps_backwards(k):
    """Case 2: truncate_gradient=k equals hand-truncated numpy BPTT over steps T-1 ... T-k."""
    inputs = [T.matrix("W"), T.matrix("U"), T.vector("b"), T.vector("h0"), T.matrix("xs")]
    values, V = rnn_case(k)
    cost = (rnn(*inputs, truncate_gradient=k) * T.constant(V)).sum()
    got = in_modes(inputs, ss.grad(cost, inputs), *values)
    expected = numpy_bptt(*values, V, last=k)
    for name, g, e, v in zip("W U b h0 xs".split(), got, expected, values):
        assert g.shape == v.shape, name
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12, err_msg=f"{name}, k={k}")
    gxs, gh0 = got[4], got[3]
    if k < STEPS:
        np.testing.assert_array_equal(gxs[:STEPS - k], 0.0)
        assert np.all(gxs[STEPS - k:] != 0)
        np.testing.assert_array_equal(gh0, 0.0)
    else:  # equals the untruncated gradient
        full = in_modes(inputs, ss.grad((rnn(*inputs) * T.constant(V)).sum(), inputs), *values)
        for g, e in zip(got, full):
            np.testing.assert_allclose(g, e, rtol=1e-13, atol=1e-15)


def test_truncate_gradient_with_a_mit_sot():
    """Case 2: mit-sot taps [-2,-1], k=2 of 5 steps: only steps 3, 4 run backwards; the initial rows get nothing."""
    xs, init, a = T.vector("xs"), T.vector("init"), T.vector("a")
    y, _ = ss.scan(lambda x, y2, y1: T.tanh(a[0] * y2 + a[1] * y1) + x, sequences=xs,
                   outputs_info=dict(initial=init, taps=[-2, -1]), truncate_gradient=2)
    c = np.array([1.0, 2.0, 0.5, 1.5, 3.0])
    r = np.random.default_rng(3)
    xv, iv, av = r.normal(size=5), r.normal(size=2), np.array([0.4, -0.7])
    gx, gi, ga = in_modes([xs, init, a], ss.grad((y * T.constant(c)).sum(), [xs, init, a]), xv, iv, av)
    ys = list(iv)
    for x in xv:
        ys.append(np.tanh(av[0] * ys[-2] + av[1] * ys[-1]) + x)
    g = np.zeros(7)  # cotangent of every buffer row (2 initial rows, then the steps)
    g[2:] = c
    ex, ea = np.zeros(5), np.zeros(2)
    for t in (4, 3):
        row = 2 + t
        ex[t] = g[row]
        d = g[row] * (1 - np.tanh(av[0] * ys[row - 2] + av[1] * ys[row - 1]) ** 2)
        ea += d * np.array([ys[row - 2], ys[row - 1]])
        g[row - 2] += d * av[0]
        g[row - 1] += d * av[1]
    np.testing.assert_allclose(gx, ex, rtol=1e-12)
    np.testing.assert_allclose(ga, ea, rtol=1e-12)
    np.testing.assert_array_equal(gi, [0.0, 0.0])


def test_truncation_reaching_the_initial_rows_of_a_mit_sot():
    """Case 2: taps [-3,-1], 2 steps, k=1: the last step reads initial row 1 (tap -3), which gets its gradient."""
    init, w = T.vector("init"), T.scalar("w")
    y, _ = ss.scan(lambda y3, y1: w * y3 * y1, outputs_info=dict(initial=init, taps=[-3, -1]), n_steps=2,
                   truncate_gradient=1)
    iv, wv = np.array([0.5, 2.0, -1.5]), 1.25
    gi, gw = in_modes([init, w], ss.grad(y[-1], [init, w]), iv, wv)
    y0 = wv * iv[0] * iv[2]  # step 0 reads rows 0 and 2
    # step 1 reads initial row 1 (tap -3) and y0 (tap -1); only it runs backwards
    np.testing.assert_allclose(gi, [0.0, wv * y0, 0.0], rtol=1e-14)
    np.testing.assert_allclose(gw, iv[1] * y0, rtol=1e-14)


def test_truncate_gradient_through_a_non_sequence_sums_the_last_k_steps():
    """Case 2: y_t = w * x_t with k=2: dw sums only the last two rows of x."""
    xs, w = T.vector("xs"), T.scalar("w")
    y, _ = ss.scan(lambda x: w * x, sequences=xs, truncate_gradient=2)
    gx, gw = in_modes([xs, w], ss.grad(y.sum(), [xs, w]), np.array([1.0, 2.0, 3.0, 4.0, 5.0]), 3.0)
    assert gw == 9.0
    np.testing.assert_array_equal(gx, [0.0, 0.0, 0.0, 3.0, 3.0])


# ---------------------------------------------------------------------------- cases 3, 4: until with nit-sot
SEQ = np.arange(15.0)
EXPECTED_X2 = 2 * np.concatenate([SEQ[:7], np.zeros(8)])


def _until_square(x, u, truncate_gradient=-1):
    r, _ = ss.scan(lambda a, u: (a * a, ss.until(a > u)), sequences=x, non_sequences=[u],
                   truncate_gradient=truncate_gradient)
    return r


def test_until_nit_sot_gradient_goes_to_the_executed_rows():
    """Case 4: x*x until x > 5 on arange(15): 7 steps; the gradient is 2x on rows 0-6 and 0 after."""
    x, u = T.vector("x"), T.lscalar("u")
    r = _until_square(x, u)
    out, g = in_modes([x, u], [r, ss.grad(r.sum(), x)], SEQ, np.int64(5))
    np.testing.assert_array_equal(out, SEQ[:7] ** 2)
    np.testing.assert_array_equal(g, EXPECTED_X2)


def test_until_nit_sot_with_a_matrix_sequence():
    """Case 4: the same with every row a 5-vector (until all(x > u)): the gradient tiles."""
    X, u = T.matrix("X"), T.lscalar("u")
    r, _ = ss.scan(lambda a, u: (a * a, ss.until(T.all(a > u))), sequences=X, non_sequences=[u])
    tile = lambda v: np.tile(v[:, None], (1, 5))  # noqa: E731
    out, g = in_modes([X, u], [r, ss.grad(r.sum(), X)], tile(SEQ), np.int64(5))
    np.testing.assert_array_equal(out, tile(SEQ[:7] ** 2))
    np.testing.assert_array_equal(g, tile(EXPECTED_X2))


def test_until_going_backwards_puts_the_gradient_on_the_last_rows():
    """Case 4: x*x until x < 10 with go_backwards on arange(15): rows 14..9 run; 2x there, zeros on rows 0-8."""
    x = T.vector("x")
    r, _ = ss.scan(lambda a: (a * a, ss.until(a < 10.0)), sequences=x, go_backwards=True)
    out, g = in_modes([x], [r, ss.grad(r.sum(), x)], SEQ)
    np.testing.assert_array_equal(out, SEQ[9:][::-1] ** 2)
    np.testing.assert_array_equal(g, np.concatenate([np.zeros(9), 2 * SEQ[9:]]))


def test_until_and_truncate_nit_sot():
    """Case 4: x*x until x > 5 with truncate_gradient=3: only rows 4-6 (the last 3 executed) get 2x."""
    x, u = T.vector("x"), T.lscalar("u")
    r = _until_square(x, u, truncate_gradient=3)
    (g,) = in_modes([x, u], [ss.grad(r.sum(), x)], SEQ, np.int64(5))
    expected = EXPECTED_X2.copy()
    expected[:4] = 0
    np.testing.assert_array_equal(g, expected)


def test_until_and_truncate_with_sequence_taps():
    """Case 3: x[t]*x[t+2] until x[t+2] > 6, k=3, on arange(15): exactly [0,0,0,5,6,10,4,5,0,...]."""
    x, u = T.vector("x"), T.lscalar("u")
    r, _ = ss.scan(lambda a, b, u: (a * b, ss.until(b > u)), sequences=dict(input=x, taps=[-2, 0]),
                   non_sequences=[u], truncate_gradient=3)
    out, g = in_modes([x, u], [r, ss.grad(r.sum(), x)], SEQ, np.int64(6))
    np.testing.assert_array_equal(out, [0.0, 3.0, 8.0, 15.0, 24.0, 35.0])
    np.testing.assert_array_equal(g, [0, 0, 0, 5, 6, 10, 4, 5, 0, 0, 0, 0, 0, 0, 0])


def test_until_with_sequence_taps_untruncated():
    """Case 3 without truncation: every executed step contributes (d/dx of sum_t x_t x_{t+2}, t=0..5)."""
    x, u = T.vector("x"), T.lscalar("u")
    r, _ = ss.scan(lambda a, b, u: (a * b, ss.until(b > u)), sequences=dict(input=x, taps=[-2, 0]),
                   non_sequences=[u])
    (g,) = in_modes([x, u], [ss.grad(r.sum(), x)], SEQ, np.int64(6))
    expected = np.zeros(15)
    for t in range(6):
        expected[t] += SEQ[t + 2]
        expected[t + 2] += SEQ[t]
    np.testing.assert_array_equal(g, expected)


# ---------------------------------------------------------------------------- case 5: until with a sit-sot
A = 1.3


def _until_sit_sot(truncate_gradient=-1):
    y, x0 = T.vector("y"), T.scalar("x0")
    x, _ = ss.scan(lambda y_t, x_tm1: (A * x_tm1 + y_t, ss.until(A * x_tm1 + y_t > 5.0)), sequences=y,
                   outputs_info=x0, truncate_gradient=truncate_gradient)
    return y, x0, x


Y, X0 = np.full(10, 0.5), 1.0
"""x: 1.8, 2.84, 4.192, 5.9496 (> 5 at step 3): four steps run, far from the threshold."""


def test_until_sit_sot_closed_form():
    """Case 5: x_t = 1.3 x_{t-1} + y_t until x_t > 5: dy_j = (a^(k-j) - 1)/(a - 1), dx0 = a(a^k - 1)/(a - 1)."""
    y, x0, x = _until_sit_sot()
    out, gy, gx0 = in_modes([y, x0], [x] + ss.grad(x.sum(), [y, x0]), Y, X0)
    k = 4
    assert len(out) == k
    expected_y = np.zeros(10)
    expected_y[:k] = [(A ** (k - j) - 1) / (A - 1) for j in range(k)]
    np.testing.assert_allclose(gy, expected_y, rtol=1e-12, atol=0)
    np.testing.assert_allclose(gx0, A * (A ** k - 1) / (A - 1), rtol=1e-12)
    assert gy.shape == (10,) and gx0.shape == ()


# ---------------------------------------------------------------------------- case 7: until + truncate + sit-sot
@pytest.mark.parametrize("k", [1, 2, 4, 6])
def test_until_truncate_sit_sot_values_and_shapes(k):
    """Case 7: the case 5 loop with truncate_gradient=k: last min(k, 4) executed steps only; shapes of the inputs."""
    y, x0, x = _until_sit_sot(truncate_gradient=k)
    gy, gx0 = in_modes([y, x0], ss.grad(x.sum(), [y, x0]), Y, X0)
    assert gy.shape == (10,), f"gradient of y has shape {gy.shape}"
    assert gx0.shape == (), f"gradient of x0 has shape {gx0.shape}"
    executed = 4
    first = max(executed - k, 0)
    expected_y = np.zeros(10)
    expected_y[first:executed] = [(A ** (executed - j) - 1) / (A - 1) for j in range(first, executed)]
    np.testing.assert_allclose(gy, expected_y, rtol=1e-12, atol=0)
    np.testing.assert_allclose(gx0, A * (A ** executed - 1) / (A - 1) if first == 0 else 0.0, rtol=1e-12)


def test_until_truncate_mit_sot_shapes():
    """Case 7: until + truncate_gradient=2 + a mit-sot (taps [-2,-1]): input-shaped gradients, exact values."""
    y, init = T.vector("y"), T.vector("init")
    x, _ = ss.scan(lambda y_t, x2, x1: (0.5 * x2 + x1 + y_t, ss.until(0.5 * x2 + x1 + y_t > 6.0)), sequences=y,
                   outputs_info=dict(initial=init, taps=[-2, -1]), truncate_gradient=2)
    yv, iv = np.full(8, 0.5), np.array([0.25, 1.0])
    out, gy, gi = in_modes([y, init], [x] + ss.grad(x.sum(), [y, init]), yv, iv)
    rows = list(iv)
    for v in yv:
        rows.append(0.5 * rows[-2] + rows[-1] + v)
        if rows[-1] > 6.0:
            break
    n = len(rows) - 2
    np.testing.assert_allclose(out, rows[2:], rtol=1e-14)
    assert n == 5 and min(abs(np.array(rows[2:]) - 6.0)) > 0.1  # five steps, far from the threshold
    assert gy.shape == (8,) and gi.shape == (2,)
    g = np.zeros(2 + n)
    g[2:] = 1.0
    expected_y = np.zeros(8)
    for t in (n - 1, n - 2):
        expected_y[t] = g[2 + t]
        g[t] += 0.5 * g[2 + t]
        g[1 + t] += g[2 + t]
    np.testing.assert_allclose(gy, expected_y, rtol=1e-14)
    np.testing.assert_array_equal(gi, [0.0, 0.0])


# ---------------------------------------------------------------------------- case 6: until, mit-sot first, FD
def _until_mit_sot_first(x0, u, w):
    """x_t = tanh(w x_{t-3}) + 0.8 x_{t-1} + u_t (the FIRST output, taps [-3,-1]) and a nit-sot
    z_t = x_t * u_t, until x_t > 4."""
    def step(u_t, x3, x1, w):
        x_t = T.tanh(w * x3) + 0.8 * x1 + u_t
        return [x_t, x_t * u_t], ss.until(x_t > 4.0)

    (x, z), _ = ss.scan(step, sequences=u, outputs_info=[dict(initial=x0, taps=[-3, -1]), None], non_sequences=w)
    return x, z


def _numpy_mit_sot_first(x0, u, w):
    rows, zs = list(x0), []
    for u_t in u:
        rows.append(np.tanh(w * rows[-3]) + 0.8 * rows[-1] + u_t)
        zs.append(rows[-1] * u_t)
        if rows[-1] > 4.0:
            break
    return np.array(rows[3:]), np.array(zs)


def test_until_with_a_mit_sot_first_output_against_finite_differences():
    """Case 6: until, mit-sot taps [-3,-1] first, a sequence, a nit-sot: FD (stopping step fixed), zeros after."""
    x0, u, w = T.vector("x0"), T.vector("u"), T.scalar("w")
    x, z = _until_mit_sot_first(x0, u, w)
    r = np.random.default_rng(4)
    values = [np.array([0.3, -0.2, 0.5]), r.uniform(0.4, 0.8, size=12), 0.9]
    xs, zs = _numpy_mit_sot_first(*values)
    executed = len(xs)
    assert 3 < executed < 12 and np.min(np.abs(xs - 4.0)) > 1e-3  # stops early, far from the threshold
    cx = r.uniform(0.5, 1.5, size=executed)
    cz = r.uniform(0.5, 1.5, size=executed)
    cost = (x * T.constant(cx)).sum() + (z * T.constant(cz)).sum()
    inputs = [x0, u, w]
    out, *grads = in_modes(inputs, [x] + ss.grad(cost, inputs), *values)
    np.testing.assert_allclose(out, xs, rtol=1e-12)
    value = ss.function(inputs, cost, mode="py")
    fd = central(lambda *ps: float(value(*ps)), values, range(3))
    for name, g, e, v in zip(["x0", "u", "w"], grads, fd, values):
        assert g.shape == np.shape(v), name
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7, err_msg=name)
    np.testing.assert_array_equal(grads[1][executed:], 0.0)
    assert np.all(grads[1][:executed] != 0)


def test_until_with_a_mit_sot_first_output_truncated_shapes():
    """Case 6/7: the same loop with truncate_gradient=2: gradient shapes equal the inputs' shapes; rows < n-2 zero."""
    x0, u, w = T.vector("x0"), T.vector("u"), T.scalar("w")

    def step(u_t, x3, x1, w):
        x_t = T.tanh(w * x3) + 0.8 * x1 + u_t
        return x_t, ss.until(x_t > 4.0)

    x, _ = ss.scan(step, sequences=u, outputs_info=dict(initial=x0, taps=[-3, -1]), non_sequences=w,
                   truncate_gradient=2)
    r = np.random.default_rng(4)
    values = [np.array([0.3, -0.2, 0.5]), r.uniform(0.4, 0.8, size=12), 0.9]
    executed = len(_numpy_mit_sot_first(*values)[0])
    gx0, gu, gw = in_modes([x0, u, w], ss.grad(x.sum(), [x0, u, w]), *values)
    assert gx0.shape == (3,) and gu.shape == (12,) and gw.shape == ()
    np.testing.assert_array_equal(gu[:executed - 2], 0.0)
    np.testing.assert_array_equal(gu[executed:], 0.0)
    np.testing.assert_allclose(gu[executed - 2:executed], [1.8, 1.0], rtol=1e-14)  # 1 + 0.8, then 1
    np.testing.assert_array_equal(gx0, 0.0)


def test_a_condition_only_parameter_is_disconnected():
    """The until condition is not differentiated: a parameter read only by it is disconnected (Theano #3852)."""
    x0, thr = T.scalar("x0"), T.scalar("thr")
    x, _ = ss.scan(lambda x: (x + 1.0, ss.until(x + 1.0 + thr > 5.0)), outputs_info=x0, n_steps=100)
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(x[-1], thr)
    (g,) = in_modes([x0, thr], [ss.grad(x[-1], x0)], 0.0, 0.5)
    assert g == 1.0
