"""Geometry checks on a laid-out picture (``symscan.drawing.geometry.Layout``), as issue 24
asks: no edge passes through a box other than its ends, no two labels overlap, every item
inside its loop's box. Each check returns a list of problems (empty: fine), so a failing
test says what went wrong where; ``assert_readable`` runs them all."""

from __future__ import annotations

import random
from itertools import combinations

from symscan.drawing.geometry import Box, Layout
from symscan.drawing.model import (
    ADDED,
    CROSSING,
    INPUT,
    LOOP,
    OP,
    OUTPUT,
    PORT_IN,
    PORT_OUT,
    RECURRENCE,
    SHARED,
    Edge,
    Item,
    Loop,
    View,
)

INSET = 2.0   # px: a spline grazing a box's border does not pass through it
SLACK = 1.0   # px: labels touching within this do not overlap
SAMPLES = 24  # points per cubic segment


def bezier_points(points: list[tuple[float, float]], samples: int = SAMPLES) -> list[tuple[float, float]]:
    """Points along a cubic Bezier spline p0, (c1, c2, p)*, ``samples`` per segment."""
    out = [points[0]] if points else []
    for i in range(0, len(points) - 3, 3):
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = points[i:i + 4]
        for k in range(1, samples + 1):
            t = k / samples
            a, b, c, d = (1 - t) ** 3, 3 * t * (1 - t) ** 2, 3 * t * t * (1 - t), t ** 3
            out.append((a * x0 + b * x1 + c * x2 + d * x3, a * y0 + b * y1 + c * y2 + d * y3))
    return out


def edges_through_boxes(layout: Layout, inset: float = INSET) -> list[str]:
    """Edges whose spline (or arrow head) enters an item box other than their tail and head."""
    problems = []
    for placed in layout.edges:
        ends = {placed.edge.tail, placed.edge.head}
        path = bezier_points(placed.points) + ([placed.end] if placed.end else [])
        for item_id, item in layout.items.items():
            if item_id in ends:
                continue
            hit = next((p for p in path if item.box.holds_point(*p, inset=inset)), None)
            if hit is not None:
                problems.append(f"edge {placed.edge.tail} -> {placed.edge.head} passes through {item_id} "
                                f"at ({hit[0]:.0f}, {hit[1]:.0f})")
    return problems


def label_boxes(layout: Layout) -> list[tuple[str, Box]]:
    """Every label in the picture: items', edges', loop titles'."""
    boxes = [(f"item {k}", p.label_box) for k, p in layout.items.items()]
    boxes += [(f"edge label {e.edge.tail} -> {e.edge.head} ({e.edge.label!r})", e.label_box)
              for e in layout.edges if e.label_box is not None]
    boxes += [(f"loop title {k}", p.title_box) for k, p in layout.loops.items()]
    return boxes


def overlapping_labels(layout: Layout, slack: float = SLACK) -> list[str]:
    """Pairs of labels that share area; also edge labels and loop titles lying on an item box."""
    labels = label_boxes(layout)
    problems = [f"{a} overlaps {b}" for (a, box_a), (b, box_b) in combinations(labels, 2)
                if box_a.overlaps(box_b, slack)]
    for name, box in labels:
        if name.startswith("item "):
            continue
        problems += [f"{name} lies on item {k}" for k, p in layout.items.items() if box.overlaps(p.box, slack)]
    return problems


def outside_their_loop(layout: Layout, slack: float = 0.5) -> list[str]:
    """Items not inside their open loop's box; loop boxes not inside their parent's; labels
    not inside their item's box."""
    problems = []
    for item_id, placed in layout.items.items():
        if not placed.box.contains(placed.label_box, slack):
            problems.append(f"label of {item_id} sticks out of its box")
        loop = placed.item.loop
        if loop in layout.loops and not layout.loops[loop].box.contains(placed.box, slack):
            problems.append(f"item {item_id} is outside its loop {loop}")
    for loop_id, placed in layout.loops.items():
        parent = placed.loop.parent
        if parent in layout.loops and not layout.loops[parent].box.contains(placed.box, slack):
            problems.append(f"loop {loop_id} is outside its parent loop {parent}")
        if not placed.box.contains(placed.title_box, slack):
            problems.append(f"title of loop {loop_id} sticks out of its box")
    return problems


def inside_picture(layout: Layout) -> list[str]:
    frame = Box(0, 0, layout.width, layout.height)
    boxes = [(k, p.box) for k, p in layout.items.items()] + [(k, p.box) for k, p in layout.loops.items()]
    return [f"{k} lies outside the picture" for k, box in boxes if not frame.contains(box, 0.5)]


def geometry_problems(layout: Layout) -> list[str]:
    return (edges_through_boxes(layout) + overlapping_labels(layout) + outside_their_loop(layout)
            + inside_picture(layout))


def assert_readable(layout: Layout) -> None:
    """Fail with every geometry problem of ``layout`` listed (the first 30)."""
    problems = geometry_problems(layout)
    assert not problems, f"{len(problems)} geometry problems:\n" + "\n".join(problems[:30])


