"""Sequences of different lengths read at different taps, in mode "onnxruntime": the loop runs
the count of the sequence that allows fewest steps (its length minus its taps' span, also when
a rewrite dropped that sequence because fn does not read it), bounded by n_steps when given;
through ONNX Scan and Loop, forwards and backwards, with no step at all, with n_steps constant
(smaller or too large), symbolic or negative, and with lengths known statically or not. Each
case is compared with mode "py" and with a numpy loop, in values, shapes and shared updates."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.scan.args import taps_span


def run_both(inputs, outputs, values, updates=None, shared=()) -> list:
    """[(outputs, shared values after the call)] of modes "onnxruntime" and "py"; each mode starts
    from the shared variables' current values. A ValueError is returned in place of the pair."""
    start = [var.get_value() for var in shared]
    results = []
    for mode in ("onnxruntime", "py"):
        for var, value in zip(shared, start):
            var.set_value(value)
        f = ss.function(inputs, outputs, updates=updates, mode=mode)
        try:
            results.append((f(*values), [var.get_value() for var in shared]))
        except ValueError as err:
            results.append(err)
    return results


def assert_same(got, expected) -> None:
    """Same arrays in value, shape and dtype (lists element by element)."""
    got, expected = (got, expected) if isinstance(expected, list) else ([got], [expected])
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        g, e = np.asarray(g), np.asarray(e)
        assert (g.shape, g.dtype) == (e.shape, e.dtype)
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)


def nodes_of(graph) -> list:
    """The nodes of an ONNX graph and of its bodies (If branches, Loop and Scan bodies)."""
    found, graphs = [], [graph]
    while graphs:
        for node in graphs.pop().node:
            found.append(node)
            graphs += [a.g for a in node.attribute if a.type == a.GRAPH]
    return found


def exported_loops(inputs, outputs, updates=None) -> list[str]:
    """The Scan and Loop nodes of the model mode "onnxruntime" runs."""
    model = ss.onnx.export(ss.function(inputs, outputs, updates=updates, mode="onnxruntime"))
    return [node.op_type for node in nodes_of(model.graph) if node.op_type in ("Scan", "Loop")]


# ---------------------------------------------------------------------------- the two programs found
@pytest.mark.parametrize("rows", [1, 2, 3, 4, 5])
def test_outer_of_a_sequence_next_to_an_unread_sequence_at_tap_2(rows):
    """x0 (tap 2, unread: a rewrite drops it) allows rows - 2 steps, x1 two: the Scan reads x1
    sliced to the smaller count, not whole (3 rows of x0 ran 2 steps instead of 1)."""
    x0, x1 = T.tensor("float64", shape=(None, None, None)), T.tensor("float64", shape=(2, 2))
    out, _ = ss.scan(lambda a_tp2, b_t: T.outer(b_t, b_t), sequences=[dict(input=x0, taps=[2]), x1])
    a, b = np.random.default_rng(rows).normal(size=(rows, 2, 2)), np.array([[1.0, 2.0], [3.0, -1.0]])
    onnx_result, py_result = run_both([x0, x1], out, [a, b])
    if rows < 2:  # shorter than its taps' span: scan's error in both modes
        assert isinstance(onnx_result, ValueError) and isinstance(py_result, ValueError)
        return
    steps = min(rows - 2, 2)
    expected = np.array([np.outer(b[t], b[t]) for t in range(steps)]).reshape(steps, 2, 2)
    assert_same(py_result[0], expected)
    assert_same(onnx_result[0], expected)


@pytest.mark.parametrize("x2,steps", [([-0.8, 0.1], 1), ([-0.8, 0.1, 0.5], 2), ([-0.8], 0)])
def test_shared_update_from_a_sequence_next_to_an_unread_one_at_tap_1(x2, steps):
    """x2 (tap 1, unread) allows len(x2) - 1 steps: the shared update is 3 * x0[steps - 1],
    not that of len(x0) steps (1.8 per element, not 2.4)."""
    x0, x2_var = T.vector("x0"), T.vector("x2")
    sh = ss.shared(np.zeros(3), name="sh")
    _, updates = ss.scan(lambda a, b_tp1: {sh: T.alloc(a, 3, 3).sum(axis=1)},
                         sequences=[x0, dict(input=x2_var, taps=[1])])
    values = [np.array([0.6, 0.8]), np.array(x2)]
    onnx_result, py_result = run_both([x0, x2_var], [], values, updates=updates, shared=[sh])
    expected = np.full(3, 3 * values[0][steps - 1]) if steps else np.zeros(3)
    assert_same(py_result[1], [expected])
    assert_same(onnx_result[1], [expected])


