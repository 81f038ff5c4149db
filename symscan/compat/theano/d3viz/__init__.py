"""``theano.d3viz``: an interactive page of a graph (loops that open on a click), written by
``ss.draw`` as one self-contained HTML file (Theano's also copied d3.js beside it; ours needs
nothing beside it)."""

from __future__ import annotations

from pathlib import Path

from symscan.drawing import Drawing

__all__ = ["d3viz"]


def d3viz(fct, outfile: str | Path, copy_deps: bool = True, *args, **kwargs) -> None:
    """Write the interactive picture of ``fct`` to ``outfile`` (an .html path); ``copy_deps``
    is accepted for Theano's signature: the page has no files to copy."""
    if Path(outfile).suffix.lower() not in (".html", ".htm"):
        raise ValueError(f"d3viz writes an HTML page: outfile must end in .html, got {str(outfile)!r}; "
                         "for a static picture use theano.printing.pydotprint or ss.draw(f, 'graph.svg')")
    Path(outfile).write_text(Drawing(fct).html(), encoding="utf-8")
