"""Issue 24's geometry checks on laid-out pictures: no edge through a box other than its ends,
no two labels overlapping, every item inside its loop's box (nested loops inside their parent's).
The checks live in tests/support/drawing_checks.py so other tests reuse them."""

from __future__ import annotations

import pytest
from drawing_checks import (
    assert_readable,
    edges_through_boxes,
    nested_view,
    outside_their_loop,
    overlapping_labels,
    rnn_view,
    synthetic_view,
)

import symscan as ss
import symscan.tensor as T
from benchmarks import grad_workloads, workloads
from symscan.drawing.geometry import Box, PlacedEdge
from symscan.drawing.layout import lay_out
from symscan.drawing.model import Edge
from symscan.drawing.view import build_view

STATES = ("closed", "open")


# ---------------------------------------------------------------- the checks can fail
def test_the_checks_catch_an_edge_through_a_box_overlapping_labels_and_a_stray_item():
    layout = lay_out(rnn_view())
    a, b = layout.items["x"].box, layout.items["out"].box
    layout.edges.append(PlacedEdge(Edge("x", "out"), [a.center, layout.items["sub"].box.center,
                                                      layout.items["sub"].box.center, b.center], b.center))
    assert any("passes through sub" in p for p in edges_through_boxes(layout))
    layout.items["sub"].label_box = layout.items["out"].label_box
    assert any("overlaps" in p for p in overlapping_labels(layout))
    layout.items["L/add"].box = Box(0, 0, 10, 10)
    assert any("outside its loop" in p for p in outside_their_loop(layout))


# ---------------------------------------------------------------- hand-made pictures
@pytest.mark.parametrize("view", [rnn_view(True), rnn_view(False), nested_view(), synthetic_view(200)],
                         ids=["rnn-open", "rnn-closed", "nested", "synthetic-200"])
def test_hand_made_pictures_are_readable(view):
    assert_readable(lay_out(view))


# ---------------------------------------------------------------- real graphs
def readme_rnn():
    X, W_in, W_h, b, h0 = T.tensor3("X"), T.matrix("W_in"), T.matrix("W_h"), T.vector("b"), T.matrix("h0")
    hs, _ = ss.scan(lambda x_t, h, W_in, W_h, b: T.tanh(T.dot(x_t, W_in) + T.dot(h, W_h) + b),
                    sequences=X, outputs_info=h0, non_sequences=[W_in, W_h, b])
    return [X, W_in, W_h, b, h0], hs


@pytest.mark.parametrize("loops", STATES)
def test_the_readme_rnn_is_readable(loops):
    _, hs = readme_rnn()
    assert_readable(lay_out(build_view(hs, loops=loops)))


@pytest.fixture(scope="module")
def rnn_gradient():
    (X, W_in, W_h, b, h0), hs = readme_rnn()
    return ss.function([X, W_in, W_h, b, h0], [hs[-1]] + ss.grad((hs ** 2).sum(), [W_in, W_h]))


@pytest.mark.parametrize("plumbing", [False, True], ids=["folded", "plumbing"])
@pytest.mark.parametrize("loops", STATES)
def test_the_readme_rnn_gradient_is_readable(rnn_gradient, loops, plumbing):
    assert_readable(lay_out(build_view(rnn_gradient, loops=loops, plumbing=plumbing)))


@pytest.mark.parametrize("loops", STATES)
@pytest.mark.parametrize("work", workloads.all_workloads(quick=True), ids=lambda w: w.name)
def test_every_workload_is_readable(work, loops):
    assert_readable(lay_out(build_view(work.outputs, loops=loops)))


@pytest.mark.parametrize("loops", STATES)
@pytest.mark.parametrize("work", grad_workloads.all_workloads(quick=True), ids=lambda w: w.name)
def test_every_gradient_workload_is_readable(work, loops):
    f = ss.function(work.inputs, work.outputs)
    assert_readable(lay_out(build_view(f, loops=loops)))
