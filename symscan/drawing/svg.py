"""A laid-out picture as one standalone SVG document.

Open loops are rounded boxes with their title; items are rounded boxes coloured by kind
(ports small pills, closed loops double-bordered with a "+" mark); edges are the cubic
splines dot routed, with the arrow head drawn as a triangle up to the point dot left for it.
Every group carries the data attributes the interactive page uses (``data-id``,
``data-loop``, ``data-loop-id``, ``data-tail``, ``data-head``) and colours are given both as
classes (which a page's CSS may restyle) and as attributes (so the file stands alone).
Hovering an item shows its details (``<title>``, the viewer's native tooltip).
"""

from __future__ import annotations

import math

from symscan.drawing.geometry import Box, Layout, PlacedEdge, PlacedItem, PlacedLoop
from symscan.drawing.layout import EDGE_COLOURS, KIND_COLOURS, LOOP_COLOURS, STATUS_COLOURS, loop_title
from symscan.drawing.model import LOOP, OP, PORT_IN, PORT_OUT, RECURRENCE, REMOVED
from symscan.drawing.text import FONT_FAMILY, FONT_SIZE, LINE_HEIGHT, SMALL_FONT_SIZE, esc, text_size

TEXT_COLOUR, MUTED_TEXT = "#1f2328", "#59636e"
LEGEND_HEIGHT = 26.0


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def text_lines(lines: list[tuple[str, float]], x: float, top: float, anchor: str = "middle",
               fill: str = TEXT_COLOUR, extra: str = "") -> str:
    """A ``<text>`` of one ``<tspan>`` per (line, font size), the first line's top at ``top``."""
    spans, y = [], top
    for line, size in lines:
        baseline = y + size * LINE_HEIGHT / 2 + size * 0.35
        spans.append(f'<tspan x="{_num(x)}" y="{_num(baseline)}" font-size="{_num(size)}">{esc(line)}</tspan>')
        y += size * LINE_HEIGHT
    return f'<text text-anchor="{anchor}" fill="{fill}"{extra}>{"".join(spans)}</text>'


def _rect(box: Box, radius: float, fill: str, stroke: str, extra: str = "") -> str:
    return (f'<rect x="{_num(box.x)}" y="{_num(box.y)}" width="{_num(box.w)}" height="{_num(box.h)}" '
            f'rx="{_num(radius)}" fill="{fill}" stroke="{stroke}"{extra}/>')


def _tooltip(placed: PlacedItem) -> str:
    item = placed.item
    lines = [item.label.replace("\n", " ")] + [f"{k}: {v}" for k, v in item.details.items()]
    return f"<title>{esc(chr(10).join(lines))}</title>"


def _status_attrs(status: str | None) -> str:
    if status is None:
        return ""
    dash = ' stroke-dasharray="4 3"' if status == REMOVED else ""
    return f' stroke-width="2"{dash}'


def render_item(placed: PlacedItem) -> str:
    item, box = placed.item, placed.box
    fill, border = KIND_COLOURS.get(item.kind, KIND_COLOURS[OP])
    stroke = STATUS_COLOURS.get(item.status, border)
    port = item.kind in (PORT_IN, PORT_OUT)
    classes = f"item kind-{item.kind}" + (f" status-{item.status}" if item.status else "")
    attrs = f' data-id="{esc(item.id)}" data-loop="{esc(item.loop or "")}" data-kind="{item.kind}"'
    if item.kind == LOOP:
        attrs += f' data-loop-id="{esc(item.id)}"'
    if item.search:
        attrs += f' data-search="{esc(item.search)}"'
    parts = [f'<g class="{classes}"{attrs}>', _tooltip(placed),
             _rect(box, box.h / 2 if port else 5, fill, stroke, _status_attrs(item.status) or ' stroke-width="1"')]
    if item.kind == LOOP:
        inner = Box(box.x + 3, box.y + 3, box.w - 6, box.h - 6)
        parts.append(_rect(inner, 3, "none", stroke, ' stroke-width="0.8"'))
        parts.append(_open_hint(box.right - 11, box.y, stroke))
    lines = [(line, FONT_SIZE) for line in item.label.split("\n")]
    label = placed.label_box
    parts.append(text_lines(lines, label.x + label.w / 2, label.y))
    if item.badge:
        parts.append(_badge(item.badge, label.right + 6, box.y + box.h / 2))
    parts.append("</g>")
    return "".join(parts)


def _open_hint(cx: float, cy: float, colour: str) -> str:
    """A small circled "+" on a closed loop's border: it opens."""
    return (f'<g class="open-hint"><circle cx="{_num(cx)}" cy="{_num(cy)}" r="5" fill="white" stroke="{colour}"/>'
            f'<path d="M{_num(cx - 2.8)} {_num(cy)}h5.6M{_num(cx)} {_num(cy - 2.8)}v5.6" stroke="{colour}" '
            f'stroke-width="1.2"/></g>')


def _badge(text: str, left: float, middle: float) -> str:
    w, h = text_size(text, SMALL_FONT_SIZE)
    pill = Box(left - 2, middle - h / 2, w + 4, h)
    outline = _rect(pill, h / 2, "#ffffff", "#b4bac2", ' stroke-width="0.8"')
    return (f'<g class="badge">{outline}'
            f'{text_lines([(text, SMALL_FONT_SIZE)], left + w / 2, pill.y, fill=MUTED_TEXT)}</g>')


