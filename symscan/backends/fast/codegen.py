"""Source generation: names for variables, the emitter table, and the function around them.

Each op class has an emitter (``@emits(OpClass)``) that writes the lines computing a node
from the names of its inputs; ops without one call their own ``perform`` (correct, slower).
Variables are locals of one generated function; constants and helpers are its globals.
With ``frees``, an intermediate array's name is deleted after its last reader, so its memory
goes back as soon as nothing needs it (a local would otherwise hold it until the return).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from symscan.graph.basic import Apply, Constant, Variable
from symscan.graph.fg import FunctionGraph

EMITTERS: dict[type, Callable] = {}


def emits(*op_classes: type, table: dict[type, Callable] | None = None) -> Callable:
    """Register an emitter ``fn(gen, node, ins, outs)`` for nodes of these op classes (in
    ``table``: the fast evaluator's by default, or another backend's)."""

    def register(fn: Callable) -> Callable:
        for cls in op_classes:
            (EMITTERS if table is None else table)[cls] = fn
        return fn

    return register


class Codegen:
    """The source of one function being written, with its namespace of globals."""

    def __init__(self, emitters: dict[type, Callable] | None = None, fallback: Callable | None = None,
                 frees: bool = False) -> None:
        self.emitters = EMITTERS if emitters is None else emitters  # op class -> emitter
        self.fallback = emit_perform if fallback is None else fallback  # for ops without one
        self.frees = frees  # ``del`` dead intermediates (plain Python; a numba kernel keeps them)
        self.lines: list[str] = []
        self.namespace: dict[str, object] = {"np": np}
        self.indent = 1
        self._counts: dict[str, int] = {}
        self.current: Apply | None = None
        self.out_slots: dict[Variable, str] = {}  # loop outputs whose node may write into a buffer row
        self.line_nodes: dict[int, Apply] = {}  # line number in the source -> node it computes

    def fresh(self, prefix: str = "v") -> str:
        count = self._counts.get(prefix, 0)
        self._counts[prefix] = count + 1
        return f"{prefix}{count}"

    def bind(self, value: object, prefix: str = "g") -> str:
        """A global name holding ``value`` (constants, ops, helper objects)."""
        name = self.fresh(f"_{prefix}")
        self.namespace[name] = value
        return name

    def line(self, text: str) -> None:
        self.lines.append("    " * self.indent + text)
        if self.current is not None:
            self.line_nodes[len(self.lines) + 1] = self.current  # +1: the ``def`` line comes first

    def constant(self, var: Constant) -> str:
        data = var.data
        return self.bind(data[()] if data.ndim == 0 else data, "k")

    def graph(self, fgraph: FunctionGraph, names: dict[Variable, str]) -> list[str]:
        """Emit every node of ``fgraph``; ``names`` maps its inputs (and gains the rest)."""
        order = fgraph.toposort()
        dead = dead_values(order, fgraph.outputs) if self.frees else {}
        for position, node in enumerate(order):
            self.node(node, names)
            if position in dead:
                self.line(f"del {', '.join(names[v] for v in dead[position])}")
        return [self.name_of(v, names) for v in fgraph.outputs]

    def name_of(self, var: Variable, names: dict[Variable, str]) -> str:
        if var not in names:
            if not isinstance(var, Constant):
                raise KeyError(f"no value for {var!r} in the generated code")
            names[var] = self.constant(var)
        return names[var]

    def node(self, node: Apply, names: dict[Variable, str]) -> None:
        ins = [self.name_of(v, names) for v in node.inputs]
        outs = [self.fresh() for _ in node.outputs]
        names.update(zip(node.outputs, outs))
        emitter = self.emitters.get(type(node.op), self.fallback)
        outer, self.current = self.current, node
        emitter(self, node, ins, outs)
        self.current = outer

    def source(self, name: str, params: list[str], results: list[str]) -> str:
        body = self.lines + [f"    return [{', '.join(results)}]"]
        return f"def {name}({', '.join(params)}):\n" + "\n".join(body) + "\n"


def dead_values(order: list[Apply], outputs: list[Variable]) -> dict[int, list[Variable]]:
    """The arrays computed in ``order`` that are dead after each position: read last there
    (or never read, dead where they are made). Inputs belong to the caller or to the code
    around a loop body, outputs to the caller: neither is ever dead."""
    last: dict[Variable, int] = {}
    for position, node in enumerate(order):
        for var in node.inputs:
            if var in last:
                last[var] = position
        for var in node.outputs:
            last[var] = position
    kept, dead = set(outputs), {}
    for var, position in last.items():
        if var not in kept and getattr(var.type, "ndim", 0) > 0:
            dead.setdefault(position, []).append(var)
    return dead


def emit_perform(gen: Codegen, node: Apply, ins: list[str], outs: list[str]) -> None:
    """Any op: call its reference ``perform`` (one call, no dispatch)."""
    perform, bound_node = gen.bind(node.op.perform, "perform"), gen.bind(node, "node")
    gen.line(f"{', '.join(outs)}, = {perform}({bound_node}, [{', '.join(ins)}])")
    scalar_results(gen, node, outs)


def scalar_results(gen: Codegen, node: Apply, outs: list[str]) -> None:
    """0-d results as numpy scalars (some numpy functions return 0-d arrays)."""
    for var, name in zip(node.outputs, outs):
        if getattr(var.type, "ndim", None) == 0:
            gen.line(f"{name} = {name}[()]")
