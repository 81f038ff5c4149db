"""The interactive view: one self-contained HTML page, and the iframe notebooks show.

The browser runs no layout engine: every state the page can show (which loops are open) is
laid out and rendered to SVG here, and the page's script (``static/graphview.js``) switches
between them. With at most ``ALL_SUBSETS_UP_TO`` loops that is every valid state; with more,
all closed, each loop opened with the loops around it, and all open (a click that asks for
another combination opens the clicked loop alone, with its ancestors).
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import combinations
from typing import TYPE_CHECKING

from symscan.drawing.model import REMOVED, Loop, View

if TYPE_CHECKING:
    from symscan.drawing import Drawing

ALL_SUBSETS_UP_TO = 4     # loops; beyond this the number of states would grow too fast
LARGE_PICTURE_ITEMS = 200
"""Items with every loop open above which the page keeps only three states (as asked, all
closed, all open): each state is one dot layout (0.2-0.7 s at 300 items), and a page of ten
states of a 500-node gradient took 5.6 s. Opening one loop of such a page opens them all."""
INLINE_MIN_HEIGHT = 180   # px, the notebook iframe's height bounds
INLINE_MAX_HEIGHT = 640
CHROME_HEIGHT = 44        # px, the toolbar and a margin around the picture


@dataclass
class State:
    """One precomputed state: the open loops' ids (sorted), its picture and its size."""

    open: tuple[str, ...]
    svg: str
    width: float
    height: float


def render_page(drawing: Drawing) -> str:
    """The interactive page for ``drawing``: pan, zoom, open and close loops, hover, search;
    no network needed (the script and style are inlined)."""
    layout = drawing.layout
    views = _state_views(drawing, layout.view)
    states = [_render_state(open_ids, layout if open_ids == layout.view.open_loops() else None, view)
              for open_ids, view in views.items()]
    return page_html(states, initial=layout.view.open_loops(), items=_item_info(views.values()),
                     loops=_loop_info(layout.view.loops), title=layout.view.title)


def render_inline(drawing: Drawing) -> str:
    """What a notebook shows: the page in an iframe (its own document, so its script and ids
    cannot clash with the notebook's), as wide as the cell, as tall as the picture allows."""
    page = render_page(drawing)
    height = round(min(max(drawing.layout.height + CHROME_HEIGHT, INLINE_MIN_HEIGHT), INLINE_MAX_HEIGHT))
    title = html.escape(f"symscan drawing {drawing.layout.view.title}".strip(), quote=True)
    return (f'<iframe class="symscan-drawing" title="{title}" sandbox="allow-scripts" '
            f'style="width: 100%; height: {height}px; border: 1px solid #ddd; border-radius: 4px;" '
            f'srcdoc="{html.escape(page, quote=True)}"></iframe>')


def state_sets(loops: dict[str, Loop], initial: frozenset[str] = frozenset(),
               large: bool = False) -> list[frozenset[str]]:
    """The open-loop sets the page precomputes (``initial`` always among them), smallest first;
    a ``large`` picture keeps all closed and all open only. A loop the rewrites removed (a
    diff's REMOVED loop) has no body to open: it stays closed."""
    ids, tree = sorted(k for k, loop in loops.items() if loop.status != REMOVED), View(loops=loops)
    above = {loop_id: set(tree.ancestors(loop_id)) for loop_id in ids}
    if large:
        sets = {frozenset(), frozenset(ids)}
    elif len(ids) <= ALL_SUBSETS_UP_TO:
        sets = {frozenset(subset) for n in range(len(ids) + 1) for subset in combinations(ids, n)
                if all(above[loop_id] <= set(subset) for loop_id in subset)}
    else:
        sets = {frozenset(), frozenset(ids)} | {frozenset({loop_id} | above[loop_id]) for loop_id in ids}
    sets.add(frozenset(initial))
    return sorted(sets, key=lambda s: (len(s), sorted(s)))


def page_html(states: list[State], *, initial: frozenset[str], items: dict, loops: dict, title: str = "") -> str:
    """The page around precomputed states (``items`` and ``loops``: what hovering and search show)."""
    data = {"initial": sorted(initial), "items": items, "loops": loops,
            "states": [{"open": list(s.open), "svg": s.svg, "width": s.width, "height": s.height} for s in states]}
    heading = html.escape(f"symscan: {title}" if title else "symscan drawing")
    return _PAGE.format(title=heading, css=_static("graphview.css"), js=_static("graphview.js"),
                        data=_script_json(data))


def _state_views(drawing: Drawing, initial_view: View) -> dict[frozenset[str], View]:
    views = {initial_view.open_loops(): initial_view}
    openable = frozenset(k for k, loop in initial_view.loops.items() if loop.status != REMOVED)
    if openable and openable not in views:
        views[openable] = drawing.view(open_loops=openable)
    large = len(views.get(openable, initial_view).items) > LARGE_PICTURE_ITEMS
    for open_ids in state_sets(initial_view.loops, initial_view.open_loops(), large):
        if open_ids not in views:
            views[open_ids] = drawing.view(open_loops=open_ids)
    return dict(sorted(views.items(), key=lambda entry: (len(entry[0]), sorted(entry[0]))))


def _render_state(open_ids: frozenset[str], layout, view: View) -> State:
    from symscan.drawing.layout import lay_out
    from symscan.drawing.svg import render_svg

    layout = layout if layout is not None else lay_out(view)
    return State(tuple(sorted(open_ids)), render_svg(layout), layout.width, layout.height)


def _item_info(views) -> dict[str, dict]:
    """Per item id (first state that draws it): what the tooltip and the search box read."""
    info: dict[str, dict] = {}
    for view in views:
        for item in view.items.values():
            info.setdefault(item.id, {"kind": item.kind, "label": item.label, "search": item.search,
                                      "loop": item.loop, "details": [[k, str(v)] for k, v in item.details.items()]})
    return info


def _loop_info(loops: dict[str, Loop]) -> dict[str, dict]:
    return {loop_id: {"title": loop.title, "steps": loop.steps, "parent": loop.parent}
            for loop_id, loop in loops.items()}


def _script_json(data) -> str:
    """JSON safe inside a ``<script>`` element (no ``</script>``, ``<!--`` or ``&`` sequences)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@cache
def _static(name: str) -> str:
    return resources.files("symscan.drawing").joinpath("static", name).read_text(encoding="utf-8")


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{title}</title>
<style>
{css}</style>
</head>
<body>
<div class="ss-graph" id="ss-graph">
<div class="ss-toolbar">
<input type="search" class="ss-search" placeholder="search by name" aria-label="search by name"
 title="Enter: next match, Shift+Enter: previous, Escape: clear">
<span class="ss-count" aria-live="polite"></span>
<button type="button" class="ss-zoom-in" title="zoom in">+</button>
<button type="button" class="ss-zoom-out" title="zoom out">&minus;</button>
<button type="button" class="ss-fit" title="fit the picture to the window">fit</button>
<button type="button" class="ss-legend-toggle" title="show or hide the legend">legend</button>
<span class="ss-hint">drag to pan, wheel to zoom, click a loop to open or close it, hover for details</span>
</div>
<div class="ss-viewport"><div class="ss-stage"></div></div>
<div class="ss-legend"></div>
<div class="ss-tooltip" hidden></div>
</div>
<script type="application/json" id="ss-data">{data}</script>
<script>
{js}</script>
</body>
</html>
"""
