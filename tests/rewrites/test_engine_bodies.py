"""The engine inside loop bodies: rules rewrite inner graphs (nested too), the report says
where, declines are listed once, and rules can be excluded by name or by mode."""

import numpy as np
import pytest
from fused_graphs import unfused_nodes

import rewrites
import symscan as ss
import symscan.tensor as T
from rewrites import Declined, register
from symscan.compile.modes import MODES
from symscan.tensor.elemwise import Elemwise

MUL = Elemwise("mul")


def _count(fgraph, op) -> int:
    """Nodes of ``op``, fused ones included."""
    return sum(1 for node in unfused_nodes(fgraph) if node.op == op)


def _one_level(xs):
    out, _ = ss.scan(lambda x, acc: acc * 1.0 + x, sequences=xs, outputs_info=T.constant(0.0), name="loop")
    return out


def _two_levels(xs):
    """An outer scan over rows whose body runs an inner scan over the row's elements."""
    def inner_step(v, acc):
        return acc * 0.5 + v * 1.0

    def outer_step(row, total):
        partial, _ = ss.scan(inner_step, sequences=row, outputs_info=T.constant(0.0), name="inner")
        return total + partial[-1]

    out, _ = ss.scan(outer_step, sequences=xs, outputs_info=T.constant(0.0), name="outer")
    return out


def _numpy_two_levels(values):
    total, rows = 0.0, []
    for row in values:
        acc = 0.0
        for v in row:
            acc = acc * 0.5 + v
        total += acc
        rows.append(total)
    return np.array(rows)


def test_a_rule_rewrites_the_loop_body(scan_nodes, same_as_py, rng):
    xs = T.vector("xs")
    out = _one_level(xs)
    py = ss.function([xs], out, mode="py")
    assert _count(scan_nodes(py)[0].op.inner, MUL) == 1
    f = ss.function([xs], out, mode="fast", rewrites=["canonicalize"])
    (node,) = scan_nodes(f)
    assert _count(node.op.inner, MUL) == 0
    assert node.op.info == scan_nodes(py)[0].op.info
    (record,) = list(f.rewrite_report())
    assert record.rule == "canonicalize" and record.fired and record.node == "scan 'loop' > Elemwise{mul}"
    values = rng.standard_normal(5)
    np.testing.assert_allclose(same_as_py(f, values), np.cumsum(values))
    assert _count(out.owner.inputs[0].owner.op.inner, MUL) == 1  # the user's graph is untouched


def test_unnamed_loops_are_shown_as_scan(same_as_py, rng):
    xs = T.vector("xs")
    out, _ = ss.scan(lambda x: x * 1.0, sequences=xs)
    f = ss.function([xs], out, rewrites=["canonicalize"])
    values = rng.standard_normal(3)
    np.testing.assert_array_equal(same_as_py(f, values), values)
    assert [r.node for r in f.rewrite_report()] == ["scan > Elemwise{mul}"]
    assert "scan > Elemwise{mul}" in str(f.rewrite_report())
    assert "scan &gt; Elemwise{mul}" in f.rewrite_report()._repr_html_()


def test_nested_loops_two_levels_deep(scan_nodes, same_as_py, rng):
    xs = T.matrix("xs")
    out = _two_levels(xs)
    f = ss.function([xs], out, mode="fast", rewrites=["canonicalize"])
    (outer,) = scan_nodes(f)
    (inner,) = scan_nodes(outer.op.inner)
    assert _count(inner.op.inner, MUL) == 1  # acc * 0.5 stays; v * 1.0 is gone
    (record,) = list(f.rewrite_report())
    assert record.node == "scan 'outer' > scan 'inner' > Elemwise{mul}"
    for shape in [(1, 1), (3, 4), (2, 0)]:
        values = rng.standard_normal(shape)
        if shape[1] == 0:
            assert isinstance(same_as_py(f, values), IndexError)  # partial[-1] of an empty row
            continue
        np.testing.assert_allclose(same_as_py(f, values), _numpy_two_levels(values))


