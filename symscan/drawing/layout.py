"""A ``View`` laid out by graphviz's ``dot``: layers, crossings minimised, splines around boxes.

``to_dot`` writes the view as DOT: every box has the size our text metrics give it
(``fixedsize``), every edge label and loop title is a fixed-size HTML cell, so graphviz's
own font metrics never change the geometry and the boxes we report are exactly the space
dot reserved. Open loops are nested clusters; recurrences do not constrain the ranks.
The DOT also carries the picture's colours, so graphviz can render it as a PNG (``png.py``)
and ``Drawing.dot()`` is worth reading on its own.

``lay_out`` runs dot (``engine.py``) and turns its JSON (points, origin bottom-left, y up)
into a ``Layout`` (pixels, origin top-left, y down; 1 pt = 1 px) with a margin around.
"""

from __future__ import annotations

import math

from symscan.drawing import engine as engines
from symscan.drawing.geometry import Box, Layout, PlacedEdge, PlacedItem, PlacedLoop
from symscan.drawing.model import (
    ADDED,
    CROSSING,
    INPUT,
    LOOP,
    MOVED,
    OP,
    OUTPUT,
    PORT_IN,
    PORT_OUT,
    RECURRENCE,
    REMOVED,
    SHARED,
    UPDATE,
    Edge,
    Loop,
    View,
)
from symscan.drawing.text import (
    FONT_SIZE,
    PAD_X,
    PAD_Y,
    SMALL_FONT_SIZE,
    esc,
    item_size,
    shorten,
    strip_controls,
    text_size,
)

MARGIN = 12.0           # px around the picture
EDGE_LABEL_PAD = 2.0    # px reserved around an edge label's text
PERIPHERY_GAP = 4.0     # px between graphviz's double borders
FONT_NAME = "DejaVu Sans Mono"

# The picture's palette (fill, border), shared with svg.py: muted, kinds told apart by hue.
KIND_COLOURS = {
    INPUT: ("#e3f0dc", "#6f8f5f"),
    SHARED: ("#f7ead0", "#a8864a"),
    OUTPUT: ("#f5dede", "#a06666"),
    UPDATE: ("#f3e2d0", "#a0764c"),
    OP: ("#e2ebf5", "#5f7a99"),
    LOOP: ("#ebe4f5", "#6e5a99"),
    PORT_IN: ("#eef6ea", "#7f9c70"),
    PORT_OUT: ("#f8ecec", "#a87a7a"),
}
STATUS_COLOURS = {ADDED: "#2e9a44", REMOVED: "#c62f2f", MOVED: "#2f6fc6"}
EDGE_COLOURS = {"data": "#5d6470", CROSSING: "#9aa1ab", RECURRENCE: "#7a5fb0"}
LOOP_COLOURS = ("#f7f5fb", "#8c7ab8")  # an open loop's box: fill, border

# dot's settings: compact ranks, curved splines around boxes, a bounded crossing search.
GRAPH_ATTRS = {
    "splines": "true", "nodesep": "0.22", "ranksep": "0.35", "margin": "0", "pad": f"{MARGIN / 72:.4f}",
    "mclimit": "0.6", "nslimit": "1", "remincross": "true", "fontname": FONT_NAME, "fontsize": "12",
    "bgcolor": "white",
}


def _quote(value: str) -> str:
    """A DOT double-quoted string (graphviz then reads ``\\`` as a backslash, ``\\n`` as a new line)."""
    value = strip_controls(value)
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _html(text: str) -> str:
    """Text inside an HTML-like label: entities escaped, lines broken with <BR/>."""
    return '<BR ALIGN="CENTER"/>'.join(esc(line) for line in text.split("\n"))


def _fixed_cell(lines: list[tuple[str, float]], width: float, height: float, align: str = "CENTER") -> str:
    """An HTML label of exactly ``width`` x ``height`` points holding ``lines`` (text, font size)."""
    text = f'<BR ALIGN="{align}"/>'.join(f'<FONT POINT-SIZE="{size:g}">{_html(line)}</FONT>' for line, size in lines)
    return (f'<<TABLE BORDER="0" CELLPADDING="0" CELLSPACING="0"><TR><TD FIXEDSIZE="TRUE" BALIGN="{align}" '
            f'ALIGN="{align}" WIDTH="{math.ceil(width)}" HEIGHT="{math.ceil(height)}">{text}</TD></TR></TABLE>>')


