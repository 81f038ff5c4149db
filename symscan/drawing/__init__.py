"""Pictures of graphs a person can read: ``ss.draw``.

Layers (each module imports only those above it):

- ``model``: what a picture shows (items, edges, loops), no geometry;
- ``view``: builds a model from variables, functions and Scan nodes: shape and check
  plumbing folded away, constants on edges, loop inputs labelled by role, loops closed or
  open, and the rewrites' diff;
- ``geometry`` and ``text``: boxes in pixels, and the text metrics both sides agree on;
- ``engine`` and ``layout``: graphviz's ``dot`` (layered layout, crossings minimised,
  splines around boxes, nested clusters) turns a model into a ``Layout``;
- ``svg``, ``png`` and ``html``: static pictures, and the interactive page (pan, zoom, open
  and close loops, hover, search) with its JavaScript in ``static/``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from symscan.graph.basic import set_html_renderer

if TYPE_CHECKING:
    from symscan.drawing.geometry import Layout
    from symscan.drawing.model import View

FORMATS = ("svg", "png", "html", "dot")


class Drawing:
    """A picture of a graph, rendered on demand: ``svg()``, ``png()``, ``html()``, ``dot()``,
    ``save(path)``; notebooks show the interactive view (``_repr_html_``).

    ``loops`` says which loops are drawn open: ``"closed"`` (every loop one box, the
    default), ``"open"`` (every body drawn), or the names or ids of the loops to open.
    ``plumbing=True`` draws the shape and check bookkeeping that is folded away by default.
    ``rewrites="diff"`` draws a compiled function's graph before rewriting, marking what the
    rewrites removed, added, or moved out of a loop.
    """

    def __init__(self, obj, *, loops: str | Iterable[str] = "closed", plumbing: bool = False,
                 rewrites: str | None = None, direction: str | None = None):
        from symscan.drawing.view import check_options

        if isinstance(loops, Iterable) and not isinstance(loops, str):
            loops = tuple(loops)  # read again at every view(): a generator would be empty the second time
        check_options(obj, loops=loops, plumbing=plumbing, rewrites=rewrites, direction=direction)
        self.obj = obj
        self.loops = loops
        self.plumbing = plumbing
        self.rewrites = rewrites
        self.direction = direction
        self._layout = None

    def view(self, open_loops: Iterable[str] | None = None) -> View:
        """The model of the picture, with ``open_loops`` (ids) open, or the ``loops`` asked for."""
        from symscan.drawing.view import build_view

        return build_view(self.obj, loops=self.loops if open_loops is None else frozenset(open_loops),
                          plumbing=self.plumbing, rewrites=self.rewrites, direction=self.direction)

    @property
    def layout(self) -> Layout:
        """The laid-out picture in the state asked for (boxes and splines in pixels)."""
        if self._layout is None:
            from symscan.drawing.layout import lay_out

            self._layout = lay_out(self.view())
        return self._layout

    def svg(self) -> str:
        from symscan.drawing.svg import render_svg

        return render_svg(self.layout)

    def png(self) -> bytes:
        from symscan.drawing.png import render_png

        return render_png(self.layout)

    def dot(self) -> str:
        from symscan.drawing.layout import to_dot

        return to_dot(self.view())

    def html(self) -> str:
        """One self-contained page (no network needed to view it) with every state it can show."""
        from symscan.drawing.html import render_page

        return render_page(self)

    def save(self, path: str | Path) -> str:
        """Write the picture to ``path``; the suffix picks the format (.svg, .png, .html, .dot)."""
        if not isinstance(path, (str, Path)):
            raise TypeError(f"ss.draw: path must be a file name (str or pathlib.Path) such as 'graph.svg', "
                            f"got {type(path).__name__}; leave it out to get a Drawing back")
        suffix = Path(path).suffix.lower().lstrip(".")
        if suffix not in FORMATS:
            raise ValueError(f"ss.draw cannot write {str(path)!r}: the file suffix must be one of "
                             f"{', '.join('.' + f for f in FORMATS)}, got {('.' + suffix) if suffix else 'none'}; "
                             f"name the file e.g. {Path(path).stem or 'graph'}.svg")
        data = self.png() if suffix == "png" else getattr(self, suffix)()
        Path(path).write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
        return str(path)

    def _repr_html_(self) -> str:
        from symscan.drawing.html import render_inline

        return render_inline(self)


def draw(obj: object, path: str | Path | None = None, *, loops: str | Iterable[str] = "closed", plumbing: bool = False,
         rewrites: str | None = None, direction: str | None = None) -> Drawing | str:
    """A picture of ``obj`` (a variable, a list of variables, a compiled function, a
    FunctionGraph or a Scan node).

    Without ``path``, returns a ``Drawing`` (a notebook shows it interactive); with ``path``,
    writes it there (format from the suffix: .svg, .png, .html, .dot) and returns the path.
    See ``Drawing`` for ``loops``, ``plumbing``, ``rewrites`` and ``direction``.
    """
    drawing = Drawing(obj, loops=loops, plumbing=plumbing, rewrites=rewrites, direction=direction)
    return drawing if path is None else drawing.save(path)


def to_dot(obj: object, **options) -> str:
    """Graphviz DOT text of the picture ``draw(obj, **options)`` lays out."""
    return Drawing(obj, **options).dot()


def _html_for_display(obj) -> str | None:
    """Notebook display of a function, variable or Scan node: the interactive view."""
    return Drawing(obj)._repr_html_()


set_html_renderer(_html_for_display)
