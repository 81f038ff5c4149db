"""remove_unused: a Scan drops the non-sequences, sequence taps and outputs it does not need,
and takes constant non-sequences into its body.

Each test compiles with ``rewrites=["remove_unused"]`` alone, checks the Scan's layout, the
report, and the numbers against mode "py" (including the "sequence too short" errors).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symscan as ss
import symscan.tensor as T
from symscan.graph import Constant
from symscan.graph.traversal import ancestors
from symscan.scan.checks import AfterChecks, CheckSequenceLength
from symscan.tensor.subtensor import Subtensor

RULE = ["remove_unused"]


def _fired_detail(scan_rw, f) -> str:
    (record,) = scan_rw.records(f, "remove_unused")
    return record.detail


# ---------------------------------------------------------------------------- non-sequences
def test_unused_non_sequences_are_dropped(scan_rw, rng):
    X, W, U, b, h0 = T.matrix("X"), T.matrix("W"), T.matrix("U"), T.vector("b"), T.vector("h0")
    out, _ = ss.scan(lambda x, h, W, U, b: T.tanh(T.dot(x, W) + h), sequences=X, outputs_info=h0,
                     non_sequences=[W, U, b])
    values = [[rng.normal(size=(n, 3)), rng.normal(size=(3, 3)), rng.normal(size=(2, 2)), rng.normal(size=3),
               rng.normal(size=3)] for n in (0, 1, 5)]
    f = scan_rw.check([X, W, U, b, h0], out, RULE, *values)
    node, args = scan_rw.only_scan(f)
    assert [n.label for n in args.non_seqs] == ["W"]
    assert f.fgraph.inputs[2] not in node.inputs and f.fgraph.inputs[3] not in node.inputs
    detail = _fired_detail(scan_rw, f)
    assert "dropped unused non-sequence U" in detail and "dropped unused non-sequence b" in detail


def test_constant_non_sequences_move_into_the_body(scan_rw, rng):
    X, h0 = T.matrix("X"), T.vector("h0")
    W = rng.normal(size=(3, 3))
    out, _ = ss.scan(lambda x, h, W, s: T.tanh(T.dot(x, W) * s + h), sequences=X, outputs_info=h0,
                     non_sequences=[T.constant(W), T.constant(0.5)])
    f = scan_rw.check([X, h0], out, RULE, [rng.normal(size=(4, 3)), rng.normal(size=3)])
    node, args = scan_rw.only_scan(f)
    assert args.non_seqs == []
    inner_constants = [v for v in ancestors(node.op.inner.outputs) if isinstance(v, Constant)]
    assert any(np.array_equal(c.data, W) for c in inner_constants)
    assert "moved 2 constant non-sequence(s) into the body" in _fired_detail(scan_rw, f)


# ---------------------------------------------------------------------------- sequence taps
_TAP_USES = {  # which of the taps [-3, -1, 2] fn reads
    (-3, 2): lambda a, b, c, h: h * 0.5 + a * c,
    (-1,): lambda a, b, c, h: h * 0.5 + b,
    (-3,): lambda a, b, c, h: h * a,
    (2,): lambda a, b, c, h: h - c,
    (-1, 2): lambda a, b, c, h: h + b * c,
    (-3, -1): lambda a, b, c, h: h + b * a,
}


@pytest.mark.parametrize("used", list(_TAP_USES))
@pytest.mark.parametrize("go_backwards", [False, True])
def test_unused_taps_are_dropped_and_the_sequence_re_sliced(scan_rw, rng, used, go_backwards):
    X, h0 = T.matrix("X"), T.vector("h0")
    out, _ = ss.scan(_TAP_USES[used], sequences=[dict(input=X, taps=[-3, -1, 2])], outputs_info=h0,
                     go_backwards=go_backwards)
    values = [[rng.normal(size=(n, 2)), rng.normal(size=2)] for n in (3, 5, 6, 11)]  # 3 rows: too short
    f = scan_rw.check([X, h0], out, RULE, *values)
    node, args = scan_rw.only_scan(f)
    (seq,) = args.sequences
    assert seq.taps == used and len(seq.inner) == len(used)
    trimmed = min(min(used), 0) != -3 or max(max(used), 0) != 2
    assert (seq.outer is f.fgraph.inputs[0]) != trimmed
    if trimmed:  # a slice of X, after the check of X against all its taps (found by the fuzzer)
        assert isinstance(seq.outer.owner.op, Subtensor)
        check = seq.outer.owner.inputs[0].owner
        assert isinstance(check.op, CheckSequenceLength) and check.op.taps == (-3, -1, 2)
        assert check.inputs[0] is f.fgraph.inputs[0]
    assert "dropped unused taps of sequences[0] 'X'" in _fired_detail(scan_rw, f)


@pytest.mark.parametrize("n_steps", [0, 2, -2, 4, -4, 7])
def test_re_sliced_taps_with_a_symbolic_n_steps_of_either_sign(scan_rw, rng, n_steps):
    """6 steps need 11 rows with taps [-3, -1, 2]; too many steps are an error either way."""
    X, h0, n = T.matrix("X"), T.vector("h0"), T.lscalar("n")
    out, _ = ss.scan(lambda a, b, c, h: h + b * c, sequences=[dict(input=X, taps=[-3, -1, 2])], outputs_info=h0,
                     n_steps=n)
    f = scan_rw.check([X, h0, n], out, RULE, [rng.normal(size=(9, 2)), rng.normal(size=2), n_steps])
    assert scan_rw.only_scan(f)[1].sequences[0].taps == (-1, 2)


def test_an_unused_sequence_is_dropped(scan_rw, rng):
    X, Y, h0 = T.matrix("X"), T.matrix("Y"), T.vector("h0")
    out, _ = ss.scan(lambda x, y, h: h + x, sequences=[X, Y], outputs_info=h0)
    values = [[rng.normal(size=(5, 2)), rng.normal(size=(n, 2)), rng.normal(size=2)] for n in (3, 5, 8)]
    f = scan_rw.check([X, Y, h0], out, RULE, *values)
    node, args = scan_rw.only_scan(f)
    assert [s.label for s in args.sequences] == ["sequences[0] 'X'"]
    assert f(*values[0]).shape == (3, 2)  # n_steps still counts the dropped sequence
    assert "dropped unused sequences[1] 'Y'" in _fired_detail(scan_rw, f)


def test_a_dropped_sequence_keeps_its_too_short_error(scan_rw, rng):
    """n_steps counted from a sequence the body ignores: a sequence shorter than its taps'
    span is still an error naming it (not an empty result, not a crash in the loop)."""
    X, h0 = T.matrix("X"), T.vector("h0")
    out, _ = ss.scan(lambda a, b, h: h * 2, sequences=[dict(input=X, taps=[-2, 0])], outputs_info=h0)
    values = [[np.ones((n, 3)), rng.normal(size=3)] for n in (1, 2, 4)]
    f = scan_rw.check([X, h0], out, RULE, *values)
    node, args = scan_rw.only_scan(f)
    assert args.sequences == [] and f.fgraph.inputs[0] not in node.inputs
    with pytest.raises(ValueError, match="'X' has 1 elements"):
        f(*values[0])


def test_an_unused_sequence_stays_when_only_the_loop_can_check_its_length(scan_rw, rng):
    v, h0 = T.vector("v"), T.scalar("h0")
    out, _ = ss.scan(lambda x, h: h * 2, sequences=v, outputs_info=h0, n_steps=6)
    f = scan_rw.check([v, h0], out, RULE, [np.ones(3), 1.0], [np.ones(6), 1.0], [np.ones(9), 1.0])
    node, args = scan_rw.only_scan(f)
    assert len(args.sequences) == 1
    assert not scan_rw.records(f, "remove_unused")
    (record,) = scan_rw.records(f, "remove_unused", fired=False)
    assert "kept unused sequences[0] 'v'" in record.detail
    with pytest.raises(ValueError, match="'v' has 3 elements but 6 steps"):
        f(np.ones(3), 1.0)


def test_an_unused_sequence_of_static_length_is_dropped(scan_rw, rng):
    v, h0 = T.tensor("float64", shape=(8,), name="v"), T.scalar("h0")
    out, _ = ss.scan(lambda x, h: h * 2, sequences=v, outputs_info=h0, n_steps=6)
    f = scan_rw.check([v, h0], out, RULE, [np.ones(8), 1.0])
    assert scan_rw.only_scan(f)[1].sequences == []


@pytest.mark.parametrize("n_steps", [7, 1, 0, -3])
def test_an_unused_sequence_of_static_length_keeps_its_check_for_a_symbolic_n_steps(scan_rw, n_steps):
    """Issue 12, bug 5: a static length cannot be checked against a symbolic n_steps when
    scan() is called, so only the loop can say the sequence is too short (it used to be
    dropped, and mode "fast" returned rows where mode "py" raised)."""
    v, s0, n = T.tensor("float64", shape=(0,), name="v"), T.scalar("s0"), T.iscalar("n")
    out, _ = ss.scan(lambda x, s: s, sequences=v, outputs_info=s0, n_steps=n)
    f = scan_rw.check([v, s0, n], out, RULE, [np.zeros(0), 1.0, n_steps])
    node, args = scan_rw.only_scan(f)
    assert args.sequences == [] and isinstance(args.n_steps.owner.op, AfterChecks)  # the check went onto n_steps
    if n_steps:
        with pytest.raises(ValueError, match="'v' has 0 elements but"):
            f(np.zeros(0), 1.0, n_steps)
    for mode in ("fast", "onnxruntime"):  # every rewrite on
        g = ss.function([v, s0, n], out, mode=mode)
        if n_steps:
            with pytest.raises(ValueError, match="'v' has"):
                g(np.zeros(0), 1.0, n_steps)
        else:
            assert g(np.zeros(0), 1.0, n_steps).shape == (0,)


def test_an_unused_sequence_of_static_length_that_is_long_enough_is_dropped(scan_rw):
    v, s0 = T.tensor("float64", shape=(4,), name="v"), T.scalar("s0")
    out, _ = ss.scan(lambda a, b, s: s * 2, sequences=dict(input=v, taps=[-1, 1]), outputs_info=s0, n_steps=2)
    f = scan_rw.check([v, s0], out, RULE, [np.ones(4), 1.0])
    assert scan_rw.only_scan(f)[1].sequences == []


def test_a_loop_no_result_needs_is_not_run_so_its_error_does_not_happen():
    """Documented (README, Rewrites): values no result needs are not computed. Found by the
    fuzzer: a loop's output is the only sequence of a loop of 0 steps, which never reads its
    values and whose length is known to suffice; the first loop's own "too short" error,
    which mode "py" raises because it runs every loop it is given, does not happen."""
    x, h = T.vector("x"), T.scalar("h")
    y, _ = ss.scan(lambda a, b: a + b, sequences=dict(input=x, taps=[-2, 0]), n_steps=0)
    z, _ = ss.scan(lambda v, s: s * 0.5, sequences=y, outputs_info=h, n_steps=0)
    with pytest.raises(ValueError, match="'x' has 1 elements"):
        ss.function([x, h], z, mode="py")(np.zeros(1), 1.0)
    for rewrites in (RULE, None):
        assert ss.function([x, h], z, mode="fast", rewrites=rewrites)(np.zeros(1), 1.0).shape == (0,)
    with pytest.raises(ValueError, match="'x' has 1 elements"):  # wherever y is needed, it fails
        ss.function([x, h], [z, y], mode="fast")(np.zeros(1), 1.0)


# ---------------------------------------------------------------------------- outputs
def _three_outputs():
    X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")

    def step(x, h, c, W):
        new = T.tanh(T.dot(x, W) + h)
        return new, c + 1, new * 2

    (H, C, Y), _ = ss.scan(step, sequences=X, outputs_info=[h0, h0, None], non_sequences=W)
    return [X, W, h0], H, C, Y


def _three_values(rng, n):
    return [rng.normal(size=(n, 3)), rng.normal(size=(3, 3)), rng.normal(size=3)]


def test_unused_nit_sot_and_recurrent_outputs_are_dropped(scan_rw, rng):
    inputs, H, C, Y = _three_outputs()
    f = scan_rw.check(inputs, H, RULE, _three_values(rng, 0), _three_values(rng, 5))
    node, args = scan_rw.only_scan(f)
    assert args.nit_sot == [] and len(args.sit_sot) == 1 and len(node.outputs) == 1
    detail = _fired_detail(scan_rw, f)
    assert "dropped unused output output 2" in detail and "dropped unused output outputs_info[1]" in detail


def test_dropping_outputs_drops_what_only_they_read(scan_rw, rng):
    inputs, H, C, Y = _three_outputs()
    f = scan_rw.check(inputs, C, RULE, _three_values(rng, 4))
    node, args = scan_rw.only_scan(f)
    assert args.sequences == [] and args.non_seqs == [] and len(args.sit_sot) == 1
    assert f(*_three_values(rng, 4)).shape == (4, 3)


def test_an_output_whose_past_another_output_reads_is_kept(scan_rw, rng):
    X, h0 = T.matrix("X"), T.vector("h0")

    def step(x, h, c):
        return T.tanh(x + c), c * 0.5 + x  # h reads c's past; nothing reads h's past

    (H, C), _ = ss.scan(step, sequences=X, outputs_info=[h0, h0])
    f = scan_rw.check([X, h0], H, RULE, [rng.normal(size=(5, 3)), rng.normal(size=3)])
    node, args = scan_rw.only_scan(f)
    assert len(args.sit_sot) == 2 and not scan_rw.records(f, "remove_unused")


@pytest.mark.parametrize("mode", ["fast", "onnxruntime"])
def test_an_output_returning_another_outputs_past_value_keeps_it(scan_rw, mode):
    """Issue 12, bug 4: fn returns the sit-sot's past value as a map output too; reading
    only the map output must keep the sit-sot (its past value feeds the map)."""
    h = T.vector("h")
    (s, y), _ = ss.scan(lambda s: [s, s], outputs_info=[h, None], n_steps=2)
    f = scan_rw.check([h], y, RULE, [np.array([1.0, 2.0])])
    assert len(scan_rw.only_scan(f)[1].sit_sot) == 1
    np.testing.assert_array_equal(ss.function([h], y, mode=mode)(np.array([1.0, 2.0])), [[1.0, 2.0], [1.0, 2.0]])


@pytest.mark.parametrize("mode", ["fast", "onnxruntime"])
def test_one_variable_returned_for_a_map_and_a_recurrent_output(scan_rw, mode):
    """Issue 12, bug 4: ``return d, d`` for a map output and a recurrent one; reading only the
    map output keeps the recurrence d depends on."""
    s0 = T.vector("s0")

    def step(m):
        d = m * 2
        return d, d

    outs, _ = ss.scan(step, outputs_info=[None, s0], n_steps=3)
    f = scan_rw.check([s0], outs[0], RULE, [np.array([1.0, -1.0])])
    assert len(scan_rw.only_scan(f)[1].sit_sot) == 1
    expected = [[2.0, -2.0], [4.0, -4.0], [8.0, -8.0]]
    np.testing.assert_array_equal(ss.function([s0], outs[0], mode=mode)(np.array([1.0, -1.0])), expected)


@pytest.mark.parametrize("n_steps", [3, "symbolic"])
def test_a_dropped_mit_sot_keeps_its_initial_rows_check(scan_rw, n_steps):
    """Found by the fuzzer: dropping an unread mit-sot dropped the loop's "too few initial
    rows" error with it; the check now hangs on n_steps (every mode, every rewrite on)."""
    h, s0, k = T.vector("h"), T.scalar("s0"), T.iscalar("k")
    (m, s), _ = ss.scan(lambda a, b, s: [a + b, s * 2], outputs_info=[dict(initial=h, taps=[-2, -1]), s0],
                        n_steps=k if n_steps == "symbolic" else n_steps)
    inputs, steps = ([h, s0, k], [3]) if n_steps == "symbolic" else ([h, s0], [])
    f = scan_rw.check(inputs, s, RULE, [np.ones(2), 1.0, *steps], [np.ones(1), 1.0, *steps])
    assert scan_rw.only_scan(f)[1].mit_sot == []
    for mode in ("fast", "onnxruntime"):
        g = ss.function(inputs, s, mode=mode)
        np.testing.assert_array_equal(g(np.ones(2), 1.0, *steps), [2.0, 4.0, 8.0])
        with pytest.raises(ValueError, match=r"outputs_info\[0\] \(initial 'h'\) has (1|fewer than 2) initial rows"):
            g(np.ones(1), 1.0, *steps)