def render_loop(placed: PlacedLoop) -> str:
    loop = placed.loop
    stroke = STATUS_COLOURS.get(loop.status, LOOP_COLOURS[1])
    classes = "loop" + (f" status-{loop.status}" if loop.status else "")
    title, steps = loop_title(loop)
    box = placed.title_box
    heading = text_lines([(title, FONT_SIZE)], box.x, box.y, anchor="start", extra=' font-weight="bold"')
    sub = text_lines([(steps, SMALL_FONT_SIZE)], box.x, box.y + FONT_SIZE * LINE_HEIGHT, anchor="start",
                     fill=MUTED_TEXT) if steps else ""
    frame = _rect(placed.box, 9, LOOP_COLOURS[0], stroke, _status_attrs(loop.status) or ' stroke-width="1.2"')
    return (f'<g class="{classes}" data-id="{esc(loop.id)}" data-loop-id="{esc(loop.id)}" '
            f'data-loop="{esc(loop.parent or "")}"><title>{esc(loop.title)}</title>'
            f"{frame}{heading}{sub}</g>")


def _path(points: list[tuple[float, float]]) -> str:
    if not points:
        return ""
    d = [f"M{_num(points[0][0])},{_num(points[0][1])}"]
    for i in range(1, len(points) - 2, 3):
        d.append("C" + " ".join(f"{_num(x)},{_num(y)}" for x, y in points[i:i + 3]))
    return "".join(d)


def _arrow_head(base: tuple[float, float], tip: tuple[float, float], colour: str) -> str:
    """A triangle from the spline's last point to the tip dot reserved for the arrow."""
    dx, dy = tip[0] - base[0], tip[1] - base[1]
    length = math.hypot(dx, dy) or 1.0
    nx, ny = -dy / length * 3.2, dx / length * 3.2
    corners = [tip, (base[0] + nx, base[1] + ny), (base[0] - nx, base[1] - ny)]
    return f'<polygon points="{" ".join(f"{_num(x)},{_num(y)}" for x, y in corners)}" fill="{colour}"/>'


def render_edge(placed: PlacedEdge) -> str:
    edge = placed.edge
    colour = STATUS_COLOURS.get(edge.status, EDGE_COLOURS.get(edge.style, EDGE_COLOURS["data"]))
    dashed = edge.style == RECURRENCE or edge.status == REMOVED
    classes = f"edge style-{edge.style}" + (f" status-{edge.status}" if edge.status else "")
    parts = [f'<g class="{classes}" data-tail="{esc(edge.tail)}" data-head="{esc(edge.head)}">',
             f'<path d="{_path(placed.points)}" fill="none" stroke="{colour}" stroke-width="1.1"'
             + (' stroke-dasharray="5 3"' if dashed else "") + "/>"]
    if placed.end is not None and placed.points:
        parts.append(_arrow_head(placed.points[-1], placed.end, colour))
    if placed.label_box is not None:
        box = placed.label_box
        backing = Box(box.x - 1.5, box.y, box.w + 3, box.h)  # hides the spline where it passes under the label
        parts.append('<g class="edge-label">' + _rect(backing, 3, "white", "none", ' fill-opacity="0.9"')
                     + text_lines([(line, SMALL_FONT_SIZE) for line in edge.label.split("\n")],
                                  box.x + box.w / 2, box.y, fill=MUTED_TEXT) + "</g>")
    parts.append("</g>")
    return "".join(parts)


def _statuses(layout: Layout) -> list[str]:
    seen = {p.item.status for p in layout.items.values()} | {e.edge.status for e in layout.edges}
    seen |= {p.loop.status for p in layout.loops.values()}
    return [s for s in STATUS_COLOURS if s in seen]


def render_legend(statuses: list[str], top: float) -> str:
    parts, x = ['<g class="legend">'], 12.0
    for status in statuses:
        colour = STATUS_COLOURS[status]
        dash = ' stroke-dasharray="4 3"' if status == REMOVED else ""
        parts.append(_rect(Box(x, top + 6, 22, 14), 4, "white", colour, f' stroke-width="2"{dash}'))
        parts.append(text_lines([(status, SMALL_FONT_SIZE)], x + 28, top + 6, anchor="start", fill=MUTED_TEXT))
        x += 40 + text_size(status, SMALL_FONT_SIZE)[0]
    parts.append("</g>")
    return "".join(parts)


def _depth(layout: Layout, placed: PlacedLoop) -> int:
    return len([a for a in layout.view.ancestors(placed.loop.id) if a in layout.loops])


def render_svg(layout: Layout) -> str:
    """The picture as a standalone SVG document (outer loops first, then edges, then items)."""
    statuses = _statuses(layout)
    height = layout.height + (LEGEND_HEIGHT if statuses else 0)
    w, h = _num(layout.width), _num(height)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="symscan-drawing" viewBox="0 0 {w} {h}" '
             f'width="{w}" height="{h}" font-family="{esc(FONT_FAMILY)}" font-size="{_num(FONT_SIZE)}">',
             f"<title>{esc(layout.view.title or 'symscan graph')}</title>",
             f'<rect class="background" x="0" y="0" width="{w}" height="{h}" fill="white"/>']
    loops = sorted(layout.loops.values(), key=lambda p: _depth(layout, p))
    parts += ['<g class="loops">', *map(render_loop, loops), "</g>"]
    parts += ['<g class="edges">', *map(render_edge, layout.edges), "</g>"]
    parts += ['<g class="items">', *map(render_item, layout.items.values()), "</g>"]
    if statuses:
        parts.append(render_legend(statuses, layout.height))
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
