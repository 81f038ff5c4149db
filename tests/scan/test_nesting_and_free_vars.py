"""Scans inside scans, variables fn uses without being passed them (free variables, shared
variables), shared updates, and strict=True; numpy loops are the oracle."""

import copy

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T


# ---------------------------------------------------------------------------- nested scans
def test_nested_rowwise_cumulative_sums(mode, rng):
    m = T.matrix("m")

    def row_cumsum(row):
        sums, _ = ss.scan(lambda v, acc: acc + v, sequences=row, outputs_info=T.constant(0.0))
        return sums

    out, _ = ss.scan(row_cumsum, sequences=m)
    mv = rng.standard_normal((4, 5))
    expected = np.zeros_like(mv)
    for i in range(4):
        acc = 0.0
        for j in range(5):
            acc += mv[i, j]
            expected[i, j] = acc
    np.testing.assert_allclose(ss.function([m], out, mode=mode)(mv), expected)


def test_nested_matrix_power_series(mode, rng):
    """Outer loop: P <- P @ A and S <- S + P; inner loop: the product, one row of P at a time."""
    a, k = T.matrix("a"), T.iscalar("k")

    def step(power, total, a):
        rows, _ = ss.scan(lambda row, a: T.dot(row, a), sequences=power, non_sequences=a)
        return rows, total + rows

    eye = T.eye(a.shape[0])
    (powers, totals), _ = ss.scan(step, outputs_info=[eye, eye], non_sequences=a, n_steps=k)
    f = ss.function([a, k], [powers, totals], mode=mode)
    av = rng.standard_normal((3, 3)) * 0.5
    for n in (1, 4):
        got_powers, got_totals = f(av, n)
        power, total, e_powers, e_totals = np.eye(3), np.eye(3), [], []
        for _ in range(n):
            power = np.array([row @ av for row in power])
            total = total + power
            e_powers.append(power)
            e_totals.append(total)
        np.testing.assert_allclose(got_powers, e_powers)
        np.testing.assert_allclose(got_totals, e_totals)


def test_nested_scan_reads_outer_tap_and_non_sequence(mode):
    """The inner fn uses the outer step's tap values and the outer non-sequence, unpassed."""
    x, y, w = T.vector("x"), T.vector("y"), T.scalar("w")

    def outer_step(x_prev, x_cur, w):
        inner, _ = ss.scan(lambda y_t, acc: acc * w + y_t * x_cur - x_prev, sequences=y,
                           outputs_info=T.constant(0.0))
        return inner[-1]

    out, _ = ss.scan(outer_step, sequences=dict(input=x, taps=[-1, 0]), non_sequences=w)
    f = ss.function([x, y, w], out, mode=mode)
    xv, yv = np.array([1.0, 2.0, -1.0, 3.0]), np.array([0.5, 1.5, -2.0])
    expected = []
    for t in range(1, 4):
        acc = 0.0
        for y_t in yv:
            acc = acc * 0.5 + y_t * xv[t] - xv[t - 1]
        expected.append(acc)
    np.testing.assert_allclose(f(xv, yv, 0.5), expected)


def test_nested_scan_passed_outer_values_explicitly(mode):
    """Same as above with everything passed: sequences and non_sequences of both loops."""
    x, y, w = T.vector("x"), T.vector("y"), T.scalar("w")

    def outer_step(x_prev, x_cur, y, w):
        inner, _ = ss.scan(lambda y_t, acc, x_prev, x_cur, w: acc * w + y_t * x_cur - x_prev, sequences=y,
                           outputs_info=T.constant(0.0), non_sequences=[x_prev, x_cur, w], strict=True)
        return inner

    out, _ = ss.scan(outer_step, sequences=dict(input=x, taps=[-1, 0]), non_sequences=[y, w], strict=True)
    f = ss.function([x, y, w], out, mode=mode)
    xv, yv = np.array([2.0, 1.0, 4.0]), np.array([1.0, -1.0, 0.5, 2.0])
    expected = []
    for t in range(1, 3):
        acc, row = 0.0, []
        for y_t in yv:
            acc = acc * 2.0 + y_t * xv[t] - xv[t - 1]
            row.append(acc)
        expected.append(row)
    res = f(xv, yv, 2.0)
    assert res.shape == (2, 4)
    np.testing.assert_allclose(res, expected)


