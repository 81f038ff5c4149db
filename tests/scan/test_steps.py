"""n_steps (int, symbolic, 0, 1, -1) and until: how many steps run and what comes out."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symscan as ss
import symscan.tensor as T
from symscan.scan import Scan


def count_scans(f) -> int:
    return sum(isinstance(node.op, Scan) for node in f.fgraph.apply_nodes)


def doubling(s0: float, n: int) -> np.ndarray:
    values, s = [], s0
    for _ in range(n):
        s = s * 2 + 1
        values.append(s)
    return np.array(values)


# ---------------------------------------------------------------------------- int and symbolic
@pytest.mark.parametrize("n_steps", [2, 5, np.int32(4), np.int64(3)])
def test_n_steps_int(mode, n_steps):
    s0 = T.scalar("s0")
    out, _ = ss.scan(lambda s: s * 2 + 1, outputs_info=s0, n_steps=n_steps)
    np.testing.assert_array_equal(ss.function([s0], out, mode=mode)(0.5), doubling(0.5, int(n_steps)))


def test_n_steps_constant_variable(mode):
    s0 = T.scalar("s0")
    out, _ = ss.scan(lambda s: s * 2 + 1, outputs_info=s0, n_steps=T.constant(3))
    np.testing.assert_array_equal(ss.function([s0], out, mode=mode)(1.0), doubling(1.0, 3))


@pytest.mark.parametrize("make_k", [T.iscalar, T.lscalar, lambda name: T.tensor("uint8", shape=(), name=name)])
def test_n_steps_symbolic_several_lengths_one_function(mode, make_k):
    s0, k = T.scalar("s0"), make_k("k")
    out, _ = ss.scan(lambda s: s * 2 + 1, outputs_info=s0, n_steps=k)
    f = ss.function([s0, k], out, mode=mode)
    assert count_scans(f) == 1
    for n in (1, 2, 7, 3, 0):
        res = f(0.25, n)
        assert res.shape == (n,)
        np.testing.assert_array_equal(res, doubling(0.25, n))


def test_n_steps_symbolic_expression(mode):
    s0, x = T.scalar("s0"), T.vector("x")
    out, _ = ss.scan(lambda s: s * 2 + 1, outputs_info=s0, n_steps=x.shape[0] * 2)
    f = ss.function([s0, x], out, mode=mode)
    np.testing.assert_array_equal(f(1.0, np.zeros(3)), doubling(1.0, 6))


def test_n_steps_float_is_an_error():
    s0 = T.scalar("s0")
    with pytest.raises(TypeError, match="n_steps"):
        ss.scan(lambda s: s + 1, outputs_info=s0, n_steps=2.0)
    with pytest.raises(TypeError, match="n_steps"):
        ss.scan(lambda s: s + 1, outputs_info=s0, n_steps=T.scalar("k"))


def test_n_steps_required_without_sequences():
    s0 = T.scalar("s0")
    with pytest.raises(ValueError, match="n_steps"):
        ss.scan(lambda s: s + 1, outputs_info=s0)


# ---------------------------------------------------------------------------- zero steps
def _all_kinds(n_steps):
    """A scan with a matrix sit-sot, a mit-sot of vectors, a nit-sot and a shared counter."""
    count = ss.shared(np.int64(5), name="count")
    a0, m0, w = T.matrix("a0"), T.matrix("m0"), T.vector("w")

    def step(a, m3, m1, w):
        return [a * 2, m3 + m1, T.outer(m1, w)], {count: count + 1}

    outs, updates = ss.scan(step, outputs_info=[a0, dict(initial=m0, taps=[-3, -1]), None], non_sequences=w,
                            n_steps=n_steps)
    return count, [a0, m0, w], outs, updates


def _check_empty(results, count):
    sit, mit, nit = results
    assert sit.shape == (0, 2, 3) and sit.dtype == np.float64
    assert mit.shape == (0, 4) and mit.dtype == np.float64
    assert nit.shape == (0, 4, 5) and nit.dtype == np.float64
    assert count.get_value() == 5


def _all_kinds_inputs():
    return np.ones((2, 3)), np.arange(12.0).reshape(3, 4), np.arange(5.0)


def test_constant_zero_steps_gives_empty_outputs(mode):
    count, inputs, outs, updates = _all_kinds(0)
    f = ss.function(inputs, outs, updates=updates, mode=mode)
    _check_empty(f(*_all_kinds_inputs()), count)


def test_symbolic_zero_steps_gives_empty_outputs(mode):
    k = T.iscalar("k")
    count, inputs, outs, updates = _all_kinds(k)
    f = ss.function(inputs + [k], outs, updates=updates, mode=mode)
    _check_empty(f(*_all_kinds_inputs(), 0), count)
    # the same function then runs steps, and the counter moves
    sit, mit, nit = f(*_all_kinds_inputs(), 2)
    av, mv, wv = _all_kinds_inputs()
    np.testing.assert_array_equal(sit, [av * 2, av * 4])
    hist = list(mv)
    for t in range(2):
        hist.append(hist[t] + hist[t + 2])
    np.testing.assert_array_equal(mit, hist[3:])
    np.testing.assert_array_equal(nit, [np.outer(hist[2], wv), np.outer(hist[3], wv)])
    assert count.get_value() == 7


def test_zero_steps_nit_sot_from_a_sequence(mode):
    """Mapping over a matrix with no usable rows keeps the row length."""
    x, k = T.matrix("x"), T.iscalar("k")
    out, _ = ss.scan(lambda row: row * 2, sequences=x, n_steps=k)
    f = ss.function([x, k], out, mode=mode)
    assert f(np.ones((3, 4)), 0).shape == (0, 4)
    derived, _ = ss.scan(lambda row: row * 2, sequences=x)
    assert ss.function([x], derived, mode=mode)(np.ones((0, 4))).shape == (0, 4)


def test_zero_steps_from_an_empty_sequence_keeps_sit_sot_shape(mode):
    x, s0 = T.vector("x"), T.vector("s0")
    out, _ = ss.scan(lambda v, s: s + v, sequences=x, outputs_info=s0)
    res = ss.function([x, s0], out, mode=mode)(np.zeros(0), np.ones(3))
    assert res.shape == (0, 3)


def test_zero_steps_with_until(mode):
    s0, k = T.scalar("s0"), T.iscalar("k")
    out, _ = ss.scan(lambda s: (s + 1, ss.until(s > 2)), outputs_info=s0, n_steps=k)
    f = ss.function([s0, k], out, mode=mode)
    assert f(0.0, 0).shape == (0,)
    np.testing.assert_array_equal(f(0.0, 10), [1.0, 2.0, 3.0, 4.0])


# ---------------------------------------------------------------------------- one step: unrolled
@pytest.mark.parametrize("n_steps", [1, -1])
def test_one_step_builds_no_loop(mode, n_steps):
    s0 = T.vector("s0")
    out, _ = ss.scan(lambda s: s * 3, outputs_info=s0, n_steps=n_steps)
    f = ss.function([s0], out, mode=mode)
    assert count_scans(f) == 0
    res = f(np.array([1.0, 2.0]))
    assert res.shape == (1, 2)
    np.testing.assert_array_equal(res, [[3.0, 6.0]])


def test_two_steps_build_one_loop(mode):
    s0 = T.vector("s0")
    out, _ = ss.scan(lambda s: s * 3, outputs_info=s0, n_steps=2)
    f = ss.function([s0], out, mode=mode)
    assert count_scans(ss.function([s0], out, mode="py")) == 1  # ("fast" may vectorize it)
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [[3.0, 6.0], [9.0, 18.0]])


@pytest.mark.parametrize("n_steps,go_backwards", [(1, False), (-1, False), (1, True), (-1, True)])
def test_one_step_with_sequence_taps_and_all_kinds(mode, n_steps, go_backwards):
    """The unrolled step reads the same elements as the loop would at its first step."""
    x, s0, m0, w = T.vector("x"), T.scalar("s0"), T.vector("m0"), T.scalar("w")
    count = ss.shared(np.int64(0), name="count")

    def step(x_m2, x_p1, s, m2, m1, w):
        return [s + x_m2, m2 * 10 + m1 + x_p1, x_p1 * w], {count: count + 1}

    outs, updates = ss.scan(step, sequences=dict(input=x, taps=[-2, 1]),
                            outputs_info=[s0, dict(initial=m0, taps=[-2, -1]), None], non_sequences=w,
                            n_steps=n_steps, go_backwards=go_backwards)
    f = ss.function([x, s0, m0, w], outs, updates=updates, mode=mode)
    assert count_scans(f) == 0
    xv = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    sit, mit, nit = f(xv, 0.5, np.array([7.0, 8.0]), 3.0)
    backwards = go_backwards != (n_steps < 0)
    t = 6 - 1 - 1 if backwards else 2  # tap 0's index at the first step
    np.testing.assert_array_equal(sit, [0.5 + xv[t - 2]])
    np.testing.assert_array_equal(mit, [70.0 + 8.0 + xv[t + 1]])
    np.testing.assert_array_equal(nit, [xv[t + 1] * 3.0])
    assert count.get_value() == 1


@pytest.mark.parametrize("taps", [[2], [-2], [-1, 1]])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_one_step_with_too_short_sequence_fails_at_call(mode, taps, go_backwards):
    """Unrolled, a sequence shorter than 1 + span must not wrap round to some element."""
    x = T.vector("x")
    out, _ = ss.scan(lambda *slices: sum(slices) * 1.0, sequences=dict(input=x, taps=taps), n_steps=1,
                     go_backwards=go_backwards)
    f = ss.function([x], out, mode=mode)
    with pytest.raises((IndexError, ValueError)):
        f(np.array([1.0, 2.0]))
    xv = np.array([1.0, 2.0, 3.0, 4.0])
    low, high = min(min(taps), 0), max(max(taps), 0)
    base = len(xv) - (high - low) - 1 if go_backwards else 0
    np.testing.assert_array_equal(f(xv), [sum(xv[base + k - low] for k in taps)])


def test_one_step_with_static_too_short_sequence_fails_at_build():
    x = T.tensor("float64", shape=(2,), name="x")
    with pytest.raises(ValueError, match="'x'"):
        ss.scan(lambda a, b: a + b, sequences=dict(input=x, taps=[-1, 1]), n_steps=-1)


def test_one_step_symbolic_n_steps_still_loops(mode):
    s0, k = T.scalar("s0"), T.iscalar("k")
    out, _ = ss.scan(lambda s: s + 1, outputs_info=s0, n_steps=k)
    f = ss.function([s0, k], out, mode=mode)
    assert count_scans(ss.function([s0, k], out, mode="py")) == 1  # ("fast" may vectorize it)
    np.testing.assert_array_equal(f(1.0, 1), [2.0])
    np.testing.assert_array_equal(f(1.0, -1), [2.0])


def _unrolled_and_loop(build, modes=("py", "fast", "onnxruntime")):
    """``build(n_steps)`` -> (inputs, outputs) for a constant n_steps of +-1 (unrolled) and for a
    symbolic one (a loop, fed the same +-1); calling them must agree: the same rows, or the same
    ValueError (in onnxruntime, the rule's message naming the same input: lengths are not known
    when the model is written)."""
    k = T.iscalar("k")
    pairs = []
    for steps in (1, -1):
        inputs, outputs = build(steps)
        loop_inputs, loop_outputs = build(k)
        for mode in modes:
            pairs.append((mode, steps, ss.function(inputs, outputs, mode=mode),
                          ss.function(loop_inputs + [k], loop_outputs, mode="py")))
    assert count_scans(pairs[0][2]) == 0 and count_scans(pairs[0][3]) == 1

    def call(*values):
        for mode, steps, unrolled, loop in pairs:
            try:
                expected = loop(*values, steps)
            except ValueError as err:
                with pytest.raises(ValueError) as info:
                    unrolled(*values)
                message = str(err).split(" (while")[0]
                if mode == "onnxruntime":
                    message = message.split(" has ")[0]
                assert message in str(info.value)
                continue
            np.testing.assert_array_equal(unrolled(*values), expected)
    return call


@pytest.mark.parametrize("taps", [[0], [-2], [1], [-1, 2]])
def test_one_step_checks_a_sequence_fn_does_not_read(taps):
    """Issue 12, bug 3: the unrolled step kept no check of a sequence fn ignores, so a
    too-short sequence gave a row where the loop raises "too short"."""
    def build(n_steps):
        x = T.vector("x")
        out, _ = ss.scan(lambda *args: T.constant(1.0), sequences=dict(input=x, taps=taps), n_steps=n_steps)
        return [x], out

    call = _unrolled_and_loop(build)
    span = max(max(taps), 0) - min(min(taps), 0)
    for length in range(0, span + 3):
        call(np.arange(float(length)))


def test_one_step_checks_a_mit_sot_initial_state_fn_does_not_read():
    def build(n_steps):
        h, x = T.vector("h"), T.vector("x")
        out, _ = ss.scan(lambda v, a, b: v + b, sequences=x, outputs_info=dict(initial=h, taps=[-3, -1]),
                         n_steps=n_steps)
        return [h, x], out

    call = _unrolled_and_loop(build)
    for rows in range(0, 5):
        call(np.arange(float(rows)), np.ones(3))


def test_one_step_checks_the_shape_of_a_recurrent_output():
    """The loop's buffer rows have the initial state's shape; fn returning another shape is
    the loop's error, unrolled too."""
    def build(n_steps):
        h = T.vector("h")
        out, _ = ss.scan(lambda s: T.concatenate([s, s]), outputs_info=h, n_steps=n_steps)
        return [h], out

    call = _unrolled_and_loop(build)
    call(np.ones(2))
    call(np.ones(0))


