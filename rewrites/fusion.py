"""``fusion``: a connected group of elementwise nodes becomes one ``Composite`` node.

A chain of ``Elemwise``/``Cast`` nodes costs one pass over memory and one result array per
node; fused, a backend computes it in one pass (numba: one loop) or into one buffer (the fast
evaluator's ``out=`` calls). The phase runs once, after every other phase but ``inplace``
(which then marks the fused nodes), in loop bodies and IfElse branches too.

Which nodes form a group: grown from a node whose result is read outside (its *root*) up
through the producers of its operands, a producer joins when

- it is an elementwise node with the root's number of dimensions: a lower-rank (or 0-d)
  subchain feeding an array group stays out, since fused it would run once per element of
  the array instead of once (0-d nodes form groups of their own);
- it has no static length 1 where the root has another length (the same reason, per axis);
- every reader of its result is in the group; or else its result becomes an extra output of
  the fused node, when that keeps its shape (it reads every input of the group that has axes,
  since a fused node's outputs all have the broadcast shape of its inputs; 0-d groups always
  can) and no path leads from its readers outside back into the group (the fused node would
  feed itself).

A 0-d group (shape arithmetic, mostly) also takes the 0-d elementwise readers of its members
whose other operands do not depend on the group (siblings: ``switch(c, a, b)`` and
``switch(c, d, e)`` with one ``c``). Groups are formed from the last node backwards and replaced
at once, so a later group sees an earlier one as a single node.

Groups of one node stay as they are. The Composite computes each inner node with the same
numpy function, in the node's own dtype, so results, warnings and errors (a broadcast that
fails is still numpy's ValueError) are those of the chain.

Mode numba lowers a Composite in a loop body through its own loops over the elements
(``symscan/backends/numba/fused.py``); ``FUSE_FOR_NUMBA`` can keep graphs bound for numba
unfused. The default mode's graphs with loops stay unfused (``fusion_allowed``).
``rewrites=["-fusion"]`` switches fusion off.
"""

from __future__ import annotations

from rewrites.registry import register
from symscan.graph.basic import Apply, Constant, Variable
from symscan.graph.fg import OUTPUT, FunctionGraph
from symscan.tensor.composite import composite_of
from symscan.tensor.elemwise import Cast, Elemwise

FUSE_FOR_NUMBA = True
"""Whether graphs compiled for numba (mode numba, the default mode's hand-over) are fused."""

MAX_GROUP = 64
"""A cap on the nodes of one group: the Composite's label, signature and generated code stay small."""

MAX_REGROWTHS = 4
"""How often a group is grown again without members that cannot be extra outputs."""

MAX_SEARCH = 500
"""Nodes visited looking for a path from an extra output's readers back into its group."""


def fusion_allowed(fgraph: FunctionGraph) -> bool:
    """Always, except in the default mode's graphs with loops (``numba_ahead == "tiered"``,
    marked by ``function``): their rewrite diffs and pictures still show the user's own ops
    (``ss.draw(f, rewrites="diff")`` does not yet match a fused chain with the ops it fused);
    and in mode numba's when ``FUSE_FOR_NUMBA`` is off."""
    ahead = getattr(fgraph, "numba_ahead", False)
    return ahead != "tiered" and (FUSE_FOR_NUMBA or not ahead)


@register("fusion", phase="fusion", tags=("fusion",), kind="graph")
def fuse_elementwise(fgraph: FunctionGraph) -> list:
    if not fusion_allowed(fgraph):
        return []
    order = fgraph.toposort()
    position = {node: i for i, node in enumerate(order)}
    fused = []
    for node in reversed(order):
        # each group is replaced at once: later groups see it as one node (and never enter it)
        if node not in fgraph.apply_nodes or not _fusable(node):
            continue
        group, extras = _group(fgraph, node, position)
        if len(group) > 1:
            fused.append(_replace(fgraph, node, sorted(group, key=position.get), extras))
    return fused


def _fusable(node: Apply) -> bool:
    return isinstance(node.op, (Elemwise, Cast))


def _group(fgraph: FunctionGraph, root: Apply, position: dict) -> tuple[set, list]:
    """The group rooted at ``root`` and its members read outside it (extra outputs), grown
    again without the members that cannot be extra outputs until every one can; a 0-d group
    takes its members' 0-d readers too (siblings), unless that closes a cycle through the root."""
    refused: set[Apply] = set()
    for siblings in ((True, False) if root.outputs[0].ndim == 0 else (False,)):
        for _ in range(MAX_REGROWTHS):
            group = _grow(fgraph, root, refused, position if siblings else None)
            extras = [n for n in sorted(group, key=position.get)
                      if n is not root and _read_outside(fgraph, n, group)]
            if siblings and _leads_back(fgraph, root, group):
                break
            bad = _bad_extras(fgraph, root, group, extras)
            if not bad:
                return group, extras
            refused |= bad
    return _grow(fgraph, root, None, None), []


