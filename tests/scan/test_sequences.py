"""scan over sequences: taps, truncation to the shortest, n_steps, go_backwards, negative
n_steps, constant sequences; each result is checked against a plain Python loop."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symscan as ss
import symscan.tensor as T


# ---------------------------------------------------------------------------- the reference loop
def usable_length(length: int, taps) -> int:
    """Steps a sequence of ``length`` allows: tap 0 counts as used on both sides."""
    return length - (max(max(taps), 0) - min(min(taps), 0))


def reference_slices(seqs, n_steps=None, go_backwards=False):
    """For each step, the list of elements fn receives (every tap of every sequence, in order).

    ``seqs`` is a list of (array, taps). Rules: the loop runs the shortest usable length
    (or ``|n_steps|``); forward, tap k reads ``x[t + k - min(mintap, 0)]`` at step t;
    backwards, each sequence starts from its own last usable element and walks down.
    A negative n_steps flips the direction.
    """
    backwards = go_backwards
    if n_steps is None:
        steps = min(usable_length(len(x), taps) for x, taps in seqs)
    else:
        steps, backwards = abs(n_steps), go_backwards != (n_steps < 0)
    rows = []
    for t in range(steps):
        row = []
        for x, taps in seqs:
            low = min(min(taps), 0)
            base = usable_length(len(x), taps) - 1 - t if backwards else t
            row += [x[base + k - low] for k in taps]
        rows.append(row)
    return rows


def _stack_slices(*slices):
    return T.stack(list(slices))


# ---------------------------------------------------------------------------- taps
@pytest.mark.parametrize("taps", [[-1], [-3], [0], [2], [-2, 0], [0, 3], [-1, 1], [-3, 2, -1], [1, 3], [-4, -2]])
def test_taps_read_the_rule_elements(mode, taps):
    """Every tap set reads x[t + k - min(mintap, 0)], for len - span steps."""
    x = T.vector("x")
    out, _ = ss.scan(_stack_slices, sequences=dict(input=x, taps=taps))
    xv = np.arange(10.0) * 3 + 1
    expected = np.array(reference_slices([(xv, taps)]))
    assert expected.shape == (10 - (max(max(taps), 0) - min(min(taps), 0)), len(taps))
    np.testing.assert_array_equal(ss.function([x], out, mode=mode)(xv), expected)


def test_taps_hand_written_example(mode):
    """taps [-2, 0, 1] over 0..7: steps t=2..6 read x[t-2], x[t], x[t+1]."""
    x = T.vector("x")
    out, _ = ss.scan(lambda a, b, c: a + 10 * b + 100 * c, sequences=dict(input=x, taps=[-2, 0, 1]))
    xv = np.arange(8.0)
    expected = [xv[t - 2] + 10 * xv[t] + 100 * xv[t + 1] for t in range(2, 7)]
    np.testing.assert_array_equal(ss.function([x], out, mode=mode)(xv), expected)


def test_tap_order_is_the_order_given(mode):
    """fn receives the taps in the order listed, not sorted."""
    x = T.vector("x")
    out, _ = ss.scan(lambda later, earlier: later - earlier, sequences=dict(input=x, taps=[2, -1]))
    xv = np.array([1.0, 4.0, 9.0, 16.0, 25.0, 36.0])
    expected = [xv[t + 2] - xv[t - 1] for t in range(1, 4)]
    np.testing.assert_array_equal(ss.function([x], out, mode=mode)(xv), expected)


def test_fn_may_return_a_tap_unchanged(mode):
    """An output that is one of fn's arguments (no op in between) is still that element."""
    x = T.vector("x")
    out, _ = ss.scan(lambda prev, cur: [prev, cur], sequences=dict(input=x, taps=[-1, 0]))
    xv = np.array([5.0, 6.0, 7.0, 8.0])
    prev, cur = ss.function([x], out, mode=mode)(xv)
    np.testing.assert_array_equal(prev, xv[:-1])
    np.testing.assert_array_equal(cur, xv[1:])


def test_dict_without_taps_means_tap_zero(mode):
    x = T.vector("x")
    out, _ = ss.scan(lambda v: v * v, sequences=dict(input=x))
    xv = np.array([1.0, -2.0, 3.0])
    np.testing.assert_array_equal(ss.function([x], out, mode=mode)(xv), xv * xv)


