"""The view builder: what a picture shows (items, edges, loops), checked on structure."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from benchmarks import grad_workloads, workloads
from symscan.drawing.model import CROSSING, INPUT, LOOP, OP, PORT_IN, PORT_OUT, RECURRENCE, SHARED, UPDATE, View
from symscan.drawing.view import build_view, check_options
from symscan.graph.traversal import toposort
from symscan.scan.op import Scan

PLUMBING_NAMES = ("Shape", "MakeVector{int64}", "StepCount", "AfterChecks", "SumToShape", "CheckSequenceLength")


def rnn():
    X, W_in, W_h, b, h0 = T.tensor3("X"), T.matrix("W_in"), T.matrix("W_h"), T.vector("b"), T.matrix("h0")
    hs, _ = ss.scan(lambda x_t, h, W_in, W_h, b: T.tanh(T.dot(x_t, W_in) + T.dot(h, W_h) + b),
                    sequences=X, outputs_info=h0, non_sequences=[W_in, W_h, b])
    return [X, W_in, W_h, b, h0], hs


@pytest.fixture(scope="module")
def rnn_gradient():
    inputs, hs = rnn()
    return ss.function(inputs, [hs[-1]] + ss.grad((hs ** 2).sum(), inputs[1:3]))


def labels(view: View, kind: str | None = None) -> list[str]:
    return [item.label for item in view.items.values() if kind is None or item.kind == kind]


def edge_labels(view: View, head: str | None = None) -> set[str]:
    return {e.label for e in view.edges if head is None or e.head == head}


def check_invariants(view: View) -> None:
    """Edges join drawn items; items sit in open loops whose ancestors are open; labels are short."""
    for edge in view.edges:
        assert edge.tail in view.items and edge.head in view.items, edge
    for item in view.items.values():
        if item.loop is not None:
            assert view.loops[item.loop].open, item
        lines = item.label.split("\n")
        assert len(lines) <= 3 and all(len(line) <= 30 for line in lines), item.label
        if item.kind == LOOP:
            assert not view.loops[item.id].open
    for loop_id, loop in view.loops.items():
        if loop.open:
            assert all(view.loops[a].open for a in view.ancestors(loop_id))
            assert any(item.loop == loop_id for item in view.items.values())
    for edge in view.edges:
        assert len(edge.label) <= 30, edge
    ends = {e.tail for e in view.edges} | {e.head for e in view.edges}
    assert len(view.items) == 1 or all(i in ends for i in view.items), [i for i in view.items if i not in ends]


# ---------------------------------------------------------------------------- the README RNN
def test_rnn_closed_is_small_and_labels_the_loop_inputs_by_role():
    _, hs = rnn()
    view = build_view(hs)
    check_invariants(view)
    assert len(view.items) <= 10
    assert list(view.loops) == ["L1"] and not view.loops["L1"].open
    loop = view.items["L1"]
    assert loop.kind == LOOP and loop.label.startswith("scan") and "steps" in loop.label
    assert "seq 1 · sit-sot 1" in loop.label and "non-seq 3" in loop.label
    assert edge_labels(view, "L1") == {"x[t]", "h[t-1]", "W_in (non-seq)", "W_h (non-seq)", "b (non-seq)"}
    assert any(e.tail == "L1" and e.label == "h" for e in view.edges)  # the loop box lists the kinds
    assert view.direction == "LR"


def test_rnn_open_has_ports_by_role_and_a_recurrence():
    _, hs = rnn()
    view = build_view(hs, loops="open")
    check_invariants(view)
    assert view.loops["L1"].open
    ports_in = {item.label: item.id for item in view.items.values() if item.kind == PORT_IN}
    assert set(ports_in) == {"x[t]", "h[t-1]", "W_in (non-seq)", "W_h (non-seq)", "b (non-seq)"}
    ports_out = {item.label: item.id for item in view.items.values() if item.kind == PORT_OUT}
    assert set(ports_out) == {"h[t]"}
    recurrences = [(e.tail, e.head) for e in view.edges if e.style == RECURRENCE]
    assert recurrences == [(ports_out["h[t]"], ports_in["h[t-1]"])]
    crossing = {(view.items[e.tail].label, view.items[e.head].label) for e in view.edges if e.style == CROSSING}
    assert ("X", "x[t]") in crossing and ("h0", "h[t-1]") in crossing
    assert {"tanh", "dot", "+"} <= set(labels(view, OP))
    assert all(item.loop == "L1" for item in view.items.values() if item.kind in (PORT_IN, PORT_OUT))
    assert "n_steps" not in labels(view)  # the count is in the title, not a floating item
    assert view.loops["L1"].inputs[:2] == [("seq", "x[t]"), ("sit-sot", "h[t-1]")]


def test_gradient_folds_the_plumbing_and_shows_it_on_request(rnn_gradient):
    view = build_view(rnn_gradient)
    check_invariants(view)
    full = build_view(rnn_gradient, plumbing=True)
    check_invariants(full)
    assert not any(label.startswith(PLUMBING_NAMES) for label in labels(view))
    shown = [label for label in labels(full) if label.startswith(PLUMBING_NAMES)]
    assert {"Shape", "StepCount", "MakeVector"} <= {label.split("{")[0] for label in shown}
    assert len(view.items) < len(full.items) * 0.6
    badged = [item for item in view.items.values() if item.badge]
    assert badged and all(item.details["folded"] for item in badged)
    def count(folded: str) -> int:
        return sum(int(part.rsplit(" ×", 1)[1]) if " ×" in part else 1 for part in folded.split(", "))

    assert all(item.badge == f"+{count(item.details['folded'])}" for item in badged)


def test_gradient_loops_are_recognisable_and_drawn_left_to_right(rnn_gradient):
    view = build_view(rnn_gradient)
    titles = sorted(loop.title for loop in view.loops.values())
    assert titles == ["grad of scan", "scan"]
    assert view.direction == "LR" and build_view(rnn_gradient, direction="TB").direction == "TB"
    outputs = [item.label for item in view.items.values() if item.kind == "output"]
    assert outputs == ["out 0", "dcost/dW_in", "dcost/dW_h"]  # named outputs by their names


def test_ids_are_stable_between_builds_and_states(rnn_gradient):
    closed, again = build_view(rnn_gradient), build_view(rnn_gradient)
    assert list(closed.items) == list(again.items)
    assert [(e.tail, e.head, e.label) for e in closed.edges] == [(e.tail, e.head, e.label) for e in again.edges]
    opened = build_view(rnn_gradient, loops="open")
    check_invariants(opened)
    top = {i for i, item in closed.items.items() if item.kind != LOOP}
    assert top <= set(opened.items)
    assert all(opened.items[i].label == closed.items[i].label for i in top)
    assert list(opened.loops) == list(closed.loops) == ["L1", "L2"]
    one = build_view(rnn_gradient, loops=frozenset({"L2"}))
    assert one.open_loops() == {"L2"} and "L1" in one.items and "L2" not in one.items


# ---------------------------------------------------------------------------- taps, mit-sot, nested loops
def test_taps_are_ports_with_their_offsets():
    work = workloads.taps_rnn(20)
    view = build_view(work.outputs, loops="open")
    check_invariants(view)
    ports = set(labels(view, PORT_IN))
    assert {"u[t-4]", "u[t]", "x[t-3]", "x[t-1]", "y[t-1]", "W (non-seq)"} <= ports
    closed = build_view(work.outputs)
    assert "u[t-4], u[t]" in edge_labels(closed, "L1") and "x[t-3], x[t-1]" in edge_labels(closed, "L1")
    recurrences = {(view.items[e.tail].label, view.items[e.head].label) for e in view.edges if e.style == RECURRENCE}
    assert recurrences == {("x[t]", "x[t-3]"), ("x[t]", "x[t-1]"), ("y[t]", "y[t-1]")}


def test_mit_sot_and_a_constant_step_count():
    work = workloads.mit_sot(50)
    view = build_view(work.outputs, loops="open")
    check_invariants(view)
    assert {"init[t-2]", "init[t-1]"} <= set(labels(view, PORT_IN))
    assert view.loops["L1"].steps == "50 steps"


def nested():
    x = T.matrix("x")

    def row_sums(row):
        partial, _ = ss.scan(lambda v, acc: acc + v, sequences=row, outputs_info=T.constant(0.0), name="inner")
        return partial[-1]

    out, _ = ss.scan(row_sums, sequences=x, name="outer")
    return out


def test_nested_loops_open_only_inside_an_open_parent():
    out = nested()
    closed = build_view(out)
    check_invariants(closed)
    assert [(k, loop.parent) for k, loop in closed.loops.items()] == [("L1", None), ("L2", "L1")]
    assert "L1" in closed.items and "L2" not in closed.items
    assert closed.items["L1"].label.startswith("scan outer")
    inner_only = build_view(out, loops=["inner"])
    assert inner_only.open_loops() == frozenset()
    outer_only = build_view(out, loops=["outer"])
    check_invariants(outer_only)
    assert outer_only.items["L2"].loop == "L1" and not outer_only.loops["L2"].open
    both = build_view(out, loops="open")
    check_invariants(both)
    assert both.open_loops() == {"L1", "L2"}
    assert any(item.loop == "L2" and item.kind == PORT_IN for item in both.items.values())
    ports = [item for item in both.items.values() if item.loop == "L2" and item.kind == PORT_IN]
    assert any("= 0" in port.label for port in ports)  # a constant initial state, on its port


def test_a_scan_node_is_drawn_open_with_its_outer_inputs():
    _, hs = rnn()
    node = next(n for n in toposort([hs]) if isinstance(n.op, Scan))
    view = build_view(node)
    check_invariants(view)
    assert view.loops["L1"].open
    assert {"X", "h0", "W_in"} <= set(labels(view, INPUT))
    assert "x[t]" in labels(view, PORT_IN)


def test_a_step_count_the_user_gave_stays_drawn():
    view = build_view(workloads.power(10, 5).outputs)
    check_invariants(view)
    assert "n_steps" in edge_labels(view, "L1") and view.loops["L1"].steps == "k steps"
    opened = build_view(workloads.power(10, 5).outputs, loops="open")
    assert opened.items["L1/steps"].kind == PORT_IN


def test_rewrites_diff_hands_the_origin_of_every_drawn_object(rnn_gradient, monkeypatch):
    """diff.py is written elsewhere: a stand-in records what the hook hands it."""
    import sys
    import types

    seen = {}
    fake = types.ModuleType("symscan.drawing.diff")
    fake.mark = lambda view, function, origin: seen.update(view=view, function=function, origin=origin)
    monkeypatch.setitem(sys.modules, "symscan.drawing.diff", fake)
    view = build_view(rnn_gradient, rewrites="diff")
    assert seen["function"] is rnn_gradient and seen["view"] is view
    assert view.open_loops() == {"L1", "L2"}
    origin = seen["origin"]
    assert all(item_id in view.items or item_id in view.loops for item_id in origin.values())
    scans = [n for n in rnn_gradient.fgraph.toposort() if isinstance(n.op, Scan)]
    assert sorted(origin[n] for n in scans) == ["L1", "L2"]
    inner = scans[0].op.inner
    assert all(view.items[origin[v]].kind == PORT_IN for v in inner.inputs if v in origin)
    assert any(origin.get(n) == f"L1/n{i}" for i, n in enumerate(inner.toposort()))
    assert origin[rnn_gradient.fgraph.inputs[0]] == "in0"


# ---------------------------------------------------------------------------- constants, details, updates
def test_constants_are_edge_labels_not_items():
    x = T.vector("x")
    y = T.exp(x * 2.5 + 1)
    view = build_view(y)
    assert labels(view, OP) == ["*", "+", "exp"]
    assert {"2.5", "1"} <= {e.label for e in view.edges}
    assert len(view.items) == 5  # x, three ops, the output
    big = build_view(x + T.constant(list(range(12)), dtype="float64"))
    assert any(label.startswith("const float64[12]") for label in labels(big) + list(edge_labels(big)))


def test_details_give_type_shape_line_and_op():
    x = T.matrix("x")
    y = T.tanh(x)  # this line is the one the hover shows
    view = build_view(y)
    item = next(item for item in view.items.values() if item.kind == OP)
    assert list(item.details) == ["type", "shape", "built at", "op"]
    assert item.details["type"] == "float64 matrix" and item.details["shape"] == "(?, ?)"
    assert item.details["built at"].startswith("test_view.py:")
    assert item.details["built at"].endswith("y = T.tanh(x)  # this line is the one the hover shows")
    assert "Elemwise" in item.search


def test_function_updates_are_update_items():
    W = ss.shared(np.array([1.0, 2.0]), name="W")
    x = T.vector("x")
    f = ss.function([x], (W * x).sum(), updates=[(W, W * 0.5)])
    view = build_view(f)
    check_invariants(view)
    assert [item.label for item in view.items.values() if item.kind == UPDATE] == ["W ←"]
    assert any(item.kind == SHARED and item.label == "W" for item in view.items.values())


# ---------------------------------------------------------------------------- errors
def test_errors_name_the_argument_and_the_fix():
    _, hs = rnn()
    with pytest.raises(TypeError, match="variable, a list of variables, a compiled function.*got int"):
        check_options(3, loops="closed", plumbing=False, rewrites=None, direction=None)
    with pytest.raises(ValueError, match="loops.*'nope'.*L1"):
        build_view(hs, loops=["nope"])
    with pytest.raises(ValueError, match="loops must be"):
        build_view(hs, loops="half")
    with pytest.raises(ValueError, match="rewrites must be None or 'diff'"):
        build_view(hs, rewrites="all")
    with pytest.raises(ValueError, match="compiled function"):
        build_view(hs, rewrites="diff")
    with pytest.raises(ValueError, match="direction must be 'LR'"):
        build_view(hs, direction="up")


# ---------------------------------------------------------------------------- every workload
@pytest.mark.parametrize("work", workloads.all_workloads(quick=True), ids=lambda w: w.name)
def test_every_workload_builds_a_sound_view(work):
    for loops in ("closed", "open"):
        view = build_view(work.outputs, loops=loops)
        check_invariants(view)
        assert len(view.loops) >= 1
        assert not any(label.startswith(PLUMBING_NAMES) for label in labels(view))


@pytest.mark.parametrize("work", grad_workloads.all_workloads(quick=True), ids=lambda w: w.name)
def test_every_gradient_workload_builds_a_sound_view(work):
    f = ss.function(work.inputs, work.outputs)
    for loops in ("closed", "open"):
        view = build_view(f, loops=loops)
        check_invariants(view)
        assert not any(label.startswith(PLUMBING_NAMES) for label in labels(view))
    unoptimised = build_view(work.outputs, loops="open", plumbing=True)
    check_invariants(unoptimised)
    assert any(loop.title.startswith("grad of") for loop in unoptimised.loops.values())


# ---------------------------------------------------------------------------- Python notation, folded layout chains
def test_rnn_gradient_default_view_is_small_and_in_python_notation(rnn_gradient):
    view = build_view(rnn_gradient)
    ops = labels(view, OP)
    assert len(view.items) <= 32
    assert "[1:]" in ops and "[-1]" in ops
    assert not any(label.startswith(("Subtensor", "DimShuffle", "Reshape", "second")) for label in ops)
    assert any("[::-1]" in label for label in ops)
    assert ops.count("zeros like") >= 2
    chained = [item for item in view.items.values() if " → " in item.details.get("chain", "")]
    assert chained and all(len(item.label.split("\n")) <= 3 for item in chained)
    assert any("DimShuffle{0,2,1}" in item.details["chain"] and "Reshape{2}" in item.details["chain"]
               for item in chained)
    assert {"dcost/dW_in", "dcost/dW_h"} <= set(labels(view, "output"))
    assert not any(label.startswith("pushed dimshuffle") for label in edge_labels(view))
    assert "W_h.T (non-seq)" in edge_labels(view)
    assert all(len(label) <= 20 for label in edge_labels(view))
    check_invariants(view)


def test_plumbing_true_folds_no_chain(rnn_gradient):
    view = build_view(rnn_gradient, plumbing=True)
    ops = labels(view, OP)
    assert sum(label.startswith("Subtensor") for label in ops) >= 8
    assert any(label.startswith("DimShuffle") for label in ops) and any(label.startswith("Reshape") for label in ops)
    assert not any("chain" in item.details for item in view.items.values())


def test_constant_index_goes_into_the_label_not_the_edge():
    x = T.matrix("x")
    view = build_view([x[1:], x[-1], x[::-1], x[:, 0]])
    assert sorted(labels(view, OP)) == sorted(["[1:]", "[-1]", "[::-1]", "[:, 0]"])
    assert edge_labels(view) <= {""}


def test_drawn_index_is_a_question_mark_and_an_input():
    x, i = T.vector("x"), T.iscalar("i")
    view = build_view(x[i] * 2)
    assert "[?]" in labels(view, OP)
    index_item = next(item.id for item in view.items.values() if item.label == "i")
    assert any(e.tail == index_item for e in view.edges)


def test_inc_and_set_subtensor_labels():
    x, y = T.vector("x"), T.scalar("y")
    assert "[0] +=" in labels(build_view(T.inc_subtensor(x[0], y)), OP)
    assert "[0] =" in labels(build_view(T.set_subtensor(x[0], y)), OP)


def test_layout_chain_folds_only_single_reader_values():
    x = T.tensor3("x")
    chained = x[::-1].dimshuffle(0, 2, 1).dimshuffle(1, 0, 2)
    view = build_view(chained.sum())
    ops = labels(view, OP)
    assert len(ops) == 2 and "[::-1] · T(0,2,1)\nT(1,0,2)" in ops
    shared_middle = x[::-1]
    view = build_view([shared_middle.dimshuffle(0, 2, 1), shared_middle * 2])
    assert "[::-1]" in labels(view, OP) and "T(0,2,1)" in labels(view, OP)
    assert ".T" in labels(build_view(T.matrix("m").T), OP)
    assert "expand dims" in labels(build_view(T.vector("v").dimshuffle("x", 0)), OP)


def test_unnamed_loop_inputs_take_the_step_function_parameter_names():
    """A loop over unnamed expressions is labelled by what fn calls them (suffixes like _t,
    _tm1, _prev dropped: the port adds the time index); a named outer value keeps its name."""
    y, T_mat, a0, P0 = T.matrix("y"), T.matrix(), T.vector(), T.matrix()

    def step(y_t, a_prev, P, transition):
        return T.dot(transition, a_prev) + y_t.sum(), T.dot(transition, P)

    (a_s, _), _ = ss.scan(step, sequences=y, outputs_info=[a0 * 1, P0 * 1], non_sequences=[T_mat * 2])
    ports = [i.label for i in ss.draw(a_s, loops="open").view().items.values() if i.kind in ("port_in", "port_out")]
    assert ports == ["y[t]", "a[t-1]", "P[t-1]", "transition (non-seq)", "a[t]", "P[t]"]


def test_step_function_parameters_of_a_lambda_with_defaults_and_star_args():
    """Only fn's leading positional parameters name inputs; *args leaves the rest as before."""
    x = T.vector("x")
    s0 = T.scalar()
    sums, _ = ss.scan(lambda *args: args[0] + args[1], sequences=x, outputs_info=s0 * 1)
    ports = [i.label for i in ss.draw(sums, loops="open").view().items.values() if i.kind == "port_in"]
    assert ports[0] == "x[t]" and "args" not in " ".join(ports)


def test_loops_given_as_a_generator_are_read_once_and_kept():
    X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")
    hs, _ = ss.scan(lambda x, h, W: T.tanh(x + T.dot(h, W)), sequences=X, outputs_info=h0, non_sequences=W,
                    name="rnn")
    assert build_view(hs, loops=(name for name in ["rnn"])).open_loops() == {"L1"}
    drawing = ss.draw(hs, loops=(name for name in ["rnn"]))
    assert drawing.view().open_loops() == drawing.view().open_loops() == {"L1"}


def test_one_folded_value_keeps_one_name_in_an_index_label():
    from symscan.drawing.view import _distinct

    a, b = T.scalar("a"), T.scalar("b")
    assert _distinct([(a, "n"), (b, "n"), (b, "n"), (a, "n")]) == ["n", "m", "m", "n"]
