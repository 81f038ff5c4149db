"""push_out_seq: per-step computation on sequence elements runs once over whole sequences.

Each test compiles with ``rewrites=["push_out_seq"]`` alone (plus ``remove_unused`` where
the structure asserted needs the original sequence gone, as noted), checks the structure
it leaves, the report, and the numbers against the reference interpreter (mode "py").
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symscan as ss
import symscan.tensor as T
from symscan.graph.traversal import ancestors
from symscan.tensor.math import Dot, Reduce

RULE = ["push_out_seq"]


def _elman(go_backwards=False, n_steps=None):
    X, W_in, W_h, b, h0 = T.matrix("X"), T.matrix("W_in"), T.matrix("W_h"), T.vector("b"), T.vector("h0")

    def step(x, h, W_in, W_h, b):
        return T.tanh(T.dot(x, W_in) + T.dot(h, W_h) + b)

    H, _ = ss.scan(step, sequences=X, outputs_info=h0, non_sequences=[W_in, W_h, b],
                   go_backwards=go_backwards, n_steps=n_steps)
    return [X, W_in, W_h, b, h0], H


def _elman_values(rng, length, n_in=4, n_h=3):
    return [rng.normal(size=(length, n_in)), rng.normal(size=(n_in, n_h)) * 0.5,
            rng.normal(size=(n_h, n_h)) * 0.5, rng.normal(size=n_h), rng.normal(size=n_h)]


def _sequence_inputs(args) -> set:
    return {v for s in args.sequences for v in s.inner}


def _original_sequence_inputs(args) -> set:
    """Inner variables of the sequences the user passed (not the ones the rewrite added)."""
    return {v for s in args.sequences if not s.label.startswith("pushed") for v in s.inner}


def _declined(scan_rw, f):
    return scan_rw.records(f, "push_out_seq", fired=False)


# ---------------------------------------------------------------------------- the Elman RNN
@pytest.mark.parametrize("go_backwards", [False, True])
def test_elman_rnn_input_projection_is_one_dot_before_the_loop(scan_rw, rng, go_backwards):
    inputs, H = _elman(go_backwards)
    f = scan_rw.check(inputs, H, RULE, *[_elman_values(rng, n) for n in (0, 1, 2, 9)])
    X = f.fgraph.inputs[0]  # the compiled graph is a copy
    node, args = scan_rw.only_scan(f)
    inner_dots = scan_rw.nodes(node, Dot)
    assert len(inner_dots) == 1  # h @ W_h stays: it reads the state
    assert not any(set(d.inputs) & _sequence_inputs(args) for d in inner_dots)
    assert set(inner_dots[0].inputs) & set(args.sit_sot[0].inner_in)
    outer_dots = [d for d in scan_rw.nodes(f, Dot) if X in ancestors([d.inputs[0]])]
    assert len(outer_dots) == 1 and len(scan_rw.nodes(f, Dot)) == 1
    (pushed,) = [s for s in args.sequences if s.label.startswith("pushed")]
    assert outer_dots[0].outputs[0] in ancestors([pushed.outer])
    assert len(args.sequences) == 2 and len(args.non_seqs) == 3  # X and W_in stay until remove_unused
    (record,) = scan_rw.records(f, "push_out_seq")
    assert "Dot" in record.detail and "before the loop" in record.detail


def test_elman_rnn_with_remove_unused_reads_only_the_projection(scan_rw, rng):
    """With remove_unused too, the loop no longer reads X or W_in at all."""
    inputs, H = _elman()
    f = scan_rw.check(inputs, H, ["push_out_seq", "remove_unused"], _elman_values(rng, 6), _elman_values(rng, 0))
    X, W_in = f.fgraph.inputs[:2]
    node, args = scan_rw.only_scan(f)
    assert X not in node.inputs and W_in not in node.inputs
    assert len(args.sequences) == 1 and args.sequences[0].label.startswith("pushed")
    assert {n.label for n in args.non_seqs} == {"W_h", "b"}
    assert scan_rw.records(f, "push_out_seq") and scan_rw.records(f, "remove_unused")


def test_elman_rnn_with_shared_weights(scan_rw, rng):
    X, h0 = T.matrix("X"), T.vector("h0")
    W_in = ss.shared(rng.normal(size=(4, 3)) * 0.5, name="W_in")
    W_h = ss.shared(rng.normal(size=(3, 3)) * 0.5, name="W_h")
    H, _ = ss.scan(lambda x, h: T.tanh(T.dot(x, W_in) + T.dot(h, W_h)), sequences=X, outputs_info=h0)
    f = scan_rw.check([X, h0], H, RULE, [rng.normal(size=(5, 4)), rng.normal(size=3)])
    node, args = scan_rw.only_scan(f)
    assert len(scan_rw.nodes(node, Dot)) == 1 and len(scan_rw.nodes(f, Dot)) == 1
    assert scan_rw.records(f, "push_out_seq")


# ---------------------------------------------------------------------------- maps vanish
def test_pure_map_over_two_sequences_needs_no_loop(scan_rw, rng):
    x, y, c, p = T.vector("x"), T.vector("y"), T.scalar("c"), T.scalar("p")
    out, _ = ss.scan(lambda a, b, c, p: c * a ** p + b, sequences=[x, y], non_sequences=[c, p])
    values = [[rng.uniform(0.5, 2, size=9), rng.normal(size=6), 1.5, 3.0],  # different lengths: 6 steps
              [rng.uniform(0.5, 2, size=4), rng.normal(size=4), -0.5, 2.0],
              [np.zeros(0), rng.normal(size=3), 1.0, 2.0]]
    f = scan_rw.check([x, y, c, p], out, RULE, *values)
    assert scan_rw.scans(f) == []
    assert f(*values[0]).shape == (6,)
    (record,) = scan_rw.records(f, "push_out_seq")
    assert "loop is gone" in record.detail


@pytest.mark.parametrize("go_backwards", [False, True])
def test_map_with_taps_and_a_matrix_product_vanishes(scan_rw, rng, go_backwards):
    X, W = T.matrix("X"), T.matrix("W")
    out, _ = ss.scan(lambda a, b, c, W: T.dot(a * c, W) - b, sequences=[dict(input=X, taps=[-2, 0, 1])],
                     non_sequences=W, go_backwards=go_backwards)
    values = [[rng.normal(size=(n, 3)), rng.normal(size=(3, 3))] for n in (3, 4, 8)]
    f = scan_rw.check([X, W], out, RULE, *values)
    assert scan_rw.scans(f) == []
    assert f(*values[2]).shape == (5, 3)


def test_a_map_that_vanishes_keeps_the_too_short_error(scan_rw):
    """The loop checked its sequences; without a loop the check must stay (a slice would
    silently come out short)."""
    v = T.vector("v")
    taps, _ = ss.scan(lambda a, b: a * b, sequences=[dict(input=v, taps=[-2, 0])])
    f = scan_rw.check([v], taps, RULE, [np.arange(5.0)], [np.arange(2.0)])
    assert scan_rw.scans(f) == []
    with pytest.raises(ValueError, match="'v' has 1 elements"):
        f(np.ones(1))
    steps, _ = ss.scan(lambda a: a * 2, sequences=v, n_steps=6)
    f = scan_rw.check([v], steps, RULE, [np.arange(8.0)], [np.arange(6.0)])
    assert scan_rw.scans(f) == []
    with pytest.raises(ValueError, match="'v' has 3 elements but 6 steps"):
        f(np.ones(3))


# ---------------------------------------------------------------------------- taps and direction
@pytest.mark.parametrize("taps", [[-2, 0], [1, 3], [-1, 2], [-3, -1]])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_sequence_taps_are_aligned(scan_rw, rng, taps, go_backwards):
    X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")
    out, _ = ss.scan(lambda a, b, h, W: 0.5 * h + T.dot(a, W) * b, sequences=[dict(input=X, taps=taps)],
                     outputs_info=h0, non_sequences=W, go_backwards=go_backwards)
    values = [[rng.normal(size=(n, 3)), rng.normal(size=(3, 3)), rng.normal(size=3)] for n in (4, 5, 10)]
    f = scan_rw.check([X, W, h0], out, RULE, *values)
    node, args = scan_rw.only_scan(f)
    assert scan_rw.nodes(node, Dot) == []  # the product of both taps is one pushed sequence
    inner_out = args.sit_sot[0].inner_out
    assert not set(ancestors([inner_out])) & _original_sequence_inputs(args)
    assert args.go_backwards == go_backwards
    assert scan_rw.records(f, "push_out_seq")


@pytest.mark.parametrize("go_backwards", [False, True])
def test_several_sequences_of_different_lengths(scan_rw, rng, go_backwards):
    X, Y, h0 = T.matrix("X"), T.matrix("Y"), T.vector("h0")
    out, _ = ss.scan(lambda a, b0, b2, h: h * T.exp(-a * a) + b0 * b2,
                     sequences=[X, dict(input=Y, taps=[-1, 1])], outputs_info=h0, go_backwards=go_backwards)
    values = [[rng.normal(size=(nx, 3)), rng.normal(size=(ny, 3)), rng.normal(size=3)]
              for nx, ny in [(7, 5), (3, 9), (4, 6), (0, 4)]]
    f = scan_rw.check([X, Y, h0], out, RULE, *values)
    node, args = scan_rw.only_scan(f)
    assert len(args.sequences) == 4  # X, Y and the two pushed computations
    assert f(*values[0]).shape == (3, 3) and f(*values[1]).shape == (3, 3)
    (record,) = scan_rw.records(f, "push_out_seq")
    assert "Elemwise{exp}" in record.detail and "Elemwise{mul}" in record.detail


def test_a_constant_negative_n_steps_runs_backwards(scan_rw, rng):
    inputs, H = _elman(n_steps=-4)
    f = scan_rw.check(inputs, H, RULE, _elman_values(rng, 4), _elman_values(rng, 9))
    node, args = scan_rw.only_scan(f)
    assert args.go_backwards and len(scan_rw.nodes(node, Dot)) == 1
    assert scan_rw.records(f, "push_out_seq")


# ---------------------------------------------------------------------------- n_steps
@pytest.mark.parametrize("kind", ["shape", "unsigned", "minimum"])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_symbolic_n_steps_that_cannot_be_negative(scan_rw, rng, kind, go_backwards):
    """n_steps shorter than the sequences, only known at run time, but never negative."""
    u = T.tensor("uint32", shape=(), name="u")
    inputs, _ = _elman()
    X = inputs[0]
    n_steps = {"shape": X.shape[0] // 2, "unsigned": u, "minimum": T.minimum(X.shape[0], 3)}[kind]
    H, _ = ss.scan(lambda x, h, W_in, W_h, b: T.tanh(T.dot(x, W_in) + T.dot(h, W_h) + b), sequences=X,
                   outputs_info=inputs[4], non_sequences=inputs[1:4], n_steps=n_steps, go_backwards=go_backwards)
    extra = [u] if kind == "unsigned" else []
    value_sets = [_elman_values(rng, n) + ([np.uint32(3)] if extra else []) for n in (3, 7, 8)]
    f = scan_rw.check(inputs + extra, H, RULE, *value_sets)
    node, args = scan_rw.only_scan(f)
    assert len(scan_rw.nodes(node, Dot)) == 1
    assert scan_rw.records(f, "push_out_seq") and not _declined(scan_rw, f)
    assert f(*value_sets[1]).shape == (3, 3)


def test_a_map_with_symbolic_n_steps_needs_no_loop(scan_rw, rng):
    """A run-time n_steps becomes the loop's checked StepCount: the vectorised map has exactly
    n_steps rows, and a sequence too short for it still raises scan's error (k = 7)."""
    X, W = T.matrix("X"), T.matrix("W")
    u = T.tensor("uint32", shape=(), name="u")
    out, _ = ss.scan(lambda a, W: T.tanh(T.dot(a, W)), sequences=X, non_sequences=W, n_steps=u)
    values = [[rng.normal(size=(6, 3)), rng.normal(size=(3, 2)), np.uint32(k)] for k in (0, 2, 6, 7)]
    f = scan_rw.check([X, W, u], out, RULE, *values)
    assert scan_rw.scans(f) == []
    with pytest.raises(ValueError, match="6 elements but 7 steps"):
        f(*values[3])


