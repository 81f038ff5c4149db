"""The README's table of ONNX ops symscan imports, with how many of ONNX's backend node tests
run each one (``python -m benchmarks.onnx_coverage`` prints it; tests/test_readme.py checks that
the README's table lists exactly ``ss.onnx.supported_ops()``)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

FAMILIES = {
    "symscan.onnx.importer.elementwise": "elementwise, activations, casts",
    "symscan.onnx.importer.tensor_ops": "products, reductions, softmax",
    "symscan.onnx.importer.shape_ops": "shapes, slicing, creation",
    "symscan.onnx.importer.indexing": "gather and scatter",
    "symscan.onnx.importer.control": "control flow",
}
"""Converter module -> the row it goes in."""


def coverage() -> tuple[dict[str, list[tuple[str, int]]], Counter]:
    """({family: [(op, node tests run)]}, {op symscan does not import: node tests using it})."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
    from node_tests import op_types, selection

    from symscan.onnx.importer.context import CONVERTERS

    selected, skipped = selection()
    runs = Counter(op for case in selected for op in op_types(case.model.graph))
    missing = Counter(op for reason in skipped.values() if reason.startswith("ops symscan does not import: ")
                      for op in reason.removeprefix("ops symscan does not import: ").split(", "))
    families: dict[str, list[tuple[str, int]]] = {name: [] for name in FAMILIES.values()}
    for op, converter in sorted(CONVERTERS.items()):
        families[FAMILIES[converter.__module__]].append((op, runs[op]))
    return families, missing


def markdown() -> str:
    families, missing = coverage()
    lines = ["| ops | imported (node tests that run it) |", "|---|---|"]
    for family, ops in families.items():
        lines.append(f"| {family} | {', '.join(f'{op} ({n})' for op, n in ops)} |")
    lines.append(f"| not imported | {', '.join(sorted(missing))} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown())
