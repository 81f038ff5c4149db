"""ss.ifelse exported to ONNX ``If`` and run in onnxruntime (and mode "onnxruntime"): values
against mode "py" and numpy on both outcomes, the model's structure (the branch work sits in
the If's branches), and laziness: a branch that would fail in onnxruntime is not run."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.tensor.assertion import assert_that

BUILT_IN = ["py", "fast"]  # the function exported: as built, and after every rewrite


def if_nodes(model: onnx.ModelProto) -> list:
    """The If nodes ifelse wrote (named after it; not the guards checks add, nor a loop's Ifs)."""
    return [n for n in _all_nodes(model.graph) if n.op_type == "If" and n.output[0].startswith("ifelse")]


def _all_nodes(graph) -> list:
    found = []
    for node in graph.node:
        found.append(node)
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                found += _all_nodes(attribute.g)
    return found


def branch_ops(node, key: str) -> list[str]:
    graph = next(a.g for a in node.attribute if a.name == f"{key}_branch")
    return [n.op_type for n in _all_nodes(graph)]


@pytest.mark.parametrize("built", BUILT_IN)
def test_values_on_both_outcomes_and_the_branches_hold_their_work(export_check, built):
    x, c = T.vector("x"), T.scalar("c")
    f = ss.function([c, x], ss.ifelse(c, T.exp(x).sum() * 2, T.sum(x ** 2)), mode=built)
    v = np.array([0.5, -1.0, 2.0])
    model = export_check(f, [2.0, v], [0.0, v], [-1.0, v], [np.nan, v])
    for cv, want in [(2.0, np.exp(v).sum() * 2), (0.0, np.sum(v ** 2)), (np.nan, np.exp(v).sum() * 2)]:
        np.testing.assert_allclose(export_check.session(model).run(None, export_check.feeds(model, f, [cv, v]))[0],
                                   want)
    (node,) = if_nodes(model)
    assert node in model.graph.node
    assert "Exp" in branch_ops(node, "then") and "Exp" not in branch_ops(node, "else")
    assert "Pow" in branch_ops(node, "else") and "Pow" not in branch_ops(node, "then")
    assert not any(n.op_type in ("Exp", "Pow") for n in model.graph.node)


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float32", "float64"])
def test_condition_of_any_dtype_is_cast_to_bool(export_check, dtype):
    c, x = T.scalar("c", dtype=dtype), T.scalar("x")
    f = ss.function([c, x], ss.ifelse(c, x + 1, x - 1), mode="py")
    values = [True, False] if dtype == "bool" else [0, 3, -2]
    model = export_check(f, *[[cv, 1.5] for cv in values])
    assert [n.op_type for n in model.graph.node].count("Cast") == (dtype != "bool")


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_outputs_keep_their_dtype(export_check, dtype):
    x, k = T.vector("x", dtype=dtype), T.lscalar("k")
    out = ss.ifelse(k > 0, x * 2, x - x.max())
    f = ss.function([k, x], out, mode="py")
    v = np.array([1, 2, 3], dtype=dtype)
    export_check(f, [1, v], [0, v])
    run = ss.function([k, x], out, mode="onnxruntime")
    for kv, want in [(1, v * 2), (0, v - v.max())]:
        got = run(kv, v)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, want)


def test_lists_of_outputs(export_check):
    x, c = T.vector("x"), T.bscalar("c")
    outs = ss.ifelse(c, [x, x * 2, x.sum()], [x * 3, x + x.sum(), x.max()])
    f = ss.function([c, x], outs, mode="py")
    v = np.array([1.0, 2.0, -4.0])
    model = export_check(f, [1, v], [0, v])
    (node,) = if_nodes(model)
    assert len(node.output) == 3
    assert all(len(a.g.output) == 3 for a in node.attribute)
    got = ss.function([c, x], outs, mode="onnxruntime")(0, v)
    for g, w in zip(got, [v * 3, v + v.sum(), v.max()]):
        np.testing.assert_allclose(g, w)


