"""disjoint_increments: increments into zeros at disjoint slices, added up, become one chain of
increments; numbers as mode "py" with the rule and without, the same errors, and overlapping
slices left alone."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.scan.op import Scan
from symscan.tensor.elemwise import Elemwise
from symscan.tensor.subtensor import IncSubtensor

OFF = ["-disjoint_increments"]


def _added_increments(graph) -> int:
    """How many increments' results are added to something."""
    return sum(1 for n in graph.apply_nodes if n.op == Elemwise("add")
               for i in n.inputs if i.owner is not None and isinstance(i.owner.op, IncSubtensor))


def _chained(graph) -> int:
    return sum(1 for n in graph.apply_nodes if isinstance(n.op, IncSubtensor)
               and n.inputs[0].owner is not None and isinstance(n.inputs[0].owner.op, IncSubtensor))


def _gates(bounds):
    """An LSTM-like cell reading four slices of one pre-activation; its gradient adds one
    increment per slice."""
    x, c = T.matrix("x"), T.matrix("c")
    i, f, o, g = (x[:, a:b] for a, b in bounds)
    cell = T.sigmoid(f) * c + T.sigmoid(i) * T.tanh(g)
    cost = (T.sigmoid(o) * T.tanh(cell)).sum()
    return [x, c], ss.grad(cost, [x, c])


TILED = [(0, 4), (4, 8), (8, 12), (12, None)]


@pytest.mark.parametrize("bounds, width, chained, added", [
    (TILED, 16, 3, 0), ([(0, 4), (4, 8), (8, 12), (13, 17)], 18, 3, 0),
    ([(1, 5), (4, 8), (8, 12), (12, None)], 16, 1, 3)])
def test_gate_gradients_agree_with_py_with_the_rule_and_without(rng, bounds, width, chained, added):
    values = [rng.normal(size=(3, width)), rng.normal(size=(3, 4))]
    inputs, grads = _gates(bounds)
    expected = ss.function(inputs, grads, mode="py")(*values)
    on = ss.function(inputs, grads, mode="fast")
    off = ss.function(inputs, grads, mode="fast", rewrites=OFF)
    for f in (on, off):
        for got, want in zip(f(*values), expected):
            np.testing.assert_array_equal(got, want)
    # disjoint slices become one chain; with 1:5 and 4:8 overlapping, only one pair can
    assert (_chained(on.fgraph), _chained(off.fgraph)) == (chained, 0)
    assert len(on.fgraph.apply_nodes) <= len(off.fgraph.apply_nodes) - (chained == 3)  # the fused sum goes
    unfused = [ss.function(inputs, grads, mode="fast", rewrites=["-fusion"] + extra) for extra in ([], OFF)]
    assert [_added_increments(f.fgraph) for f in unfused] == [added, 4]
    assert len(unfused[0].fgraph.apply_nodes) == len(unfused[1].fgraph.apply_nodes) - chained


def test_a_loop_body_gets_one_chain(rng):
    xs, h0 = T.tensor3("xs"), T.matrix("h0")

    def step(x, h):
        pre = x + h.sum(axis=1, keepdims=True)
        return T.tanh(T.sigmoid(pre[:, :2]) * T.tanh(pre[:, 2:4]) + T.exp(pre[:, 4:]).sum(axis=1, keepdims=True))

    hs, _ = ss.scan(step, sequences=xs, outputs_info=h0)
    grads = ss.grad((hs ** 2).sum(), [xs, h0])
    values = [rng.normal(size=(5, 3, 6)), rng.normal(size=(3, 2))]
    expected = ss.function([xs, h0], grads, mode="py")(*values)
    on = ss.function([xs, h0], grads, mode="fast", rewrites=["-fusion"])
    for got, want in zip(on(*values), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    bodies = [g for n in on.fgraph.apply_nodes if isinstance(n.op, Scan) for g in n.op.inner_graphs()]
    assert sum(_chained(g) for g in bodies) == 2 and sum(_added_increments(g) for g in bodies) == 0


@pytest.mark.parametrize("rewrites", [None, OFF])
def test_a_value_that_does_not_fit_its_slice_still_raises(rewrites):
    m, v1, v2 = T.matrix("m"), T.matrix("v1"), T.matrix("v2")
    out = T.inc_subtensor(T.zeros_like(m)[:, :2], v1) + T.inc_subtensor(T.zeros_like(m)[:, 2:], v2)
    f = ss.function([m, v1, v2], out, mode="fast", rewrites=rewrites)
    assert _chained(f.fgraph) == (0 if rewrites else 1)
    np.testing.assert_array_equal(f(np.ones((3, 5)), np.ones((3, 2)), np.full((3, 3), 2.0)),
                                  [[1, 1, 2, 2, 2]] * 3)
    with pytest.raises(ValueError, match="broadcast"):
        f(np.ones((3, 5)), np.ones((3, 3)), np.full((3, 3), 2.0))
    with pytest.raises(ValueError, match="broadcast"):
        f(np.ones((3, 5)), np.ones((3, 2)), np.full((3, 2), 2.0))


def test_zeros_of_unrelated_shapes_are_not_chained():
    m, n, v1, v2 = T.matrix("m"), T.matrix("n"), T.matrix("v1"), T.matrix("v2")
    out = T.inc_subtensor(T.zeros_like(m)[:, :2], v1) + T.inc_subtensor(T.zeros_like(n)[:, 2:], v2)
    f = ss.function([m, n, v1, v2], out, mode="fast")
    assert _chained(f.fgraph) == 0
    got = f(np.ones((3, 4)), np.ones((1, 4)), np.ones((3, 2)), np.ones((1, 2)))  # n's row broadcasts
    np.testing.assert_array_equal(got, np.ones((3, 4)))


def test_zeros_whose_shape_reference_may_raise_are_kept():
    m, k, v1, v2 = T.matrix("m"), T.lscalar("k"), T.matrix("v1"), T.matrix("v2")
    raising = T.zeros_like(m + k ** -1)  # numpy: integers to negative integer powers are not allowed
    out = T.inc_subtensor(T.zeros_like(m)[:, :2], v1) + T.inc_subtensor(raising[:, 2:], v2)
    f = ss.function([m, k, v1, v2], out, mode="fast")
    assert _chained(f.fgraph) == 0
    with pytest.raises(ValueError, match="negative integer powers"):
        f(np.ones((3, 4)), 2, np.ones((3, 2)), np.ones((3, 2)))