def test_a_map_that_copies_a_sequence_element_needs_no_loop(scan_rw, rng):
    """A nit-sot that returns a sequence element (a gradient's loop leaves such maps) is the
    aligned sequence: backwards and with taps too."""
    X = T.matrix("X")
    out, _ = ss.scan(lambda a, b: [b, a * 2], sequences=dict(input=X, taps=[-1, 1]), go_backwards=True)
    values = [[rng.normal(size=(k, 3))] for k in (2, 3, 6)]
    f = scan_rw.check([X], out, RULE, *values)
    assert scan_rw.scans(f) == []


@pytest.mark.parametrize("map_only", [False, True])
def test_n_steps_that_may_be_negative_declines(scan_rw, rng, map_only):
    """A negative n_steps reverses the loop at run time; aligned arrays cannot follow."""
    X, W, h0, n = T.matrix("X"), T.matrix("W"), T.vector("h0"), T.lscalar("n")
    if map_only:
        out, _ = ss.scan(lambda a, W: T.dot(a, W), sequences=X, non_sequences=W, n_steps=n)
        inputs, base = [X, W, n], [rng.normal(size=(5, 3)), rng.normal(size=(3, 3))]
    else:
        out, _ = ss.scan(lambda a, h, W: T.tanh(T.dot(a, W) + h), sequences=X, outputs_info=h0,
                         non_sequences=W, n_steps=n)
        inputs, base = [X, h0, W, n], [rng.normal(size=(5, 3)), rng.normal(size=3), rng.normal(size=(3, 3))]
    f = scan_rw.check(inputs, out, RULE, *[base + [k] for k in (3, -3, 0, -5, 6)])
    node, args = scan_rw.only_scan(f)
    assert len(scan_rw.nodes(node, Dot)) == 1 and len(args.sequences) == 1
    assert not scan_rw.records(f, "push_out_seq")
    (record,) = _declined(scan_rw, f)
    assert "negative" in record.detail