def test_outputs_whose_shapes_differ_between_branches(export_check):
    """ONNX If lets the branches' shapes differ: each declares its own, the node's is their union."""
    x = T.tensor("float64", shape=(3,), name="x")
    c = T.scalar("c")
    rows = T.tensor("float64", shape=(2, 3), name="rows")
    out = ss.ifelse(c, [x[:2], rows], [T.concatenate([x, x]), T.zeros((4, 3))])
    assert out[0].type.shape == (None,) and out[1].type.shape == (None, 3)
    f = ss.function([c, x, rows], out, mode="py")
    v, r = np.array([1.0, 2.0, 3.0]), np.ones((2, 3))
    model = export_check(f, [1.0, v, r], [0.0, v, r])
    (node,) = if_nodes(model)
    declared = {a.name: [[d.dim_value or None for d in o.type.tensor_type.shape.dim] for o in a.g.output]
                for a in node.attribute}
    assert declared == {"then_branch": [[2], [2, 3]], "else_branch": [[6], [4, 3]]}
    got = ss.function([c, x, rows], out, mode="onnxruntime")(0.0, v, r)
    assert got[0].shape == (6,) and got[1].shape == (4, 3)


def test_a_branch_passing_an_outer_value_through(export_check):
    x, y, c = T.vector("x"), T.vector("y"), T.scalar("c")
    f = ss.function([c, x, y], ss.ifelse(c, [x, y], [y, x]), mode="py")
    export_check(f, [1.0, [1.0, 2.0], [3.0]], [0.0, [1.0, 2.0], [3.0]])


# ---------------------------------------------------------------------------- laziness
def lazy_cases():
    """(inputs, the ifelse, the same choice by switch (eager), values that would fail the branch not taken)."""
    y, k = T.vector("y"), T.lscalar("k")
    gather = (T.lt(k, y.shape[0]), y[k], T.constant(-1.0))  # Gather out of range unless k < len(y)
    reshape = (T.eq(y.shape[0], 6), T.reshape(y, (2, 3)).sum(axis=0), y[:3])  # Reshape of another size
    dot = (T.eq(y.shape[0], 3), T.dot(T.ones((3,)), y), y.sum())  # MatMul of mismatched lengths
    return {"gather": ([k, y], gather, [5, np.arange(3.0)], [1, np.arange(3.0)]),
            "reshape": ([k, y], reshape, [0, np.arange(5.0)], [0, np.arange(6.0)]),
            "dot": ([k, y], dot, [0, np.arange(5.0)], [0, np.arange(3.0)])}


@pytest.mark.parametrize("case", sorted(lazy_cases()))
@pytest.mark.parametrize("built", BUILT_IN)
def test_the_branch_not_taken_is_not_run_in_onnxruntime(export_check, case, built):
    inputs, (cond, then, other), failing, passing = lazy_cases()[case]
    f = ss.function(inputs, ss.ifelse(cond, then, other), mode=built)
    model = export_check(f, failing, passing, reference=False)
    assert len(if_nodes(model)) == 1
    eager = ss.function(inputs, T.switch(cond, then, other), mode="py")
    session = export_check.session(ss.onnx.export(eager))
    with pytest.raises(Exception):  # noqa: B017  (onnxruntime's own error types) the eager choice fails
        session.run(None, export_check.feeds(model, f, failing))


@pytest.mark.parametrize("case", sorted(lazy_cases()))
def test_mode_onnxruntime_is_lazy(case):
    inputs, (cond, then, other), failing, passing = lazy_cases()[case]
    out = ss.ifelse(cond, then, other)
    lazy, reference = (ss.function(inputs, out, mode=m) for m in ("onnxruntime", "py"))
    for values in (failing, passing):
        np.testing.assert_allclose(lazy(*values), reference(*values))
    with pytest.raises(Exception):  # noqa: B017  the eager choice fails in onnxruntime
        ss.function(inputs, T.switch(cond, then, other), mode="onnxruntime")(*failing)


