"""The graph IR: types, variables, Apply nodes, ops, FunctionGraph and graph utilities.

This layer imports only numpy (networkx on demand for views).
"""

from symscan.graph.basic import Apply, Constant, Op, SharedVariable, Variable, describe
from symscan.graph.clone import clone_graph, clone_replace
from symscan.graph.fg import OUTPUT, FunctionGraph, MissingInputError
from symscan.graph.merge import constant_key, node_key
from symscan.graph.nxview import to_networkx
from symscan.graph.traversal import ancestors, depends_on, graph_inputs, toposort
from symscan.graph.type import SUPPORTED_DTYPES, TensorType, Type, normalize_dtype

__all__ = [
    "Apply", "Constant", "FunctionGraph", "MissingInputError", "OUTPUT", "Op", "SUPPORTED_DTYPES",
    "SharedVariable", "TensorType", "Type", "Variable", "ancestors", "clone_graph", "clone_replace",
    "constant_key", "depends_on", "describe", "graph_inputs", "node_key", "normalize_dtype",
    "to_networkx", "toposort",
]
