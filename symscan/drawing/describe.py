"""Labels and hover details of drawn items: short op names, type words, static shapes and
the Python line that built a node."""

from __future__ import annotations

import linecache
import os
import re
import textwrap

from symscan.drawing.text import shorten
from symscan.graph.basic import Apply, Constant, Variable
from symscan.tensor.composite import Composite

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
    if isinstance(node.op, Composite):
        return composite_label(node.op)
    text = str(node.op)
    elemwise = re.fullmatch(r"Elemwise\{(.*)\}", text)
    if elemwise:
        text = SYMBOLS.get(elemwise[1], elemwise[1])
    elif text in ("Dot", "MatMul", "Outer"):
        text = text.lower()
    return shorten_lines(text)


def composite_label(op: Composite) -> str:
    """A fused chain: its formula (``sigmoid(i0 + i1)``, inputs numbered as they enter the
    box) on up to three lines, else the names of its ops."""
    text = ", ".join(_infix(op.inner, out, top=True) for out in op.inner.outputs)
    lines = textwrap.wrap(text, LINE_CHARS, break_long_words=False)
    if len(lines) <= MAX_LINES and all(len(line) <= LINE_CHARS for line in lines):
        return "\n".join(lines)
    names = [SYMBOLS.get(getattr(n.op, "name", ""), getattr(n.op, "name", None) or n.op.dtype)
             for n in op.inner.toposort()]
    return shorten_lines("\n".join(textwrap.wrap(f"fused {len(names)}: " + " ".join(dict.fromkeys(names)),
                                                 LINE_CHARS)))


def _infix(inner, var: Variable, top: bool = False) -> str:
    if var in inner.inputs:
        return f"i{inner.inputs.index(var)}"
    if isinstance(var, Constant):
        return format(var.data[()], "g") if var.data.dtype.kind in "fiu" else str(var.data[()])
    node = var.owner
    name = getattr(node.op, "name", None)
    if name in SYMBOLS and len(node.inputs) == 2:
        text = f" {SYMBOLS[name]} ".join(_infix(inner, v) for v in node.inputs)
        return text if top else f"({text})"
    if name == "neg":
        return f"-{_infix(inner, node.inputs[0])}"
    return f"{name or node.op.dtype}({', '.join(_infix(inner, v, top=True) for v in node.inputs)})"


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


# ---------------------------------------------------------------------------- layout ops in Python notation
def _known_int(var: Variable) -> int | None:
    from symscan.tensor.basic import static_int

    return static_int(var) if getattr(var.type, "ndim", None) == 0 else None


def index_value_text(var: Variable, drawn: bool) -> str:
    """``-1`` for a constant, ``n`` / ``len(x)`` / ``n-1`` for a folded shape value, ``?`` when drawn."""
    value = _known_int(var)
    if value is not None:
        return str(value)
    if drawn:
        return "?"
    return _shape_expr(var, 4) or "n"


def _shape_expr(var: Variable, depth: int) -> str | None:
    """A short text of a folded integer: ``len(x)``, ``T``, ``n-1``; None when not simple."""
    from symscan.scan.checks import StepCount
    from symscan.tensor.elemwise import Elemwise
    from symscan.tensor.shape import Shape
    from symscan.tensor.subtensor import Subtensor

    value = _known_int(var)
    if value is not None:
        return str(value)
    node = var.owner
    if node is None or depth == 0:
        return var.name
    if isinstance(node.op, StepCount):
        return "T"
    if isinstance(node.op, Subtensor) and node.inputs[0].owner is not None and \
            isinstance(node.inputs[0].owner.op, Shape) and _known_int(node.inputs[1]) == 0:
        source = node.inputs[0].owner.inputs[0]
        return f"len({source.name})" if source.name else "n"
    if isinstance(node.op, Elemwise) and node.op.name == "sub" and node.inputs[0] is node.inputs[1]:
        return "0"
    if isinstance(node.op, Elemwise) and node.op.name == "maximum" and _known_int(node.inputs[1]) == 0:
        return _shape_expr(node.inputs[0], depth - 1)  # a clipped length reads as the length
    if isinstance(node.op, Elemwise) and node.op.name in ("add", "sub") and len(node.inputs) == 2:
        left, right = (_shape_expr(v, depth - 1) for v in node.inputs)
        if node.op.name == "add" and left and right and right.endswith(f"-{left}"):
            return right[:-len(left) - 1]  # 1+n-1 reads as n
        if left and right and len(left) + len(right) <= 10:
            return f"{left}{SYMBOLS[node.op.name]}{right}"
    return None