def _attrs(attrs: dict[str, str]) -> str:
    """``k="v", ...`` with every value quoted but ``label``, which is always an HTML label ``<...>``."""
    return ", ".join(f"{k}={v if k == 'label' else _quote(v)}" for k, v in attrs.items())


def drawn_loops(view: View) -> list[str]:
    """Ids of the loops drawn as boxes: open, and every enclosing loop open too."""
    return [k for k, loop in view.loops.items()
            if loop.open and all(view.loops[a].open for a in view.ancestors(k))]


def loop_title(loop: Loop) -> tuple[str, str]:
    """An open loop's title lines: its name, and its step count (set smaller)."""
    return shorten(loop.title or loop.id, 40), shorten(loop.steps, 40)


def title_size(loop: Loop) -> tuple[float, float]:
    title, steps = loop_title(loop)
    w1, h1 = text_size(title)
    w2, h2 = text_size(steps, SMALL_FONT_SIZE) if steps else (0.0, 0.0)
    return max(w1, w2), h1 + h2


def edge_label_size(label: str) -> tuple[float, float]:
    return text_size(label, SMALL_FONT_SIZE)


class _Names:
    """Short DOT names for items (``n0``...) and clusters (``cluster_0``...), in view order."""

    def __init__(self, view: View, loops: list[str]):
        self.items = {item_id: f"n{i}" for i, item_id in enumerate(view.items)}
        self.loops = {loop_id: f"cluster_{i}" for i, loop_id in enumerate(loops)}


def _item_line(view: View, item_id: str, name: str) -> str:
    item = view.items[item_id]
    w, h = item_size(item.label, item.badge)
    fill, border = KIND_COLOURS.get(item.kind, KIND_COLOURS[OP])
    text = item.label + (f"  {item.badge}" if item.badge and item.kind != LOOP else "")  # no room inside 2 borders
    # a closed loop's second border lies PERIPHERY_GAP outside the node: the outer one is our box
    gap = 2 * PERIPHERY_GAP if item.kind == LOOP else 0.0
    attrs = {"width": f"{(w - gap) / 72:.4f}", "height": f"{(h - gap) / 72:.4f}", "label": f"<{_html(text)}>",
             "fillcolor": fill, "color": STATUS_COLOURS.get(item.status, border), "tooltip": item_id}
    if item.kind == LOOP:
        attrs["peripheries"] = "2"
    if item.status == REMOVED:
        attrs["style"] = "rounded,filled,dashed"
    return f"{name} [{_attrs(attrs)}];"


def _cluster_lines(view: View, loop_id: str, names: _Names, members: dict, children: dict, depth: int) -> list[str]:
    loop = view.loops[loop_id]
    pad = "  " * depth
    w, h = title_size(loop)
    title, steps = loop_title(loop)
    label = _fixed_cell([(title, FONT_SIZE)] + ([(steps, SMALL_FONT_SIZE)] if steps else []), w + 4, h + 2,
                        "LEFT")
    colour = STATUS_COLOURS.get(loop.status, LOOP_COLOURS[1])
    lines = [f"{pad}subgraph {names.loops[loop_id]} {{",
             f'{pad}  label={label}; labeljust="l"; style="rounded,filled"; '
             f"fillcolor={_quote(LOOP_COLOURS[0])}; color={_quote(colour)}; margin=10;"]
    lines += [f"{pad}  {name};" for name in members.get(loop_id, [])]
    for kind in (PORT_IN, PORT_OUT):
        ports = [names.items[i] for i, item in view.items.items() if item.loop == loop_id and item.kind == kind]
        if len(ports) > 1:
            lines.append(f"{pad}  {{rank=same; {'; '.join(ports)};}}")
    for child in children.get(loop_id, []):
        lines += _cluster_lines(view, child, names, members, children, depth + 1)
    lines.append(pad + "}")
    return lines


def _homes(view: View, loops: list[str]) -> dict[str, str | None]:
    """The drawn loop box holding each item directly (None: the top level)."""
    drawn, homes = set(loops), {}
    for item_id, item in view.items.items():
        home = item.loop
        while home is not None and home not in drawn:
            home = view.loops[home].parent if home in view.loops else None
        homes[item_id] = home
    return homes


def _common_home(view: View, a: str | None, b: str | None) -> str | None:
    """The innermost loop box holding both boxes ``a`` and ``b``."""
    enclosing_b = {b, *view.ancestors(b)} if b is not None else set()
    for loop in [a, *view.ancestors(a)] if a is not None else []:
        if loop in enclosing_b:
            return loop
    return None


def label_node(index: int) -> str:
    return f"l{index}"