# ---------------------------------------------------------------------------- until
def test_until_still_pushes_out_but_keeps_map_outputs_in_the_loop(scan_rw, rng):
    X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")

    def step(x, h, W):
        new = T.tanh(T.dot(x, W) + h)
        return [new, T.exp(x).sum() * 2], ss.until(new.sum() > 1.0)

    (H, Y), _ = ss.scan(step, sequences=X, outputs_info=[h0, None], non_sequences=W)
    values = [[rng.normal(size=(12, 3)), rng.normal(size=(3, 3)), rng.normal(size=3) - 1] for _ in range(3)]
    f = scan_rw.check([X, W, h0], [H, Y], RULE, *values)
    node, args = scan_rw.only_scan(f)
    assert args.until is not None and len(args.nit_sot) == 1  # the map output is not replaced
    assert args.nit_sot[0].inner_out in _sequence_inputs(args)  # ... but it reads the pushed array
    assert scan_rw.nodes(node, Dot) == []  # x_t @ W moved out even though the loop may stop early
    stopped = [len(f(*v)[1]) for v in values]
    assert min(stopped) < 12  # the condition did stop a loop early
    (record,) = scan_rw.records(f, "push_out_seq")
    assert "need no loop" not in record.detail


def test_until_on_a_pure_map_keeps_the_loop(scan_rw, rng):
    X, W = T.matrix("X"), T.matrix("W")

    def step(x, W):
        y = T.tanh(T.dot(x, W))
        return y, ss.until(y.sum() > 0.5)

    out, _ = ss.scan(step, sequences=X, non_sequences=W)
    values = [[rng.normal(size=(10, 3)), rng.normal(size=(3, 3))] for _ in range(4)]
    f = scan_rw.check([X, W], out, RULE, *values)
    node, args = scan_rw.only_scan(f)
    assert args.until in _sequence_inputs(args) and len(args.nit_sot) == 1
    assert any(len(f(*v)) < 10 for v in values)