def index_label(spec: tuple, texts: list[str]) -> str:
    """``[1:]``, ``[-1]``, ``[::-1]``, ``[:n, 0]`` from an index spec and its index values' texts."""
    from symscan.tensor.subtensor import ARRAY, ELLIPSIS, INT, NONE

    values, parts = iter(texts), []
    for entry in spec:
        if entry == INT:
            parts.append(next(values))
        elif entry == ARRAY:
            parts.append(next(values) if texts else "[?]")
        elif entry == NONE:
            parts.append("None")
        elif entry == ELLIPSIS:
            parts.append("...")
        else:
            start, stop, step = (next(values) if present else "" for present in entry[1:4])
            start, step = ("" if start == "0" else start), ("" if step == "1" else step)
            parts.append(f"{start}:{stop}" + (f":{step}" if step else ""))
    while len(parts) > 1 and parts[-1] == ":":
        parts.pop()
    return "[" + ", ".join(parts) + "]"


def dimshuffle_label(input_ndim: int, new_order: tuple) -> str:
    """``.T``, ``transpose``, ``expand dims``, ``drop dims`` or ``T(1,0,2)``."""
    kept = [a for a in new_order if a != "x"]
    in_order = kept == sorted(kept)
    if in_order and len(kept) == input_ndim:
        return "expand dims"
    if in_order and "x" not in new_order:
        return "drop dims"
    if kept == list(range(input_ndim))[::-1] and len(new_order) == input_ndim:
        return ".T" if input_ndim == 2 else "transpose"
    return "T(" + ",".join(str(a) for a in new_order) + ")"


def fill_label(value: str) -> str:
    """``zeros like`` / ``ones like`` / ``fill(c)`` for ``second(x, c)`` and allocs of a constant."""
    return {"0": "zeros like", "0.0": "zeros like", "1": "ones like", "1.0": "ones like"}.get(value, f"fill({value})")


CHAIN_CHARS = 18  # narrower than other labels: a chain's item sits on a long row of layers


def chain_label(steps: list[str]) -> str:
    """The label of folded layout steps: ``[::-1][:n] · T(0,2,1)``, or named ``reshape ∘ .T ∘ [::-1]``
    when it does not fit three short lines."""
    joined: list[str] = []
    for step in steps:
        if joined and step.startswith("[") and joined[-1].endswith("]") and len(joined[-1] + step) <= CHAIN_CHARS:
            joined[-1] += step
        else:
            joined.append(step)
    lines: list[str] = []
    for part in joined:
        if lines and len(lines[-1]) + 3 + len(part) <= CHAIN_CHARS:
            lines[-1] += " · " + part
        else:
            lines.append(part)
    if len(lines) <= MAX_LINES and all(len(line) <= LINE_CHARS for line in lines):
        return "\n".join(lines)
    names = [("slice" if s.startswith("[") else s) for s in reversed(steps)]
    names = [n for i, n in enumerate(names) if i == 0 or n != names[i - 1]]
    return shorten_lines(" ∘ ".join(names) if len(" ∘ ".join(names)) <= LINE_CHARS else
                         "\n".join(" ∘ ".join(names[i:i + 3]) for i in range(0, len(names), 3)))