def test_a_mit_sot_read_only_by_its_own_update_is_dropped(scan_rw, rng):
    X, s0, h0 = T.matrix("X"), T.matrix("s0"), T.vector("h0")

    def step(x, a, b, h):
        return a + b, h + x

    (F, H), _ = ss.scan(step, sequences=X, outputs_info=[dict(initial=s0, taps=[-2, -1]), h0])
    f = scan_rw.check([X, s0, h0], H, RULE, [rng.normal(size=(4, 3)), rng.normal(size=(2, 3)), rng.normal(size=3)])
    node, args = scan_rw.only_scan(f)
    assert args.mit_sot == [] and len(args.sit_sot) == 1
    assert f.fgraph.inputs[1] not in node.inputs


def test_a_chain_of_unused_outputs_is_dropped_to_the_end(scan_rw, rng):
    """c reads b's past and b reads a's past; with only d used all three go."""
    h0 = T.vector("h0")

    def step(a, b, c, d):
        return a + 1, b + a, c + b, d * 2

    (A, B, C, D), _ = ss.scan(step, outputs_info=[h0, h0, h0, h0], n_steps=4)
    f = scan_rw.check([h0], D, RULE, [rng.normal(size=2)])
    assert len(scan_rw.only_scan(f)[1].sit_sot) == 1


