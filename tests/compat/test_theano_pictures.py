"""Theano's picture functions, ported by changing imports: ``theano.printing.pydotprint`` and
``theano.d3viz.d3viz`` draw with ``ss.draw``."""

import re

import pytest

import symscan.compat.theano as theano
import symscan.compat.theano.tensor as tt
from symscan.compat.theano.d3viz import d3viz
from symscan.compat.theano.printing import pydotprint


def _rnn_function():
    x, h0, w = tt.matrix("x"), tt.vector("h0"), tt.matrix("w")
    hs, _ = theano.scan(lambda x_t, h, w: tt.tanh(x_t + tt.dot(h, w)), sequences=x, outputs_info=h0,
                        non_sequences=w, name="rnn")
    return theano.function([x, h0, w], hs)


def test_pydotprint_writes_the_format_asked_and_says_where(tmp_path, capsys):
    f = _rnn_function()
    pydotprint(f, outfile=str(tmp_path / "graph.png"))
    assert (tmp_path / "graph.png").read_bytes().startswith(b"\x89PNG")
    assert str(tmp_path / "graph.png") in capsys.readouterr().out
    pydotprint(f, outfile=str(tmp_path / "graph"), format="svg", print_output_file=False)
    assert "<svg" in (tmp_path / "graph.svg").read_text()[:300]
    assert capsys.readouterr().out == ""


def test_pydotprint_scan_graphs_draws_the_body_and_compact_false_the_plumbing():
    f = _rnn_function()
    closed = pydotprint(f, format="svg", return_image=True)
    opened = pydotprint(f, format="svg", return_image=True, scan_graphs=True)
    assert ">tanh<" not in closed and ">tanh<" in opened  # the loop body
    plumbing = pydotprint(f, format="svg", return_image=True, compact=False)
    assert "Shape" not in closed and "Shape" in plumbing


def test_pydotprint_refuses_a_format_it_cannot_write():
    with pytest.raises(ValueError, match="format must be one of png, svg"):
        pydotprint(_rnn_function(), format="jpg", return_image=True)


def test_d3viz_writes_one_self_contained_page(tmp_path):
    path = tmp_path / "rnn.html"
    d3viz(_rnn_function(), str(path))
    page = path.read_text()
    assert page.startswith("<!DOCTYPE html>") and "rnn" in page
    assert not re.search(r"""(src|href)\s*=\s*["']https?://""", page)
    assert list(tmp_path.iterdir()) == [path]  # nothing to copy beside it
    with pytest.raises(ValueError, match="must end in .html"):
        d3viz(_rnn_function(), str(tmp_path / "rnn.png"))