def test_nested_scan_with_a_variable_from_two_levels_up(mode):
    x, scale = T.vector("x"), T.scalar("scale")

    def outer_step(v):
        inner, _ = ss.scan(lambda s: s * scale + v, outputs_info=T.constant(1.0), n_steps=3)
        return inner[-1]

    out, _ = ss.scan(outer_step, sequences=x)
    xv = np.array([0.0, 1.0, 2.0])
    expected = []
    for v in xv:
        s = 1.0
        for _ in range(3):
            s = s * 2.0 + v
        expected.append(s)
    np.testing.assert_allclose(ss.function([x, scale], out, mode=mode)(xv, 2.0), expected)


def test_nested_while_loop_inside_a_for_loop(mode):
    """For each x: how many doublings until it exceeds the limit (the inner loop's length)."""
    x, limit = T.vector("x"), T.scalar("limit")

    def outer_step(v):
        doubled, _ = ss.scan(lambda s: (s * 2, ss.until(s * 2 > limit)), outputs_info=v, n_steps=1000)
        return doubled.shape[0], doubled[-1]

    (counts, finals), _ = ss.scan(outer_step, sequences=x)
    xv = np.array([1.0, 3.0, 50.0, 200.0])
    e_counts, e_finals = [], []
    for v in xv:
        n = 0
        while True:
            v, n = v * 2, n + 1
            if v > 100.0:
                break
        e_counts.append(n)
        e_finals.append(v)
    got_counts, got_finals = ss.function([x, limit], [counts, finals], mode=mode)(xv, 100.0)
    np.testing.assert_array_equal(got_counts, e_counts)
    np.testing.assert_array_equal(got_finals, e_finals)


def test_nested_scan_going_backwards_inside(mode):
    m = T.matrix("m")

    def reversed_cumsum(row):
        sums, _ = ss.scan(lambda v, acc: acc + v, sequences=row, outputs_info=T.constant(0.0), go_backwards=True)
        return sums

    out, _ = ss.scan(reversed_cumsum, sequences=m, go_backwards=True)
    mv = np.arange(6.0).reshape(2, 3) ** 2
    expected = [np.cumsum(row[::-1]) for row in mv[::-1]]
    np.testing.assert_array_equal(ss.function([m], out, mode=mode)(mv), expected)


def test_nested_scan_inner_updates_flow_out(mode):
    """A shared counter bumped by every inner step: outer steps x inner steps per call."""
    count = ss.shared(np.int64(0), name="count")
    x = T.matrix("x")

    def outer_step(row):
        sums, updates = ss.scan(lambda v, acc: (acc + v, {count: count + 1}), sequences=row,
                                outputs_info=T.constant(0.0))
        return sums[-1], updates

    out, updates = ss.scan(outer_step, sequences=x)
    assert list(updates) == [count]
    f = ss.function([x], out, updates=updates, mode=mode)
    xv = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(f(xv), xv.sum(axis=1))
    assert count.get_value() == 12
    f(xv[:2])
    assert count.get_value() == 20


# ---------------------------------------------------------------------------- free variables
def test_free_plain_variable(mode):
    x, w = T.vector("x"), T.scalar("w")
    out, _ = ss.scan(lambda v, acc: acc * w + v, sequences=x, outputs_info=T.constant(0.0))
    xv = np.array([1.0, 2.0, 3.0])
    expected, acc = [], 0.0
    for v in xv:
        acc = acc * 3.0 + v
        expected.append(acc)
    np.testing.assert_allclose(ss.function([x, w], out, mode=mode)(xv, 3.0), expected)