def test_a_shared_update_that_is_not_applied_is_dropped(scan_rw, rng):
    X = T.matrix("X")
    count = ss.shared(np.float64(0), name="count")
    out, updates = ss.scan(lambda x: (x * 2, {count: count + 1}), sequences=X)
    values = [rng.normal(size=(3, 2))]
    kept = scan_rw.check([X], out, RULE, values, updates=updates)
    assert len(scan_rw.only_scan(kept)[1].shared) == 1
    dropped = scan_rw.check([X], out, RULE, values)
    assert scan_rw.only_scan(dropped)[1].shared == []


# ---------------------------------------------------------------------------- until
def test_until_keeps_what_its_condition_reads(scan_rw, rng):
    X, Y, h0, limit, unused = T.matrix("X"), T.vector("Y"), T.vector("h0"), T.scalar("limit"), T.scalar("unused")

    def step(x, y_prev, y_now, h, limit, unused):  # y's tap -1 and `limit` are read only by the condition
        return h + x, ss.until(y_prev > limit)

    out, _ = ss.scan(step, sequences=[X, dict(input=Y, taps=[-1, 0])], outputs_info=h0,
                     non_sequences=[limit, unused])
    values = [[rng.normal(size=(8, 2)), rng.normal(size=9), rng.normal(size=2), 0.8, 1.0] for _ in range(3)]
    f = scan_rw.check([X, Y, h0, limit, unused], out, RULE, *values)
    node, args = scan_rw.only_scan(f)
    assert [n.label for n in args.non_seqs] == ["limit"]
    assert [s.taps for s in args.sequences] == [(0,), (-1,)]
    assert any(len(f(*v)) < 8 for v in values)