def _hmm_like(until: bool):
    """``s + B[:, y_t]`` (H1's emission term): an index per step after a slice."""
    y, B, s0 = T.ivector("y"), T.matrix("B"), T.vector("s0")

    def step(y_t, s, B):
        new = T.tanh(s + B[:, y_t])
        return (new, ss.until(new.sum() > 1.5)) if until else new

    out, _ = ss.scan(step, sequences=y, outputs_info=s0, non_sequences=B)
    return [y, B, s0], out


def test_an_index_per_step_after_a_slice_moves_out_with_the_steps_axis_first(scan_rw, rng):
    """``B[:, y_t]`` for every step is ``B[:, y]`` (numpy puts the steps' axis second),
    transposed: the loop reads row t; negative indices wrap, one out of range raises."""
    from symscan.tensor.subtensor import Subtensor

    inputs, out = _hmm_like(until=False)
    values = [[np.array([0, 3, -1, 2, 2], dtype="int32"), rng.normal(size=(3, 4)), rng.normal(size=3)],
              [np.zeros(0, dtype="int32"), rng.normal(size=(3, 4)), rng.normal(size=3)]]
    f = scan_rw.check(inputs, out, RULE, *values)
    node, _ = scan_rw.only_scan(f)
    assert scan_rw.nodes(node, Subtensor) == []  # the loop reads the pushed rows
    (record,) = scan_rw.records(f, "push_out_seq")
    assert "Subtensor{:, i}" in record.detail
    for mode in ("py", "fast"):
        with pytest.raises(IndexError):
            ss.function(inputs, out, mode=mode)(np.array([0, 4], dtype="int32"), np.ones((3, 4)), np.zeros(3))