def _edge_lines(view: View, index: int, names: _Names) -> tuple[list[str], str | None]:
    """DOT for edge ``index``, and the DOT line of its label node (if labelled).

    A label is a node of its own (``l<index>``) the edge passes through: dot keeps it clear of
    boxes and other labels, and only labelled edges get the extra rank (a DOT ``label`` would
    double every rank of the graph, and the layout time with it). A recurrence is written
    reversed (``dir=back``): it runs against the ranks, so it must not push its tail after its head.
    """
    edge = view.edges[index]
    colour = STATUS_COLOURS.get(edge.status, EDGE_COLOURS.get(edge.style, EDGE_COLOURS["data"]))
    style = ', style="dashed"' if edge.style == RECURRENCE or edge.status == REMOVED else ""
    tail, head = names.items[edge.tail], names.items[edge.head]
    common = f'color="{colour}"{style}'
    back = _is_back(edge)
    if not edge.label or edge.tail == edge.head:
        xlabel = f", xlabel={_fixed_cell([(edge.label, SMALL_FONT_SIZE)], *edge_label_size(edge.label))}" \
            if edge.label else ""
        if back:
            return [f'{head} -> {tail} [id="e{index}", dir=back, {common}];'], None
        return [f'{tail} -> {head} [id="e{index}", {common}{xlabel}];'], None
    label = label_node(index)
    w, h = edge_label_size(edge.label)
    node = (f'{label} [shape=box, style="", color="transparent", width="{(w + 2 * EDGE_LABEL_PAD) / 72:.4f}", '
            f'height="{(h + 2 * EDGE_LABEL_PAD) / 72:.4f}", fontsize={SMALL_FONT_SIZE:g}, fontcolor="#59636e", '
            f"label=<{_html(edge.label)}>];")
    if back:
        lines = [f'{label} -> {tail} [id="e{index}.0", dir=none, {common}];',
                 f'{head} -> {label} [id="e{index}.1", dir=back, {common}];']
    else:
        lines = [f'{tail} -> {label} [id="e{index}.0", dir=none, {common}];',
                 f'{label} -> {head} [id="e{index}.1", {common}];']
    return lines, node