def test_free_computed_expression_built_outside_fn(mode, rng):
    """The guide: W_2 = W ** 2 built outside fn is found and used inside."""
    x, w = T.matrix("x"), T.matrix("w")
    w_2 = w ** 2
    out, _ = ss.scan(lambda row: T.dot(row, w_2), sequences=x)
    xv, wv = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    np.testing.assert_allclose(ss.function([x, w], out, mode=mode)(xv, wv), [row @ wv ** 2 for row in xv])


def test_free_variables_mixed_with_passed_ones(mode):
    x, a, b = T.vector("x"), T.scalar("a"), T.scalar("b")
    shift = a - b
    out, _ = ss.scan(lambda v, a: v * a + shift, sequences=x, non_sequences=a)
    xv = np.array([1.0, -1.0, 2.0])
    np.testing.assert_allclose(ss.function([x, a, b], out, mode=mode)(xv, 2.0, 0.5), xv * 2.0 + 1.5)


def test_free_shared_variable_read_sees_its_current_value(mode):
    w = ss.shared(np.array([1.0, 2.0]), name="w")
    x = T.matrix("x")
    out, updates = ss.scan(lambda row: (row * w).sum(), sequences=x)
    assert len(updates) == 0
    f = ss.function([x], out, mode=mode)
    xv = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(f(xv), xv @ np.array([1.0, 2.0]))
    w.set_value(np.array([-1.0, 0.5]))
    np.testing.assert_allclose(f(xv), xv @ np.array([-1.0, 0.5]))


def test_free_shared_variable_in_a_recurrence(mode, rng):
    """An RNN whose weights are shared variables used without being passed."""
    w = ss.shared(rng.standard_normal((3, 3)) * 0.5, name="W")
    b = ss.shared(rng.standard_normal(3), name="b")
    x, h0 = T.matrix("x"), T.vector("h0")
    out, _ = ss.scan(lambda row, h: T.tanh(T.dot(h, w) + row + b), sequences=x, outputs_info=h0)
    xv, hv = rng.standard_normal((5, 3)), rng.standard_normal(3)
    expected, h = [], hv
    for row in xv:
        h = np.tanh(h @ w.get_value() + row + b.get_value())
        expected.append(h)
    np.testing.assert_allclose(ss.function([x, h0], out, mode=mode)(xv, hv), expected)


# ---------------------------------------------------------------------------- shared updates
def test_shared_counter_incremented_per_step(mode):
    count = ss.shared(np.int64(0), name="count")
    x = T.vector("x")
    out, updates = ss.scan(lambda v: (v * count, {count: count + 1}), sequences=x)
    assert list(updates) == [count]
    f = ss.function([x], out, updates=updates, mode=mode)
    xv = np.array([1.0, 1.0, 2.0, 2.0])
    np.testing.assert_array_equal(f(xv), xv * np.arange(4))
    assert count.get_value() == 4
    np.testing.assert_array_equal(f(xv[:2]), xv[:2] * np.array([4, 5]))
    assert count.get_value() == 6


def test_shared_update_applied_only_when_passed_to_function(mode):
    count = ss.shared(np.int64(10), name="count")
    x = T.vector("x")
    out, updates = ss.scan(lambda v: (v + count, {count: count + 1}), sequences=x)
    without = ss.function([x], out, mode=mode)
    xv = np.zeros(3)
    np.testing.assert_array_equal(without(xv), [10.0, 11.0, 12.0])
    np.testing.assert_array_equal(without(xv), [10.0, 11.0, 12.0])
    assert count.get_value() == 10
    with_updates = ss.function([x], [out, updates[count]], updates=updates, mode=mode)
    res, final = with_updates(xv)
    np.testing.assert_array_equal(res, [10.0, 11.0, 12.0])
    assert final == 13 and count.get_value() == 13


def test_shared_update_of_a_vector_accumulates_rows(mode):
    acc = ss.shared(np.zeros(2), name="acc")
    x = T.matrix("x")
    _, updates = ss.scan(lambda row: {acc: acc * 0.5 + row}, sequences=x)
    f = ss.function([x], [], updates=updates, mode=mode)
    xv = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    f(xv)
    expected = np.zeros(2)
    for row in xv:
        expected = expected * 0.5 + row
    np.testing.assert_allclose(acc.get_value(), expected)


