"""``dprint``: Theano ``debugprint``-style text of a graph or a compiled function.

Each variable prints as one line (op or name, id, name, type); its inputs follow, indented
with `` |``. A node printed before appears again as its line only, so shared sub-graphs
print once. Ops with inner graphs (loops) print those indented under their node, each inner
input labelled with its role as the op describes it.
"""

from __future__ import annotations

import io
import string
import sys

from symscan.graph.basic import Constant, SharedVariable, Variable


class _Printer:
    def __init__(self, print_type: bool):
        self.print_type = print_type
        self.ids: dict[object, str] = {}
        self.expanded: set = set()
        self.lines: list[str] = []

    def ident(self, obj) -> str:
        if obj not in self.ids:
            self.ids[obj] = _id_text(len(self.ids))
        return self.ids[obj]

    def line(self, var: Variable, prefix: str, labels: dict) -> str:
        text = (f"{var.owner.op}" if var.owner is not None else
                f"{var!r}" if not isinstance(var, Constant) else f"Constant{{{var!r}}}")
        key = var.owner if var.owner is not None else var
        parts = [text, f"[id {self.ident(key)}]"]
        if var.owner is not None and len(var.owner.outputs) > 1:
            parts.append(f"out{var.index}")
        if var.owner is not None and var.name:
            parts.append(repr(var.name))
        if isinstance(var, SharedVariable):
            parts.append("<shared>")
        if var in labels:
            parts.append(f"<{labels[var]}>")
        if self.print_type:
            parts.append(str(var.type))
        return prefix + " ".join(parts)

    def walk(self, var: Variable, prefix: str, child_prefix: str, labels: dict) -> None:
        """Depth-first, with an explicit stack so long chains do not hit the recursion limit."""
        stack: list[tuple] = [(var, prefix, child_prefix, labels)]
        while stack:
            task = stack.pop()
            if isinstance(task, str):
                self.lines.append(task)
                continue
            var, prefix, child_prefix, labels = task
            self.lines.append(self.line(var, prefix, labels))
            node = var.owner
            if node is None or node in self.expanded:
                continue
            self.expanded.add(node)
            todo: list = [(inp, child_prefix + " |", child_prefix + " |", labels) for inp in node.inputs]
            for index, (graph, inner_labels) in enumerate(_inner_graphs_with_labels(node.op)):
                todo.append(f"{child_prefix}   {_inner_title(node.op, index)}:")
                for out_label, out in zip(_output_labels(node.op, graph), graph.outputs):
                    head = f"{child_prefix}   > "
                    todo.append(f"{head}{out_label}:" if out_label else f"{head}output:")
                    todo.append((out, child_prefix + "     ", child_prefix + "     ", inner_labels))
            stack.extend(reversed(todo))


def _id_text(n: int) -> str:
    letters = string.ascii_uppercase
    text = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        text = letters[r] + text
    return text


def _inner_graphs_with_labels(op) -> list[tuple]:
    graphs = op.inner_graphs()
    label_fn = getattr(op, "inner_input_labels", None)
    out = []
    for graph in graphs:
        labels = dict(zip(graph.inputs, label_fn())) if label_fn else {}
        out.append((graph, labels))
    return out


def _inner_title(op, index: int) -> str:
    """The title of inner graph ``index``: one per graph (``inner_titles``) or one for all."""
    titles = getattr(op, "inner_titles", None)
    return titles[index] if titles else getattr(op, "inner_title", "inner graph")


def _output_labels(op, graph) -> list[str]:
    fn = getattr(op, "inner_output_labels", None)
    return list(fn()) if fn else [""] * len(graph.outputs)


def _outputs_of(obj) -> list[Variable]:
    fgraph = getattr(obj, "fgraph", obj)
    if hasattr(fgraph, "outputs") and hasattr(fgraph, "apply_nodes"):
        return list(fgraph.outputs)
    if isinstance(obj, Variable):
        return [obj]
    if isinstance(obj, (list, tuple)) and all(isinstance(v, Variable) for v in obj):
        return list(obj)
    raise TypeError(f"dprint takes a variable, a list of variables, a FunctionGraph or a compiled "
                    f"function, got {type(obj).__name__}")


def dprint(obj, file=None, print_type: bool = True) -> str | None:
    """Print the graph of ``obj``; ``file="str"`` returns the text instead of printing it."""
    printer = _Printer(print_type)
    for out in _outputs_of(obj):
        printer.walk(out, "", "", {})
    text = "\n".join(printer.lines) + "\n"
    if file == "str":
        return text
    (file or sys.stdout).write(text)
    return None


def dprint_text(obj, print_type: bool = True) -> str:
    """``dprint(obj, file="str")``."""
    buffer = io.StringIO()
    dprint(obj, file=buffer, print_type=print_type)
    return buffer.getvalue()
