"""clone_graph and clone_replace."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.graph import TensorType, ancestors, clone_graph, clone_replace, graph_inputs, toposort

import both_modes


def _graph():
    x, y = T.vector("x"), T.vector("y")
    k = T.constant(2.0, name="k")
    s = ss.shared(np.array([1.0, -1.0]), name="s")
    a = x * k
    b = T.exp(y) + s
    out = a + b
    return x, y, k, s, a, b, out


# ---------------------------------------------------------------------------- clone_graph
def test_clone_graph_copies_every_node():
    x, y, k, s, a, b, out = _graph()
    memo = clone_graph([x, y], [out])
    new_out = memo[out]
    assert new_out is not out
    old_nodes, new_nodes = toposort([out]), toposort([new_out])
    assert len(new_nodes) == len(old_nodes)
    assert not set(old_nodes) & set(new_nodes)
    assert [n.op for n in new_nodes] == [n.op for n in old_nodes]
    assert all(memo[o] is n.outputs[0] for o, n in zip((n.outputs[0] for n in old_nodes), new_nodes))


def test_clone_graph_copies_inputs_but_keeps_constants_and_shared():
    x, y, k, s, a, b, out = _graph()
    memo = clone_graph([x, y], [out])
    assert memo[x] is not x and memo[x].type == x.type and memo[x].name == "x"
    assert memo[k] is k
    assert memo[s] is s
    roots = set(graph_inputs([memo[out]]))
    assert roots == {memo[x], memo[y], k, s}


def test_clone_graph_without_copying_inputs():
    x, y, k, s, a, b, out = _graph()
    memo = clone_graph([x, y], [out], copy_inputs=False)
    assert memo[x] is x and memo[y] is y
    assert memo[out] is not out
    assert set(graph_inputs([memo[out]])) == {x, y, k, s}


def test_clone_graph_keeps_free_roots():
    x, y, k, s, a, b, out = _graph()
    memo = clone_graph([x], [out])
    assert memo[y] is y
    assert y in graph_inputs([memo[out]])


def test_clone_graph_keeps_names_and_the_original_untouched():
    x, y, k, s, a, b, out = _graph()
    a.name = "a"
    before = [(n, list(n.inputs)) for n in toposort([out])]
    memo = clone_graph([x, y], [out])
    assert memo[a].name == "a"
    assert [(n, n.inputs) for n in toposort([out])] == before


def test_clone_graph_output_that_is_an_input():
    x = T.vector("x")
    memo = clone_graph([x], [x])
    assert memo[x] is not x and memo[x].owner is None


def test_cloned_graph_computes_the_same_values(mode):
    x, y, k, s, a, b, out = _graph()
    memo = clone_graph([x, y], [out])
    xv, yv = np.array([1.0, 2.0]), np.array([0.5, -0.5])
    f_old = ss.function([x, y], out, mode=mode)
    f_new = ss.function([memo[x], memo[y]], memo[out], mode=mode)
    expected = xv * 2.0 + np.exp(yv) + np.array([1.0, -1.0])
    np.testing.assert_allclose(f_old(xv, yv), expected)
    np.testing.assert_allclose(f_new(xv, yv), expected)


# ---------------------------------------------------------------------------- clone_replace
def test_clone_replace_substitutes_and_rebuilds_only_dependent_nodes():
    x, y, k, s, a, b, out = _graph()
    z = T.vector("z")
    [new_out] = clone_replace([out], {x: z})
    assert new_out is not out
    new_nodes = set(toposort([new_out]))
    assert b.owner in new_nodes  # exp(y) + s does not depend on x: shared, not copied
    assert a.owner not in new_nodes  # x * k was rebuilt
    assert set(graph_inputs([new_out])) == {z, y, k, s}
    assert x not in ancestors([new_out])
    assert new_out.owner.inputs[1] is b


def test_clone_replace_without_dependency_returns_the_same_variables():
    x, y, k, s, a, b, out = _graph()
    z = T.vector("z")
    assert clone_replace([b], {x: z}) == [b]


def test_clone_replace_leaves_the_original_graph_alone():
    x, y, k, s, a, b, out = _graph()
    z = T.vector("z")
    clone_replace([out], {x: z})
    assert a.owner.inputs[0] is x
    assert x in graph_inputs([out])


def test_clone_replace_of_an_output_itself():
    x, y, k, s, a, b, out = _graph()
    z = T.vector("z")
    assert clone_replace([out, a], {out: z}) == [z, a]


def test_clone_replace_reinfers_types_when_the_static_shape_changes():
    x = T.vector("x")
    y = T.exp(x) * 2.0
    assert y.type == TensorType("float64", (None,))
    x3 = T.tensor("float64", (3,), name="x3")
    [new] = clone_replace([y], {x: x3})
    assert new.type == TensorType("float64", (3,))
    assert new.owner.inputs[0].type == TensorType("float64", (3,))
    assert y.type == TensorType("float64", (None,))


def test_clone_replace_reinfers_dtypes():
    x = T.vector("x")
    y = x + x
    xf = T.fvector("xf")
    [new] = clone_replace([y], {x: xf})
    assert new.dtype == "float32"


def test_clone_replace_with_an_expression(mode):
    x, y = T.vector("x"), T.vector("y")
    out = (x * 3.0).sum()
    [new] = clone_replace([out], {x: y + 1.0})
    f = ss.function([y], new, mode=mode)
    yv = np.array([1.0, 2.0, 4.0])
    assert f(yv) == pytest.approx(((yv + 1.0) * 3.0).sum())


def test_clone_replace_several_at_once():
    x, y = T.vector("x"), T.vector("y")
    out = x - y
    [new] = clone_replace([out], {x: y, y: x})  # a swap, not a chain
    f = both_modes.function([x, y], new)
    np.testing.assert_allclose(f(np.array([5.0]), np.array([2.0])), [-3.0])
