"""The layout (graphviz dot through pygraphviz or the PATH binary) and the static renderers."""

from __future__ import annotations

import math
import shutil
import xml.etree.ElementTree as ET

import pytest
from drawing_checks import assert_readable, nested_view, outside_their_loop, rnn_view, synthetic_view

from symscan.drawing import engine as engines
from symscan.drawing.layout import lay_out, to_dot
from symscan.drawing.model import Edge, Item, Loop
from symscan.drawing.png import PNG_SIGNATURE, render_png
from symscan.drawing.svg import render_svg

SVG = "{http://www.w3.org/2000/svg}"
needs_binary = pytest.mark.skipif(shutil.which("dot") is None, reason="no graphviz dot binary on the PATH")


def _gap(point, box) -> float:
    """Distance from ``point`` to ``box`` (0 inside)."""
    dx = max(box.x - point[0], 0.0, point[0] - box.right)
    dy = max(box.y - point[1], 0.0, point[1] - box.bottom)
    return math.hypot(dx, dy)


# ---------------------------------------------------------------- engine selection
def test_pygraphviz_is_preferred_when_installed():
    pytest.importorskip("pygraphviz")
    engine = engines.find_engine()
    assert engine.kind == engines.PYGRAPHVIZ and "pygraphviz" in engine.name
    assert lay_out(rnn_view()).engine == engine.name


@needs_binary
def test_the_dot_binary_is_used_without_pygraphviz(monkeypatch):
    monkeypatch.setattr(engines, "_import_pygraphviz", lambda: None)
    engine = engines.find_engine()
    assert engine.kind == engines.BINARY and engine.name.startswith("graphviz dot ")
    layout = lay_out(rnn_view())
    assert layout.engine == engine.name
    assert_readable(layout)


@needs_binary
def test_the_binary_can_be_asked_for():
    assert engines.find_engine(prefer=engines.BINARY).kind == engines.BINARY


def test_without_any_engine_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setattr(engines, "_import_pygraphviz", lambda: None)
    monkeypatch.setattr(engines, "_which_dot", lambda: None)
    with pytest.raises(ImportError, match=r'pip install "symscan\[draw\]"'):
        lay_out(rnn_view())


def test_an_unknown_engine_is_refused_by_name():
    with pytest.raises(ValueError, match="engine: expected"):
        engines.find_engine(prefer="neato")


@pytest.mark.parametrize("kind", [engines.PYGRAPHVIZ, engines.BINARY])
def test_a_dot_failure_is_a_runtime_error_with_graphviz_words(kind):
    engine = engines.find_engine(prefer=kind)
    if engine.kind != kind:
        pytest.skip(f"no {kind} engine here")
    with pytest.raises(RuntimeError, match=r"could not lay the picture out .*syntax error.*ss\.to_dot"):
        engines.run_dot("digraph { a -> }", engine=engine)


def test_graphviz_warnings_stay_off_stderr(capfd):
    lay_out(rnn_view())
    captured = capfd.readouterr()
    assert "Warning" not in captured.err and "Fontconfig" not in captured.err


# ---------------------------------------------------------------- coordinates
@pytest.mark.parametrize("open_loop", [True, False])
def test_splines_run_from_tail_box_to_head_box(open_loop):
    layout = lay_out(rnn_view(open_loop))
    assert len(layout.edges) == len(layout.view.edges)
    for placed in layout.edges:
        tail, head = layout.items[placed.edge.tail].box, layout.items[placed.edge.head].box
        assert len(placed.points) >= 4 and (len(placed.points) - 1) % 3 == 0
        assert _gap(placed.points[0], tail) < 3, (placed.edge, placed.points[0], tail)
        assert placed.end is not None and _gap(placed.end, head) < 3, (placed.edge, placed.end, head)
        assert not tail.holds_point(*placed.points[0], inset=3)


def test_boxes_have_the_sizes_of_their_labels_and_lie_in_the_picture():
    layout = lay_out(rnn_view())
    for placed in layout.items.values():
        assert placed.box.contains(placed.label_box)
        assert 0 <= placed.box.x and placed.box.right <= layout.width
        assert 0 <= placed.box.y and placed.box.bottom <= layout.height


def test_left_to_right_by_default_top_to_bottom_on_request():
    view = rnn_view(open_loop=False)
    layout = lay_out(view)
    assert layout.items["x"].box.right < layout.items["L"].box.x < layout.items["out"].box.x
    view.direction = "TB"
    layout = lay_out(view)
    assert layout.items["x"].box.bottom < layout.items["L"].box.y < layout.items["out"].box.y


