"""Walking graphs: toposort, ancestors, graph_inputs, depends_on."""

import sys

import numpy as np

import symscan as ss
import symscan.tensor as T
from symscan.graph import ancestors, depends_on, graph_inputs, toposort

import both_modes


def _assert_topological(order):
    """Every node comes after the producers of its inputs, and each node appears once."""
    position = {node: i for i, node in enumerate(order)}
    assert len(position) == len(order)
    for node in order:
        for var in node.inputs:
            if var.owner is not None and var.owner in position:
                assert position[var.owner] < position[node], f"{var.owner} after its reader {node}"


def _diamond():
    x, y = T.vector("x"), T.vector("y")
    a = x + y
    b = T.exp(a)
    c = T.sin(a)
    d = b * c
    return x, y, a, b, c, d


def test_toposort_orders_each_node_after_its_inputs_producers():
    x, y, a, b, c, d = _diamond()
    order = toposort([d])
    assert set(order) == {a.owner, b.owner, c.owner, d.owner}
    _assert_topological(order)
    assert order[0] is a.owner and order[-1] is d.owner


def test_toposort_is_deterministic_and_follows_input_order():
    x, y, a, b, c, d = _diamond()
    assert toposort([d]) == toposort([d])
    assert toposort([d]) == [a.owner, b.owner, c.owner, d.owner]


def test_toposort_of_several_outputs_shares_nodes():
    x, y, a, b, c, d = _diamond()
    order = toposort([b, d, c])
    assert len(order) == 4
    _assert_topological(order)
    assert order.index(b.owner) < order.index(d.owner)


def test_toposort_of_a_root_is_empty():
    x = T.vector("x")
    assert toposort([x]) == []
    assert toposort([T.constant(1.0)]) == []


def test_toposort_stops_at_given_variables():
    x, y, a, b, c, d = _diamond()
    assert toposort([d], stop_at=[a]) == [b.owner, c.owner, d.owner]
    assert toposort([d], stop_at=[d]) == []


def test_toposort_on_a_random_dag(rng):
    leaves = [T.scalar(f"v{i}") for i in range(4)]
    pool = list(leaves)
    for _ in range(60):
        i, j = rng.integers(0, len(pool), size=2)
        pool.append(pool[i] * pool[j] if rng.random() < 0.5 else pool[i] + pool[j])
    outputs = pool[-5:]
    order = toposort(outputs)
    _assert_topological(order)
    # exactly the nodes reachable from the outputs
    reachable, stack = set(), [o.owner for o in outputs]
    while stack:
        node = stack.pop()
        if node is None or node in reachable:
            continue
        reachable.add(node)
        stack.extend(v.owner for v in node.inputs)
    assert set(order) == reachable


def test_deep_chain_does_not_hit_the_recursion_limit():
    depth = 5000
    assert depth > sys.getrecursionlimit()
    x = T.scalar("x")
    y = x
    for _ in range(depth):
        y = y + 1.0
    order = toposort([y])
    assert len(order) == depth
    _assert_topological(order)
    assert len(ancestors([y])) == 2 * depth + 1  # x, each constant, each sum
    assert graph_inputs([y])[0] is x
    assert depends_on([y], [x])
    f = both_modes.function([x], y)  # the reference interpreter and the generated code
    assert f(np.float64(0.5)) == depth + 0.5


def test_ancestors_include_outputs_and_every_variable_above():
    x, y, a, b, c, d = _diamond()
    anc = ancestors([d])
    assert set(anc) == {x, y, a, b, c, d}
    assert len(anc) == len(set(anc))
    assert set(ancestors([x])) == {x}
    assert set(ancestors([d], stop_at=[a])) == {a, b, c, d}


def test_graph_inputs_are_the_roots_in_order():
    x, y = T.vector("x"), T.vector("y")
    k = T.constant(2.0)
    s = ss.shared(np.ones(2), name="s")
    out = (y * k + x) * s
    roots = graph_inputs([out])
    assert set(roots) == {x, y, k, s}
    assert roots.index(y) < roots.index(x)  # first-use order
    assert all(r.owner is None for r in roots)


def test_graph_inputs_respects_stop_at():
    x, y, a, b, c, d = _diamond()
    assert graph_inputs([d], stop_at=[a]) == [a]
    assert set(graph_inputs([d, a])) == {x, y}


def test_depends_on():
    x, y, a, b, c, d = _diamond()
    z = T.vector("z")
    assert depends_on([d], [x])
    assert depends_on([d], [a])
    assert depends_on([a], [a])  # a variable depends on itself
    assert not depends_on([d], [z])
    assert not depends_on([x], [a])
    assert depends_on([T.exp(z), d], [y])
    assert not depends_on([d], [])
