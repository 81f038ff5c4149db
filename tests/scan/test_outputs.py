"""scan outputs: the outputs_info forms, sit-sot / mit-sot / nit-sot, fn's argument order,
what fn may return, return_list, name, dtypes and state shapes; numpy loops are the oracle."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symscan as ss
import symscan.tensor as T
from symscan.scan import Scan


def scan_ops(f):
    return [node.op for node in f.fgraph.apply_nodes if isinstance(node.op, Scan)]


def recurrence(initial: np.ndarray, taps, n_steps: int, step):
    """A mit-sot in numpy: ``history`` starts as the initial rows (initial[0] = out[-span]);
    step t receives history[span + t + k] for each tap k, in the order given."""
    span = -min(taps)
    history = list(np.asarray(initial)[:span])
    for t in range(n_steps):
        history.append(step(*[history[span + t + k] for k in taps]))
    return np.array(history[span:])


# ---------------------------------------------------------------------------- outputs_info forms
def test_outputs_info_none_is_a_map_output(mode):
    x = T.vector("x")
    out, _ = ss.scan(lambda v: v ** 2, sequences=x, outputs_info=None)
    xv = np.array([1.0, -2.0, 3.0])
    np.testing.assert_array_equal(ss.function([x], out, mode=mode)(xv), xv ** 2)


def test_outputs_info_variable_is_a_sit_sot(mode):
    x, s0 = T.vector("x"), T.scalar("s0")
    out, _ = ss.scan(lambda v, s: s * 0.5 + v, sequences=x, outputs_info=s0)
    xv = np.array([1.0, 2.0, 3.0, 4.0])
    expected, s = [], 8.0
    for v in xv:
        s = s * 0.5 + v
        expected.append(s)
    np.testing.assert_allclose(ss.function([x, s0], out, mode=mode)(xv, 8.0), expected)


@pytest.mark.parametrize("info", ["initial", "initial_taps_minus_1"])
def test_dict_initial_alone_means_tap_minus_1(mode, info):
    s0 = T.scalar("s0")
    spec = dict(initial=s0) if info == "initial" else dict(initial=s0, taps=[-1])
    out, _ = ss.scan(lambda s: s * 3 - 1, outputs_info=spec, n_steps=4)
    expected, s = [], 2.0
    for _ in range(4):
        s = s * 3 - 1
        expected.append(s)
    np.testing.assert_array_equal(ss.function([s0], out, mode=mode)(2.0), expected)


@pytest.mark.parametrize("spec", [{}, dict(taps=None), dict(taps=[])], ids=["empty", "taps_none", "taps_empty"])
def test_dict_without_initial_passes_no_past_value(mode, spec):
    x = T.vector("x")
    received = []

    def step(v, *rest):
        received.append(len(rest))
        return v + 1

    out, _ = ss.scan(step, sequences=x, outputs_info=[spec])
    assert received == [0]
    xv = np.array([1.0, 5.0])
    np.testing.assert_array_equal(ss.function([x], out, mode=mode)(xv), xv + 1)


def test_dict_initial_with_taps_none_passes_no_past_value(mode):
    """As Output2 in the guide's example: an initial value with taps=None is not fed back."""
    x, unused = T.vector("x"), T.scalar("unused")
    received = []

    def step(v, *rest):
        received.append(len(rest))
        return v * 2

    out, _ = ss.scan(step, sequences=x, outputs_info=dict(initial=unused, taps=None))
    assert received == [0]
    xv = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(ss.function([x], out, mode=mode)(xv), xv * 2)


def test_dict_taps_without_initial_is_an_error():
    with pytest.raises(ValueError, match=r"outputs_info\[0\].*initial"):
        ss.scan(lambda s: s + 1, outputs_info=dict(taps=[-1]), n_steps=2)


def test_positive_output_tap_is_an_error():
    s0 = T.vector("s0")
    with pytest.raises(ValueError, match=r"outputs_info\[0\].*negative"):
        ss.scan(lambda a, b: a + b, outputs_info=dict(initial=s0, taps=[-1, 1]), n_steps=2)


