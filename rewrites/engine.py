"""The engine: run selected rules phase by phase to a fixed point, inside loop bodies too,
and record what fired (and what declined, and why) for ``f.rewrite_report()``."""

from __future__ import annotations

import html
from collections.abc import Iterator
from dataclasses import dataclass

from rewrites.registry import FINAL_PHASES, PHASES, Declined, Rewrite, Rewritten
from symscan.config import config
from symscan.graph.fg import FunctionGraph

MAX_FIRINGS_PER_RULE = 500
"""A guard against rules that undo each other: a rule stops after this many firings per graph."""


@dataclass(frozen=True)
class Record:
    """One look of ``rule`` at ``node`` (text): it ``fired`` or declined, with ``detail``."""

    rule: str
    node: str
    fired: bool
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.rule:<25} {'fired' if self.fired else 'declined':<9} {self.node}: {self.detail}"


class RewriteReport:
    """The records of a compilation; ``str()`` is a table, ``_repr_html_`` one for notebooks."""

    def __init__(self, records: list[Record] | None = None):
        self.records: list[Record] = records or []
        self._declined: set[Record] = set()

    def decline(self, record: Record) -> None:
        """Record a decline once: rules look at the same node again in later passes."""
        if record not in self._declined:
            self._declined.add(record)
            self.records.append(record)

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    @property
    def fired(self) -> list[Record]:
        return [r for r in self.records if r.fired]

    def to_string(self) -> str:
        if not self.records:
            return "no rewrite fired or declined"
        header = f"{'rule':<25} {'outcome':<9} where: what changed"
        return "\n".join([header, "-" * len(header)] + [str(r) for r in self.records])

    __str__ = to_string

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{html.escape(r.rule)}</td><td>{'fired' if r.fired else 'declined'}</td>"
            f"<td><code>{html.escape(r.node)}</code></td><td>{html.escape(r.detail)}</td></tr>"
            for r in self.records)
        return ("<table><thead><tr><th>rule</th><th>outcome</th><th>where</th><th>what changed</th></tr>"
                f"</thead><tbody>{rows}</tbody></table>")


MAX_ROUNDS = 4
"""The phases repeat (fusion and inplace last, once) until a round changes nothing, at most this often."""

INHERITED = ("numba_ahead",)
"""Marks ``function`` sets on its graph that rules read in loop bodies and branches too."""


def rewrite_graph(fgraph: FunctionGraph, rules: list[Rewrite], report: RewriteReport | None = None,
                  where: str = "") -> RewriteReport:
    """Apply ``rules`` to ``fgraph`` in place: the phases in order, each to a fixed point,
    loop bodies first, and the whole sequence again while something changed."""
    report = report if report is not None else RewriteReport()
    firings: dict[str, int] = {}
    for _ in range(MAX_ROUNDS):
        if not any([_run_phase(fgraph, [r for r in rules if r.phase == phase], report, firings, where)
                    for phase in PHASES if phase not in FINAL_PHASES]):
            break
    for phase in FINAL_PHASES:
        _run_phase(fgraph, [r for r in rules if r.phase == phase], report, firings, where)
    return report


def _run_phase(fgraph: FunctionGraph, rules: list[Rewrite], report: RewriteReport, firings: dict,
               where: str) -> bool:
    if not rules:
        return False
    changed = _rewrite_bodies(fgraph, rules, report, where)
    while _one_pass(fgraph, rules, report, firings, where):
        changed = True
    return changed


def _rewrite_bodies(fgraph: FunctionGraph, rules: list[Rewrite], report: RewriteReport, where: str) -> bool:
    """Run the phase inside each loop body and IfElse branch (a copy); rebuild the node where
    something fired."""
    changed = False
    for node in fgraph.toposort():
        graphs = node.op.inner_graphs()
        if not graphs or node not in fgraph.apply_nodes:
            continue
        copies = [g.clone() for g in graphs]
        fired_before = len(report.fired)
        for copy in copies:
            copy.is_loop_body = True
            copy.n_buffered = getattr(getattr(node.op, "info", None), "n_buffered", 0)
            copy.loop_node = node  # ScanArgs.from_parts(node.op.info, copy, node.inputs) names its inputs
            for mark in INHERITED:
                setattr(copy, mark, getattr(fgraph, mark, None))
            _run_phase(copy, rules, report, {}, f"{where}{_loop_name(node.op)} > ")
        if len(report.fired) > fired_before:
            new_node = node.op.with_inner_graphs(copies).make_node(*node.inputs)
            fgraph.replace_all(zip(node.outputs, new_node.outputs), reason="rewritten loop body")
            changed = True
    return changed


def _loop_name(op) -> str:
    """How the report names an op with inner graphs: a scan (by its name) or an IfElse."""
    info = getattr(op, "info", None)
    if info is None:
        return str(op)
    return f"scan {info.name!r}" if info.name else "scan"


def _one_pass(fgraph: FunctionGraph, rules: list[Rewrite], report: RewriteReport, firings: dict,
              where: str) -> bool:
    changed = False
    for rule in rules:
        if firings.get(rule.name, 0) >= MAX_FIRINGS_PER_RULE:
            continue
        apply = _apply_graph_rule if rule.kind == "graph" else _apply_node_rule
        fired = apply(fgraph, rule, report, firings, where)
        if fired and config.debug_checks:  # graph and node rules alike
            fgraph.check()
        changed = changed or fired
    return changed


def _apply_graph_rule(fgraph: FunctionGraph, rule: Rewrite, report: RewriteReport, firings: dict,
                      where: str) -> bool:
    """One pass of a whole-graph rule; whether it replaced anything."""
    changed = False
    for old, new, detail in rule.fn(fgraph) or []:
        report.records.append(Record(rule.name, f"{where}{old!r}", True, detail or f"-> {new!r}"))
        firings[rule.name] = firings.get(rule.name, 0) + 1
        changed = True
    return changed


def _apply_node_rule(fgraph: FunctionGraph, rule: Rewrite, report: RewriteReport, firings: dict,
                     where: str) -> bool:
    """One look of a node rule at every node it tracks; whether it fired anywhere."""
    changed = False
    for node in fgraph.toposort():
        if node not in fgraph.apply_nodes or not rule.looks_at(node.op):
            continue
        result = rule.fn(fgraph, node)
        if isinstance(result, Declined):
            report.decline(Record(rule.name, f"{where}{node.op}", False, str(result)))
        elif result:
            replacements = result.replacements if isinstance(result, Rewritten) else result
            fgraph.replace_all(replacements.items(), reason=rule.name)
            detail = (result.detail if isinstance(result, Rewritten)
                      else ", ".join(f"{old!r} -> {new!r}" for old, new in replacements.items()))
            report.records.append(Record(rule.name, f"{where}{node.op}", True, detail))
            firings[rule.name] = firings.get(rule.name, 0) + 1
            changed = True
    return changed
