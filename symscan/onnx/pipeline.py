"""ONNX in, symscan in the middle: ``import_function`` compiles an imported model, ``optimize``
imports it, rewrites it and exports it again, with a report of what changed.

These compile symscan functions, so this module sits above ``symscan.compile`` (the importer
and the exporter below it do not).
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import onnx

from symscan.compile import Function, function
from symscan.onnx.export import MIN_OPSET, export
from symscan.onnx.importer import load
from symscan.onnx.importer.model import as_model, model_opset

LOOP_OPS = ("Loop", "Scan")


def import_function(model_or_path, mode=None, rewrites: Sequence[str] | None = None,
                    static_inputs: Mapping[str, object] | None = None) -> Function:
    """An ONNX model as a compiled symscan function: its inputs (those without initializers)
    in order, a list of its outputs in order. ``mode``/``rewrites`` as in ``ss.function``."""
    model = as_model(model_or_path)
    inputs, outputs = load(model, static_inputs=static_inputs)
    return function(inputs, list(outputs), mode=mode, rewrites=rewrites, name=model.graph.name or None)


def op_counts(graph: onnx.GraphProto) -> Counter:
    """How many nodes of each op type a graph holds, its subgraphs' (loop bodies') included."""
    counts = Counter()
    for node in graph.node:
        counts[node.op_type] += 1
        for attribute in node.attribute:
            for sub in ([attribute.g] if attribute.type == onnx.AttributeProto.GRAPH else list(attribute.graphs)):
                counts.update(op_counts(sub))
    return counts


@dataclass
class OptimizeReport:
    """What ``optimize`` changed: node counts by op type before and after (loop bodies
    included), and the symscan rewrites that fired or declined (``rewrites``)."""

    before: Counter
    after: Counter
    rewrites: object

    def loops(self, counts: Counter) -> int:
        return sum(counts[op] for op in LOOP_OPS)

    def rows(self) -> list[tuple[str, int, int]]:
        ops = sorted(set(self.before) | set(self.after), key=lambda op: (-self.before[op], op))
        return [(op, self.before[op], self.after[op]) for op in ops]

    def fired(self) -> Counter:
        return Counter(r.rule for r in self.rewrites if r.fired)

    def summary(self) -> str:
        fired = ", ".join(f"{rule} x{n}" for rule, n in sorted(self.fired().items())) or "none"
        return (f"nodes {sum(self.before.values())} -> {sum(self.after.values())}, loops (Loop/Scan) "
                f"{self.loops(self.before)} -> {self.loops(self.after)}; rewrites fired: {fired}")

    def __str__(self) -> str:
        lines = [f"optimize: {self.summary()}", f"{'op type':<24}{'before':>8}{'after':>8}"]
        lines += [f"{op:<24}{b:>8}{a:>8}" for op, b, a in self.rows()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td>{html.escape(op)}</td><td>{b}</td><td>{a}</td></tr>" for op, b, a in self.rows())
        return (f"<p>{html.escape(self.summary())}</p><table><thead><tr><th>op type</th><th>before</th>"
                f"<th>after</th></tr></thead><tbody>{rows}</tbody></table>")


def optimize(model_or_path, path: str | None = None, *, rewrites: Sequence[str] | None = None,
             opset: int | None = None, with_report: bool = False):
    """The model imported, rewritten by symscan (push-out, save_mem, merge, vectorize: mode
    "fast"'s rewrites, or ``rewrites``) and exported again, with the same input and output
    names. ``opset``: the model's (at least 16) unless given. Returns the ``ModelProto``, or
    ``(model, OptimizeReport)`` with ``with_report=True``; ``path`` writes the model too."""
    model = as_model(model_or_path)
    inputs, outputs = load(model)
    f = function(inputs, list(outputs), mode="fast", rewrites=rewrites, name=model.graph.name or None)
    names = [out.name for out in model.graph.output]
    optimized = export(f, opset=opset or max(model_opset(model), MIN_OPSET), output_names=names)
    optimized.graph.name = model.graph.name or optimized.graph.name
    if path is not None:
        onnx.save(optimized, str(Path(path)))
    if not with_report:
        return optimized
    return optimized, OptimizeReport(op_counts(model.graph), op_counts(optimized.graph), f.rewrite_report())
