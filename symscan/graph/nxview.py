"""networkx views of a graph, for analysis (reachability, generations) and drawing.

networkx is imported here only, on first use, to keep ``import symscan`` light.
"""

from __future__ import annotations

from collections.abc import Sequence

from symscan.graph.basic import Apply, Constant, SharedVariable, Variable
from symscan.graph.traversal import toposort


def to_networkx(graph_or_outputs, inputs: Sequence[Variable] = ()):
    """A bipartite DiGraph: variable nodes and Apply nodes, edges in the direction of flow.

    Node attributes: ``kind`` ("variable" or "apply"), ``label`` (name or op), ``type`` for
    variables, and ``role`` ("input", "constant", "shared", "output" or "inner") for variables.
    Edges into an Apply carry ``position`` (which input); edges out of it carry ``index``.
    """
    import networkx as nx

    if hasattr(graph_or_outputs, "outputs") and hasattr(graph_or_outputs, "apply_nodes"):
        inputs, outputs = graph_or_outputs.inputs, graph_or_outputs.outputs
    else:
        outputs = list(graph_or_outputs) if isinstance(graph_or_outputs, (list, tuple)) else [graph_or_outputs]
    graph = nx.DiGraph()

    def add_var(var: Variable) -> None:
        if var in graph:
            return
        role = ("input" if var in inputs else "constant" if isinstance(var, Constant)
                else "shared" if isinstance(var, SharedVariable) else "output" if var in outputs
                else "inner" if var.owner is not None else "input")
        graph.add_node(var, kind="variable", label=repr(var), type=str(var.type), role=role)

    for node in toposort(outputs, stop_at=inputs):
        graph.add_node(node, kind="apply", label=str(node.op))
        for position, var in enumerate(node.inputs):
            add_var(var)
            graph.add_edge(var, node, position=position)
        for index, var in enumerate(node.outputs):
            add_var(var)
            graph.add_edge(node, var, index=index)
    for var in list(inputs) + list(outputs):
        add_var(var)
    return graph


def apply_nodes_of(graph) -> list[Apply]:
    """The Apply nodes of a view, in topological order."""
    import networkx as nx

    return [n for n in nx.topological_sort(graph) if isinstance(n, Apply)]