def to_dot(view: View) -> str:
    """The view as DOT text for graphviz's ``dot`` (sizes in inches: px / 72)."""
    loops = drawn_loops(view)
    names = _Names(view, loops)
    homes = _homes(view, loops)
    members: dict[str | None, list[str]] = {}
    for item_id, home in homes.items():
        members.setdefault(home, []).append(names.items[item_id])
    edge_lines, label_lines = [], []
    for index, edge in enumerate(view.edges):
        lines, node = _edge_lines(view, index, names)
        edge_lines += lines
        if node is not None:
            label_lines.append(node)
            members.setdefault(_common_home(view, homes[edge.tail], homes[edge.head]), []).append(label_node(index))
    children: dict[str | None, list[str]] = {}
    for loop_id in loops:
        children.setdefault(view.loops[loop_id].parent, []).append(loop_id)
    lines = ["digraph symscan {",
             f"  graph [{_attrs({**GRAPH_ATTRS, 'rankdir': view.direction or 'LR'})}];",
             f'  node [shape=box, style="rounded,filled", fixedsize=true, margin=0, penwidth=1, '
             f'fontname={_quote(FONT_NAME)}, fontsize={FONT_SIZE:g}];',
             f"  edge [arrowsize=0.7, penwidth=1, fontname={_quote(FONT_NAME)}, fontsize={SMALL_FONT_SIZE:g}];"]
    lines += ["  " + _item_line(view, item_id, names.items[item_id]) for item_id in view.items]
    lines += ["  " + line for line in label_lines]
    for loop_id in children.get(None, []):
        lines += _cluster_lines(view, loop_id, names, members, children, 1)
    lines += ["  " + line for line in edge_lines]
    lines.append("}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ reading dot's answer
class _Frame:
    """graphviz points (origin bottom-left, y up) to our pixels (origin top-left, y down)."""

    def __init__(self, bb: str):
        x0, y0, x1, y1 = (float(v) for v in bb.split(","))
        self.x0, self.y1 = x0, y1
        self.width, self.height = x1 - x0 + 2 * MARGIN, y1 - y0 + 2 * MARGIN

    def point(self, x: float, y: float) -> tuple[float, float]:
        return (x - self.x0 + MARGIN, self.y1 - y + MARGIN)

    def parse(self, text: str) -> tuple[float, float]:
        x, y = text.split(",")[:2]
        return self.point(float(x), float(y))

    def box(self, bb: str) -> Box:
        x0, y0, x1, y1 = (float(v) for v in bb.split(","))
        left, top = self.point(x0, y1)
        return Box(left, top, x1 - x0, y1 - y0)


def centred(centre: tuple[float, float], size: tuple[float, float]) -> Box:
    return Box(centre[0] - size[0] / 2, centre[1] - size[1] / 2, size[0], size[1])


def _spline(frame: _Frame, pos: str, reverse: bool) -> tuple[list[tuple[float, float]], tuple[float, float] | None]:
    """dot's ``pos`` of an edge, "e,x,y s,x,y p0 c1 c2 p ...", as our points and arrow tip;
    ``reverse`` for an edge written against its direction (``dir=back``: its tip is ``s``)."""
    points, tips = [], {}
    for word in pos.split(";")[0].split():
        if word[:2] in ("e,", "s,"):
            tips[word[0]] = frame.parse(word[2:])
        else:
            points.append(frame.parse(word))
    return (points[::-1], tips.get("s")) if reverse else (points, tips.get("e"))


def _join(first: list[tuple[float, float]], second: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Two splines as one, a straight cubic segment (under the label) between them."""
    if not first or not second:
        return first + second
    (x0, y0), (x1, y1) = first[-1], second[0]
    bridge = [(x0 + (x1 - x0) / 3, y0 + (y1 - y0) / 3), (x0 + 2 * (x1 - x0) / 3, y0 + 2 * (y1 - y0) / 3)]
    return first + bridge + second


def _place_items(layout: Layout, frame: _Frame, nodes: list[dict], by_name: dict[str, str]) -> None:
    for node in nodes:
        item = layout.view.items[by_name[node["name"]]]
        w, h = item_size(item.label, item.badge)
        box = centred(frame.parse(node["pos"]), (w, h))
        tw, th = text_size(item.label)
        layout.items[item.id] = PlacedItem(item, box, Box(box.x + PAD_X, box.y + PAD_Y, tw, th))


def _place_loops(layout: Layout, frame: _Frame, clusters: list[dict], by_cluster: dict[str, str]) -> None:
    for cluster in clusters:
        loop = layout.view.loops[by_cluster[cluster["name"]]]
        box = frame.box(cluster["bb"])
        size = title_size(loop)
        title = centred(frame.parse(cluster["lp"]), size) if "lp" in cluster else Box(box.x + 6, box.y + 4, *size)
        layout.loops[loop.id] = PlacedLoop(loop, box, title)


def _is_back(edge: Edge) -> bool:
    return edge.style == RECURRENCE and edge.tail != edge.head


def _place_edges(layout: Layout, frame: _Frame, edges: list[dict], label_centres: dict[int, tuple]) -> None:
    parts: dict[int, dict[int, dict]] = {}
    for data in edges:
        index, _, part = data["id"][1:].partition(".")
        parts.setdefault(int(index), {})[int(part or 0)] = data
    for index, edge in enumerate(layout.view.edges):
        points, end, centre = [], None, label_centres.get(index)
        for part in sorted(parts.get(index, {})):
            data = parts[index][part]
            more, tip = _spline(frame, data.get("pos", ""), _is_back(edge))
            points, end = _join(points, more), tip or end
            centre = centre or (frame.parse(data["xlp"]) if "xlp" in data else None)
        label_box = centred(centre, edge_label_size(edge.label)) if edge.label and centre else None
        layout.edges.append(PlacedEdge(edge, points, end, label_box))


def lay_out(view: View, engine: engines.Engine | None = None) -> Layout:
    """Boxes, loop boxes and splines for every item, open loop and edge of ``view``."""
    engine = engine or engines.find_engine()
    loops = drawn_loops(view)
    names = _Names(view, loops)
    answer = engines.layout_json(to_dot(view), engine)
    frame = _Frame(answer["bb"])
    layout = Layout(view, frame.width, frame.height, engine=engine.name)
    objects = answer.get("objects", [])
    by_name = {v: k for k, v in names.items.items()}
    by_cluster = {v: k for k, v in names.loops.items()}
    _place_items(layout, frame, [o for o in objects if o.get("name") in by_name], by_name)
    _place_loops(layout, frame, [o for o in objects if o.get("name") in by_cluster and "bb" in o], by_cluster)
    labels = {int(o["name"][1:]): frame.parse(o["pos"]) for o in objects if o.get("name", "").startswith("l")}
    _place_edges(layout, frame, answer.get("edges", []), labels)
    return layout