def test_dict_with_taps_none_means_tap_zero(mode):
    x = T.vector("x")
    out, _ = ss.scan(lambda v: v + 1, sequences=[dict(input=x, taps=None)])
    xv = np.array([1.0, 2.0])
    np.testing.assert_array_equal(ss.function([x], out, mode=mode)(xv), xv + 1)


# ---------------------------------------------------------------------------- several sequences
def test_several_sequences_truncate_to_the_shortest(mode):
    a, b, c = T.vector("a"), T.vector("b"), T.vector("c")
    out, _ = ss.scan(lambda x, y, z: x * 100 + y * 10 + z, sequences=[a, b, c])
    av, bv, cv = np.arange(7.0), np.arange(3.0) + 1, np.arange(5.0) + 2
    expected = [av[t] * 100 + bv[t] * 10 + cv[t] for t in range(3)]
    np.testing.assert_array_equal(ss.function([a, b, c], out, mode=mode)(av, bv, cv), expected)


def test_several_sequences_truncation_counts_taps(mode):
    """The shortest *usable* length wins: a long sequence with a wide tap span can be the limit."""
    a, b = T.vector("a"), T.vector("b")
    out, _ = ss.scan(lambda a_m3, a_t, b_t: a_m3 + 10 * a_t + 100 * b_t,
                     sequences=[dict(input=a, taps=[-3, 0]), b])
    f = ss.function([a, b], out, mode=mode)
    for la, lb in [(8, 4), (6, 5), (5, 9)]:
        av, bv = np.arange(la) + 1.0, np.arange(lb) * 2.0
        rows = reference_slices([(av, [-3, 0]), (bv, [0])])
        expected = [r[0] + 10 * r[1] + 100 * r[2] for r in rows]
        assert len(expected) == min(la - 3, lb)
        np.testing.assert_array_equal(f(av, bv), expected)


def test_several_sequences_with_taps_argument_order(mode):
    """All taps of the first sequence, then all taps of the second."""
    a, b = T.vector("a"), T.vector("b")
    out, _ = ss.scan(_stack_slices, sequences=[dict(input=a, taps=[1, -1]), dict(input=b, taps=[-2, 0, 2])])
    av, bv = np.arange(6.0), np.arange(10.0) + 100
    expected = np.array(reference_slices([(av, [1, -1]), (bv, [-2, 0, 2])]))
    np.testing.assert_array_equal(ss.function([a, b], out, mode=mode)(av, bv), expected)


def test_matrix_sequence_iterates_rows(mode, rng):
    m = T.matrix("m")
    out, _ = ss.scan(lambda prev, row: row * 2 - prev, sequences=dict(input=m, taps=[-1, 0]))
    mv = rng.standard_normal((5, 3))
    expected = np.array([mv[t] * 2 - mv[t - 1] for t in range(1, 5)])
    res = ss.function([m], out, mode=mode)(mv)
    assert res.shape == (4, 3)
    np.testing.assert_allclose(res, expected)


def test_matrix_and_vector_sequences_together(mode, rng):
    m, v = T.matrix("m"), T.vector("v")
    out, _ = ss.scan(lambda row, s: (row * s).sum(), sequences=[m, v])
    mv, vv = rng.standard_normal((4, 3)), rng.standard_normal(6)
    expected = [(mv[t] * vv[t]).sum() for t in range(4)]
    np.testing.assert_allclose(ss.function([m, v], out, mode=mode)(mv, vv), expected)


def test_tensor3_sequence_with_future_tap(mode, rng):
    x = T.tensor3("x")
    out, _ = ss.scan(lambda cur, nxt: T.dot(cur, nxt.T), sequences=dict(input=x, taps=[0, 1]))
    xv = rng.standard_normal((4, 2, 3))
    expected = np.array([xv[t] @ xv[t + 1].T for t in range(3)])
    np.testing.assert_allclose(ss.function([x], out, mode=mode)(xv), expected)


# ---------------------------------------------------------------------------- n_steps with sequences
def test_n_steps_shorter_than_sequence_uses_first_steps(mode):
    x = T.vector("x")
    out, _ = ss.scan(lambda prev, cur: cur - prev, sequences=dict(input=x, taps=[-1, 0]), n_steps=3)
    xv = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0])
    np.testing.assert_array_equal(ss.function([x], out, mode=mode)(xv), [1.0, 2.0, 4.0])


