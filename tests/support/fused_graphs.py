"""Structural tests of compiled graphs, seen through fusion: the nodes of a graph with each
fused chain (``Composite``) counted as the elementwise nodes it holds."""

from __future__ import annotations

from symscan.tensor.composite import Composite


def unfused_nodes(fgraph) -> list:
    """The graph's nodes, each Composite replaced by its inner nodes."""
    nodes = []
    for node in fgraph.apply_nodes:
        nodes.extend(node.op.inner.toposort() if isinstance(node.op, Composite) else [node])
    return nodes
