"""The IfElse rewrites (rewrites/ifelse.py), each alone: the structure it leaves (IfElse nodes,
what the branches hold, what runs before the conditional) and the numbers against mode "py",
with the rule on and off; laziness kept (work only one branch does stays in it); and the other
rewrites with an IfElse inside a scan body."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.scan.checks import AfterChecks
from symscan.scan.ifelse import IfElse
from symscan.tensor.assertion import assert_that
from symscan.tensor.elemwise import Elemwise
from symscan.tensor.math import Dot


def _ifelses(fgraph) -> list:
    return [n for n in fgraph.toposort() if isinstance(n.op, IfElse)]


def _ops(fgraph, name: str) -> list:
    return [n for n in fgraph.apply_nodes if isinstance(n.op, Elemwise) and n.op.name == name]


def _compile_and_compare(inputs, outputs, rules, *value_sets):
    """``outputs`` compiled in mode fast with ``rules`` alone, checked against mode py on each
    value set (results, or the same kind of error); returns the function."""
    f = ss.function(inputs, outputs, mode="fast", rewrites=rules)
    py = ss.function(inputs, outputs, mode="py")
    for values in value_sets:
        try:
            want = py(*values)
        except Exception as err:
            with pytest.raises(type(err)):
                f(*values)
            continue
        got = f(*values)
        for g, w in zip(got if isinstance(got, list) else [got], want if isinstance(want, list) else [want]):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(g, w, rtol=1e-12)
    return f


# ---------------------------------------------------------------------------- constant condition
@pytest.mark.parametrize("flag", [True, False])
def test_a_constant_condition_inlines_the_chosen_branch(flag):
    x = T.vector("x")
    # the condition folds to a constant; the other branch would fail on its shape
    out = ss.ifelse(T.constant(2.0) > (1.0 if flag else 3.0), T.exp(x).sum(), T.dot(T.ones((3,)), x))
    rules = ["constant_folding", "ifelse_constant_condition"]
    f = _compile_and_compare([x], out, rules, [np.array([1.0, 2.0])] if flag else [np.arange(3.0)])
    assert not _ifelses(f.fgraph)
    assert bool(_ops(f.fgraph, "exp")) == flag and bool([n for n in f.fgraph.apply_nodes
                                                        if isinstance(n.op, Dot)]) != flag
    off = _compile_and_compare([x], out, ["constant_folding"], [np.array([1.0, 2.0, 3.0])])
    assert len(_ifelses(off.fgraph)) == 1


# ---------------------------------------------------------------------------- identical branches
def test_identical_branches_inline_one_and_keep_the_conditions_errors():
    x = T.vector("x")
    out = ss.ifelse(x[2] > 0, T.exp(x) * 2.0, T.exp(x) * 2.0)  # x[2] fails for a short x
    f = _compile_and_compare([x], out, ["ifelse_same_branches"], [np.array([1.0, -2.0, 0.5])],
                             [np.array([1.0, -2.0])])
    assert not _ifelses(f.fgraph)
    assert [n for n in f.fgraph.apply_nodes if isinstance(n.op, AfterChecks)]
    with pytest.raises(IndexError):
        f(np.array([1.0, -2.0]))


def test_different_branches_stay():
    x, c = T.vector("x"), T.scalar("c")
    f = _compile_and_compare([c, x], ss.ifelse(c, T.exp(x), T.log(x)), ["ifelse_same_branches"],
                             [1.0, np.array([1.0, 2.0])])
    assert len(_ifelses(f.fgraph)) == 1


# ---------------------------------------------------------------------------- lifting
def test_work_the_graph_computes_anyway_is_read_from_there():
    x, c = T.vector("x"), T.scalar("c")
    e = T.exp(x)
    out = ss.ifelse(c > 0, e.sum() + T.log(x), x) + e  # exp(x) is computed after the ifelse anyway
    f = _compile_and_compare([c, x], out, ["ifelse_lift_computed"], [1.0, np.array([1.0, 2.0])],
                             [-1.0, np.array([1.0, 2.0])])
    (node,) = _ifelses(f.fgraph)
    assert not _ops(node.op.then_graph, "exp") and len(_ops(f.fgraph, "exp")) == 1
    assert _ops(node.op.then_graph, "log") and not _ops(f.fgraph, "log")  # only the then branch logs
    off = ss.function([c, x], out, mode="fast", rewrites=["-ifelse_lift_computed"])
    assert _ops(_ifelses(off.fgraph)[0].op.then_graph, "exp")


def test_work_both_branches_share_runs_once_before():
    x, W, c = T.vector("x"), T.matrix("W"), T.scalar("c")
    out = ss.ifelse(c > 0, T.tanh(T.dot(W, x)), T.dot(W, x) * 2.0)
    values = [1.0, np.array([1.0, 2.0]), np.array([[1.0, 0.5], [0.0, 2.0]])]
    f = _compile_and_compare([c, x, W], out, ["ifelse_lift_shared"], values, [-1.0, *values[1:]])
    (node,) = _ifelses(f.fgraph)
    outside = [n for n in f.fgraph.apply_nodes if isinstance(n.op, Dot)]
    assert len(outside) == 1 and outside[0] in [i.owner for i in node.inputs]
    for graph in node.op.inner_graphs():
        assert not [n for n in graph.apply_nodes if isinstance(n.op, Dot)]
    assert _ops(node.op.then_graph, "tanh") and _ops(node.op.else_graph, "mul")


def test_work_only_one_branch_does_is_never_lifted():
    y, c = T.vector("y"), T.scalar("c")
    needs_three = T.dot(T.ones((3,)), y)  # fails unless len(y) == 3
    out = ss.ifelse(c > 0, needs_three + y.sum(), y.sum() * 2.0)
    rules = ["ifelse_lift_shared", "ifelse_lift_computed", "ifelse_remove_unused", "merge"]
    f = _compile_and_compare([c, y], out, rules, [-1.0, np.arange(5.0)], [1.0, np.arange(3.0)])
    (node,) = _ifelses(f.fgraph)
    assert [n for n in node.op.then_graph.apply_nodes if isinstance(n.op, Dot)]
    assert not [n for n in f.fgraph.apply_nodes if isinstance(n.op, Dot)]
    assert f(-1.0, np.arange(5.0)) == 20.0  # the dot would raise


def test_nested_lifts_follow_chains():
    x, c = T.vector("x"), T.scalar("c")
    out = ss.ifelse(c > 0, T.exp(T.sin(x)) + 1.0, T.exp(T.sin(x)) * 2.0)
    f = _compile_and_compare([c, x], out, ["ifelse_lift_shared", "ifelse_remove_unused"],
                             [1.0, np.array([0.3, 0.4])], [0.0, np.array([0.3, 0.4])])
    (node,) = _ifelses(f.fgraph)
    assert _ops(f.fgraph, "exp") and _ops(f.fgraph, "sin")
    assert len(node.inputs) == 2  # the condition and exp(sin(x)): x itself is no longer read
    assert not _ops(node.op.then_graph, "exp") and not _ops(node.op.else_graph, "sin")


# ---------------------------------------------------------------------------- unused parts
def test_unused_outputs_and_captured_values_are_dropped():
    x, y, c = T.vector("x"), T.vector("y"), T.scalar("c")
    a, unused = ss.ifelse(c > 0, [x * 2.0, y * 3.0], [x + 1.0, y])
    f = _compile_and_compare([c, x, y], a, ["ifelse_remove_unused"], [1.0, np.ones(2), np.ones(3)],
                             [0.0, np.ones(2), np.ones(3)])
    (node,) = _ifelses(f.fgraph)
    assert len(node.outputs) == 1 and len(node.inputs) == 2
    assert [r for r in f.rewrite_report() if r.rule == "ifelse_remove_unused" and r.fired]


# ---------------------------------------------------------------------------- in loop bodies
def _branchy_loop():
    xs, w, h0 = T.vector("xs"), T.vector("w"), T.vector("h0")

    def step(x, h, w):
        # log(checked w) is loop-invariant but only the then branch computes it
        safe = T.log(assert_that(w, T.all(w > 0), message="w must be positive"))
        e = T.exp(h)
        nxt = ss.ifelse(x > 0, h + safe + e.sum(), T.tanh(h) * x)
        return nxt + e * 0.1

    hs, _ = ss.scan(step, sequences=xs, outputs_info=h0, non_sequences=w)
    return [xs, w, h0], hs


@pytest.mark.parametrize("mode", ["fast", "numba"])
def test_push_out_does_not_hoist_branch_only_work(mode):
    inputs, hs = _branchy_loop()
    f = ss.function(inputs, hs, mode=mode)
    py = ss.function(inputs, hs, mode="py")
    never = [np.array([-1.0, -2.0, 0.0]), np.array([-1.0, 2.0]), np.array([0.1, 0.2])]
    np.testing.assert_allclose(f(*never), py(*never), rtol=1e-12)  # w < 0 but the branch never runs
    taken = [np.array([1.0, -2.0, 0.5]), np.array([1.0, 2.0]), np.array([0.1, 0.2])]
    np.testing.assert_allclose(f(*taken), py(*taken), rtol=1e-12)
    with pytest.raises(Exception, match="w must be positive"):
        f(np.array([1.0]), np.array([-1.0, 2.0]), np.array([0.1, 0.2]))
    (loop,) = [n for n in f.fgraph.apply_nodes if type(n.op).__name__ == "Scan"]
    (node,) = _ifelses(loop.op.inner)
    assert not _ops(node.op.then_graph, "exp")  # lifted: the body computes exp(h) anyway


@pytest.mark.parametrize("rules", [None, ["-ifelse"], ["-push_out"], ["-save_mem", "-inplace"]])
def test_rewrites_on_and_off_agree_with_an_ifelse_in_a_loop(rules):
    inputs, hs = _branchy_loop()
    cost = hs[-1].sum()
    g = ss.grad(cost, inputs[1:])
    values = [np.array([1.0, -2.0, 0.5, 3.0]), np.array([1.0, 2.0]), np.array([0.1, 0.2])]
    _compile_and_compare(inputs, [hs[-1], *g], rules, values)