# ---------------------------------------------------------------------------- nested
def test_the_inner_loop_of_a_nested_scan_is_cleaned_too(scan_rw, rng):
    A, W, U, h0 = T.tensor3("A"), T.matrix("W"), T.matrix("U"), T.vector("h0")

    def outer_step(X_t, h, W, U):
        H, _ = ss.scan(lambda x, hh, W, U: T.tanh(T.dot(x, W) + hh), sequences=X_t, outputs_info=h,
                       non_sequences=[W, U])
        return H[-1]

    out, _ = ss.scan(outer_step, sequences=A, outputs_info=h0, non_sequences=[W, U])
    f = scan_rw.check([A, W, U, h0], out, RULE, [rng.normal(size=(3, 4, 2)), rng.normal(size=(2, 2)),
                                                  rng.normal(size=(2, 2)), rng.normal(size=2)])
    node, args = scan_rw.only_scan(f)
    assert [n.label for n in args.non_seqs] == ["W"]
    (inner,) = [n for n in node.op.inner.apply_nodes if hasattr(n.op, "info")]
    from symscan.scan import ScanArgs

    assert [n.label for n in ScanArgs.from_node(inner).non_seqs] == ["W"]
    assert sorted(r.node.startswith("scan > ") for r in scan_rw.records(f, "remove_unused")) == [False, True]


