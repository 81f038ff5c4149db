"""Rewrites of the lazy conditional (``symscan.scan.ifelse.IfElse``).

- ``ifelse_constant_condition``: a constant condition inlines the branch it picks;
- ``ifelse_same_branches``: branches of the same structure inline one of them (the condition
  stays computed, hung on the results, so that an error computing it stays an error);
- ``ifelse_remove_unused``: captured values no branch reads, outputs nobody reads;
- ``ifelse_lift_computed``: a branch node whose equivalent (same op, same outer inputs) the
  enclosing graph computes anyway reads that value instead (the builder copies such work into
  the branch when the rest of the graph is not known yet);
- ``ifelse_lift_shared``: a node both branches compute from the same captured values runs
  once, before the conditional.

None of them moves work only one branch does out of that branch: a lift takes a value that is
computed whatever the condition says, so an error stays an error and a result a result.
"""

from __future__ import annotations

from rewrites.registry import Rewritten, register
from symscan.graph.basic import Apply, Constant, Variable
from symscan.graph.fg import OUTPUT, FunctionGraph
from symscan.graph.signature import graph_signature
from symscan.graph.traversal import ancestors, toposort
from symscan.scan.checks import AfterChecks
from symscan.scan.ifelse import IfElse
from symscan.tensor.random import RandomVariable


# ---------------------------------------------------------------------------- inlining
@register("ifelse_constant_condition", phase="canonicalize", tracks=(IfElse,), tags=("canonicalize", "ifelse"))
def ifelse_constant_condition(fgraph, node):
    condition = node.inputs[0]
    if not isinstance(condition, Constant):
        return None
    taken = bool(condition.data)
    graph = node.op.then_graph if taken else node.op.else_graph
    results = inline(graph.outputs, dict(zip(graph.inputs, node.inputs[1:])))
    return Rewritten(dict(zip(node.outputs, results)),
                     f"the condition is always {taken}: the {'then' if taken else 'else'} branch inlined")


@register("ifelse_same_branches", phase="canonicalize", tracks=(IfElse,), tags=("canonicalize", "ifelse"))
def ifelse_same_branches(fgraph, node):
    then_graph, else_graph = node.op.inner_graphs()
    if graph_signature(then_graph) != graph_signature(else_graph):
        return None
    results = inline(then_graph.outputs, dict(zip(then_graph.inputs, node.inputs[1:])))
    condition = node.inputs[0]
    if condition.owner is not None:  # keep computing it: it may raise
        results = [AfterChecks()(r, condition) for r in results]
    return Rewritten(dict(zip(node.outputs, results)), "both branches compute the same: one inlined")


def inline(outputs: list[Variable], replace: dict[Variable, Variable]) -> list[Variable]:
    """A branch's ``outputs`` computed by new nodes, with each key of ``replace`` (inputs, or
    inner values) read as its value. Every node is new: a branch's own nodes stay in the branch."""
    memo = dict(replace)
    for node in toposort(outputs, stop_at=replace.keys()):
        new = node.clone_with_new_inputs([memo.get(v, v) for v in node.inputs])
        memo.update(zip(node.outputs, new.outputs))
    return [memo.get(o, o) for o in outputs]


# ---------------------------------------------------------------------------- unused parts
@register("ifelse_remove_unused", phase="canonicalize", tracks=(IfElse,), tags=("canonicalize", "ifelse"))
def ifelse_remove_unused(fgraph, node):
    used = [j for j, out in enumerate(node.outputs) if fgraph.clients.get(out)]
    if not used:
        return None  # the node goes with its last reader
    graphs = node.op.inner_graphs()
    read = set().union(*(ancestors([g.outputs[j] for j in used]) for g in graphs))
    kept = [i for i in range(len(node.inputs) - 1) if any(g.inputs[i] in read for g in graphs)]
    if len(used) == len(node.outputs) and len(kept) == len(node.inputs) - 1:
        return None
    captured = [node.inputs[1 + i] for i in kept]
    new_graphs = []
    for g in graphs:
        fresh = [g.inputs[i].type.make_variable(name=g.inputs[i].name) for i in kept]
        outputs = inline([g.outputs[j] for j in used], {g.inputs[i]: f for i, f in zip(kept, fresh)})
        new_graphs.append(FunctionGraph(fresh, outputs, clone=False))
    new = node.op.with_inner_graphs(new_graphs).make_node(node.inputs[0], *captured)
    dropped = len(node.inputs) - 1 - len(kept), len(node.outputs) - len(used)
    return Rewritten({node.outputs[j]: out for j, out in zip(used, new.outputs)},
                     f"dropped {dropped[0]} unread captured value(s) and {dropped[1]} unused output(s)")


