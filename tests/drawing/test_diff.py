"""The rewrites' diff: what ``f.fgraph`` removed, added or moved out of a loop, matched by
structure against the graph the function was built from."""

from __future__ import annotations

import pytest

import symscan as ss
import symscan.tensor as T
from benchmarks import workloads
from symscan.drawing.diff import RewriteDiff, compare
from symscan.scan.op import Scan


def _ops(nodes) -> list[str]:
    return sorted(str(n.op) for n in nodes)


def _rnn(name: str = "rnn"):
    """The README's Elman RNN."""
    X, W_in, W_h, b, h0 = T.tensor3("X"), T.matrix("W_in"), T.matrix("W_h"), T.vector("b"), T.matrix("h0")
    hs, _ = ss.scan(lambda x_t, h, W_in, W_h, b: T.tanh(T.dot(x_t, W_in) + T.dot(h, W_h) + b),
                    sequences=X, outputs_info=h0, non_sequences=[W_in, W_h, b], name=name)
    return [X, W_in, W_h, b, h0], hs


def _invariant_loop():
    """A body computing ``W @ W.T`` at every step though it depends on the non-sequence only."""
    x, h, W = T.matrix("x"), T.vector("h"), T.matrix("W")
    out, _ = ss.scan(lambda x_t, h, W: T.tanh(T.dot(T.dot(W, W.T), h) + x_t), sequences=x, outputs_info=h,
                     non_sequences=W, name="inv")
    return [x, h, W], out


def test_loop_invariant_product_is_moved_out_of_its_loop():
    inputs, out = _invariant_loop()
    diff = compare(ss.function(inputs, out))
    moved = {str(n.op): title for n, title in diff.moved.items()}
    assert moved.get("Dot") == "inv"
    for node in diff.moved:
        assert not any(node in s.op.inner.apply_nodes for s in diff.loops.values())  # outside the loop now
    (user_loop, loop), = diff.loops.items()
    assert loop is not None and user_loop is not loop  # the same loop, rewritten
    assert not diff.added and not diff.removed


def test_without_rewrites_nothing_moves():
    inputs, out = _invariant_loop()
    diff = compare(ss.function(inputs, out, mode="py"))  # mode "py" runs no rewrite
    assert not diff.moved and not diff.added and not diff.removed and not diff
    (user_loop, loop), = diff.loops.items()
    assert loop.op is user_loop.op  # the copy kept the very loop


def test_without_the_push_out_rewrites_nothing_moves():
    inputs, out = _invariant_loop()
    diff = compare(ss.function(inputs, out, rewrites=["-push_out"]))  # every rewrite but those
    assert not diff.moved


def test_no_rewrites_gives_an_empty_diff_with_every_variable_matched():
    inputs, hs = _rnn()
    f = ss.function(inputs, hs, mode="py")
    diff = compare(f)
    assert diff.summary() == "rewrites: 0 removed, 0 added, 0 moved out of loops"
    assert diff.counterpart[hs] is f.fgraph.outputs[0]
    for user, mine in zip(f.inputs, f.fgraph.inputs):
        assert diff.counterpart[user] is mine


def test_merged_duplicates_leave_one_removed():
    a = T.vector("a")
    first, second = T.exp(a), T.exp(a)
    f = ss.function([a], first + second, rewrites=["-fusion"])  # merge's work alone
    diff = compare(f)
    assert [(str(n.op), where) for n, where in diff.removed] == [("Elemwise{exp}", None)]
    (removed, _), = diff.removed
    assert removed in (first.owner, second.owner)
    kept = second if removed is first.owner else first
    assert diff.counterpart[kept].owner in f.fgraph.apply_nodes
    assert not diff.added and not diff.moved


def test_folded_constants_are_removed_and_their_reader_kept():
    a = T.vector("a")
    product = T.constant(2.0) * 3.0
    out = a + product
    f = ss.function([a], out)
    diff = compare(f)
    assert [n for n, _ in diff.removed] == [product.owner]
    assert diff.counterpart[out] is f.fgraph.outputs[0]  # the sum stays, reading the folded 6.0
    assert not diff.added


def test_readme_rnn_computes_the_input_projection_before_the_loop():
    inputs, hs = _rnn()
    f = ss.function(inputs, hs)
    diff = compare(f)
    (node, title), = diff.moved.items()
    assert str(node.op) == "Dot" and title == "rnn"
    assert [v.name for v in node.inputs] == ["X", "W_in"]  # X @ W_in over every step at once
    user_loop, loop = next(iter(diff.loops.items()))
    assert isinstance(loop.op, Scan) and loop.op.info.name == "rnn"
    assert not diff.added and not diff.removed
    assert diff.counterpart[hs] is f.fgraph.outputs[0]
    # the body's sum now reads the pushed product through a sequence: matched, not added
    assert len(loop.op.inner.apply_nodes) == len(user_loop.op.inner.apply_nodes) - 1


@pytest.mark.parametrize("build", [workloads.power, workloads.running_sum])
def test_a_loop_the_rewrites_remove_is_reported_removed(build):
    w = build(10)
    diff = compare(ss.function(w.inputs, w.outputs))
    (user_loop, loop), = diff.loops.items()
    assert loop is None
    assert (user_loop, None) in diff.removed
    assert not any(where is user_loop for _, where in diff.removed)  # the loop stands for its body
    assert diff.added and not any(isinstance(n.op, Scan) for n in diff.added)