# ---------------------------------------------------------------------------- mit-sot
def test_mit_sot_fibonacci_initial_layout(mode):
    """taps [-2, -1]: initial[0] is out[-2], initial[1] is out[-1]."""
    f0 = T.lvector("f0")
    out, _ = ss.scan(lambda a, b: a + b, outputs_info=dict(initial=f0, taps=[-2, -1]), n_steps=8)
    res = ss.function([f0], out, mode=mode)(np.array([0, 1]))
    np.testing.assert_array_equal(res, [1, 2, 3, 5, 8, 13, 21, 34])
    assert res.dtype == np.int64


def test_mit_sot_non_symmetric_step_checks_layout(mode):
    """A step that is not symmetric in its taps tells initial[0] from initial[-1]."""
    init = T.vector("init")
    out, _ = ss.scan(lambda m3, m1: m3 - 2 * m1, outputs_info=dict(initial=init, taps=[-3, -1]), n_steps=6)
    iv = np.array([1.0, 10.0, 100.0])
    expected = recurrence(iv, [-3, -1], 6, lambda m3, m1: m3 - 2 * m1)
    assert expected[0] == 1.0 - 200.0
    np.testing.assert_array_equal(ss.function([init], out, mode=mode)(iv), expected)


def test_mit_sot_taps_in_the_order_given(mode):
    """taps [-1, -3] pass out[t-1] first, then out[t-3]."""
    init = T.vector("init")
    out, _ = ss.scan(lambda m1, m3: m1 * 2 - m3, outputs_info=dict(initial=init, taps=[-1, -3]), n_steps=5)
    iv = np.array([1.0, 3.0, 7.0])
    expected = recurrence(iv, [-1, -3], 5, lambda m1, m3: m1 * 2 - m3)
    np.testing.assert_array_equal(ss.function([init], out, mode=mode)(iv), expected)


def test_mit_sot_with_a_gap_in_taps(mode):
    """The guide's -5, -2: the initial value covers all five past rows."""
    init = T.vector("init")
    out, _ = ss.scan(lambda m5, m2: m5 + 10 * m2, outputs_info=dict(initial=init, taps=[-5, -2]), n_steps=7)
    iv = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    expected = recurrence(iv, [-5, -2], 7, lambda m5, m2: m5 + 10 * m2)
    res = ss.function([init], out, mode=mode)(iv)
    assert res.shape == (7,)
    np.testing.assert_array_equal(res, expected)


def test_mit_sot_longer_initial_uses_its_first_rows(mode):
    """Like Theano, only initial[:span] is read when the initial value is longer."""
    init = T.vector("init")
    out, _ = ss.scan(lambda a, b: a * 10 + b, outputs_info=dict(initial=init, taps=[-2, -1]), n_steps=3)
    iv = np.array([1.0, 2.0, 99.0, 98.0])
    expected = recurrence(iv, [-2, -1], 3, lambda a, b: a * 10 + b)
    np.testing.assert_array_equal(ss.function([init], out, mode=mode)(iv), expected)


def test_mit_sot_single_tap_other_than_minus_1(mode):
    """taps [-2] alone: two interleaved recurrences."""
    init = T.vector("init")
    out, _ = ss.scan(lambda m2: m2 * 3, outputs_info=dict(initial=init, taps=[-2]), n_steps=5)
    np.testing.assert_array_equal(ss.function([init], out, mode=mode)(np.array([1.0, 2.0])),
                                  [3.0, 6.0, 9.0, 18.0, 27.0])


def test_mit_sot_matrix_state(mode, rng):
    init = T.tensor3("init")
    w = T.matrix("w")
    out, _ = ss.scan(lambda m2, m1, w: T.dot(m1, w) + m2, outputs_info=dict(initial=init, taps=[-2, -1]),
                     non_sequences=w, n_steps=4)
    iv, wv = rng.standard_normal((2, 3, 2)), rng.standard_normal((2, 2)) * 0.5
    expected = recurrence(iv, [-2, -1], 4, lambda m2, m1: m1 @ wv + m2)
    res = ss.function([init, w], out, mode=mode)(iv, wv)
    assert res.shape == (4, 3, 2)
    np.testing.assert_allclose(res, expected)