def test_nested_save_mem_is_reported_at_its_depth(scan_nodes, same_as_py, rng):
    xs = T.matrix("xs")
    out = _two_levels(xs)
    f = ss.function([xs], out, mode="fast", rewrites=["save_mem"])
    (outer,) = scan_nodes(f)
    (inner,) = scan_nodes(outer.op.inner)
    assert inner.op.info.rings == (1,) and outer.op.info.rings == ()
    records = [(r.node, r.fired) for r in f.rewrite_report()]
    assert records == [("scan 'outer' > Scan{inner}", True), ("Scan{outer}", False)]
    values = rng.standard_normal((3, 4))
    np.testing.assert_allclose(same_as_py(f, values), _numpy_two_levels(values))


def test_every_rule_inside_nested_bodies_matches_the_reference(same_as_py, rng):
    xs = T.matrix("xs")
    out = _two_levels(xs)
    f = ss.function([xs], out[-1], mode="fast")
    assert any(" > " in r.node for r in f.rewrite_report())
    for shape in [(1, 1), (4, 3), (0, 3)]:
        values = rng.standard_normal(shape)
        result = same_as_py(f, values)
        if shape[0]:
            np.testing.assert_allclose(result, _numpy_two_levels(values)[-1])


def test_a_body_where_nothing_fires_keeps_its_loop(scan_nodes):
    xs = T.vector("xs")
    out, _ = ss.scan(lambda x, acc: acc + T.exp(x), sequences=xs, outputs_info=T.constant(0.0))
    py = ss.function([xs], out, mode="py")
    f = ss.function([xs], out, mode="fast", rewrites=["canonicalize", "-constant_folding"])
    assert list(f.rewrite_report()) == []
    assert scan_nodes(f)[0].op is scan_nodes(py)[0].op


# ---------------------------------------------------------------------------- declines
def test_repeated_declines_appear_once(same_as_py):
    xs = T.vector("xs")
    out, _ = ss.scan(lambda x, acc: acc + x, sequences=xs, outputs_info=T.constant(0.0))
    # canonicalize fires (x * 1.0 outside the loop), so the engine runs its phases again and
    # save_mem looks at the same loop in every round
    f = ss.function([xs], out * 1.0 + 0.0, mode="fast", rewrites=["canonicalize", "save_mem"])
    declined = [r for r in f.rewrite_report() if not r.fired]
    assert len(declined) == 1
    assert declined[0].rule == "save_mem" and "whole output" in declined[0].detail
    assert str(f.rewrite_report()).count("declined") == 1
    np.testing.assert_allclose(same_as_py(f, np.array([1.0, 2.0])), [1.0, 3.0])


def test_declines_inside_a_body_name_the_loop(registry, scan_nodes):
    @register("test_decline_exp", phase="canonicalize", tracks=[Elemwise])
    def decline_exp(fgraph, node):
        return Declined("exp is never rewritten by this test rule") if node.op == Elemwise("exp") else None

    xs = T.vector("xs")
    out, _ = ss.scan(lambda x, acc: acc + T.exp(x), sequences=xs, outputs_info=T.constant(0.0), name="body")
    f = ss.function([xs], [out, T.exp(xs)], rewrites=["test_decline_exp"])
    records = [(r.node, r.fired, r.detail) for r in f.rewrite_report()]
    assert records == [("scan 'body' > Elemwise{exp}", False, "exp is never rewritten by this test rule"),
                       ("Elemwise{exp}", False, "exp is never rewritten by this test rule")]
    py = ss.function([xs], out, mode="py")
    assert scan_nodes(f)[0].op == scan_nodes(py)[0].op  # declines do not rebuild the loop


# ---------------------------------------------------------------------------- excluding rules
def _rings(f, scan_nodes):
    return [node.op.info.rings for node in scan_nodes(f)]


KEEP_LOOPS = ["-vectorize"]
"""For tests that look at the loops (the vectorize rules would remove these)."""


def _power():
    k, a = T.lscalar("k"), T.vector("a")
    out, _ = ss.scan(lambda p, a: p * a * 1.0, outputs_info=T.ones_like(a), non_sequences=a, n_steps=k)
    return [a, k], out[-1]