def test_two_shared_updates_and_an_output(mode):
    a, b = ss.shared(np.float64(1.0), name="a"), ss.shared(np.float64(0.0), name="b")
    out, updates = ss.scan(lambda: (a + b, [(a, a + b), (b, a)]), n_steps=5)
    f = ss.function([], out, updates=updates, mode=mode)
    av, bv, expected = 1.0, 0.0, []
    for _ in range(5):
        expected.append(av + bv)
        av, bv = av + bv, av
    np.testing.assert_array_equal(f(), expected)
    assert (a.get_value(), b.get_value()) == (av, bv)


# ---------------------------------------------------------------------------- strict
def test_strict_with_everything_passed(mode, rng):
    w = ss.shared(rng.standard_normal((2, 2)), name="W")
    x, h0, c = T.matrix("x"), T.vector("h0"), T.scalar("c")
    out, _ = ss.scan(lambda row, h, w, c: T.tanh(T.dot(h, w) + row * c), sequences=x, outputs_info=h0,
                     non_sequences=[w, c], strict=True)
    xv, hv = rng.standard_normal((3, 2)), rng.standard_normal(2)
    expected, h = [], hv
    for row in xv:
        h = np.tanh(h @ w.get_value() + row * 0.5)
        expected.append(h)
    np.testing.assert_allclose(ss.function([x, h0, c], out, mode=mode)(xv, hv, 0.5), expected)


def test_strict_with_updated_shared_passed(mode):
    count = ss.shared(np.int64(0), name="count")
    out, updates = ss.scan(lambda count: (count * 2, {count: count + 1}), non_sequences=count, n_steps=3,
                           strict=True)
    f = ss.function([], out, updates=updates, mode=mode)
    np.testing.assert_array_equal(f(), [0, 2, 4])
    assert count.get_value() == 3


def test_strict_missing_plain_variable_names_it():
    x, w = T.vector("x"), T.scalar("hidden_weight")
    with pytest.raises(ss.MissingInputError, match="hidden_weight"):
        ss.scan(lambda v: v * w, sequences=x, strict=True)


@pytest.mark.parametrize("n_steps", [1, -1, 3])
def test_strict_in_unrolled_and_looped_scan(mode, n_steps):
    """What scan itself passes fn (sequence taps, initial taps) never counts as missing."""
    x, s0, m0, w = T.vector("x"), T.scalar("s0"), T.vector("m0"), T.scalar("rate")
    kwargs = dict(sequences=dict(input=x, taps=[-1, 0]), outputs_info=[s0, dict(initial=m0, taps=[-2, -1])],
                  n_steps=n_steps, strict=True)
    with pytest.raises(ss.MissingInputError, match="'rate'"):
        ss.scan(lambda p, c, s, m2, m1: [s * w + p, m2 + m1 * c], **kwargs)
    outs, _ = ss.scan(lambda p, c, s, m2, m1, w: [s * w + p, m2 + m1 * c], non_sequences=w, **kwargs)
    xv, mv = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.5, -1.0])
    sit, mit = ss.function([x, s0, m0, w], outs, mode=mode)(xv, 1.0, mv, 2.0)
    rows = range(3, 3 - abs(n_steps), -1) if n_steps < 0 else range(1, 1 + n_steps)
    s, hist, e_sit = 1.0, list(mv), []
    for t, i in enumerate(rows):
        s = s * 2.0 + xv[i - 1]
        e_sit.append(s)
        hist.append(hist[t] + hist[t + 1] * xv[i])
    np.testing.assert_array_equal(sit, e_sit)
    np.testing.assert_array_equal(mit, hist[2:])


def test_strict_missing_shared_variable_names_it():
    w = ss.shared(np.ones(2), name="W_shared")
    b = ss.shared(np.ones(2), name="b_shared")
    x = T.matrix("x")
    with pytest.raises(ValueError, match="b_shared") as info:
        ss.scan(lambda row, w: row * w + b, sequences=x, non_sequences=w, strict=True)
    assert isinstance(info.value, ss.MissingInputError)


