"""What a picture shows, before any geometry: the *view* of a graph.

The view builder (``view.py``) turns variables, functions and Scan nodes into a ``View``;
the layout (``layout.py``) gives it coordinates; renderers (``svg.py``, ``html.py``) draw it.
A view is one *state* of the picture: which loops are drawn open. Ids are stable across
states of the same graph, so the interactive page can switch between precomputed states.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Kinds of drawn items. Renderers colour by kind; the layout sizes every kind the same way.
INPUT, SHARED, OUTPUT, UPDATE, OP, LOOP, PORT_IN, PORT_OUT = (
    "input", "shared", "output", "update", "op", "loop", "port_in", "port_out")
ITEM_KINDS = (INPUT, SHARED, OUTPUT, UPDATE, OP, LOOP, PORT_IN, PORT_OUT)

# Edge styles: data flow, a value entering/leaving a loop body, a recurrence (step t -> t+1).
DATA, CROSSING, RECURRENCE = "data", "crossing", "recurrence"

# What a rewrite diff says of an item or an edge (None: unchanged, or no diff asked).
ADDED, REMOVED, MOVED = "added", "removed", "moved"


@dataclass
class Item:
    """One box in the picture.

    ``label`` is what is printed (lines separated by ``\\n``, kept short: the op's name, a
    variable's name, a loop's title); ``details`` is what hovering shows (type, static shape,
    the Python line that built it, the op in full, folded plumbing), in display order;
    ``badge`` is a short mark in the corner (``"+3"`` for three folded shape/check nodes);
    ``loop`` is the id of the open loop whose body holds the item (None: top level);
    ``search`` is extra text the search box matches (variable names, op class).
    """

    id: str
    kind: str
    label: str
    details: dict[str, str] = field(default_factory=dict)
    badge: str = ""
    loop: str | None = None
    status: str | None = None
    search: str = ""


@dataclass
class Edge:
    """A value flowing from ``tail`` to ``head`` (item ids); ``label`` names it when it helps
    (a folded constant ``"1"``, a loop role ``"x[t]"``, ``"h[t-1]"``, a folded ``sum_to``)."""

    tail: str
    head: str
    label: str = ""
    style: str = DATA
    status: str | None = None


@dataclass
class Loop:
    """A Scan node. Closed, it is one item (kind LOOP, same id) whose label has its name, the
    kind of each input and output and its step count. Open, it is a box (cluster) holding its
    body: items with ``loop == id``, entered through PORT_IN items (labelled by role:
    ``x[t]``, ``x[t-2]``, ``h[t-1]``, ``W (non-seq)``, ``rng (shared)``) and left through
    PORT_OUT items. ``parent`` is the loop whose body holds this one (None: top level)."""

    id: str
    title: str
    steps: str
    inputs: list[tuple[str, str]] = field(default_factory=list)   # (kind, role label)
    outputs: list[tuple[str, str]] = field(default_factory=list)  # (kind, role label)
    parent: str | None = None
    open: bool = False
    status: str | None = None


@dataclass
class View:
    """One state of a picture: the items drawn, the edges between them, and every loop of the
    graph (open or closed, drawn or hidden inside a closed parent), keyed by id."""

    items: dict[str, Item] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    loops: dict[str, Loop] = field(default_factory=dict)
    title: str = ""
    direction: str = "LR"  # rank direction: "LR" (left to right) or "TB" (top to bottom)

    def add(self, item: Item) -> Item:
        if item.id in self.items:
            raise ValueError(f"duplicate drawing item id {item.id!r}")
        self.items[item.id] = item
        return item

    def open_loops(self) -> frozenset[str]:
        return frozenset(k for k, loop in self.loops.items() if loop.open)

    def ancestors(self, loop_id: str) -> list[str]:
        """The loops enclosing ``loop_id``, innermost first."""
        chain, parent = [], self.loops[loop_id].parent
        while parent is not None:
            chain.append(parent)
            parent = self.loops[parent].parent
        return chain
