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
- every reader of its result is in the group, so the group has one output and the node is
  computed nowhere else.

Groups of one node stay as they are. The Composite computes each inner node with the same
numpy function, in the node's own dtype, so results, warnings and errors (a broadcast that
fails is still numpy's ValueError) are those of the chain.

For mode numba and the default mode's numba hand-over, fusion waits for the numba lowering of
``Composite``: ``FUSE_FOR_NUMBA`` switches it on there. ``rewrites=["-fusion"]`` switches it off.
"""

from __future__ import annotations

from rewrites.registry import register
from symscan.graph.basic import Apply, Constant, Variable
from symscan.graph.fg import OUTPUT, FunctionGraph
from symscan.tensor.composite import composite_of
from symscan.tensor.elemwise import Cast, Elemwise

FUSE_FOR_NUMBA = False
"""Whether graphs compiled for numba (mode numba, the default mode's hand-over) are fused; on
once numba lowers ``Composite`` (``symscan/backends/numba/fused.py``)."""

MAX_GROUP = 64
"""A cap on the nodes of one group: the Composite's label, signature and generated code stay small."""


def fusion_allowed(fgraph: FunctionGraph) -> bool:
    """Not when the graph goes to numba (see ``FUSE_FOR_NUMBA``); ``function`` sets the mark."""
    return FUSE_FOR_NUMBA or not getattr(fgraph, "numba_ahead", False)


@register("fusion", phase="fusion", tags=("fusion",), kind="graph")
def fuse_elementwise(fgraph: FunctionGraph) -> list:
    if not fusion_allowed(fgraph):
        return []
    fused, assigned = [], set()
    for node in reversed(fgraph.toposort()):
        if node in assigned or not _fusable(node):
            continue
        group = _grow(fgraph, node)
        assigned.update(group)
        if len(group) > 1:
            fused.append(_replace(fgraph, node, group))
    return fused


def _fusable(node: Apply) -> bool:
    return isinstance(node.op, (Elemwise, Cast))


def _grow(fgraph: FunctionGraph, root: Apply) -> set[Apply]:
    """The group rooted at ``root`` (see the module docstring), in no particular order."""
    group = {root}
    pending = [root]
    while pending and len(group) < MAX_GROUP:
        node = pending.pop()
        for var in node.inputs:
            producer = var.owner
            if producer is None or producer in group or not _joins(fgraph, producer, root, group):
                continue
            group.add(producer)
            pending.append(producer)
    return group


def _joins(fgraph: FunctionGraph, producer: Apply, root: Apply, group: set) -> bool:
    out, target = producer.outputs[0], root.outputs[0]
    if not _fusable(producer) or out.ndim != target.ndim:
        return False
    if any(n == 1 and m != 1 for n, m in zip(out.type.shape, target.type.shape)):
        return False  # computed once along that axis, it would be computed per element
    return all(client != OUTPUT and client in group for client, _ in fgraph.clients[out])


def _replace(fgraph: FunctionGraph, root: Apply, group: set) -> tuple:
    """Replace the group by one Composite node; the record for the report."""
    inputs = _group_inputs(root, group)
    out = root.outputs[0]
    op, (new,) = composite_of(inputs, [out])
    new.name = out.name
    fgraph.replace(out, new, reason="fusion")
    return out, new, f"{len(group)} nodes -> {op}"


def _group_inputs(root: Apply, group: set) -> list[Variable]:
    """The values the group reads from outside, in a stable order (0-d constants stay inner)."""
    seen: dict[Variable, None] = {}
    for node in _ordered(root, group):
        for var in node.inputs:
            if var.owner in group or (isinstance(var, Constant) and var.type.ndim == 0):
                continue
            seen.setdefault(var, None)
    return list(seen)


def _ordered(root: Apply, group: set) -> list[Apply]:
    """The group's nodes in topological order, depth first from the root: a stable order, so
    the inputs are numbered as the chain reads them (every member is an ancestor of the root)."""
    order, done = [], set()

    def visit(node: Apply) -> None:
        if node in done:
            return
        done.add(node)
        for var in node.inputs:
            if var.owner in group:
                visit(var.owner)
        order.append(node)

    visit(root)
    return order