def _grow(fgraph: FunctionGraph, root: Apply, refused: set | None, siblings: dict | None) -> set[Apply]:
    """Producers joining from the root upwards (see the module docstring); one read outside
    the group joins unless it was ``refused`` (None: refuse all). With ``siblings`` (the
    nodes' positions in a topological order), readers of members join too."""
    group = {root}
    pending = [root]
    while pending and len(group) < MAX_GROUP:
        node = pending.pop()
        joining = [var.owner for var in node.inputs if var.owner is not None]
        if siblings is not None:
            joining += [c for c, _ in fgraph.clients[node.outputs[0]]
                        if c != OUTPUT and c not in group and _joins(c, root) and _sibling(c, group, siblings)]
        for other in joining:
            if other in group or not _joins(other, root):
                continue
            if _read_outside(fgraph, other, group) and (refused is None or other in refused):
                continue
            group.add(other)
            pending.append(other)
    return group


def _sibling(node: Apply, group: set, position: dict) -> bool:
    """A reader of members whose other operands do not depend on the group (searched upwards
    down to the first member's position; ``_leads_back`` checks the paths the other way)."""
    first = min(position[n] for n in group)
    pending = [v.owner for v in node.inputs if v.owner is not None and v.owner not in group]
    seen: set = set()
    while pending:
        current = pending.pop()
        if current in group or len(seen) > MAX_SEARCH:
            return False
        if current in seen or position.get(current, first) < first:  # (a fused node: searched)
            continue
        seen.add(current)
        pending.extend(v.owner for v in current.inputs if v.owner is not None)
    return True


def _joins(producer: Apply, root: Apply) -> bool:
    out, target = producer.outputs[0], root.outputs[0]
    if not _fusable(producer) or out.ndim != target.ndim:
        return False
    # computed once along an axis of static length 1, it would be computed per element there
    return not any(n == 1 and m != 1 for n, m in zip(out.type.shape, target.type.shape))


def _read_outside(fgraph: FunctionGraph, node: Apply, group: set) -> bool:
    return any(client == OUTPUT or client not in group for client, _ in fgraph.clients[node.outputs[0]])


def _bad_extras(fgraph: FunctionGraph, root: Apply, group: set, extras: list) -> set[Apply]:
    """Extra outputs that would change a shape or close a cycle.

    A fused output has the broadcast shape of all the group's inputs; an extra output keeps its
    own only if it reads every input with axes (for 0-d groups, all shapes are ()). And no
    reader outside may lead back into the group: the group would then feed itself."""
    bad = set()
    if root.outputs[0].ndim > 0:
        shaping = {v for v in _group_inputs(group) if v.ndim > 0}
        bad |= {n for n in extras if not shaping <= _inputs_read(n, group)}
    return bad | {n for n in extras if n not in bad and _leads_back(fgraph, n, group)}


def _inputs_read(node: Apply, group: set) -> set[Variable]:
    """The values from outside the group that ``node`` reads through group members."""
    read, pending, seen = set(), [node], set()
    while pending:
        current = pending.pop()
        for var in current.inputs:
            if var.owner in group:
                if var.owner not in seen:
                    seen.add(var.owner)
                    pending.append(var.owner)
            else:
                read.add(var)
    return read


def _leads_back(fgraph: FunctionGraph, node: Apply, group: set) -> bool:
    """Whether a reader of ``node`` outside the group reaches a group member (or whether the
    search is too long to tell: then it is taken to)."""
    pending = [c for c, _ in fgraph.clients[node.outputs[0]] if c != OUTPUT and c not in group]
    seen: set = set()
    while pending:
        current = pending.pop()
        if current in group:
            return True
        if current in seen:
            continue
        seen.add(current)
        if len(seen) > MAX_SEARCH:
            return True
        pending.extend(c for out in current.outputs for c, _ in fgraph.clients.get(out, []) if c != OUTPUT)
    return False


def _replace(fgraph: FunctionGraph, root: Apply, group: list, extras: list) -> tuple:
    """Replace the group by one Composite node; the record for the report."""
    inputs = _group_inputs(group)
    olds = [root.outputs[0]] + [n.outputs[0] for n in extras]
    op, news = composite_of(inputs, olds)
    for old, new in zip(olds, news):
        new.name = old.name
    fgraph.replace_all(zip(olds, news), reason="fusion")
    return olds[0], news[0], f"{len(group)} nodes -> {op}" + (f" ({len(news)} outputs)" if extras else "")


def _group_inputs(group) -> list[Variable]:
    """The values the group reads from outside, in the order its members (in topological
    order) read them; 0-d constants stay inside."""
    seen: dict[Variable, None] = {}
    members = set(group)
    for node in group:
        for var in node.inputs:
            if var.owner in members or (isinstance(var, Constant) and var.type.ndim == 0):
                continue
            seen.setdefault(var, None)
    return list(seen)