def synthetic_view(n_items: int = 500, n_loops: int = 2, seed: int = 0):
    """A realistic big picture of about ``n_items`` items: inputs feeding chains of ops that fan
    in (binary ops reaching back a few steps), open loops with ports, recurrences and labels."""

    rng = random.Random(seed)
    view = View(title=f"synthetic {n_items}")
    names = ["add", "mul", "dot", "tanh", "exp", "Sum{axis=0}", "Elemwise{sub}", "Subtensor{i}", "log"]
    outer = [view.add(Item(f"in{i}", INPUT if i % 3 else SHARED, f"x{i}\nmatrix(f64)")).id for i in range(8)]
    per_loop = n_items // (2 * n_loops + 1)
    for k in range(n_loops):
        loop = f"L{k}"
        view.loops[loop] = Loop(loop, f"scan_{k}: step", f"n_steps = x{k}.shape[0]", open=True)
        ports = [view.add(Item(f"{loop}/in{j}", PORT_IN, role, loop=loop)).id
                 for j, role in enumerate(["x[t]", "h[t-1]", "W (non-seq)"])]
        for port in ports:
            view.edges.append(Edge(rng.choice(outer), port, style=CROSSING))
        body = list(ports)
        for j in range(per_loop - 4):
            node = view.add(Item(f"{loop}/op{j}", OP, rng.choice(names), loop=loop, badge="+2" if j % 17 == 0 else ""))
            view.edges.append(Edge(body[-1], node.id))
            if j % 3 == 0:
                view.edges.append(Edge(rng.choice(body[-6:]), node.id, label="1" if j % 9 == 0 else ""))
            body.append(node.id)
        out = view.add(Item(f"{loop}/out", PORT_OUT, "h[t]", loop=loop)).id
        view.edges += [Edge(body[-1], out), Edge(out, ports[1], label="h[t-1]", style=RECURRENCE)]
        outer.append(out)
    chain = list(outer)
    while len(view.items) < n_items - 2:
        node = view.add(Item(f"op{len(view.items)}", OP, rng.choice(names)))
        view.edges.append(Edge(chain[-1], node.id))
        if len(view.items) % 2 == 0:
            view.edges.append(Edge(rng.choice(chain[-12:-1]), node.id, label="2" if len(view.items) % 10 == 0 else ""))
        chain.append(node.id)
    for i in range(2):
        out = view.add(Item(f"out{i}", OUTPUT, f"output {i}"))
        view.edges.append(Edge(chain[-1 - i], out.id))
    return view


def rnn_view(open_loop: bool = True):
    """A hand-made picture of an Elman RNN: inputs, one loop (open: ports, body, a labelled
    recurrence; closed: one box with role-labelled inputs), a labelled constant, an added output."""

    view = View(title="rnn")
    view.add(Item("x", INPUT, "X\nmatrix(f64)", details={"type": "matrix(float64)", "built at": "rnn.py:3"}))
    view.add(Item("w", SHARED, "W_h"))
    view.add(Item("h0", INPUT, "h0"))
    view.loops["L"] = Loop("L", "scan: rnn", "n_steps = X.shape[0]", open=open_loop)
    if open_loop:
        for item_id, kind, label in [("L/x", PORT_IN, "x[t]"), ("L/h", PORT_IN, "h[t-1]"),
                                     ("L/w", PORT_IN, "W_h (non-seq)"), ("L/dot", OP, "dot"), ("L/add", OP, "add"),
                                     ("L/tanh", OP, "tanh"), ("L/out", PORT_OUT, "h[t]")]:
            view.add(Item(item_id, kind, label, loop="L", badge="+2" if item_id == "L/dot" else ""))
        view.edges += [Edge("x", "L/x", style=CROSSING), Edge("h0", "L/h", style=CROSSING),
                       Edge("w", "L/w", style=CROSSING), Edge("L/h", "L/dot"), Edge("L/w", "L/dot"),
                       Edge("L/dot", "L/add"), Edge("L/x", "L/add"), Edge("L/add", "L/tanh"), Edge("L/tanh", "L/out"),
                       Edge("L/out", "L/h", label="h[t-1]", style=RECURRENCE)]
        last = "L/out"
    else:
        view.add(Item("L", LOOP, "scan: rnn\nx: seq, h: sit-sot\nn_steps"))
        view.edges += [Edge("x", "L", label="x[t]"), Edge("h0", "L", label="h[t-1]"),
                       Edge("w", "L", label="W (non-seq)")]
        last = "L"
    view.add(Item("sub", OP, "Subtensor{-1}"))
    view.add(Item("out", OUTPUT, "output 0", status=ADDED))
    view.edges += [Edge(last, "sub", style=CROSSING if open_loop else "data"), Edge("sub", "out", label="-1")]
    return view


def nested_view():
    """Two open loops, one inside the other, with an edge from outside into the inner one."""
    from symscan.drawing.model import INPUT, OP, OUTPUT, PORT_IN, PORT_OUT, Edge, Item, Loop, View

    view = View(title="nested")
    view.loops["A"] = Loop("A", "outer", "n", open=True)
    view.loops["B"] = Loop("B", "inner", "m", parent="A", open=True)
    for item_id, kind, loop in [("x", INPUT, None), ("A/in", PORT_IN, "A"), ("A/op", OP, "A"), ("B/in", PORT_IN, "B"),
                                ("B/op", OP, "B"), ("B/out", PORT_OUT, "B"), ("A/out", PORT_OUT, "A"),
                                ("y", OUTPUT, None)]:
        view.add(Item(item_id, kind, item_id.replace("/", " "), loop=loop))
    view.edges += [Edge("x", "A/in"), Edge("A/in", "A/op"), Edge("A/op", "B/in", label="a[t]"), Edge("x", "B/op"),
                   Edge("B/in", "B/op"), Edge("B/op", "B/out"), Edge("B/out", "A/out"), Edge("A/out", "y")]
    return view
