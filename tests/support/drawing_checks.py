"""Geometry checks on a laid-out picture (``symscan.drawing.geometry.Layout``), as issue 24
asks: no edge passes through a box other than its ends, no two labels overlap, every item
inside its loop's box. Each check returns a list of problems (empty: fine), so a failing
test says what went wrong where; ``assert_readable`` runs them all."""

from __future__ import annotations

from itertools import combinations

from symscan.drawing.geometry import Box, Layout

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