# ---------------------------------------------------------------------------- variants against numpy
def numpy_loop(sequences: list, taps: list, n_steps: int | None, go_backwards: bool, h0: np.ndarray,
               read: list[bool]):
    """(states, outer products per step, sum of the states) of ``step`` below, as API.md
    describes the loop; None where scan raises (a sequence too short)."""
    spans = [taps_span(t) for t in taps]
    if n_steps is None:
        if any(len(x) < s for x, s in zip(sequences, spans)):
            return None
        steps, backwards = min(len(x) - s for x, s in zip(sequences, spans)), go_backwards
    else:
        steps, backwards = abs(n_steps), go_backwards != (n_steps < 0)
        if any(len(x) < steps + s for x, s in zip(sequences, spans)):
            return None
    h, states = h0, []
    for t in range(steps):
        elements = []
        for x, seq_taps, s, is_read in zip(sequences, taps, spans, read):
            base = len(x) - s - 1 - t if backwards else t
            elements += [x[tap - min(min(seq_taps), 0) + base] for tap in seq_taps] if is_read else []
        h = np.tanh(0.5 * h + sum(h * e * (i + 1) for i, e in enumerate(elements)))
        states.append(h)
    states = np.array(states).reshape(steps, len(h0))
    return states, np.einsum("ti,tj->tij", states, states), states.sum(axis=0)


def step_reading(taps: list, read: list[bool], sh):
    """fn: a state (so that no rewrite pushes the taps out of the loop) times the taps it reads,
    an outer product per step, and a shared sum of the states."""

    def step(*args):
        args = list(args)
        groups = [[args.pop(0) for _ in seq_taps] for seq_taps in taps]
        (h,) = args
        elements = [e for group, is_read in zip(groups, read) if is_read for e in group]
        new = T.tanh(0.5 * h + sum((h * e * (i + 1) for i, e in enumerate(elements)), T.zeros_like(h)))
        return [new, T.outer(new, new)], {sh: sh + new}

    return step


TAPS = [((0,), (2,)), ((0,), (-1,)), ((-2,), (1,)), ((-1, 1), (0,)), ((-2, 0, 1), (-1, 2)), ((1,), (0, 3))]
READ = {"both": [True, True], "first": [True, False], "second": [False, True]}
N_STEPS = {"from sequences": None, "smaller": 1, "too large": 9, "symbolic": "k"}
STEP_COUNTS = [("from sequences", False), ("from sequences", True), ("smaller", False), ("too large", False),
               ("too large", True), ("symbolic", False)]


@pytest.mark.parametrize("n_steps,static", STEP_COUNTS,
                         ids=[f"{n}, {'static' if static else 'unknown'} lengths" for n, static in STEP_COUNTS])
@pytest.mark.parametrize("go_backwards", [False, True], ids=["forwards", "backwards"])
@pytest.mark.parametrize("read", list(READ))
@pytest.mark.parametrize("lengths", [(5, 7), (7, 4)], ids=["5 and 7 rows", "7 and 4 rows"])
@pytest.mark.parametrize("taps", TAPS, ids=str)
def test_unequal_lengths_at_mixed_taps(taps, lengths, read, go_backwards, n_steps, static):
    """Two sequences (either may set the count) with the taps of both or of one read; a symbolic
    n_steps runs 2, -1 (backwards), 0 and 8 (too large) steps. Static lengths too short for a
    constant n_steps fail in scan() already."""
    xs = [T.tensor("float64", shape=(n if static else None, 2), name=f"x{i}") for i, n in enumerate(lengths)]
    h0, k = T.tensor("float64", shape=(2 if static else None,), name="h0"), T.lscalar("k")
    sh = ss.shared(np.zeros(2), name="sh")
    symbolic = N_STEPS[n_steps] == "k"
    build = partial(ss.scan, step_reading(taps, READ[read], sh),
                    sequences=[dict(input=x, taps=list(t)) for x, t in zip(xs, taps)], outputs_info=[h0, None],
                    go_backwards=go_backwards, n_steps=k if symbolic else N_STEPS[n_steps])
    if static and n_steps == "too large":
        with pytest.raises(ValueError, match="pass a longer sequence or a smaller n_steps"):
            build()
        return
    (states, products), updates = build()
    rng = np.random.default_rng(sum(lengths))
    values = [rng.normal(size=(n, 2)) for n in lengths] + [np.array([0.3, -0.6])]
    for steps in ([2, -1, 0, 8] if symbolic else [N_STEPS[n_steps]]):
        sh.set_value(np.zeros(2))
        expected = numpy_loop(values[:2], list(taps), steps, go_backwards, values[2], READ[read])
        inputs, given = (xs + [h0, k], values + [np.int64(steps)]) if symbolic else (xs + [h0], values)
        onnx_result, py_result = run_both(inputs, [states, products], given, updates=updates, shared=[sh])
        if expected is None:
            assert isinstance(py_result, ValueError) and isinstance(onnx_result, ValueError)
            continue
        for result in (py_result, onnx_result):
            assert not isinstance(result, ValueError), result
            assert_same(result[0], list(expected[:2]))
            assert_same(result[1], [expected[2]])