# ---------------------------------------------------------------------------- lifting
@register("ifelse_lift_computed", phase="push_out", tracks=(IfElse,), tags=("push_out", "ifelse"))
def ifelse_lift_computed(fgraph, node):
    index = {key: n for n in fgraph.apply_nodes if (key := _outer_key(n)) is not None}
    lifted = []
    for graph in node.op.inner_graphs():
        outer_of = dict(zip(graph.inputs, node.inputs[1:]))
        for inner in graph.toposort():
            key = _inner_key(inner, outer_of)
            found = index.get(key) if key is not None else None
            if found is not None and found is not node:
                outer_of.update(zip(inner.outputs, found.outputs))
        lifted.append({v: o for v, o in outer_of.items() if v.owner is not None})
    if not any(lifted):
        return None
    new = rebuild(node, lifted)
    moved = sorted({str(v.owner.op) for mapping in lifted for v in mapping})
    return Rewritten(dict(zip(node.outputs, new.outputs)),
                     f"branch work the graph computes anyway read from there: {', '.join(moved)}")


@register("ifelse_lift_shared", phase="push_out", tracks=(IfElse,), tags=("push_out", "ifelse"))
def ifelse_lift_shared(fgraph, node):
    then_graph, else_graph = node.op.inner_graphs()
    then_of = dict(zip(then_graph.inputs, node.inputs[1:]))
    else_of = dict(zip(else_graph.inputs, node.inputs[1:]))
    moved = []
    changed = True
    while changed:  # a lifted node may make the nodes reading it liftable
        changed = False
        candidates = {}
        for inner in then_graph.toposort():
            if inner.outputs[0] not in then_of and (key := _inner_key(inner, then_of)) is not None:
                candidates.setdefault(key, inner)
        for inner in else_graph.toposort():
            key = _inner_key(inner, else_of) if inner.outputs[0] not in else_of else None
            twin = candidates.pop(key, None) if key is not None else None
            if twin is None:
                continue
            outer = inner.op.make_node(*[else_of.get(v, v) for v in inner.inputs])
            then_of.update(zip(twin.outputs, outer.outputs))
            else_of.update(zip(inner.outputs, outer.outputs))
            moved.append(str(inner.op))
            changed = True
    if not moved:
        return None
    lifted = [{v: o for v, o in mapping.items() if v.owner is not None} for mapping in (then_of, else_of)]
    new = rebuild(node, lifted)
    return Rewritten(dict(zip(node.outputs, new.outputs)),
                     f"work both branches do computed once before the conditional: {', '.join(moved)}")


def _liftable(node: Apply) -> bool:
    return not isinstance(node.op, RandomVariable)


def _ref(var: Variable, outer_of: dict):
    if isinstance(var, Constant):
        return ("const", var.signature())
    return outer_of.get(var)


def _inner_key(node: Apply, outer_of: dict) -> tuple | None:
    """(op, the outer values or constants it reads), if it reads only such values."""
    if not _liftable(node):
        return None
    refs = tuple(_ref(v, outer_of) for v in node.inputs)
    return None if any(r is None for r in refs) else (node.op, refs)


def _outer_key(node: Apply) -> tuple | None:
    if not _liftable(node):
        return None
    return (node.op, tuple(_ref(v, {v: v}) for v in node.inputs))


def rebuild(node: Apply, lifted: list[dict]) -> Apply:
    """``node`` where, in each branch, the inner values in ``lifted[b]`` (inner -> outer) are
    read from new captured values. Only the values the branch still reads are captured."""
    graphs = node.op.inner_graphs()
    reads = [_frontier(g, m) for g, m in zip(graphs, lifted)]
    captured = list(node.inputs[1:])
    for values in reads:
        captured += [o for o in values.values() if o not in captured]
    new_graphs = []
    for graph, values in zip(graphs, reads):
        fresh = [v.type.make_variable(name=v.name) for v in captured]
        replace = {inner: fresh[captured.index(outer)] for inner, outer in values.items()}
        replace.update((inner, fresh[i]) for i, inner in enumerate(graph.inputs))
        new_graphs.append(FunctionGraph(fresh, inline(graph.outputs, replace), clone=False))
    return node.op.with_inner_graphs(new_graphs).make_node(node.inputs[0], *captured)


def _frontier(graph: FunctionGraph, lifted: dict) -> dict:
    """The lifted values the branch still reads: by a node that stays, or as an output."""
    return {v: o for v, o in lifted.items()
            if any(c == OUTPUT or c.outputs[0] not in lifted for c, _ in graph.clients.get(v, []))}