# ---------------------------------------------------------------------------- until
def test_until_stops_at_the_first_true_condition(mode):
    s0 = T.scalar("s0")
    out, _ = ss.scan(lambda s: (s * 2, ss.until(s * 2 >= 20)), outputs_info=s0, n_steps=100)
    f = ss.function([s0], out, mode=mode)
    expected, s = [], 1.5
    while True:
        s *= 2
        expected.append(s)
        if s >= 20:
            break
    np.testing.assert_array_equal(f(1.5), expected)
    np.testing.assert_array_equal(f(5.0), [10.0, 20.0])


def test_until_true_on_first_step_returns_one_row(mode):
    s0 = T.vector("s0")
    out, _ = ss.scan(lambda s: (s + 1, ss.until(T.constant(True))), outputs_info=s0, n_steps=10)
    res = ss.function([s0], out, mode=mode)(np.array([1.0, 2.0]))
    assert res.shape == (1, 2)
    np.testing.assert_array_equal(res, [[2.0, 3.0]])


def test_until_n_steps_is_the_maximum(mode):
    s0, k = T.scalar("s0"), T.iscalar("k")
    out, _ = ss.scan(lambda s: (s + 1, ss.until(s + 1 >= 100)), outputs_info=s0, n_steps=k)
    f = ss.function([s0, k], out, mode=mode)
    np.testing.assert_array_equal(f(0.0, 4), [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(f(95.0, 50), [96.0, 97.0, 98.0, 99.0, 100.0])
    constant, _ = ss.scan(lambda s: (s + 1, ss.until(s > 100)), outputs_info=s0, n_steps=3)
    np.testing.assert_array_equal(ss.function([s0], constant, mode=mode)(0.0), [1.0, 2.0, 3.0])


def test_until_condition_reads_the_new_value_not_the_old(mode):
    """The step at which the condition is true is the last one kept."""
    s0 = T.scalar("s0")
    out, _ = ss.scan(lambda s: (s + 1, ss.until(s >= 3)), outputs_info=s0, n_steps=10)
    # the condition uses the *input* s: the step that receives 3 (and returns 4) is the last
    np.testing.assert_array_equal(ss.function([s0], out, mode=mode)(0.0), [1.0, 2.0, 3.0, 4.0])


def test_until_with_mit_sot(mode):
    f0 = T.lvector("f0")
    out, _ = ss.scan(lambda a, b: (a + b, ss.until(a + b > 50)), outputs_info=dict(initial=f0, taps=[-2, -1]),
                     n_steps=1000)
    res = ss.function([f0], out, mode=mode)(np.array([0, 1]))
    hist = [0, 1]
    while True:
        hist.append(hist[-2] + hist[-1])
        if hist[-1] > 50:
            break
    np.testing.assert_array_equal(res, hist[2:])
    assert res.dtype == np.int64


def test_until_with_shared_updates_final_state_after_last_step(mode):
    total = ss.shared(np.float64(0.0), name="total")
    calls = ss.shared(np.int64(0), name="calls")

    def step(s):
        new = s * 3
        return new, {total: total + new, calls: calls + 1}, ss.until(new > 100)

    s0 = T.scalar("s0")
    out, updates = ss.scan(step, outputs_info=s0, n_steps=50)
    f = ss.function([s0], out, updates=updates, mode=mode)
    res = f(2.0)
    expected = [6.0, 18.0, 54.0, 162.0]
    np.testing.assert_array_equal(res, expected)
    assert calls.get_value() == 4
    assert total.get_value() == sum(expected)
    f(200.0)
    assert calls.get_value() == 5
    assert total.get_value() == sum(expected) + 600.0


def test_until_with_a_sequence(mode):
    """Stops at the first element over the threshold, or at the end of the sequence."""
    x, limit = T.vector("x"), T.scalar("limit")
    outs, _ = ss.scan(lambda v, acc, limit: ([acc + v, v * 2], ss.until(acc + v > limit)), sequences=x,
                      outputs_info=[T.constant(0.0), None], non_sequences=limit)
    f = ss.function([x, limit], outs, mode=mode)
    xv = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    for lim in (0.5, 4.0, 9.0, 100.0):
        acc, expected_acc, expected_map = 0.0, [], []
        for v in xv:
            acc += v
            expected_acc.append(acc)
            expected_map.append(v * 2)
            if acc > lim:
                break
        got_acc, got_map = f(xv, lim)
        np.testing.assert_array_equal(got_acc, expected_acc)
        np.testing.assert_array_equal(got_map, expected_map)


def test_until_with_a_sequence_going_backwards(mode):
    x = T.vector("x")
    out, _ = ss.scan(lambda v: (v * 1.0, ss.until(v < 0)), sequences=x, go_backwards=True)
    xv = np.array([1.0, -2.0, 3.0, 4.0])
    np.testing.assert_array_equal(ss.function([x], out, mode=mode)(xv), [4.0, 3.0, -2.0])


def test_until_condition_must_be_a_scalar():
    s0 = T.vector("s0")
    with pytest.raises(TypeError, match="scalar"):
        ss.scan(lambda s: (s + 1, ss.until(s > 0)), outputs_info=s0, n_steps=3)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.integers(-3, 6), max_size=8), limit=st.integers(-2, 20), go_backwards=st.booleans(),
       max_steps=st.one_of(st.none(), st.integers(0, 8)))