@pytest.mark.parametrize("taps,read,kinds", [
    (((0,), (2,)), "first", ["Scan"]),
    (((2,), (0,)), "second", ["Scan"]),
    (((-1, 1), (0,)), "second", ["Scan"]),
    (((0,), (-1,)), "both", ["Loop"]),
])
def test_both_lowerings_are_covered(taps, read, kinds):
    """Which node the cases above lower to: with the other sequence dropped, a Scan over the read
    one (sliced to the step count); with taps other than 0 read, a Loop."""
    xs, h0 = [T.matrix("x0"), T.matrix("x1")], T.vector("h0")
    sh = ss.shared(np.zeros(2), name="sh")
    (states, products), updates = ss.scan(step_reading(taps, READ[read], sh),
                                          sequences=[dict(input=x, taps=list(t)) for x, t in zip(xs, taps)],
                                          outputs_info=[h0, None])
    assert exported_loops(xs + [h0], [states, products], updates) == kinds


WHOLE_OR_SLICED = [((5, 5), True, True), ((3, 5), True, True), ((5, 3), True, False), ((3, 5), False, False),
                   ((5, None), False, True)]


@pytest.mark.parametrize("go_backwards", [False, True], ids=["forwards", "backwards"])
@pytest.mark.parametrize("lengths,static,whole", WHOLE_OR_SLICED,
                         ids=[f"{n} {'static' if static else 'unknown'}" for n, static, _ in WHOLE_OR_SLICED])
def test_a_sequence_is_read_whole_only_when_its_length_is_the_count(lengths, static, whole, go_backwards):
    """x is read, y (None: absent) is not. The Scan reads x unsliced only when the step count is
    its length, by the graph (``len(x)``) or by static lengths; else the first (last, backwards)
    count rows of it."""
    x, y = (T.tensor("float64", shape=(n if static else None, 2), name=name) for n, name in zip(lengths, "xy"))
    sequences, h0 = [x, y][:len([n for n in lengths if n is not None])], T.vector("h0")
    sh = ss.shared(np.zeros(2), name="sh")
    (states, products), updates = ss.scan(step_reading([(0,)] * len(sequences), [True, False], sh),
                                          sequences=sequences, outputs_info=[h0, None], go_backwards=go_backwards)
    inputs = sequences + [h0]
    values = [np.arange(2.0 * n).reshape(n, 2) / 10 for n in lengths if n is not None] + [np.array([0.3, -0.6])]
    onnx_result, py_result = run_both(inputs, [states, products], values, updates=updates, shared=[sh])
    expected = numpy_loop(values[:-1], [(0,)] * len(sequences), None, go_backwards, values[-1], [True, False])
    for result in (py_result, onnx_result):
        assert_same(result[0], list(expected[:2]))
        assert_same(result[1], [expected[2]])
    model = ss.onnx.export(ss.function(inputs, [states, products], updates=updates, mode="onnxruntime"))
    (scan,) = [node for node in nodes_of(model.graph) if node.op_type == "Scan"]
    assert (scan.input[-1] == model.graph.input[0].name) == whole