def test_symbolic_n_steps_with_longer_sequences(mode):
    x, y, k = T.vector("x"), T.vector("y"), T.iscalar("k")
    out, _ = ss.scan(lambda a, b_m1, b_p1: a + 10 * b_m1 + 100 * b_p1,
                     sequences=[x, dict(input=y, taps=[-1, 1])], n_steps=k)
    f = ss.function([x, y, k], out, mode=mode)
    xv, yv = np.arange(9.0), np.arange(7.0) + 1
    for n in (0, 1, 2, 5):
        rows = reference_slices([(xv, [0]), (yv, [-1, 1])], n_steps=n)
        expected = np.array([r[0] + 10 * r[1] + 100 * r[2] for r in rows])
        res = f(xv, yv, n)
        assert res.shape == (n,)
        np.testing.assert_array_equal(res, expected)


def test_n_steps_longer_than_sequence_raises_naming_it(mode):
    x, k = T.vector("x"), T.iscalar("k")
    out, _ = ss.scan(lambda a, b: a + b, sequences=dict(input=x, taps=[-1, 0]), n_steps=k)
    f = ss.function([x, k], out, mode=mode)
    with pytest.raises(ValueError, match=r"sequences\[0\] 'x' has 4 elements but 4 steps with taps \[-1, 0\] need 5"):
        f(np.arange(4.0), 4)
    np.testing.assert_array_equal(f(np.arange(4.0), 3), [1.0, 3.0, 5.0])


def test_constant_n_steps_longer_than_static_sequence_raises_at_build():
    x = T.tensor("float64", shape=(4,), name="x")
    with pytest.raises(ValueError, match=r"'x'.*4 elements"):
        ss.scan(lambda a, b: a + b, sequences=dict(input=x, taps=[-1, 0]), n_steps=4)


# ---------------------------------------------------------------------------- go_backwards
def test_go_backwards_plain(mode):
    x = T.vector("x")
    out, _ = ss.scan(lambda v, acc: acc * 10 + v, sequences=x, outputs_info=T.constant(0.0), go_backwards=True)
    xv = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(ss.function([x], out, mode=mode)(xv), [3.0, 32.0, 321.0])


def test_go_backwards_with_negative_tap(mode):
    """First step: tap 0 is the last element and tap -1 the one just before it."""
    x = T.vector("x")
    out, _ = ss.scan(lambda prev, cur: T.stack([prev, cur]), sequences=dict(input=x, taps=[-1, 0]),
                     go_backwards=True)
    xv = np.array([10.0, 11.0, 12.0, 13.0, 14.0])
    expected = [[13.0, 14.0], [12.0, 13.0], [11.0, 12.0], [10.0, 11.0]]
    np.testing.assert_array_equal(ss.function([x], out, mode=mode)(xv), expected)


def test_go_backwards_with_positive_tap(mode):
    """With a future tap the last usable element for tap 0 is x[-1 - maxtap]."""
    x = T.vector("x")
    out, _ = ss.scan(lambda cur, nxt: T.stack([cur, nxt]), sequences=dict(input=x, taps=[0, 2]),
                     go_backwards=True)
    xv = np.array([10.0, 11.0, 12.0, 13.0, 14.0])
    expected = [[12.0, 14.0], [11.0, 13.0], [10.0, 12.0]]
    np.testing.assert_array_equal(ss.function([x], out, mode=mode)(xv), expected)


def test_go_backwards_sequences_of_different_lengths_each_start_at_their_end(mode):
    a, b = T.vector("a"), T.vector("b")
    out, _ = ss.scan(lambda x, y: T.stack([x, y]), sequences=[a, b], go_backwards=True)
    av, bv = np.arange(5.0), np.arange(3.0) + 100
    expected = reference_slices([(av, [0]), (bv, [0])], go_backwards=True)
    assert expected == [[4.0, 102.0], [3.0, 101.0], [2.0, 100.0]]
    np.testing.assert_array_equal(ss.function([a, b], out, mode=mode)(av, bv), expected)