def test_under_until_an_index_per_step_stays_in_the_loop(scan_rw, rng):
    """A loop with until never reads the rows after it stops: an index out of range there is
    no error in the loop, so it must not become one over whole sequences (it did for
    ``B[y_t]`` and ``B[:, y_t]``: a result turned into an IndexError)."""
    from symscan.tensor.subtensor import Subtensor

    inputs, out = _hmm_like(until=True)
    bad_after_the_stop = [np.array([0, 1, 99], dtype="int32"), np.ones((3, 4)), np.zeros(3)]
    f = scan_rw.check(inputs, out, RULE, bad_after_the_stop, [np.array([0, 1, 2], dtype="int32"),
                                                              rng.normal(size=(3, 4)), rng.normal(size=3)])
    node, _ = scan_rw.only_scan(f)
    assert len(scan_rw.nodes(node, Subtensor)) == 1
    assert len(f(*bad_after_the_stop)) == 1  # it stopped after one step


# ---------------------------------------------------------------------------- op coverage
def test_broadcasting_a_sequence_element_against_higher_rank_non_sequences(scan_rw, rng):
    v, X, M, s0 = T.vector("v"), T.matrix("X"), T.matrix("M"), T.scalar("s0")
    A = T.tensor3("A")

    def step(a, x, m, s, M):  # scalar * matrix, vector + matrix, matrix * vector
        return s + (a * M).sum() + (x + M).max() + (m * x).sum(), a * M - x

    (S, Y), _ = ss.scan(step, sequences=[v, X, A], outputs_info=[s0, None], non_sequences=M)
    values = [[rng.normal(size=n), rng.normal(size=(n + 1, 3)), rng.normal(size=(n, 2, 3)), 0.5,
               rng.normal(size=(4, 3))] for n in (1, 5)]
    f = scan_rw.check([v, X, A, s0, M], [S, Y], RULE, *values)
    node, args = scan_rw.only_scan(f)
    assert args.nit_sot == [] and f(*values[1])[1].shape == (5, 4, 3)
    assert not set(ancestors([args.sit_sot[0].inner_out])) & _original_sequence_inputs(args)


def test_reductions_and_dimshuffles_of_sequence_elements(scan_rw, rng):
    A, h0 = T.tensor3("A"), T.matrix("h0")

    def step(a, h):
        col = a.sum(axis=1, keepdims=True)  # (2, 1)
        return h * 0.5 + col * a.T.dimshuffle(1, 0) + a.max() - a.mean(axis=0).dimshuffle("x", 0)

    out, _ = ss.scan(step, sequences=A, outputs_info=h0)
    values = [[rng.normal(size=(n, 2, 3)), rng.normal(size=(2, 3))] for n in (0, 1, 6)]
    f = scan_rw.check([A, h0], out, RULE, *values)
    node, args = scan_rw.only_scan(f)
    assert scan_rw.nodes(node, Reduce) == []
    assert scan_rw.records(f, "push_out_seq")


