"""The rewrite registry (select), the engine (phases, fixed point, report) and the merge rewrite."""

import html

import numpy as np
import pytest

import rewrites
import symscan as ss
import symscan.tensor as T
from rewrites import PHASES, Declined, Record, RewriteReport, register, rewrite_graph, select
from symscan.graph import Constant, FunctionGraph
from symscan.tensor.elemwise import Elemwise


def _names(rules):
    return [r.name for r in rules]


def _constants(fgraph):
    return [v for v in fgraph.clients if isinstance(v, Constant)]


def _is_mul_by_one(node):
    return (node.op == Elemwise("mul") and isinstance(node.inputs[1], Constant)
            and np.all(node.inputs[1].data == 1) and node.inputs[0].type == node.outputs[0].type)


@pytest.fixture
def test_rules(registry):
    """The real ``merge`` rule alone, plus three throw-away rules: two canonicalize rules (one
    tagged 'algebra') and an inplace one."""
    merge_rule = registry["merge"]
    registry.clear()
    registry["merge"] = merge_rule

    @register("test_mul_one", phase="canonicalize", tracks=[Elemwise], tags=["algebra"])
    def mul_one(fgraph, node):
        if node.op != Elemwise("mul"):
            return None
        if not _is_mul_by_one(node):
            return Declined("test_mul_one: the second factor is not the constant 1 <of the same type>")
        return {node.outputs[0]: node.inputs[0]}

    @register("test_noop", phase="canonicalize")
    def noop(fgraph, node):
        return None

    @register("test_inplace", phase="inplace", tags=["algebra"])
    def inplace(fgraph, node):
        return None

    return registry


# ---------------------------------------------------------------------------- select
def test_select_none_or_empty_keeps_the_mode_default(test_rules):
    everything = _names(select(None, None))
    assert set(everything) == set(rewrites.REGISTRY) and "merge" in everything
    assert _names(select([], None)) == everything
    assert _names(select(None, ())) == []
    assert _names(select(None, ("merge", "test_noop"))) == ["merge", "test_noop"]


def test_select_includes_by_name_or_tag(test_rules):
    assert _names(select(["test_noop"], None)) == ["test_noop"]
    assert _names(select(["merge"], ())) == ["merge"]  # names override an empty default
    assert set(_names(select(["algebra"], ()))) == {"test_mul_one", "test_inplace"}
    assert set(_names(select(["canonicalize"], ()))) == {"test_mul_one", "test_noop"}
    assert set(_names(select(["canonicalize", "merge"], ()))) == {"test_mul_one", "test_noop", "merge"}


def test_select_excludes_with_a_minus(test_rules):
    assert "merge" not in _names(select(["-merge"], None))
    assert set(_names(select(["-merge"], None))) == set(rewrites.REGISTRY) - {"merge"}  # the only rule tagged merge
    assert set(_names(select(["-algebra"], None))) == {"merge", "test_noop"}
    assert _names(select(["canonicalize", "-test_noop"], ())) == ["test_mul_one"]
    assert _names(select(["-merge"], ())) == []


def test_select_keeps_registry_order(test_rules):
    order = list(rewrites.REGISTRY)
    chosen = _names(select(["test_inplace", "merge", "test_mul_one"], ()))
    assert chosen == [n for n in order if n in chosen]


@pytest.mark.parametrize("spec", [["bogus"], ["-bogus"], ["merge", "nope"]])
def test_select_unknown_name_is_a_value_error_listing_known_ones(spec):
    with pytest.raises(ValueError, match=r"unknown rewrite or tag '(bogus|nope)'.*merge"):
        select(spec, None)


def test_phase_names_are_known_tags_even_without_rules(test_rules):
    for phase in PHASES:
        select([phase], None)
        select(["-" + phase], None)
    assert _names(select(["-save_mem"], None)) == _names(select(None, None))


def test_select_accepts_a_single_string(test_rules):
    assert _names(select("merge", ())) == ["merge"]
    assert _names(select("-merge", None)) == _names(select(["-merge"], None))