# ---------------------------------------------------------------------------- property
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(taps=st.lists(st.integers(-3, 3), min_size=2, max_size=4, unique=True), data=st.data(),
       go_backwards=st.booleans(), extra=st.integers(0, 3), seed=st.integers(0, 2 ** 16))
def test_property_any_subset_of_taps(scan_rw, taps, data, go_backwards, extra, seed):
    rng = np.random.default_rng(seed)
    taps = sorted(taps)
    used = sorted(data.draw(st.sets(st.sampled_from(taps), min_size=1, max_size=len(taps) - 1)))
    X, h0 = T.matrix("X"), T.vector("h0")

    def step(*args):
        *elements, h = args
        total = h * 0.5
        for tap, e in zip(taps, elements):
            if tap in used:
                total = total + e * (tap + 4)
        return total

    out, _ = ss.scan(step, sequences=[dict(input=X, taps=taps)], outputs_info=h0, go_backwards=go_backwards)
    span = max(max(taps), 0) - min(min(taps), 0)
    f = scan_rw.check([X, h0], out, RULE, [rng.normal(size=(span + extra, 2)), rng.normal(size=2)])
    assert scan_rw.only_scan(f)[1].sequences[0].taps == tuple(used)


# ---------------------------------------------------------------------------- until
def test_an_until_that_is_always_false_makes_a_for_loop(scan_rw, rng):
    """(An imported ONNX for loop whose body condition is a constant.) Then the rules that need
    every step to run can fire: here the loop becomes a sum."""
    xs = T.vector("xs")
    out, _ = ss.scan(lambda v, acc: (acc + v, ss.until(T.invert(T.constant(True)))), sequences=xs,
                     outputs_info=T.constant(0.0))
    f = ss.function([xs], out[-1], mode="fast", rewrites=["canonicalize"])
    (scan,) = scan_rw.scans(f)
    assert "while" not in str(scan.op)
    assert [r.detail for r in f.rewrite_report() if r.rule == "remove_never_until" and r.fired]
    everything = ss.function([xs], out[-1])
    assert scan_rw.scans(everything) == []
    for n in (1, 4):
        values = rng.standard_normal(n)
        np.testing.assert_allclose(everything(values), values.sum())
    kept, _ = ss.scan(lambda v, acc: (acc + v, ss.until(acc + v > 2.0)), sequences=xs, outputs_info=T.constant(0.0))
    g = ss.function([xs], kept[-1], mode="fast", rewrites=["canonicalize"])
    assert "while" in str(scan_rw.scans(g)[0].op)
    assert not any(r.rule == "remove_never_until" for r in g.rewrite_report())