def test_dot_with_the_sequence_element_second(scan_rw, rng):
    """``W @ x_t`` for a vector x_t is batched as ``X @ W.T``."""
    X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")
    out, _ = ss.scan(lambda a, h, W: T.tanh(T.dot(W, a) + h), sequences=X, outputs_info=h0, non_sequences=W)
    values = [[rng.normal(size=(n, 3)), rng.normal(size=(2, 3)), rng.normal(size=2)] for n in (0, 4)]
    f = scan_rw.check([X, W, h0], out, RULE, *values)
    node, args = scan_rw.only_scan(f)
    assert scan_rw.nodes(node, Dot) == [] and len(scan_rw.nodes(f, Dot)) == 1


def test_products_without_a_batched_form_stay_and_the_rest_moves(scan_rw, rng):
    """``W @ A_t`` with a matrix A_t has no batched Dot: it stays in the loop, while
    ``A_t @ W`` next to it moves out, and the numbers do not change."""
    A, W, h0 = T.tensor3("A"), T.matrix("W"), T.matrix("h0")
    out, _ = ss.scan(lambda a, h, W: T.tanh(T.dot(W, a) + T.dot(T.exp(a), W) + h), sequences=A,
                     outputs_info=h0, non_sequences=W)
    values = [[rng.normal(size=(n, 3, 3)), rng.normal(size=(3, 3)) * 0.3, rng.normal(size=(3, 3))] for n in (2, 5)]
    f = scan_rw.check([A, W, h0], out, RULE, *values)
    node, args = scan_rw.only_scan(f)
    (inner_dot,) = scan_rw.nodes(node, Dot)
    assert inner_dot.inputs[1] in _sequence_inputs(args)  # W @ a_t
    assert len(scan_rw.nodes(f, Dot)) == 1


def test_scalar_element_dot_is_left_alone(scan_rw, rng):
    v, w = T.vector("v"), T.vector("w")
    out, _ = ss.scan(lambda a, h, w: h + T.dot(a, w), sequences=v, outputs_info=w, non_sequences=w)
    f = scan_rw.check([v, w], out, RULE, [rng.normal(size=5), rng.normal(size=3)])
    node, args = scan_rw.only_scan(f)
    assert len(scan_rw.nodes(node, Dot)) == 1 and len(args.sequences) == 1
    assert not scan_rw.records(f, "push_out_seq")


def test_loop_invariant_parts_without_a_batched_form_are_computed_once(scan_rw, rng):
    """``arange`` and ``shape`` have no batched form, but here they read no sequence element:
    they are rebuilt as they are before the loop, so the map still vanishes."""
    X, w = T.matrix("X"), T.vector("w")
    out, _ = ss.scan(lambda x, w: x * T.arange(w.shape[0], dtype="float64") + T.zeros((3,)), sequences=X,
                     non_sequences=w)
    values = [[rng.normal(size=(n, 3)), np.ones(3)] for n in (0, 1, 5)]
    f = scan_rw.check([X, w], out, RULE, *values)
    assert scan_rw.scans(f) == []
    np.testing.assert_array_equal(f(*values[2]), values[2][0] * np.arange(3.0))


def test_random_draws_stay_in_the_loop(scan_rw, rng):
    X = T.matrix("X")
    values = rng.normal(size=(4, 3))
    results = []
    for mode in ("py", "fast"):  # each graph with its own generator, seeded alike
        srng = ss.RandomStream(7)

        def step(x, srng=srng):
            return x * srng.normal(size=(3,)) + x.sum()

        out, updates = ss.scan(step, sequences=X)
        f = ss.function([X], out, updates=updates, mode=mode, rewrites=RULE if mode == "fast" else None)
        results.append(f(values))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)
    node, args = scan_rw.only_scan(f)
    assert len(scan_rw.nodes(node, type(srng.normal(size=(3,)).owner.op))) == 1
    assert len(args.sequences) == 2  # only x.sum() moved out


