"""The interactive page without a browser: self-contained, every state embedded, notebooks get
an iframe, names are escaped."""

import html
import json
import re

import pytest

import symscan as ss
import symscan.tensor as T
from symscan.drawing.html import ALL_SUBSETS_UP_TO, LARGE_PICTURE_ITEMS, render_inline, render_page, state_sets
from symscan.drawing.model import Loop
from symscan.scan import Scan


@pytest.fixture(scope="module")
def rnn():
    """The README's Elman RNN: its output sequence and the compiled gradient through it."""
    X, W_in, W_h, b, h0 = T.tensor3("X"), T.matrix("W_in"), T.matrix("W_h"), T.vector("b"), T.matrix("h0")
    hs, _ = ss.scan(lambda x_t, h, W_in, W_h, b: T.tanh(T.dot(x_t, W_in) + T.dot(h, W_h) + b),
                    sequences=X, outputs_info=h0, non_sequences=[W_in, W_h, b])
    grad = ss.function([X, W_in, W_h, b, h0], [hs[-1]] + ss.grad((hs**2).sum(), [W_in, W_h]))
    return hs, grad


@pytest.fixture(scope="module")
def gradient_page(rnn):
    drawing = ss.draw(rnn[1])
    return drawing, drawing.html()


def page_data(page: str) -> dict:
    match = re.search(r'<script type="application/json" id="ss-data">(.*?)</script>', page, re.S)
    assert match, "the page embeds its states as JSON"
    return json.loads(match.group(1))


def test_the_page_needs_no_network(gradient_page):
    page = gradient_page[1]
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)
    assert not re.search(r"url\(\s*[\"']?\s*(?:https?:)?//|@import", page, re.I)
    scripts = re.findall(r"<script\b[^>]*>", page, re.I)
    assert len(scripts) == 2 and not any("src" in tag for tag in scripts), scripts
    assert "function toggleLoop" in page and ".ss-viewport" in page  # the script and style are inlined
    assert page.count("</script>") == 2  # nothing embedded can close a script early


def test_every_state_is_embedded_with_its_own_picture(gradient_page):
    drawing, page = gradient_page
    data = page_data(page)
    loops = drawing.layout.view.loops
    assert 2 <= len(loops) <= ALL_SUBSETS_UP_TO
    expected = state_sets(loops, drawing.layout.view.open_loops())
    assert sorted(tuple(s["open"]) for s in data["states"]) == sorted(tuple(sorted(s)) for s in expected)
    assert len(data["states"]) == 2 ** len(loops)  # the RNN gradient's loops are side by side, not nested
    for state in data["states"]:
        view = drawing.view(open_loops=state["open"])
        assert state["svg"].startswith("<svg") and state["svg"].rstrip().endswith("</svg>")
        for item_id in view.items:
            assert f'data-id="{html.escape(item_id)}"' in state["svg"], (state["open"], item_id)
        for loop_id in state["open"]:
            assert re.search(rf'<g class="loop\b[^>]*data-loop-id="{loop_id}"', state["svg"]), loop_id
    assert data["initial"] == [] and set(data["loops"]) == set(loops)
    assert all(item["details"] for item in data["items"].values() if item["kind"] == "op")


def test_the_first_state_is_the_drawings_loops_option(rnn):
    drawing = ss.draw(rnn[1], loops="open")
    data = page_data(drawing.html())
    assert data["initial"] == sorted(drawing.layout.view.loops)


def _loops(parents: dict) -> dict:
    return {loop_id: Loop(loop_id, loop_id, "n", parent=parent) for loop_id, parent in parents.items()}


def test_states_are_every_valid_subset_of_a_few_loops():
    # A holds B; C is beside A: a loop is open only with the loops around it open
    states = state_sets(_loops({"A": None, "B": "A", "C": None}))
    assert states == [frozenset(), {"A"}, {"C"}, {"A", "B"}, {"A", "C"}, {"A", "B", "C"}]


def test_states_of_many_loops_open_one_branch_at_a_time():
    loops = _loops({"A": None, "B": "A", "C": "B", "D": None, "E": None})
    states = state_sets(loops, initial=frozenset({"D", "E"}))
    assert states == [frozenset(), {"A"}, {"D"}, {"E"}, {"A", "B"}, {"D", "E"}, {"A", "B", "C"},
                      {"A", "B", "C", "D", "E"}]