@st.composite
def mit_sot_cases(draw):
    taps = draw(st.lists(st.integers(-5, -1), min_size=1, max_size=3, unique=True))
    extra, view = draw(st.integers(0, 2)), draw(st.sampled_from(["all", "last", "tail"]))
    n_steps = draw(st.integers(1 if view == "last" else 0, 6))
    return taps, extra, n_steps, draw(st.booleans()), view


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=mit_sot_cases())
def test_random_mit_sot_taps_match_numpy(mode, case):
    """Random output taps, initial lengths, constant or symbolic n_steps, and which rows are
    used (all, the last one, the last two: what save_mem may shrink the buffer to).

    fn weighs each tap by its position. taps [-1] alone is a sit-sot, whose initial value
    is the state itself (no leading axis).
    """
    taps, extra, n_steps, symbolic, view = case
    sit_sot = taps == [-1]
    init, k = T.scalar("init") if sit_sot else T.vector("init"), T.iscalar("k")
    weights = [0.5 ** (i + 1) * (-1) ** i for i in range(len(taps))]

    def step(*past):
        return sum((w * p for w, p in zip(weights, past)), T.constant(1.0))

    out, _ = ss.scan(step, outputs_info=dict(initial=init, taps=taps), n_steps=k if symbolic else n_steps)
    used = out[-1] if view == "last" else out[-2:] if view == "tail" else out
    iv = np.arange(-min(taps) + extra, dtype="float64") * 3 + 1
    expected = recurrence(iv, taps, n_steps, lambda *past: 1.0 + sum(w * p for w, p in zip(weights, past)))
    expected = expected[-1] if view == "last" else expected[-2:] if view == "tail" else expected
    f = ss.function([init, k] if symbolic else [init], used, mode=mode)
    res = f(iv[0] if sit_sot else iv, *([n_steps] if symbolic else []))
    assert res.shape == np.shape(expected)
    np.testing.assert_allclose(res, expected)


# ---------------------------------------------------------------------------- several outputs
def test_mixed_sit_mit_nit_in_one_scan(mode):
    """Outputs come back in outputs_info order whatever their kind."""
    x, f0, a0 = T.vector("x"), T.vector("f0"), T.scalar("a0")

    def step(v, f_m2, f_m1, acc):
        return v * 2, f_m2 + f_m1 + v, acc + v * f_m1

    outs, _ = ss.scan(step, sequences=x, outputs_info=[None, dict(initial=f0, taps=[-2, -1]), a0])
    xv, fv = np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([1.0, 1.0])
    maps, fib, acc = ss.function([x, f0, a0], outs, mode=mode)(xv, fv, 0.5)
    e_map, e_fib, e_acc = [], list(fv), [0.5]
    for t, v in enumerate(xv):
        e_map.append(v * 2)
        e_acc.append(e_acc[-1] + v * e_fib[t + 1])
        e_fib.append(e_fib[t] + e_fib[t + 1] + v)
    np.testing.assert_array_equal(maps, e_map)
    np.testing.assert_array_equal(fib, e_fib[2:])
    np.testing.assert_array_equal(acc, e_acc[1:])


def test_mixed_outputs_in_another_order(mode):
    """sit-sot, nit-sot, mit-sot, nit-sot: the internal grouping by kind does not leak."""
    s0, m0 = T.scalar("s0"), T.vector("m0")

    def step(s, m3, m1):
        return s + 1, s * 10, m3 + m1 * s, m1 - s

    outs, _ = ss.scan(step, outputs_info=[s0, None, dict(initial=m0, taps=[-3, -1]), None], n_steps=5)
    res = ss.function([s0, m0], outs, mode=mode)(1.0, np.array([1.0, 2.0, 3.0]))
    s, hist = 1.0, [1.0, 2.0, 3.0]
    expected = [[], [], [], []]
    for t in range(5):
        m3, m1 = hist[t], hist[t + 2]
        new = (s + 1, s * 10, m3 + m1 * s, m1 - s)
        for i, value in enumerate(new):
            expected[i].append(value)
        s = new[0]
        hist.append(new[2])
    for got, want in zip(res, expected):
        np.testing.assert_array_equal(got, want)


def test_two_sit_sots_depending_on_each_other(mode):
    a0, b0 = T.scalar("a0"), T.scalar("b0")
    outs, _ = ss.scan(lambda a, b: [b, a + b], outputs_info=[a0, b0], n_steps=6)
    a_res, b_res = ss.function([a0, b0], outs, mode=mode)(0.0, 1.0)
    a, b, ea, eb = 0.0, 1.0, [], []
    for _ in range(6):
        a, b = b, a + b
        ea.append(a)
        eb.append(b)
    np.testing.assert_array_equal(a_res, ea)
    np.testing.assert_array_equal(b_res, eb)


