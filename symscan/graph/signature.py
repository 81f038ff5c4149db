"""Structural signatures of whole graphs, so ops holding inner graphs can be compared."""

from __future__ import annotations

from symscan.graph.basic import Constant
from symscan.graph.fg import FunctionGraph


def graph_signature(fgraph: FunctionGraph) -> tuple:
    """Equal for two graphs that compute the same thing the same way.

    Nodes are listed in topological order as (op, input references); a reference is an
    input position, a constant's value, or (node position, output index). Input names and
    variable identities do not matter.
    """
    refs: dict = {var: ("in", i) for i, var in enumerate(fgraph.inputs)}
    nodes = []
    for position, node in enumerate(fgraph.toposort()):
        inputs = []
        for var in node.inputs:
            if var in refs:
                inputs.append(refs[var])
            elif isinstance(var, Constant):
                inputs.append(("const", var.signature()))
            else:
                inputs.append(("free", id(var)))
        nodes.append((node.op, tuple(inputs)))
        for index, out in enumerate(node.outputs):
            refs[out] = ("node", position, index)
    outputs = tuple(refs.get(o, ("const", o.signature()) if isinstance(o, Constant) else ("free", id(o)))
                    for o in fgraph.outputs)
    types = tuple(v.type for v in fgraph.inputs)
    return (types, tuple(nodes), outputs)