def test_go_backwards_with_n_steps_reads_from_the_end(mode):
    x = T.vector("x")
    out, _ = ss.scan(lambda prev, cur: T.stack([prev, cur]), sequences=dict(input=x, taps=[-1, 0]),
                     n_steps=2, go_backwards=True)
    xv = np.arange(6.0)
    np.testing.assert_array_equal(ss.function([x], out, mode=mode)(xv), [[4.0, 5.0], [3.0, 4.0]])


def test_go_backwards_recurrent_output_is_in_step_order(mode):
    """The outputs are stored in the order of the steps (first step first), not reversed."""
    x = T.vector("x")
    out, _ = ss.scan(lambda v, acc: acc + v, sequences=x, outputs_info=T.constant(0.0), go_backwards=True)
    xv = np.array([1.0, 2.0, 4.0, 8.0])
    np.testing.assert_array_equal(ss.function([x], out, mode=mode)(xv), np.cumsum(xv[::-1]))


# ---------------------------------------------------------------------------- negative n_steps
def test_negative_constant_n_steps_is_go_backwards(mode):
    x = T.vector("x")
    kwargs = dict(sequences=dict(input=x, taps=[-1, 0]))
    out_neg, _ = ss.scan(lambda p, c: p + 10 * c, n_steps=-3, **kwargs)
    out_back, _ = ss.scan(lambda p, c: p + 10 * c, n_steps=3, go_backwards=True, **kwargs)
    xv = np.arange(8.0)
    expected = [xv[t - 1] + 10 * xv[t] for t in (7, 6, 5)]
    neg, back = ss.function([x], [out_neg, out_back], mode=mode)(xv)
    np.testing.assert_array_equal(neg, expected)
    np.testing.assert_array_equal(back, expected)


def test_negative_n_steps_with_go_backwards_runs_forward(mode):
    x = T.vector("x")
    out, _ = ss.scan(lambda p, c: p + 10 * c, sequences=dict(input=x, taps=[-1, 0]), n_steps=-3,
                     go_backwards=True)
    xv = np.arange(8.0)
    expected = [xv[t - 1] + 10 * xv[t] for t in (1, 2, 3)]
    np.testing.assert_array_equal(ss.function([x], out, mode=mode)(xv), expected)


def test_negative_symbolic_n_steps(mode):
    x, k = T.vector("x"), T.iscalar("k")
    out, _ = ss.scan(lambda p, c: T.stack([p, c]), sequences=dict(input=x, taps=[-1, 0]), n_steps=k)
    f = ss.function([x, k], out, mode=mode)
    xv = np.arange(6.0) * 2
    for n in (-4, -1, 2, 5):
        np.testing.assert_array_equal(f(xv, n), reference_slices([(xv, [-1, 0])], n_steps=n))