def test_fn_argument_order(mode):
    """The guide's example: sequence taps, then output taps (as given), then non_sequences."""
    s1, s2, s3 = T.vector("s1"), T.vector("s2"), T.vector("s3")
    o1, o2, o3 = T.vector("o1"), T.scalar("o2"), T.scalar("o3")
    a1, a2 = T.scalar("a1"), T.scalar("a2")
    received = []

    def step(s1_m3, s1_p2, s1_m1, s2_t, s3_p3, o1_m3, o1_m5, o3_m1, arg1, arg2):
        received.extend([s1_m3, s1_p2, s1_m1, s2_t, s3_p3, o1_m3, o1_m5, o3_m1, arg1, arg2])
        return (s1_m3 + 2 * s1_p2 + 3 * s1_m1 + 5 * s2_t + 7 * s3_p3 + 11 * o1_m3 + 13 * o1_m5,
                o1_m3 * 0 + s2_t * arg1,
                o3_m1 + arg2 * s1_m1)

    outs, _ = ss.scan(step, sequences=[dict(input=s1, taps=[-3, 2, -1]), s2, dict(input=s3, taps=3)],
                      outputs_info=[dict(initial=o1, taps=[-3, -5]), dict(initial=o2, taps=None), o3],
                      non_sequences=[a1, a2])
    assert [v.name for v in received] == ["s1[t-3]", "s1[t+2]", "s1[t-1]", "s2[t]", "s3[t+3]", "o1[t-3]",
                                          "o1[t-5]", "o3[t-1]", "a1", "a2"]
    rng = np.random.default_rng(0)
    s1v, s2v, s3v = rng.standard_normal(10), rng.standard_normal(6), rng.standard_normal(9)
    o1v = rng.standard_normal(5)
    res = ss.function([s1, s2, s3, o1, o2, o3, a1, a2], outs, mode=mode)(s1v, s2v, s3v, o1v, 0.0, 1.5, 2.0, -1.0)
    n = min(10 - 5, 6, 9 - 3)
    hist, o3_val, e1, e2, e3 = list(o1v), 1.5, [], [], []
    for t in range(n):
        s1_m3, s1_p2, s1_m1 = s1v[t + 3 - 3], s1v[t + 3 + 2], s1v[t + 3 - 1]
        new1 = (s1_m3 + 2 * s1_p2 + 3 * s1_m1 + 5 * s2v[t] + 7 * s3v[t + 3] + 11 * hist[t + 5 - 3]
                + 13 * hist[t + 5 - 5])
        o3_val = o3_val + -1.0 * s1_m1
        hist.append(new1)
        e1.append(new1)
        e2.append(s2v[t] * 2.0)
        e3.append(o3_val)
    for got, want in zip(res, [e1, e2, e3]):
        np.testing.assert_allclose(got, want)


def test_non_sequences_come_last_in_their_order(mode):
    x, s0, p, q = T.vector("x"), T.scalar("s0"), T.scalar("p"), T.vector("q")
    out, _ = ss.scan(lambda v, s, p, q: s * p + v - q.sum(), sequences=x, outputs_info=s0, non_sequences=[p, q])
    xv, qv = np.array([1.0, 2.0, 3.0]), np.array([0.25, 0.5])
    expected, s = [], 1.0
    for v in xv:
        s = s * 3.0 + v - qv.sum()
        expected.append(s)
    np.testing.assert_allclose(ss.function([x, s0, p, q], out, mode=mode)(xv, 1.0, 3.0, qv), expected)


def test_non_sequence_given_alone_not_in_a_list(mode):
    x, w = T.vector("x"), T.scalar("w")
    out, _ = ss.scan(lambda v, w: v * w, sequences=x, non_sequences=w)
    np.testing.assert_array_equal(ss.function([x, w], out, mode=mode)(np.array([1.0, 2.0]), 3.0), [3.0, 6.0])


