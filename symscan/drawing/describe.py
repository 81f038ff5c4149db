"""Labels and hover details of drawn items: short op names, type words, static shapes and
the Python line that built a node."""

from __future__ import annotations

import linecache
import os
import re

from symscan.drawing.text import shorten
from symscan.graph.basic import Apply, Variable

SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "true_div": "/", "int_div": "//", "pow": "**", "neg": "neg",
           "gt": ">", "lt": "<", "ge": ">=", "le": "<=", "eq": "==", "neq": "!="}
RANKS = {0: "scalar", 1: "vector", 2: "matrix", 3: "tensor3", 4: "tensor4"}
MAX_LINES, LINE_CHARS = 3, 28


def shorten_lines(label: str) -> str:
    """At most MAX_LINES lines of at most LINE_CHARS characters."""
    lines = [shorten(line, LINE_CHARS) for line in label.split("\n")]
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES - 1] + [shorten(" ".join(lines[MAX_LINES - 1:]), LINE_CHARS)]
    return "\n".join(lines)


def op_label(node: Apply) -> str:
    """``tanh``, ``+``, ``dot``, ``Subtensor{?:}``: the op's str, made short."""
    text = str(node.op)
    elemwise = re.fullmatch(r"Elemwise\{(.*)\}", text)
    if elemwise:
        text = SYMBOLS.get(elemwise[1], elemwise[1])
    elif text in ("Dot", "MatMul", "Outer"):
        text = text.lower()
    return shorten_lines(text)


def type_words(var: Variable) -> str:
    """``float64 matrix``; other types as they print."""
    dtype, shape = getattr(var.type, "dtype", None), getattr(var.type, "shape", None)
    if dtype is None or shape is None:
        return str(var.type)
    return f"{dtype} {RANKS.get(len(shape), f'{len(shape)}-d tensor')}"


def shape_text(var: Variable) -> str | None:
    shape = getattr(var.type, "shape", None)
    if shape is None:
        return None
    return "(" + ", ".join("?" if n is None else str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def type_details(var: Variable) -> dict[str, str]:
    details = {"type": type_words(var)}
    shape = shape_text(var)
    if shape is not None:
        details["shape"] = shape
    return details


def built_at(node: Apply) -> str | None:
    """``file.py:12: source text`` (``cell line 3: text`` for a notebook cell)."""
    where = node.tag.get("built_at")
    if not where:
        return None
    filename, lineno = where
    source = linecache.getline(filename, lineno).strip()
    cell = "ipykernel" in filename or filename.startswith("<ipython-input")
    place = f"cell line {lineno}" if cell else f"{os.path.basename(filename)}:{lineno}"
    return shorten(f"{place}: {source}" if source else place, 120)


def item_details(node: Apply) -> dict[str, str]:
    """Hover text of an op's item, in display order: type, shape, built at, op."""
    details = type_details(node.outputs[0]) if node.outputs else {}
    where = built_at(node)
    if where:
        details["built at"] = where
    details["op"] = shorten(repr(node.op), 200)
    return details


def root_label(var: Variable) -> str:
    return shorten(var.name or type_words(var))


def search_text(node: Apply) -> str:
    names = [v.name for v in node.outputs if v.name]
    return " ".join(names + [type(node.op).__name__, str(node.op)])