def test_register_rejects_duplicates_and_unknown_phases(registry):
    with pytest.raises(ValueError, match="already registered"):
        register("merge", phase="merge")(lambda fg: [])
    with pytest.raises(ValueError, match="unknown phase 'later'"):
        register("test_x", phase="later")


def test_registered_rule_carries_its_phase_as_a_tag(test_rules):
    rule = rewrites.REGISTRY["test_mul_one"]
    assert rule.tags == {"algebra", "canonicalize"}
    assert rule.tracks == (Elemwise,) and rule.kind == "node"
    assert rule.looks_at(Elemwise("add")) and not rule.looks_at(object())
    assert rewrites.REGISTRY["test_noop"].looks_at(object())  # no tracks: every op


# ---------------------------------------------------------------------------- merge
def test_merge_merges_duplicate_constants_and_identical_nodes(rng):
    x = T.vector("x")
    a = (x + 1.0) * 2.0
    b = (x + 1.0) * 2.0  # the same computation, built twice
    out = a - b + T.exp(x + 1.0)
    before = ss.function([x], out, mode="py")
    after = ss.function([x], out, mode="fast", rewrites=["-fusion"])  # merge's work, the chains unfused
    assert len(before.fgraph.apply_nodes) == 8
    assert len(after.fgraph.apply_nodes) == 5  # x + 1, * 2, -, exp, the final +
    assert len(_constants(before.fgraph)) == 5
    assert len(_constants(after.fgraph)) == 2
    xv = rng.standard_normal(5)
    expected = np.exp(xv + 1.0)
    np.testing.assert_allclose(before(xv), expected)
    np.testing.assert_allclose(after(xv), expected)
    after.fgraph.check()


def test_merge_can_be_excluded_or_chosen_alone():
    x = T.vector("x")
    out = T.exp(x * 3.0) + T.exp(x * 3.0)
    assert len(ss.function([x], out, rewrites=["-merge", "-fusion"]).fgraph.apply_nodes) == 5
    assert len(ss.function([x], out, rewrites=["merge"]).fgraph.apply_nodes) == 3
    assert len(ss.function([x], out, mode="py", rewrites=["merge"]).fgraph.apply_nodes) == 3


def test_merge_keeps_different_constants_and_ops_apart():
    x = T.vector("x")
    out = [x + 1.0, x + 2.0, x * 1.5, x + np.float32(1.0), x + 0.0, x + -0.0]
    f = ss.function([x], out, rewrites=["merge"])
    assert len(f.fgraph.apply_nodes) == 6
    assert f.rewrite_report().fired == []
    xv = np.array([1.0, -2.0])
    got = f(xv)
    for g, e in zip(got, [xv + 1, xv + 2, xv * 1.5, xv + 1, xv + 0, xv - 0]):
        np.testing.assert_array_equal(g, e)


def test_merge_of_outputs_keeps_the_output_list():
    x = T.vector("x")
    f = ss.function([x], [T.exp(x), T.exp(x)])
    assert f.fgraph.outputs[0] is f.fgraph.outputs[1]
    assert len(f.fgraph.apply_nodes) == 1
    a, b = f(np.array([0.0, 1.0]))
    np.testing.assert_allclose(a, np.exp([0.0, 1.0]))
    np.testing.assert_allclose(b, np.exp([0.0, 1.0]))


def test_merge_with_shared_variables_and_updates(mode):
    s = ss.shared(np.array([1.0, 2.0]), name="s")
    out = (s * 2.0).sum()
    f = ss.function([], out, updates={s: s * 2.0}, mode=mode)
    assert f() == 6.0
    np.testing.assert_array_equal(s.get_value(), [2.0, 4.0])
    assert f() == 12.0
    n_mul = sum(1 for n in f.fgraph.apply_nodes if n.op == Elemwise("mul"))
    assert n_mul == (2 if mode == "py" else 1)