# ---------------------------------------------------------------------------- what fn returns
def _counter_scan(order: str):
    """fn returns an output and an update of a counter, in the layout named by ``order``."""
    count = ss.shared(np.int64(0), name="count")
    x = T.vector("x")

    def step(v):
        out, upd = v + count, {count: count + 1}
        pairs = [(count, count + 1)]
        return {"outputs_updates": (out, upd), "updates_outputs": (upd, out), "pairs_first": (pairs, out),
                "pairs_last": (out, pairs), "list_outputs_updates": ([out], upd),
                "updates_list_outputs": (upd, [out])}[order]

    out, updates = ss.scan(step, sequences=x)
    return count, x, out, updates


@pytest.mark.parametrize("order", ["outputs_updates", "updates_outputs", "pairs_first", "pairs_last",
                                   "list_outputs_updates", "updates_list_outputs"])
def test_fn_returns_outputs_and_updates_in_any_order(mode, order):
    count, x, out, updates = _counter_scan(order)
    assert list(updates) == [count]
    f = ss.function([x], out, updates=updates, mode=mode)
    xv = np.array([10.0, 20.0, 30.0])
    np.testing.assert_array_equal(f(xv), xv + np.arange(3))
    assert count.get_value() == 3
    np.testing.assert_array_equal(f(xv), xv + np.arange(3, 6))
    assert count.get_value() == 6


@pytest.mark.parametrize("layout", ["outputs_updates_until", "updates_outputs_until", "pairs_outputs_until",
                                    "outputs_until"])
def test_fn_returns_until_last(mode, layout):
    count = ss.shared(np.int64(0), name="count")
    s0 = T.scalar("s0")

    def step(s):
        new, upd, stop = s * 2, {count: count + 1}, ss.until(s * 2 > 50)
        return {"outputs_updates_until": (new, upd, stop), "updates_outputs_until": (upd, new, stop),
                "pairs_outputs_until": ([(count, count + 1)], new, stop), "outputs_until": (new, stop)}[layout]

    out, updates = ss.scan(step, outputs_info=s0, n_steps=100)
    f = ss.function([s0], out, updates=updates, mode=mode)
    np.testing.assert_array_equal(f(1.0), [2.0, 4.0, 8.0, 16.0, 32.0, 64.0])
    assert count.get_value() == (0 if layout == "outputs_until" else 6)


def test_fn_returns_updates_and_until_only(mode):
    count = ss.shared(np.int64(0), name="count")
    _, updates = ss.scan(lambda: ({count: count + 1}, ss.until(count + 1 >= 4)), n_steps=100)
    ss.function([], [], updates=updates, mode=mode)()
    assert count.get_value() == 4


def test_until_not_last_is_an_error():
    s0 = T.scalar("s0")
    with pytest.raises(TypeError, match="until"):
        ss.scan(lambda s: (ss.until(s > 1), s + 1), outputs_info=s0, n_steps=3)


def test_fn_returning_only_updates(mode):
    """The guide: ``scan(lambda: {a: a + 1}, n_steps=10)``; b reads a, c the update."""
    a = ss.shared(1)
    _, updates = ss.scan(lambda: {a: a + 1}, n_steps=10)
    b, c = a + 1, updates[a] + 1
    f = ss.function([], [b, c], updates=updates, mode=mode)
    assert [int(v) for v in f()] == [2, 12] and a.get_value() == 11
    assert [int(v) for v in f()] == [12, 22] and a.get_value() == 21
    a.set_value(1)
    g = ss.function([], [b, c], mode=mode)
    assert [int(v) for v in g()] == [2, 12] and a.get_value() == 1


@pytest.mark.parametrize("n_steps", [1, 4])
@pytest.mark.parametrize("return_list", [False, True])
def test_no_outputs_returns_none_like_theano(n_steps, return_list):
    """Theano and PyTensor return None for the outputs when fn returns only updates."""
    a = ss.shared(np.int64(0), name="a")
    outputs, updates = ss.scan(lambda: {a: a + 1}, n_steps=n_steps, return_list=return_list)
    assert outputs is None
    assert list(updates) == [a]


def test_fn_returning_a_tuple_of_outputs(mode):
    x = T.vector("x")
    outs, _ = ss.scan(lambda v: (v + 1, v * v), sequences=x)
    assert isinstance(outs, list) and len(outs) == 2
    xv = np.array([1.0, 2.0])
    plus, square = ss.function([x], outs, mode=mode)(xv)
    np.testing.assert_array_equal(plus, xv + 1)
    np.testing.assert_array_equal(square, xv * xv)


