"""``merge``: identical constants and identical nodes (same op, same inputs) become one."""

from __future__ import annotations

from rewrites.registry import register
from symscan.graph.basic import Constant
from symscan.graph.fg import FunctionGraph
from symscan.graph.merge import constant_key, node_key


@register("merge", phase="merge", tags=("merge",), kind="graph")
def merge_identical(fgraph: FunctionGraph) -> list:
    """One pass in topological order: later duplicates are replaced by the first seen."""
    done = []
    seen_constants: dict = {}
    for var in list(fgraph.clients):
        if isinstance(var, Constant) and fgraph.clients.get(var):
            first = seen_constants.setdefault(constant_key(var), var)
            if first is not var:
                fgraph.replace(var, first, reason="merge")
                done.append((var, first, f"constant {var!r} merged"))
    seen_nodes: dict = {}
    for node in fgraph.toposort():
        if node not in fgraph.apply_nodes:
            continue
        first = seen_nodes.setdefault(node_key(node), node)
        if first is not node:
            for old, new in zip(node.outputs, first.outputs):
                if fgraph.clients.get(old):
                    fgraph.replace(old, new, reason="merge")
            done.append((node.outputs[0], first.outputs[0], f"{node.op} merged with an identical node"))
    return done
