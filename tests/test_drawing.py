"""Pictures of graphs: the view (nodes, clusters, roles), the PNG/SVG files, DOT text, and what
notebooks show for functions and variables."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan import drawing


def _rnn():
    X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")
    hs, _ = ss.scan(lambda x_t, h, W: T.tanh(x_t + T.dot(h, W)), sequences=X, outputs_info=h0, non_sequences=W,
                    name="rnn")
    return [X, W, h0], hs


def _nested():
    M = T.matrix("M")

    def row_sums(row):
        cs, _ = ss.scan(lambda v, acc: acc + v, sequences=row, outputs_info=T.constant(0.0), name="inner")
        return cs

    out, _ = ss.scan(row_sums, sequences=M, name="outer")
    return [M], out


def test_view_has_a_cluster_per_loop_with_roles_on_the_body_inputs():
    inputs, hs = _rnn()
    view = drawing.view(ss.function(inputs, hs, mode="py"))
    assert [c.label for c in view.clusters] == ["Scan{rnn}"]
    cluster = view.clusters[0]
    labels = [view.nodes[k][0] for k in cluster.nodes]
    assert any("sequence" in label for label in labels)
    assert any("sit-sot" in label for label in labels)
    assert any(label.startswith("W\n") and "non-sequence" in label for label in labels)
    assert any(view.nodes[k][0] == "Elemwise{tanh}" for k in cluster.nodes)
    # edges cross into the loop (dashed) from the outer X, W and h0
    outer_inputs = [k for k, (label, kind, c) in view.nodes.items() if kind == "input" and c is None]
    assert {view.nodes[k][0].split("\n")[0] for k in outer_inputs} >= {"X", "W", "h0"}
    assert any(dashed and dst in cluster.nodes for src, dst, dashed in view.edges if src in outer_inputs)


def test_nested_loops_are_nested_clusters():
    inputs, out = _nested()
    view = drawing.view(ss.function(inputs, out, mode="py"))
    by_label = {c.label: c for c in view.clusters}
    assert set(by_label) == {"Scan{outer}", "Scan{inner}"}
    assert by_label["Scan{inner}"].parent is by_label["Scan{outer}"]
    positions = drawing.layout(view)
    inner_y = [positions[k][1] for k in by_label["Scan{inner}"].nodes]
    outer_only_y = [positions[k][1] for k in by_label["Scan{outer}"].nodes]
    assert min(outer_only_y) > max(inner_y)  # the inner band lies inside (below) the outer band


def test_layout_puts_every_edge_forward():
    inputs, hs = _rnn()
    view = drawing.view(ss.function(inputs, hs))
    positions = drawing.layout(view)
    assert set(positions) == set(view.nodes)
    assert all(positions[src][0] < positions[dst][0] for src, dst, _ in view.edges)


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_draw_writes_a_picture(tmp_path, suffix):
    inputs, hs = _rnn()
    path = tmp_path / f"rnn.{suffix}"
    assert drawing.draw(ss.function(inputs, hs), str(path)) == str(path)
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG") if suffix == "png" else b"<svg" in data[:500]


def test_draw_returns_a_figure_and_accepts_variables():
    import matplotlib.pyplot as plt

    inputs, hs = _rnn()
    fig = ss.draw(hs)
    assert fig.axes and fig.axes[0].texts  # labels were drawn
    plt.close(fig)
    with pytest.raises(TypeError, match="draw takes"):
        ss.draw(42)


def test_notebooks_show_pictures_of_functions_and_variables():
    inputs, hs = _rnn()
    assert ss.function(inputs, hs)._repr_png_().startswith(b"\x89PNG")
    assert (hs * 2)._repr_png_().startswith(b"\x89PNG")


def test_dot_text_has_clusters_and_edges():
    inputs, out = _nested()
    text = ss.to_dot(ss.function(inputs, out, mode="py"))
    assert text.startswith("digraph symscan {") and text.rstrip().endswith("}")
    assert text.count("subgraph cluster_") == 2
    assert "style=dashed" in text and "->" in text
    assert 'label="Scan{outer}"' in text and 'label="Scan{inner}"' in text


def test_pictures_do_not_change_results():
    inputs, hs = _rnn()
    f = ss.function(inputs, hs)
    values = [np.ones((3, 2)), np.eye(2) * 0.5, np.zeros(2)]
    before = f(*values)
    ss.draw(f, None)
    np.testing.assert_array_equal(f(*values), before)