def test_a_large_picture_keeps_all_closed_and_all_open_only():
    loops = _loops({"A": None, "B": "A", "C": None})
    assert state_sets(loops, large=True) == [frozenset(), {"A", "B", "C"}]
    assert state_sets(loops, initial=frozenset({"C"}), large=True) == [frozenset(), {"C"}, {"A", "B", "C"}]


def test_a_page_of_a_500_node_gradient_lays_out_three_states():
    """The stacked RNN gradient of benchmarks/drawing.py (8 loops, 324 items open): more items
    than LARGE_PICTURE_ITEMS, so the page holds all closed and all open (and no per-loop state)."""
    from benchmarks.drawing import stacked_rnn_gradient

    drawing = ss.draw(stacked_rnn_gradient())
    assert len(drawing.view(open_loops=drawing.view().loops).items) > LARGE_PICTURE_ITEMS
    data = page_data(drawing.html())
    assert [len(s["open"]) for s in data["states"]] == [0, len(data["loops"])] and len(data["loops"]) == 8


@pytest.mark.parametrize("what", ["function", "variable", "scan node"])
def test_notebooks_show_an_iframe(rnn, what):
    hs, grad = rnn
    obj = {"function": grad, "variable": hs,
           "scan node": next(n for n in grad.fgraph.apply_nodes if isinstance(n.op, Scan))}[what]
    shown = obj._repr_html_()
    assert shown.startswith("<iframe") and shown.endswith("></iframe>")
    assert "<script" not in shown and "<svg" not in shown  # all of it inside the escaped srcdoc
    srcdoc = html.unescape(re.search(r'srcdoc="([^"]*)"', shown).group(1))
    assert srcdoc.startswith("<!DOCTYPE html>") and page_data(srcdoc)["states"]
    height = int(re.search(r"height: (\d+)px", shown).group(1))
    assert 180 <= height <= 640 and "width: 100%" in shown


def test_names_are_escaped_everywhere():
    name = '<b>&"'
    x = T.vector(name)
    drawing = ss.draw(x * 2)
    page = drawing.html()
    assert "<b>" not in page and '<b>&"' not in page
    assert any(item["label"] == name or name in item["search"] for item in page_data(page)["items"].values())
    svg = page_data(page)["states"][0]["svg"]
    assert "&lt;b&gt;&amp;&quot;" in svg
    inline = render_inline(drawing)
    assert "<b>" not in inline
    assert html.unescape(re.search(r'srcdoc="([^"]*)"', inline).group(1)) == render_page(drawing)


@pytest.mark.parametrize("suffix", [".svg", ".png", ".html", ".dot"])
def test_draw_writes_the_format_its_path_names(rnn, tmp_path, suffix):
    path = tmp_path / f"rnn{suffix}"
    assert ss.draw(rnn[0], path) == str(path)
    data = path.read_bytes()
    assert {".svg": b"<svg", ".png": b"\x89PNG", ".html": b"<!DOCTYPE html>", ".dot": b"digraph"}[suffix] in data[:200]


@pytest.mark.parametrize("path, error, words", [
    ("graph.jpg", ValueError, r"suffix must be one of \.svg, \.png, \.html, \.dot, got \.jpg; name the file e\.g\. "
                              r"graph\.svg"),
    ("graph", ValueError, "got none"),
    (5, TypeError, r"path must be a file name .* got int"),
])
def test_a_bad_path_is_refused_with_what_would_do(rnn, tmp_path, path, error, words):
    with pytest.raises(error, match=words):
        ss.draw(rnn[0], path)


def test_a_diff_page_keeps_a_loop_the_rewrites_removed_closed(tmp_path):
    """W3's running sum becomes a cumulative sum: the diff draws the removed loop as a closed
    box, and the page offers no state that opens it (there is no body left to open)."""
    x = T.vector("x")
    total, _ = ss.scan(lambda v, s: s + v, sequences=x, outputs_info=T.constant(0.0), name="total")
    f = ss.function([x], total)
    drawing = ss.draw(f, rewrites="diff")
    removed = [k for k, loop in drawing.view().loops.items() if loop.status == "removed"]
    assert removed, "the rewrites should have removed the running-sum loop"
    path = ss.draw(f, str(tmp_path / "diff.html"), rewrites="diff")
    page = (tmp_path / "diff.html").read_text()
    assert path.endswith("diff.html") and all(f'"{k}"' in page for k in removed)