def test_strict_missing_computed_expression_is_an_error():
    x, w = T.matrix("x"), T.matrix("w")
    w_2 = w ** 2
    w_2.name = "w_squared"
    with pytest.raises(ss.MissingInputError, match="w_squared"):
        ss.scan(lambda row: T.dot(row, w_2), sequences=x, strict=True)


def test_strict_in_nested_scan_missing_outer_value():
    x, y = T.vector("x"), T.vector("y_seq")

    def outer_step(v):
        inner, _ = ss.scan(lambda y_t: y_t * v, sequences=y, strict=True)
        return inner

    with pytest.raises(ss.MissingInputError, match=r"'x\[t\]'"):
        ss.scan(outer_step, sequences=x)


def test_missing_input_error_is_a_value_error():
    assert issubclass(ss.MissingInputError, ValueError)


# ---------------------------------------------------------------------------- random draws made outside fn
def _binomial_mask_scan(pass_d: bool = False):
    """Theano's loop tutorial: ``d`` is drawn outside fn and multiplies every step's row
    (``pass_d``: d is passed as a non-sequence instead of being read as a free variable)."""
    trng = T.shared_randomstreams.RandomStreams(1234)
    X, W = T.matrix("X"), T.matrix("W")
    d = trng.binomial(size=W[1].shape)
    results, updates = ss.scan(lambda v, *mask: T.tanh(T.dot(v, W)) * (mask[0] if mask else d), sequences=X,
                               non_sequences=[d] if pass_d else None)
    (rng,) = [var for var, _ in trng.state_updates]
    return [X, W], results, updates, rng, d


def _values():
    return np.random.default_rng(0).normal(size=(6, 3)), np.random.default_rng(1).normal(size=(3, 4))


def test_a_draw_made_outside_fn_is_drawn_again_at_every_step(mode):
    """Theano 1.0 builds the loop body from the graph's roots, so the draw is in the body:
    each step gets a new mask, and the generator advances once per step."""
    inputs, results, updates, rng, _ = _binomial_mask_scan()
    assert rng in updates
    f = ss.function(inputs, results, updates=updates, mode=mode)
    generator = copy.deepcopy(rng.get_value())
    xv, wv = _values()
    masks = np.array([generator.binomial(1, 0.5, size=4) for _ in range(6)])
    np.testing.assert_allclose(f(xv, wv), np.tanh(xv @ wv) * masks, rtol=1e-14)
    assert len({tuple(m) for m in masks}) > 1  # the rows really differ (seed 1234)
    assert rng.get_value().bit_generator.state == generator.bit_generator.state


def test_a_draw_passed_as_a_non_sequence_is_drawn_once(mode):
    """Passed explicitly, the draw is an input of the loop: one mask for every step."""
    inputs, results, updates, rng, _ = _binomial_mask_scan(pass_d=True)
    assert rng not in updates
    f = ss.function(inputs, results, updates=updates, mode=mode)
    generator = copy.deepcopy(rng.get_value())
    xv, wv = _values()
    np.testing.assert_allclose(f(xv, wv), np.tanh(xv @ wv) * generator.binomial(1, 0.5, size=4), rtol=1e-14)
    assert rng.get_value().bit_generator.state == generator.bit_generator.state  # its default update


def test_a_draw_used_inside_and_outside_a_loop(mode):
    """Outside the loop the variable is one draw; inside it is drawn at every step."""
    inputs, results, updates, rng, d = _binomial_mask_scan()
    f = ss.function(inputs, [results, d], updates=updates, mode=mode)
    generator = copy.deepcopy(rng.get_value())
    outside = generator.binomial(1, 0.5, size=4)  # the outer graph's draw reads the state first
    got, once = f(np.ones((3, 3)), np.ones((3, 4)))
    np.testing.assert_array_equal(once, outside)
    assert got.shape == (3, 4) and set(np.unique(got)) <= {0.0, np.tanh(3.0)}
    assert rng.default_update is not None  # a draw made outside keeps its default update