def test_random_until_matches_a_while_loop(mode, values, limit, go_backwards, max_steps):
    """A running sum that stops once it exceeds ``limit``, with an optional step maximum."""
    x, lim, k = T.lvector("x"), T.lscalar("limit"), T.lscalar("k")
    count = ss.shared(np.int64(0), name="count")
    n_steps = None if max_steps is None else k
    out, updates = ss.scan(lambda v, acc, lim: (acc + v, {count: count + 1}, ss.until(acc + v > lim)),
                           sequences=x, outputs_info=T.constant(np.int64(0)), non_sequences=lim,
                           n_steps=n_steps, go_backwards=go_backwards)
    inputs = [x, lim] + ([k] if max_steps is not None else [])
    f = ss.function(inputs, out, updates=updates, mode=mode)
    xv = np.array(values, dtype="int64")
    steps = len(xv) if max_steps is None else min(max_steps, len(xv))
    order = xv[::-1] if go_backwards else xv
    expected, acc = [], 0
    for v in order[:steps]:
        acc += v
        expected.append(acc)
        if acc > limit:
            break
    args = [xv, limit] + ([steps] if max_steps is not None else [])
    res = f(*args)
    assert res.dtype == np.int64 and res.shape == (len(expected),)
    np.testing.assert_array_equal(res, expected)
    assert count.get_value() == len(expected)