def test_fn_returning_a_python_number_for_a_recurrent_output(mode):
    """A Python scalar returned for a recurrent output takes the initial value's dtype."""
    s0 = T.fscalar("s0")
    out, _ = ss.scan(lambda s: 2, outputs_info=s0, n_steps=3)
    res = ss.function([s0], out, mode=mode)(np.float32(1.0))
    assert res.dtype == np.float32
    np.testing.assert_array_equal(res, [2.0, 2.0, 2.0])


def test_output_count_mismatch_is_an_error():
    s0 = T.scalar("s0")
    with pytest.raises(ValueError, match="outputs_info"):
        ss.scan(lambda s: (s + 1, s * 2), outputs_info=s0, n_steps=2)


def test_empty_outputs_info_means_every_output_is_a_map_output(mode):
    x = T.vector("x")
    outs, _ = ss.scan(lambda v: [v + 1, v * 2], sequences=x, outputs_info=[])
    xv = np.array([1.0, 2.0])
    plus, twice = ss.function([x], outs, mode=mode)(xv)
    np.testing.assert_array_equal(plus, xv + 1)
    np.testing.assert_array_equal(twice, xv * 2)


def test_compatibility_arguments_are_accepted(mode):
    """truncate_gradient, mode, profile and allow_gc do not change the results."""
    x, s0 = T.vector("x"), T.scalar("s0")
    out, _ = ss.scan(lambda v, s: s * 2 + v, sequences=x, outputs_info=s0, truncate_gradient=2, mode="py",
                     profile=True, allow_gc=False, name="compat")
    xv = np.array([1.0, 2.0, 3.0])
    expected, s = [], 0.5
    for v in xv:
        s = s * 2 + v
        expected.append(s)
    np.testing.assert_array_equal(ss.function([x, s0], out, mode=mode)(xv, 0.5), expected)


# ---------------------------------------------------------------------------- return value shape
def test_single_output_is_not_a_list():
    x = T.vector("x")
    out, updates = ss.scan(lambda v: v + 1, sequences=x)
    assert not isinstance(out, (list, tuple))
    assert out.ndim == 1
    assert len(updates) == 0


def test_single_output_in_a_list_outputs_info_is_still_bare():
    s0 = T.scalar("s0")
    out, _ = ss.scan(lambda s: s + 1, outputs_info=[s0], n_steps=2)
    assert not isinstance(out, (list, tuple))


def test_return_list(mode):
    x = T.vector("x")
    outs, _ = ss.scan(lambda v: v + 1, sequences=x, return_list=True)
    assert isinstance(outs, list) and len(outs) == 1
    np.testing.assert_array_equal(ss.function([x], outs[0], mode=mode)(np.array([1.0, 2.0])), [2.0, 3.0])


def test_return_list_on_unrolled_scan(mode):
    s0 = T.scalar("s0")
    outs, _ = ss.scan(lambda s: s + 1, outputs_info=s0, n_steps=1, return_list=True)
    assert isinstance(outs, list) and len(outs) == 1
    np.testing.assert_array_equal(ss.function([s0], outs[0], mode=mode)(1.0), [2.0])


def test_outputs_exclude_the_initial_taps(mode):
    s0, m0 = T.vector("s0"), T.matrix("m0")
    outs, _ = ss.scan(lambda m4, m1, s: [m4 + m1, s * 2], outputs_info=[dict(initial=m0, taps=[-4, -1]), s0],
                      n_steps=3)
    assert outs[0].type.shape[0] == 3
    mv, sv = np.arange(8.0).reshape(4, 2), np.array([1.0, -1.0])
    m_res, s_res = ss.function([m0, s0], outs, mode=mode)(mv, sv)
    assert m_res.shape == (3, 2) and s_res.shape == (3, 2)
    np.testing.assert_array_equal(m_res, recurrence(mv, [-4, -1], 3, lambda a, b: a + b))
    np.testing.assert_array_equal(s_res, [sv * 2, sv * 4, sv * 8])