def test_labelled_edges_get_a_label_box_beside_no_box():
    layout = lay_out(rnn_view(open_loop=False))
    labelled = [p for p in layout.edges if p.edge.label]
    assert labelled and all(p.label_box is not None for p in labelled)
    assert all(p.label_box is None for p in layout.edges if not p.edge.label)


# ---------------------------------------------------------------- clusters
def test_open_loops_hold_their_items_and_nested_loops():
    layout = lay_out(nested_view())
    assert set(layout.loops) == {"A", "B"}
    assert layout.loops["A"].box.contains(layout.loops["B"].box)
    assert layout.loops["B"].box.contains(layout.items["B/op"].box)
    assert not layout.loops["B"].box.contains(layout.items["A/op"].box)
    assert outside_their_loop(layout) == []
    assert_readable(layout)


def test_a_closed_loop_is_an_item_not_a_box():
    layout = lay_out(rnn_view(open_loop=False))
    assert layout.loops == {} and "L" in layout.items


def test_dot_text_nests_clusters_and_reverses_recurrences():
    dot = to_dot(nested_view())
    assert dot.count("subgraph cluster_") == 2
    assert dot.index("subgraph cluster_0") < dot.index("subgraph cluster_1") < dot.rindex("}")
    recurrence = to_dot(rnn_view())
    assert "dir=back" in recurrence and "label=<" in recurrence


def test_the_same_view_lays_out_the_same_way():
    first, second = lay_out(rnn_view()), lay_out(rnn_view())
    assert to_dot(rnn_view()) == to_dot(rnn_view())
    assert {k: p.box for k, p in first.items.items()} == {k: p.box for k, p in second.items.items()}
    assert [p.points for p in first.edges] == [p.points for p in second.edges]


# ---------------------------------------------------------------- renderers
@pytest.mark.parametrize("view", [rnn_view(True), rnn_view(False), nested_view()], ids=["open", "closed", "nested"])
def test_svg_is_well_formed_with_one_group_per_item_and_edge(view):
    layout = lay_out(view)
    root = ET.fromstring(render_svg(layout))
    assert root.tag == SVG + "svg" and root.get("viewBox").startswith("0 0 ")
    groups = root.iter(SVG + "g")
    by_class: dict[str, list] = {}
    for group in groups:
        by_class.setdefault(group.get("class", "").split(" ")[0], []).append(group)
    assert sorted(g.get("data-id") for g in by_class["item"]) == sorted(view.items)
    assert [(g.get("data-tail"), g.get("data-head")) for g in by_class["edge"]] == [(e.tail, e.head)
                                                                                   for e in view.edges]
    assert sorted(g.get("data-loop-id") for g in by_class.get("loop", [])) == sorted(layout.loops)
    assert all(g.find(SVG + "title") is not None for g in by_class["item"])


def test_svg_escapes_text_and_marks_statuses():
    view = rnn_view(open_loop=False)
    view.add(Item("weird", "op", 'a<b & "c"', details={"type": "<T>"}))
    root = ET.fromstring(render_svg(lay_out(view)))
    texts = ["".join(t.itertext()) for t in root.iter(SVG + "text")]
    assert 'a<b & "c"' in texts
    assert any(g.get("class") == "legend" for g in root.iter(SVG + "g"))  # 'out' is added
    closed = [g for g in root.iter(SVG + "g") if g.get("data-id") == "L"]
    assert closed[0].get("data-loop-id") == "L" and "kind-loop" in closed[0].get("class")


def test_markup_quotes_backslashes_and_control_characters_in_any_text_reach_every_format():
    nasty = 'a<b>&c"d\\N]}\x01</script>'
    view = rnn_view(open_loop=True)
    view.loops["<L>"] = Loop("<L>", nasty, nasty, open=True)
    view.add(Item(nasty, "op", nasty + "\n" + nasty, badge=nasty, loop="<L>"))
    view.edges.append(Edge("x", nasty, label=nasty))
    layout = lay_out(view)  # graphviz would write JSON that does not parse if \x01 reached it
    root = ET.fromstring(render_svg(layout))
    texts = ["".join(t.itertext()) for t in root.iter(SVG + "text")]
    assert 'a<b>&c"d\\N]}</script>' in texts
    assert render_png(layout).startswith(PNG_SIGNATURE)


def test_png_is_a_png():
    data = render_png(lay_out(rnn_view()))
    assert data.startswith(PNG_SIGNATURE) and len(data) > 1000


# ---------------------------------------------------------------- a large picture (its speed: benchmarks/drawing.py)
def test_500_items_lay_out_readably():
    view = synthetic_view(500)
    assert len(view.items) == 500 and len(view.loops) == 2
    layout = lay_out(view)
    assert_readable(layout)
    assert render_svg(layout).count("<text") >= 500