def test_a_check_in_the_branch_not_taken_does_not_fail(export_check):
    """symscan's checks are guards (an If whose other branch fails): inside a branch, they run
    only with it."""
    v = T.scalar("v")
    f = ss.function([v], ss.ifelse(v > 0, T.log(assert_that(v, v > 0, message="v must be positive")), v - 1),
                    mode="py")
    model = export_check(f, [2.0], [-3.0])
    (node,) = if_nodes(model)
    assert "If" in branch_ops(node, "then")  # the guard


# ---------------------------------------------------------------------------- loops and nesting
@pytest.mark.parametrize("built", BUILT_IN)
@pytest.mark.parametrize("kind", ["Scan", "Loop"])
def test_inside_a_loop_body(export_check, built, kind):
    """In an ONNX Scan body, and in a Loop's (an ``until`` that never stops makes it a Loop)."""
    xs = T.vector("xs")

    def step(v, acc):
        must_be_positive = T.log(assert_that(v, v > 0, message="v must be positive"))
        new = ss.ifelse(v > 0, acc + must_be_positive, acc - 1.0)
        return (new, ss.until(T.gt(new, 1e9))) if kind == "Loop" else new

    out, _ = ss.scan(step, sequences=xs, outputs_info=T.constant(0.0))
    f = ss.function([xs], out, mode=built)
    values = np.array([1.0, -2.0, 3.0, 0.0])
    model = export_check(f, [values], [np.array([2.0])])
    acc, expected = 0.0, []
    for v in values:
        acc = acc + np.log(v) if v > 0 else acc - 1.0
        expected.append(acc)
    np.testing.assert_allclose(ss.function([xs], out, mode="onnxruntime")(values), expected)
    assert [loop for loop, _ in export_check.loop_kinds(model.graph)] == [kind]
    assert if_nodes(model) and not any(n in model.graph.node for n in if_nodes(model))


def test_a_loop_inside_a_branch(export_check):
    xs, c = T.vector("xs"), T.scalar("c")
    total, _ = ss.scan(lambda v, acc: acc + v * v, sequences=xs, outputs_info=T.constant(0.0))
    f = ss.function([c, xs], ss.ifelse(c, total[-1], xs.sum()), mode="py")
    v = np.array([1.0, 2.0, 3.0])
    model = export_check(f, [1.0, v], [0.0, v])
    (node,) = if_nodes(model)
    assert {"Scan", "Loop"} & set(branch_ops(node, "then")) and not {"Scan", "Loop"} & set(branch_ops(node, "else"))


@pytest.mark.parametrize("built", BUILT_IN)
def test_nested(export_check, built):
    a, b = T.scalar("a"), T.scalar("b")
    inner = ss.ifelse(b > 0, T.sqrt(b), -b)
    out = ss.ifelse(a > 0, inner * a, T.log(-a))
    f = ss.function([a, b], out, mode=built)
    cases = [(2.0, 4.0), (2.0, -3.0), (-1.0, 4.0), (-np.e, -1.0)]
    model = export_check(f, *[list(c) for c in cases])
    run = ss.function([a, b], out, mode="onnxruntime")
    for av, bv in cases:
        want = (np.sqrt(bv) if bv > 0 else -bv) * av if av > 0 else np.log(-av)
        np.testing.assert_allclose(run(av, bv), want)
    outer = [n for n in if_nodes(model) if n in model.graph.node]
    assert len(outer) == 1 and "If" in branch_ops(outer[0], "then") and "If" not in branch_ops(outer[0], "else")


def test_an_op_without_lowering_in_a_branch_is_refused_naming_it():
    a, b, c = T.matrix("a"), T.vector("b"), T.scalar("c")
    f = ss.function([c, a, b], ss.ifelse(c, T.linalg.solve(a, b), b), mode="py")
    with pytest.raises(ss.onnx.ExportError, match=r"(?i)solve.* has no ONNX lowering"):
        ss.onnx.export(f)