def test_merge_on_a_function_graph_directly():
    x = T.vector("x")
    fg = FunctionGraph([x], [T.sin(x) * T.sin(x)])
    report = rewrite_graph(fg, select(["merge"], ()))
    assert len(fg.apply_nodes) == 2
    assert [r.rule for r in report.fired] == ["merge"]
    mul = fg.outputs[0].owner
    assert mul.inputs[0] is mul.inputs[1]
    fg.check()


# ---------------------------------------------------------------------------- report
def test_rewrite_report_lists_merge_when_it_fired():
    x = T.vector("x")
    f = ss.function([x], (x + 1.0) * (x + 1.0), rewrites=["-fusion"])  # fusion would fire too
    report = f.rewrite_report()
    assert isinstance(report, RewriteReport)
    records = list(report)
    assert len(records) == len(report) == 2  # the constant, then the node
    assert all(r.rule == "merge" and r.fired for r in records)
    assert "constant" in records[0].detail
    assert "Elemwise{add}" in records[1].node and "merged" in records[1].detail
    text = str(report)
    assert "merge" in text and "fired" in text and "Elemwise{add}" in text
    assert text.splitlines()[0].split()[:2] == ["rule", "outcome"]


def test_rewrite_report_empty_when_nothing_fired():
    x = T.vector("x")
    for f in (ss.function([x], T.exp(x)), ss.function([x], (x + 1.0) * (x + 1.0), mode="py")):
        report = f.rewrite_report()
        assert list(report) == [] and len(report) == 0 and report.fired == []
        assert "merge" not in str(report)
        assert "no rewrite" in str(report)
        assert "<table>" in report._repr_html_() and "<td>" not in report._repr_html_()


def test_report_records_have_the_documented_fields():
    record = Record("merge", "Elemwise{add}", True, "merged")
    assert (record.rule, record.node, record.fired, record.detail) == ("merge", "Elemwise{add}", True, "merged")
    assert "merge" in str(record) and "fired" in str(record)
    assert "declined" in str(Record("r", "n", False, "why"))


def test_report_html_is_a_table_with_escaped_cells():
    report = RewriteReport([Record("merge", "<float64[?]>", True, "a & b"),
                            Record("other", "Op", False, "because <x>")])
    page = report._repr_html_()
    assert page.startswith("<table>") and page.count("<tr>") == 3
    assert html.escape("<float64[?]>") in page and "<float64[?]>" not in page
    assert "a &amp; b" in page and "declined" in page and "fired" in page
    assert [r.rule for r in report] == ["merge", "other"]


def test_node_rule_records_fired_and_declined(test_rules, mode):
    x = T.vector("x")
    out = (x * 1.0) * 3.0
    f = ss.function([x], out, mode=mode, rewrites=["test_mul_one"])
    records = list(f.rewrite_report())
    fired = [r for r in records if r.fired]
    declined = [r for r in records if not r.fired]
    assert len(fired) == 1 and fired[0].rule == "test_mul_one" and fired[0].node == "Elemwise{mul}"
    assert declined and all("not the constant 1" in r.detail for r in declined)
    assert "declined" in str(f.rewrite_report()) and "&lt;of the same type&gt;" in f.rewrite_report()._repr_html_()
    assert len(f.fgraph.apply_nodes) == 1
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [3.0, 6.0])


def test_rules_run_to_a_fixed_point(test_rules):
    x = T.vector("x")
    out = ((x * 1.0) * 1.0) * 1.0
    f = ss.function([x], out, mode="py", rewrites=["test_mul_one"])
    assert len(f.fgraph.apply_nodes) == 0
    assert f.fgraph.outputs[0] is f.fgraph.inputs[0]
    assert len(f.rewrite_report().fired) == 3
    xv = np.array([1.0, 2.0])
    out_value = f(xv)
    np.testing.assert_array_equal(out_value, xv)
    assert not np.shares_memory(out_value, xv)


def test_phases_run_in_order(registry):
    seen = []

    @register("test_late", phase="inplace", kind="graph")
    def late(fgraph):
        seen.append("inplace")
        return []

    @register("test_early", phase="canonicalize", kind="graph")
    def early(fgraph):
        seen.append("canonicalize")
        return []

    x = T.vector("x")
    ss.function([x], T.exp(x), rewrites=["test_late", "test_early"])
    assert seen == ["canonicalize", "inplace"]


