"""A laid-out picture as PNG bytes, drawn by graphviz itself.

Why graphviz and not a rasterised copy of our SVG: rasterising SVG needs a renderer
(cairosvg, rsvg, a browser) that symscan should not depend on, while graphviz is already
there and its cairo renderer draws the very DOT the layout was computed from. That DOT
fixes every box's size (``fixedsize``), every label cell and the picture's colours, and dot
is deterministic, so the PNG has the same layout, boxes, colours and splines as the SVG.
What the PNG lacks: the status legend and the closed loops' "+" mark (it keeps their
double border).
"""

from __future__ import annotations

from symscan.drawing import engine as engines
from symscan.drawing.geometry import Layout
from symscan.drawing.layout import to_dot

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
DPI = 144  # twice the layout's 72 points per inch: sharp on high-density screens and in papers


def render_png(layout: Layout, dpi: int = DPI, engine: engines.Engine | None = None) -> bytes:
    """The picture of ``layout`` as PNG bytes, at ``dpi`` (72: one pixel per layout pixel)."""
    source = to_dot(layout.view).replace("digraph symscan {", f"digraph symscan {{\n  dpi={int(dpi)};", 1)
    data = engines.run_dot(source, "png", engine)
    if not data.startswith(PNG_SIGNATURE):
        raise RuntimeError(f"graphviz did not return a PNG ({engines.last_warnings[:3]})")
    return data