def test_a_map_loop_vectorised_away_has_its_body_moved_out():
    w = workloads.polynomial(10)  # W2: a * v ** p over sequences becomes one elementwise product
    diff = compare(ss.function(w.inputs, w.outputs))
    assert list(diff.loops.values()) == [None]
    assert sorted(diff.moved.values()) == ["scan", "scan"]
    assert _ops(diff.moved) == ["Elemwise{mul}", "Elemwise{pow}"]


def test_merged_duplicates_inside_a_loop_are_removed_from_that_loop():
    w = workloads.while_loop(10)  # W6's body computes the same step twice
    diff = compare(ss.function(w.inputs, w.outputs))
    (user_loop, loop), = diff.loops.items()
    assert loop is not None
    assert [where for _, where in diff.removed] == [user_loop, user_loop]
    assert _ops(n for n, _ in diff.removed) == ["Elemwise{add}", "Elemwise{mul}"]


def test_compare_refuses_what_is_not_a_function():
    with pytest.raises(TypeError, match="compiled function"):
        compare(T.vector("x"))


def test_a_diff_is_false_when_nothing_changed():
    assert not RewriteDiff()


# ---------------------------------------------------------------------------- the marked picture
def _diff_view(f):
    return ss.draw(f, rewrites="diff").view()


def _check_consistent(view) -> dict[str, list]:
    """Every edge joins drawn items, removed items sit at top level or in an open loop, and the
    title's counts are the items (and loops) marked; returns the marked items by status."""
    for edge in view.edges:
        assert edge.tail in view.items and edge.head in view.items, edge
    marked = {status: [i for i in view.items.values() if i.status == status] for status in ("added", "moved")}
    marked["removed"] = [i for i in view.items.values() if i.status == "removed"]
    added_loops = [k for k, loop in view.loops.items() if loop.status == "added" and k not in view.items]
    for item in marked["removed"]:
        assert item.id.startswith("R") and item.details["rewrites"] == "removed by rewrites"
        assert item.loop is None or view.loops[item.loop].open
    for edge in view.edges:
        if edge.status == "removed":
            assert "removed" in (view.items[edge.tail].status, view.items[edge.head].status)
    assert view.title.endswith(f"rewrites: {len(marked['removed'])} removed, "
                               f"{len(marked['added']) + len(added_loops)} added, "
                               f"{len(marked['moved'])} moved out of loops")
    return marked


def test_the_rnn_picture_marks_the_product_moved_out_of_the_loop():
    inputs, hs = _rnn()
    f = ss.function(inputs, hs)
    view = _diff_view(f)
    marked = _check_consistent(view)
    (item,), = [marked["moved"]]
    assert item.label == "dot" and item.loop is None
    assert item.details["rewrites"] == "moved out of loop 'rnn'"
    assert not marked["removed"] and not marked["added"]
    assert all(loop.open for loop in view.loops.values())


def test_the_picture_of_merged_duplicates_draws_the_removed_one_with_its_edges():
    a = T.vector("a")
    view = _diff_view(ss.function([a], T.exp(a) + T.exp(a), rewrites=["-fusion"]))  # merge's work alone
    marked = _check_consistent(view)
    (removed,) = marked["removed"]
    assert (removed.id, removed.kind, removed.label, removed.loop) == ("R1", "op", "exp", None)
    tails = {e.tail for e in view.edges if e.head == "R1"}
    heads = {e.head for e in view.edges if e.tail == "R1"}
    assert tails == {"in0"}  # it read a, drawn as the first input
    assert [view.items[h].label for h in heads] == ["+"]  # and the sum read it


def test_the_picture_of_a_removed_loop_has_a_closed_removed_loop_box():
    w = workloads.power(10)
    view = _diff_view(ss.function(w.inputs, w.outputs))
    marked = _check_consistent(view)
    loops = [i for i in marked["removed"] if i.kind == "loop"]
    (box,) = loops
    assert view.loops[box.id].status == "removed" and not view.loops[box.id].open
    assert any(e.head == box.id for e in view.edges)  # fed by what the loop read
    assert marked["added"]  # the closed form A ** k replaces it
    assert not any(loop.status is None for loop in view.loops.values() if loop.id == box.id)


def test_removed_nodes_of_a_kept_loop_are_drawn_in_its_open_body():
    w = workloads.while_loop(10)
    view = _diff_view(ss.function(w.inputs, w.outputs))
    marked = _check_consistent(view)
    assert sorted(i.label for i in marked["removed"]) == ["*", "+"]
    (loop_id,) = view.loops
    assert {i.loop for i in marked["removed"]} == {loop_id}


def test_removed_item_ids_are_stable():
    w = workloads.polynomial(10)
    f = ss.function(w.inputs, w.outputs)
    first, second = _diff_view(f), _diff_view(f)
    assert [(i.id, i.label) for i in first.items.values() if i.status] == \
           [(i.id, i.label) for i in second.items.values() if i.status]
    marked = _check_consistent(first)
    assert sorted(i.label for i in marked["moved"]) == ["*", "**"]


def test_a_picture_without_rewrites_marks_nothing():
    inputs, hs = _rnn()
    view = _diff_view(ss.function(inputs, hs, mode="py"))
    assert not any(i.status for i in view.items.values()) and not any(e.status for e in view.edges)
    assert view.title.endswith("rewrites: 0 removed, 0 added, 0 moved out of loops")


def test_every_workload_s_diff_picture_is_consistent():
    for w in workloads.all_workloads(quick=True):
        f = ss.function(w.inputs, w.outputs)
        view = _diff_view(f)
        marked = _check_consistent(view)
        diff = compare(f)
        removed_loops = [node for node, after in diff.loops.items() if after is None]
        assert len([i for i in marked["removed"] if i.kind == "loop"]) == len(removed_loops), w.name
