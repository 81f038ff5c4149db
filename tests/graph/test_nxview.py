"""networkx views of graphs."""

import networkx as nx
import numpy as np

import symscan as ss
import symscan.tensor as T
from symscan.graph import Apply, FunctionGraph, to_networkx
from symscan.graph.nxview import apply_nodes_of


def _graph():
    x, y = T.vector("x"), T.vector("y")
    k = T.constant(2.0)
    s = ss.shared(np.ones(2), name="s")
    a = x * k
    b = a + y
    out = b * s
    return x, y, k, s, a, b, out


def test_view_is_a_bipartite_dag_of_variables_and_apply_nodes():
    x, y, k, s, a, b, out = _graph()
    g = to_networkx([out], inputs=[x, y])
    assert nx.is_directed_acyclic_graph(g)
    kinds = nx.get_node_attributes(g, "kind")
    assert {n for n, kind in kinds.items() if kind == "apply"} == {a.owner, b.owner, out.owner}
    assert {n for n, kind in kinds.items() if kind == "variable"} == {x, y, k, s, a, b, out}
    for u, v in g.edges:
        assert kinds[u] != kinds[v]  # edges only between a variable and an apply node


def test_edges_follow_the_flow_with_position_and_index():
    x, y, k, s, a, b, out = _graph()
    g = to_networkx([out], inputs=[x, y])
    assert g.has_edge(x, a.owner) and g.edges[x, a.owner]["position"] == 0
    assert g.has_edge(k, a.owner) and g.edges[k, a.owner]["position"] == 1
    assert g.has_edge(a.owner, a) and g.edges[a.owner, a]["index"] == 0
    assert not g.has_edge(a.owner, x)
    assert g.number_of_edges() == 3 * 2 + 3  # two inputs and one output per node
    assert nx.has_path(g, x, out) and not nx.has_path(g, out, x)
    assert not nx.has_path(g, y, a)


def test_roles_and_labels():
    x, y, k, s, a, b, out = _graph()
    b.name = "b"
    g = to_networkx([out], inputs=[x, y])
    roles = nx.get_node_attributes(g, "role")
    assert roles[x] == "input" and roles[y] == "input"
    assert roles[k] == "constant" and roles[s] == "shared"
    assert roles[a] == "inner" and roles[b] == "inner" and roles[out] == "output"
    assert g.nodes[b]["label"] == "b"
    assert g.nodes[out.owner]["label"] == "Elemwise{mul}"
    assert g.nodes[x]["type"] == "float64[?]"


def test_single_variable_and_free_roots():
    x = T.vector("x")
    out = T.exp(x)
    g = to_networkx(out)
    assert g.nodes[x]["role"] == "input"  # a free root counts as an input
    assert set(g.nodes) == {x, out, out.owner}


def test_view_of_a_function_graph():
    x, y, k, s, a, b, out = _graph()
    fg = FunctionGraph([x, y], [out, a])
    g = fg.networkx()
    assert set(apply_nodes_of(g)) == set(fg.apply_nodes)
    assert g.nodes[fg.outputs[0]]["role"] == "output"
    assert g.nodes[fg.inputs[0]]["role"] == "input"
    assert nx.is_directed_acyclic_graph(g)


def test_apply_nodes_of_is_topological():
    x, y, k, s, a, b, out = _graph()
    order = apply_nodes_of(to_networkx([out]))
    assert all(isinstance(n, Apply) for n in order)
    assert order == [a.owner, b.owner, out.owner]


def test_unused_input_appears_alone():
    x, y = T.vector("x"), T.vector("y")
    g = to_networkx([T.exp(x)], inputs=[x, y])
    assert y in g and g.degree(y) == 0


def test_deep_chain_view():
    x = T.scalar("x")
    y = x
    for _ in range(2000):
        y = y * 1.0001
    g = to_networkx([y])
    assert nx.is_directed_acyclic_graph(g)
    assert nx.dag_longest_path_length(g) == 2 * 2000