def test_minus_name_excludes_a_rule(scan_nodes, same_as_py, rng):
    inputs, out = _power()
    on = ss.function(inputs, out, mode="fast", rewrites=KEEP_LOOPS)
    off = ss.function(inputs, out, mode="fast", rewrites=KEEP_LOOPS + ["-save_mem"])
    assert _rings(on, scan_nodes) == [(1,)] and _rings(off, scan_nodes) == [()]
    assert "save_mem" in {r.rule for r in on.rewrite_report()}
    assert "save_mem" not in {r.rule for r in off.rewrite_report()}
    assert "canonicalize" in {r.rule for r in off.rewrite_report()}  # the others still run
    values = rng.uniform(0.5, 1.5, 3)
    for f in (on, off):
        np.testing.assert_allclose(same_as_py(f, values, 4), values ** 4)


def test_minus_name_excludes_inside_loop_bodies_too(scan_nodes):
    xs = T.vector("xs")
    out = _one_level(xs)
    f = ss.function([xs], out, mode="fast", rewrites=KEEP_LOOPS + ["-canonicalize"])
    assert "canonicalize" not in {r.rule for r in f.rewrite_report()}
    assert _count(scan_nodes(f)[0].op.inner, MUL) == 1


@pytest.mark.parametrize("name", ["save_mem", "canonicalize", "inplace", "scan_merge"])
def test_mode_without_excludes_a_rule(name, scan_nodes, same_as_py, rng):
    mode = MODES["fast"].without(name)
    assert mode.name == f"fast-without-{name}" and mode.excluded == (name,)
    assert MODES["fast"].excluded == ()  # the registered mode is unchanged
    inputs, out = _power()
    f = ss.function(inputs, out, mode=mode, rewrites=KEEP_LOOPS)
    assert name not in {r.rule for r in f.rewrite_report()}
    assert {r.rule for r in f.rewrite_report()} - {name}  # other rules ran
    if name == "save_mem":
        assert _rings(f, scan_nodes) == [()]
    if name == "canonicalize":
        (node,) = scan_nodes(f)
        assert _count(node.op.inner, MUL) == 2
    values = rng.uniform(0.5, 1.5, 3)
    for steps in (0, 1, 2, 5):
        same_as_py(f, values, steps)


def test_without_several_and_combined_with_a_selection(scan_nodes):
    inputs, out = _power()
    mode = MODES["fast"].without("save_mem", "inplace")
    f = ss.function(inputs, out, mode=mode)
    assert not {"save_mem", "inplace"} & {r.rule for r in f.rewrite_report()}
    # a mode's exclusions win over an explicit selection
    g = ss.function(inputs, out, mode=MODES["fast"].without("save_mem"), rewrites=["save_mem"])
    assert list(g.rewrite_report()) == [] and _rings(g, scan_nodes) == [()]


def test_minus_name_and_without_agree_for_a_rule_that_is_not_a_tag(scan_nodes):
    inputs, out = _power()
    by_spec = ss.function(inputs, out, mode="fast", rewrites=["-constant_folding"])
    by_mode = ss.function(inputs, out, mode=MODES["fast"].without("constant_folding"))
    assert [(r.rule, r.node, r.fired) for r in by_spec.rewrite_report()] == \
        [(r.rule, r.node, r.fired) for r in by_mode.rewrite_report()]


def test_the_phase_order_holds_inside_bodies(registry):
    seen = []

    @register("test_late_body", phase="inplace", kind="graph")
    def late(fgraph):
        seen.append(("inplace", getattr(fgraph, "is_loop_body", False)))
        return []

    @register("test_early_body", phase="canonicalize", kind="graph")
    def early(fgraph):
        seen.append(("canonicalize", getattr(fgraph, "is_loop_body", False)))
        return []

    xs = T.vector("xs")
    ss.function([xs], _one_level(xs), rewrites=["test_late_body", "test_early_body"])
    assert seen == [("canonicalize", True), ("canonicalize", False), ("inplace", True), ("inplace", False)]
    assert set(rewrites.REGISTRY) >= {"test_late_body", "test_early_body"}