def test_firing_guard_stops_rules_that_never_settle(registry):
    @register("test_forever", phase="canonicalize", tracks=[Elemwise])
    def forever(fgraph, node):
        if node.op == Elemwise("exp"):
            return {node.outputs[0]: T.exp(node.inputs[0])}  # an equal, new node: always "fires"
        return None

    x = T.vector("x")
    f = ss.function([x], T.exp(x), rewrites=["test_forever"])
    assert len(f.rewrite_report().fired) == rewrites.engine.MAX_FIRINGS_PER_RULE
    np.testing.assert_allclose(f(np.array([0.0])), [1.0])


def test_debug_checks_run_after_graph_rules(registry):
    @register("test_corrupt", phase="merge", kind="graph")
    def corrupt(fgraph):
        node = next(iter(fgraph.apply_nodes))
        fgraph.clients[node.inputs[0]].clear()  # breaks the bookkeeping
        return [(node.outputs[0], node.outputs[0], "pretended")]

    x = T.vector("x")
    assert ss.config.debug_checks
    with pytest.raises(AssertionError, match="client"):
        ss.function([x], T.exp(x), rewrites=["test_corrupt"])


def test_minus_a_key_that_is_also_a_tag_removes_the_whole_tag():
    """README: "-name" excludes that rule or tag; a key that is both (canonicalize, merge,
    save_mem, inplace) means the tag, as it does when including, and "rule:NAME" names the one
    rule (issue 12: "-merge" used to remove only the rule, silently)."""
    everything = set(_names(select(None, None)))
    by_tag = lambda tag: {r.name for r in rewrites.REGISTRY.values() if tag in r.tags}  # noqa: E731
    for key in ("canonicalize", "merge", "save_mem", "inplace", "push_out"):
        assert set(_names(select(["-" + key], None))) == everything - by_tag(key)
        assert set(_names(select([key], ()))) == by_tag(key)
        assert set(_names(select(["-tag:" + key], None))) == everything - by_tag(key)
    assert {"merge", "merge_inouts", "scan_merge"} <= by_tag("merge")
    assert {"canonicalize", "constant_folding", "remove_unused"} <= by_tag("canonicalize")
    assert set(_names(select(["-rule:merge"], None))) == everything - {"merge"}
    assert set(_names(select(["rule:merge"], ()))) == {"merge"}
    assert set(_names(select(["-rule:canonicalize"], None))) == everything - {"canonicalize"}
    with pytest.raises(ValueError, match="unknown rewrite or tag 'rule:push_out'"):
        select(["-rule:push_out"], None)

def test_minus_merge_keeps_two_loops_apart_and_minus_rule_merge_does_not(scan_nodes):
    """Issue 12, bug 7, through ss.function: "-merge" switches off the whole merge tag (so
    scan_merge leaves the two loops apart); "-rule:merge" only the graph merge."""
    x = T.vector("x")
    total, _ = ss.scan(lambda v, s: s + v, sequences=x, outputs_info=T.constant(0.0))
    peak, _ = ss.scan(lambda v, s: T.maximum(s, v), sequences=x, outputs_info=T.constant(-np.inf))
    loops = ["-vectorize"]
    apart = ss.function([x], [total, peak], rewrites=loops + ["-merge"])
    fused = ss.function([x], [total, peak], rewrites=loops + ["-rule:merge"])
    assert len(scan_nodes(apart)) == 2 and len(scan_nodes(fused)) == 1
    assert not {r.rule for r in apart.rewrite_report()} & {"merge", "scan_merge", "merge_inouts"}
    assert "scan_merge" in {r.rule for r in fused.rewrite_report() if r.fired}
    values = np.array([1.0, -2.0, 5.0])
    for f in (apart, fused):
        np.testing.assert_array_equal(f(values)[0], np.cumsum(values))
        np.testing.assert_array_equal(f(values)[1], np.maximum.accumulate(values))