# ---------------------------------------------------------------------------- nested loops
def test_the_inner_loop_of_a_nested_scan_is_rewritten(scan_rw, rng):
    A, W, h0 = T.tensor3("A"), T.matrix("W"), T.vector("h0")

    def outer_step(X_t, h, W):
        H, _ = ss.scan(lambda x, hh, W: T.tanh(T.dot(x, W) + hh), sequences=X_t, outputs_info=h, non_sequences=W)
        return H[-1]

    out, _ = ss.scan(outer_step, sequences=A, outputs_info=h0, non_sequences=W)
    values = [[rng.normal(size=(n, 5, 3)), rng.normal(size=(3, 3)) * 0.5, rng.normal(size=3)] for n in (1, 4)]
    f = scan_rw.check([A, W, h0], out, RULE, *values)
    node, _ = scan_rw.only_scan(f)
    (inner_scan,) = [n for n in node.op.inner.apply_nodes if n.op is not node.op and hasattr(n.op, "info")]
    assert scan_rw.nodes(inner_scan, Dot) == []  # the inner loop no longer multiplies
    assert len(scan_rw.nodes(node, Dot)) == 1  # the outer body does it once per outer step
    (record,) = scan_rw.records(f, "push_out_seq")
    assert record.node.startswith("scan > ")


# ---------------------------------------------------------------------------- property
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(taps=st.lists(st.integers(-3, 3), min_size=1, max_size=3, unique=True), go_backwards=st.booleans(),
       extra=st.integers(0, 4), seed=st.integers(0, 2 ** 16))
def test_property_pushed_taps_match_the_reference(scan_rw, taps, go_backwards, extra, seed):
    rng = np.random.default_rng(seed)
    taps = sorted(taps)
    X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")

    def step(*args):
        *elements, h, W = args
        product = elements[0]
        for e in elements[1:]:
            product = product * e
        return T.tanh(T.dot(product, W) + 0.5 * h)

    out, _ = ss.scan(step, sequences=[dict(input=X, taps=taps)], outputs_info=h0, non_sequences=W,
                     go_backwards=go_backwards)
    span = max(max(taps), 0) - min(min(taps), 0)
    values = [rng.normal(size=(span + extra, 2)), rng.normal(size=(2, 2)), rng.normal(size=2)]
    f = scan_rw.check([X, W, h0], out, RULE, values)
    node, args = scan_rw.only_scan(f)
    assert scan_rw.nodes(node, Dot) == [] and scan_rw.records(f, "push_out_seq")


def _gated(n_in=4, n_h=3):
    """A state gated by elementwise work on its sequence rows (sigmoid of x_t), and a
    product of per-step matrices (x_t @ W)."""
    X, W, h0 = T.tensor3("X"), T.matrix("W"), T.matrix("h0")

    def step(x, h, W):
        return T.sigmoid(x) * h + T.dot(x, W)

    H, _ = ss.scan(step, sequences=X, outputs_info=h0, non_sequences=[W])
    return [X, W, h0], H


@pytest.mark.parametrize("mode", ["fast", "numba"])
def test_mode_numba_keeps_elementwise_and_matrix_products_in_the_compiled_loop(mode, scan_nodes, rng):
    """Fused into a compiled step, sigmoid(x_t) and x_t @ W cost no T-row array through memory;
    mode fast batches them over the whole sequence."""
    inputs, H = _gated()
    f = ss.function(inputs, H, mode=mode, rewrites=RULE)
    (node,) = scan_nodes(f)
    inner_ops = {type(a.owner.op).__name__ for a in ancestors(node.op.inner.outputs) if a.owner is not None}
    report = [r for r in f.rewrite_report() if r.rule == "push_out_seq"]
    if mode == "numba":
        assert {"Elemwise", "Dot"} <= inner_ops
        assert "stay in the compiled loop" in report[0].detail
    else:
        assert "Dot" not in inner_ops and "sigmoid" in report[0].detail
    values = [rng.normal(size=(5, 2, 3)), rng.normal(size=(3, 3)), rng.normal(size=(2, 3))]
    expected = ss.function(inputs, H, mode="py")(*values)
    np.testing.assert_allclose(f(*values), expected, rtol=1e-12)
