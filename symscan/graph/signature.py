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


class StructuralEquality:
    """Equality and hashing for ops holding inner graphs (mixed into frozen dataclasses with
    ``_signature`` and ``_hash`` cache fields): equal parameters (``structure_params``) and
    graphs of the same structure. Both caches are computed once: a signature is as big as
    the graphs."""

    def structure_params(self) -> tuple:
        raise NotImplementedError

    def signature(self) -> tuple:
        if self._signature is None:
            object.__setattr__(self, "_signature", tuple(graph_signature(g) for g in self.inner_graphs()))
        return self._signature

    def __eq__(self, other) -> bool:
        return (self is other or type(other) is type(self) and self.structure_params() == other.structure_params()
                and self.signature() == other.signature())

    def __hash__(self) -> int:
        if self._hash is None:
            object.__setattr__(self, "_hash", hash((type(self).__name__, self.structure_params(), self.signature())))
        return self._hash

    def __getstate__(self) -> dict:
        # hashes of strings differ between processes: a pickled op computes its caches again
        return {**self.__dict__, "_signature": None, "_hash": None}
