"""Where things are: a laid-out view, in pixels, origin top-left, y pointing down.

The layout (``layout.py``) produces a ``Layout`` from a ``View``; the SVG and HTML renderers
read only this; the geometry tests check it (no edge through a box, no labels overlapping,
every item inside its loop's box).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from symscan.drawing.model import Edge, Item, Loop, View


@dataclass(frozen=True)
class Box:
    x: float  # left
    y: float  # top
    w: float
    h: float

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def bottom(self) -> float:
        return self.y + self.h

    @property
    def center(self) -> tuple[float, float]:
        return (self.x + self.w / 2, self.y + self.h / 2)

    def contains(self, other: Box, slack: float = 0.0) -> bool:
        return (other.x >= self.x - slack and other.y >= self.y - slack
                and other.right <= self.right + slack and other.bottom <= self.bottom + slack)

    def overlaps(self, other: Box, slack: float = 0.0) -> bool:
        """True when the boxes share area (touching within ``slack`` pixels does not count)."""
        return (self.x < other.right - slack and other.x < self.right - slack
                and self.y < other.bottom - slack and other.y < self.bottom - slack)

    def holds_point(self, x: float, y: float, inset: float = 0.0) -> bool:
        return self.x + inset < x < self.right - inset and self.y + inset < y < self.bottom - inset


@dataclass
class PlacedItem:
    item: Item
    box: Box
    label_box: Box  # where the label text lies (inside ``box``)


@dataclass
class PlacedEdge:
    edge: Edge
    # a cubic Bezier spline: p0, (c1, c2, p)*; the arrow head points at ``end``
    points: list[tuple[float, float]]
    end: tuple[float, float] | None = None
    label_box: Box | None = None


@dataclass
class PlacedLoop:
    """An open loop's box (its title in ``title_box``); a closed loop is a PlacedItem."""

    loop: Loop
    box: Box
    title_box: Box


@dataclass
class Layout:
    view: View
    width: float
    height: float
    items: dict[str, PlacedItem] = field(default_factory=dict)
    edges: list[PlacedEdge] = field(default_factory=list)
    loops: dict[str, PlacedLoop] = field(default_factory=dict)  # open loops only
    engine: str = ""  # which engine laid it out, e.g. "graphviz dot 12.2 (pygraphviz)"