def test_negative_symbolic_n_steps_with_go_backwards_runs_forward(mode):
    x, k = T.vector("x"), T.iscalar("k")
    out, _ = ss.scan(lambda c: c * 1.0, sequences=x, n_steps=k, go_backwards=True)
    f = ss.function([x, k], out, mode=mode)
    xv = np.arange(6.0)
    np.testing.assert_array_equal(f(xv, -3), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(f(xv, 3), [5.0, 4.0, 3.0])


def test_negative_n_steps_on_a_recurrence_without_sequences(mode):
    """Without sequences the direction only matters to sequences: -k still runs k steps."""
    s0 = T.scalar("s0")
    out, _ = ss.scan(lambda s: s * 2 + 1, outputs_info=s0, n_steps=-4)
    expected, s = [], 1.0
    for _ in range(4):
        s = s * 2 + 1
        expected.append(s)
    np.testing.assert_array_equal(ss.function([s0], out, mode=mode)(1.0), expected)


# ---------------------------------------------------------------------------- constant sequences
def test_numpy_array_sequence(mode):
    data = np.array([3.0, 1.0, 4.0, 1.0, 5.0])
    w = T.scalar("w")
    out, _ = ss.scan(lambda v, w: v * w, sequences=data, non_sequences=w)
    np.testing.assert_array_equal(ss.function([w], out, mode=mode)(2.0), data * 2)


def test_numpy_array_sequence_with_taps_and_backwards(mode):
    data = np.arange(6, dtype="int64") ** 2
    out, _ = ss.scan(lambda p, c: c - p, sequences=dict(input=data, taps=[-1, 0]), go_backwards=True)
    res = ss.function([], out, mode=mode)()
    assert res.dtype == np.int64
    np.testing.assert_array_equal(res, [data[t] - data[t - 1] for t in (5, 4, 3, 2, 1)])


def test_constant_and_arange_sequences(mode):
    """The guide's enumerate trick: a long arange truncated to the other sequence."""
    coefficients, x = T.vector("c"), T.scalar("x")
    out, _ = ss.scan(lambda c, p, x: c * x ** p, sequences=[coefficients, T.arange(1000)], non_sequences=x)
    cv = np.array([1.0, 0.0, 2.0])
    res = ss.function([coefficients, x], out, mode=mode)(cv, 3.0)
    np.testing.assert_array_equal(res, [cv[p] * 3.0 ** p for p in range(3)])


def test_python_list_sequence(mode):
    out, _ = ss.scan(lambda v: v * 2, sequences=[T.constant(np.array([1.0, 2.0, 3.0]))])
    np.testing.assert_array_equal(ss.function([], out, mode=mode)(), [2.0, 4.0, 6.0])


def test_sequence_of_integers_keeps_dtype(mode):
    x = T.ivector("x")
    out, _ = ss.scan(lambda p, c: p * c, sequences=dict(input=x, taps=[-1, 0]))
    xv = np.array([2, 3, 4, 5], dtype="int32")
    res = ss.function([x], out, mode=mode)(xv)
    assert res.dtype == np.int32
    np.testing.assert_array_equal(res, [6, 12, 20])


# ---------------------------------------------------------------------------- random tap sets
TAPS = st.lists(st.integers(-4, 4), min_size=1, max_size=3, unique=True)
SEQUENCE = st.tuples(TAPS, st.integers(0, 5))  # taps, extra elements beyond the span


@st.composite
def scan_cases(draw):
    seqs = draw(st.lists(SEQUENCE, min_size=1, max_size=3))
    lengths = [max(max(taps), 0) - min(min(taps), 0) + extra for taps, extra in seqs]
    usable = min(length - (max(max(t), 0) - min(min(t), 0)) for length, (t, _) in zip(lengths, seqs))
    n_steps = draw(st.one_of(st.none(), st.integers(-usable, usable)))
    kind = draw(st.sampled_from(["constant", "symbolic"])) if n_steps is not None else None
    return [taps for taps, _ in seqs], lengths, n_steps, kind, draw(st.booleans())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=scan_cases())
def test_random_taps_match_the_reference_loop(mode, case):
    """Random tap sets, lengths, n_steps (constant or symbolic, maybe negative) and direction.

    fn stacks every tap it receives (so the order and position of each is checked) and
    feeds a running weighted sum (so the step order is checked too).
    """
    all_taps, lengths, n_steps, kind, go_backwards = case
    xs = [T.vector(f"x{i}") for i in range(len(all_taps))]
    values = [np.arange(length) + 100.0 * (i + 1) for i, length in enumerate(lengths)]
    n_args = sum(len(taps) for taps in all_taps)

    def step(*args):
        slices, acc = args[:n_args], args[n_args]
        stacked = T.stack(list(slices))
        return stacked, acc * 0.5 + stacked.sum()

    k = T.lscalar("k")
    steps_arg = k if kind == "symbolic" else n_steps
    outs, _ = ss.scan(step, sequences=[dict(input=x, taps=taps) for x, taps in zip(xs, all_taps)],
                      outputs_info=[None, T.constant(0.0)], n_steps=steps_arg, go_backwards=go_backwards)
    inputs = xs + ([k] if kind == "symbolic" else [])
    f = ss.function(inputs, outs, mode=mode)
    stacked, acc = f(*values, *([n_steps] if kind == "symbolic" else []))

    rows = reference_slices(list(zip(values, all_taps)), n_steps=n_steps, go_backwards=go_backwards)
    expected_acc, total = [], 0.0
    for row in rows:
        total = total * 0.5 + sum(row)
        expected_acc.append(total)
    assert stacked.shape == (len(rows), n_args)
    np.testing.assert_array_equal(stacked, np.array(rows).reshape(len(rows), n_args))
    np.testing.assert_allclose(acc, expected_acc)