def test_name_is_kept_on_the_scan(mode):
    s0 = T.scalar("s0")
    out, _ = ss.scan(lambda s: s + 1, outputs_info=s0, n_steps=3, name="counter_loop")
    f = ss.function([s0], out, mode=mode)
    built = ss.function([s0], out, mode="py")  # (in mode "fast" the vectorize rules remove this loop)
    assert [op.info.name for op in scan_ops(built)] == ["counter_loop"]
    assert "counter_loop" in ss.dprint(built, file="str")
    np.testing.assert_array_equal(f(0.0), [1.0, 2.0, 3.0])


# ---------------------------------------------------------------------------- dtypes and shapes
def test_int_outputs(mode):
    x, s0 = T.ivector("x"), T.iscalar("s0")
    outs, _ = ss.scan(lambda v, s: [s + v, v * v], sequences=x, outputs_info=[s0, None])
    xv = np.array([1, 2, 3, 4], dtype="int32")
    acc, sq = ss.function([x, s0], outs, mode=mode)(xv, np.int32(10))
    assert acc.dtype == np.int32 and sq.dtype == np.int32
    np.testing.assert_array_equal(acc, 10 + np.cumsum(xv))
    np.testing.assert_array_equal(sq, xv * xv)


def test_int_triangular_numbers_from_the_guide(mode):
    up_to = T.iscalar("up_to")
    seq = T.arange(up_to)
    initial = T.as_tensor_variable(np.asarray(0, seq.dtype))
    out, _ = ss.scan(lambda v, total: total + v, sequences=seq, outputs_info=initial)
    res = ss.function([up_to], out, mode=mode)(15)
    assert res.dtype == np.dtype(seq.dtype)
    np.testing.assert_array_equal(res, [n * (n + 1) // 2 for n in range(15)])


def test_float32_outputs_stay_float32(mode, rng):
    x, h0, w = T.fmatrix("x"), T.fvector("h0"), T.fmatrix("w")
    outs, _ = ss.scan(lambda row, h, w: [T.tanh(T.dot(h, w) + row), (row * 2).sum()], sequences=x,
                      outputs_info=[h0, None], non_sequences=w)
    xv = rng.standard_normal((4, 3)).astype("float32")
    hv = rng.standard_normal(3).astype("float32")
    wv = rng.standard_normal((3, 3)).astype("float32")
    hs, sums = ss.function([x, h0, w], outs, mode=mode)(xv, hv, wv)
    assert hs.dtype == np.float32 and sums.dtype == np.float32
    expected, h = [], hv
    for row in xv:
        h = np.tanh(h @ wv + row)
        expected.append(h)
    np.testing.assert_allclose(hs, expected, rtol=1e-5)
    np.testing.assert_allclose(sums, (xv * 2).sum(axis=1), rtol=1e-5)


def test_recurrent_dtype_mismatch_is_an_error_naming_the_output():
    h0 = T.fscalar("h0")
    with pytest.raises(TypeError, match=r"outputs_info\[0\].*'h0'.*float32.*float64"):
        ss.scan(lambda h: h * np.float64(2.0) + T.constant(1.0, dtype="float64"), outputs_info=h0, n_steps=2)


def test_recurrent_ndim_mismatch_is_an_error():
    h0 = T.scalar("h0")
    with pytest.raises(ValueError, match=r"outputs_info\[0\]"):
        ss.scan(lambda h: T.stack([h, h]), outputs_info=h0, n_steps=2)


def test_mit_sot_initial_too_short_at_call_is_an_error(mode):
    init = T.vector("init")
    out, _ = ss.scan(lambda a, b: a + b, outputs_info=dict(initial=init, taps=[-2, -1]), n_steps=2)
    with pytest.raises(ValueError, match="init"):
        ss.function([init], out, mode=mode)(np.ones(1))


def test_mit_sot_initial_too_short_static_is_an_error_at_build():
    init = T.tensor("float64", shape=(2,), name="init")
    with pytest.raises(ValueError, match=r"outputs_info\[0\].*'init'.*3"):
        ss.scan(lambda a, b: a + b, outputs_info=dict(initial=init, taps=[-3, -1]), n_steps=2)


@pytest.mark.parametrize("kind", ["sit_sot", "nit_sot"])
def test_step_changing_shape_is_an_error(mode, kind):
    if kind == "sit_sot":
        s0 = T.vector("s0")
        out, _ = ss.scan(lambda s: T.concatenate([s, s]), outputs_info=s0, n_steps=2)
        inputs, values = [s0], [np.ones(2)]
    else:
        s0 = T.ivector("lengths")
        out, _ = ss.scan(lambda v: T.arange(v), sequences=s0)
        inputs, values = [s0], [np.array([1, 2], dtype="int32")]
    with pytest.raises(ValueError, match="same shape at every step"):
        ss.function(inputs, out, mode=mode)(*values)


def test_matrix_sit_sot_state(mode, rng):
    a0, m = T.matrix("a0"), T.matrix("m")
    out, _ = ss.scan(lambda a, m: T.dot(a, m) * 0.5, outputs_info=a0, non_sequences=m, n_steps=4)
    av, mv = rng.standard_normal((2, 3)), rng.standard_normal((3, 3))
    expected, a = [], av
    for _ in range(4):
        a = a @ mv * 0.5
        expected.append(a)
    res = ss.function([a0, m], out, mode=mode)(av, mv)
    assert res.shape == (4, 2, 3)
    np.testing.assert_allclose(res, expected)


def test_tensor3_sit_sot_with_matrix_sequence(mode, rng):
    x, s0 = T.matrix("x"), T.tensor3("s0")
    out, _ = ss.scan(lambda row, s: s * 0.9 + row, sequences=x, outputs_info=s0)
    xv, sv = rng.standard_normal((5, 4)), rng.standard_normal((2, 3, 4))
    expected, s = [], sv
    for row in xv:
        s = s * 0.9 + row
        expected.append(s)
    res = ss.function([x, s0], out, mode=mode)(xv, sv)
    assert res.shape == (5, 2, 3, 4)
    np.testing.assert_allclose(res, expected)


def test_nit_sot_matrix_output_per_step(mode, rng):
    """The guide's set_value_at_position: a matrix per step from an index and a value."""
    location, values, model = T.imatrix("location"), T.vector("values"), T.matrix("model")

    def set_value_at_position(a_location, a_value, output_model):
        zeros = T.zeros_like(output_model)
        return T.set_subtensor(zeros[a_location[0], a_location[1]], a_value)

    out, _ = ss.scan(set_value_at_position, sequences=[location, values], non_sequences=model)
    lv, vv = np.array([[1, 1], [2, 3]], dtype="int32"), np.array([42.0, 50.0])
    res = ss.function([location, values, model], out, mode=mode)(lv, vv, np.zeros((5, 5)))
    expected = np.zeros((2, 5, 5))
    expected[0, 1, 1], expected[1, 2, 3] = 42.0, 50.0
    np.testing.assert_array_equal(res, expected)


# ---------------------------------------------------------------------------- final values
@pytest.mark.parametrize("steps", [0, 1, 2, 7])
def test_final_value_is_the_last_step_or_the_initial_value(mode, steps):
    """ONNX loops return their states' final values, the initial ones after no step; out[-1]
    of an empty output would raise instead."""
    from symscan.scan.outputs import final_value

    x0, k, w = T.vector("x0"), T.lscalar("k"), T.scalar("w")
    xs, _ = ss.scan(lambda x, w: x * w + 1.0, outputs_info=x0, non_sequences=w, n_steps=k)
    mit, _ = ss.scan(lambda a, b: a + b, outputs_info=dict(initial=T.concatenate([x0, x0 + 1.0]).reshape((2, -1)),
                                                          taps=[-2, -1]), n_steps=k)
    f = ss.function([x0, k, w], [final_value(xs), final_value(mit)], mode=mode)
    start = np.array([1.0, 2.0])
    state, window = start.copy(), [start, start + 1.0]
    for _ in range(steps):
        state = state * 0.5 + 1.0
        window = [window[1], window[0] + window[1]]
    last, last_mit = f(start, steps, 0.5)
    np.testing.assert_allclose(last, state)
    np.testing.assert_allclose(last_mit, window[1])


def test_final_value_of_an_unrolled_scan():
    from symscan.scan.outputs import final_value

    x0 = T.scalar("x0")
    xs, _ = ss.scan(lambda x: x * 3.0, outputs_info=x0, n_steps=1)
    assert not any(isinstance(n.op, Scan) for n in ss.function([x0], xs).fgraph.apply_nodes)
    assert ss.function([x0], final_value(xs))(2.0) == 6.0
