"""A fuzz program as plain data: frozen dataclasses of tuples and numbers whose ``repr`` is a
Python expression that rebuilds it, so a failing program can be pasted into the regression list.

A program declares its inputs, a list of loops (each a ``scan`` call) and the expressions the
compiled function returns. Expressions are nested tuples (``Expr``):

- ``("v", name)``: a variable in scope (an input; in a loop body also ``s0@-1``: sequence 0 at
  tap -1, ``o1@-2``: output 1 at tap -2; in a nested loop's body ``is0@0``, ``io0@-1``);
- ``("c", number)``: a Python scalar; ``("cvec", (numbers...))``: a float64 vector constant;
- ``(op, *operands)`` for ``op`` in ``UNARY``, ``BINARY`` (``cast`` takes a dtype name);
- ``("ifelse", condition, then, else)``: ``ss.ifelse``; only the chosen branch is evaluated
  (the condition a boolean scalar Expr, both branches of one dtype and shape);
- ``("loop", i, k)``: output ``k`` of ``Program.loops[i]``, whole (top level only);
- ``("scan", Loop, k)``: output ``k`` of a loop nested in a body, whole;
- ``("new", k)``: in an ``until`` condition, the value output ``k`` takes at this step;
- ``("last", e)``, ``("tail", e, k)``: ``e[-1]`` and ``e[-k:]``;
- ``("take", e, i)``: ``e[i]`` for an integer scalar Expr ``i`` (numpy's IndexError out of
  range). The generator does not make it yet: regression programs use it.

Values of the inputs come from ``Program.seed`` (see ``input_value``) unless given.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

Expr = tuple

UNARY = ("neg", "tanh", "sin", "exp", "sum")
BINARY = ("add", "sub", "mul", "maximum", "minimum", "dot", "gt")
TERNARY = ("ifelse",)


@dataclass(frozen=True)
class Input:
    """A variable of the top-level scope. ``kind``: "input" (an argument of the compiled
    function), "constant" (baked into the graph) or "shared" (``ss.shared``). ``static``
    declares the full shape in the type (``T.tensor(dtype, shape=...)``)."""

    name: str
    shape: tuple
    dtype: str = "float64"
    kind: str = "input"
    static: bool = False
    value: object = None


@dataclass(frozen=True)
class Seq:
    """A sequence of a loop: ``source`` is an Expr of the enclosing scope."""

    source: Expr
    taps: tuple = (0,)
    as_dict: bool = False


@dataclass(frozen=True)
class Out:
    """An output of a loop: ``kind`` "nit" (no feedback), "sit" (tap -1) or "mit" (``taps``);
    ``expr`` is its value at each step; ``init`` (an Expr of the enclosing scope) its initial
    value; ``shape`` and ``dtype`` describe one step (what an empty output has)."""

    kind: str
    expr: Expr
    shape: tuple
    dtype: str
    init: Expr | None = None
    taps: tuple = ()
    as_dict: bool = False


@dataclass(frozen=True)
class Loop:
    """One ``scan`` call. ``n_steps``: None, ``("const", k)`` or ``("sym", input name)``;
    ``non_seqs``: names passed as ``non_sequences`` (a body may also read any other name of
    the enclosing scope: a free variable); ``updates``: (shared input name, new value Expr);
    ``until``: a boolean scalar Expr (it may read ``("new", k)``)."""

    sequences: tuple = ()
    outputs: tuple = ()
    non_seqs: tuple = ()
    n_steps: tuple | None = None
    go_backwards: bool = False
    until: Expr | None = None
    updates: tuple = ()
    return_list: bool = True


@dataclass(frozen=True)
class Program:
    """Inputs, loops (a later loop may read an earlier one's outputs) and the returned Exprs."""

    d: int
    inputs: tuple
    loops: tuple
    reads: tuple
    seed: int = 0

    def input(self, name: str) -> Input:
        return next(i for i in self.inputs if i.name == name)


def seq_name(index: int, tap: int, nested: bool = False) -> str:
    return f"{'i' if nested else ''}s{index}@{tap}"


def out_name(index: int, tap: int, nested: bool = False) -> str:
    return f"{'i' if nested else ''}o{index}@{tap}"


def span_of_sequence(taps: tuple) -> int:
    """Elements beyond the step count a sequence's taps need (tap 0 always counts)."""
    return max(max(taps), 0) - min(min(taps), 0)


def loops_read_by(item) -> set[int]:
    """Indices ``i`` of the ``("loop", i, k)`` expressions inside ``item``."""
    if isinstance(item, Loop):
        return loops_read_by((item.sequences, item.outputs, item.until, item.updates))
    if isinstance(item, (Seq, Out)):
        return loops_read_by((item.source,) if isinstance(item, Seq) else (item.expr, item.init))
    if not isinstance(item, tuple):
        return set()
    found = {item[1]} if len(item) == 3 and item[0] == "loop" else set()
    return found.union(*(loops_read_by(part) for part in item))


def unread_loops(loops: tuple | list, reads: tuple | list) -> list[int]:
    """Loops whose outputs nothing returns, even through a later loop, and which update no
    shared variable. The reference runs every loop, while a compiled function runs only what
    its outputs need, so a program must have none."""
    used, unread = loops_read_by(tuple(reads)), []
    for j in reversed(range(len(loops))):
        if j in used or loops[j].updates:
            used |= loops_read_by(loops[j])
        else:
            unread.append(j)
    return unread


def input_value(program: Program, position: int) -> np.ndarray:
    """The value of ``program.inputs[position]``: its own ``value``, else drawn from the
    program's seed (floats in [-1, 1), matrices halved, integers in [-3, 3])."""
    spec = program.inputs[position]
    if spec.value is not None:
        return np.asarray(spec.value, dtype=spec.dtype)
    rng = np.random.default_rng([program.seed, position])
    if spec.dtype.startswith("int"):
        return rng.integers(-3, 4, size=spec.shape).astype(spec.dtype)
    scale = 0.5 if len(spec.shape) == 2 and spec.shape[0] == spec.shape[1] == program.d else 1.0
    return (scale * rng.uniform(-1.0, 1.0, size=spec.shape)).astype(spec.dtype)


def format_program(program: Program, indent: str = "") -> str:
    """``repr(program)`` laid out one field and one input/loop/read per line (still valid Python)."""
    lines = [f"{indent}Program("]
    for field in fields(program):
        value = getattr(program, field.name)
        if isinstance(value, tuple) and value:
            lines.append(f"{indent}    {field.name}=(")
            lines += [f"{indent}        {item!r}," for item in value]
            lines.append(f"{indent}    ),")
        else:
            lines.append(f"{indent}    {field.name}={value!r},")
    lines.append(f"{indent})")
    return "\n".join(lines)


def parse_program(text: str) -> Program:
    """Rebuild a program from its ``repr`` (or ``format_program``) text."""
    names = {"Program": Program, "Input": Input, "Seq": Seq, "Out": Out, "Loop": Loop}
    return eval(text, {"__builtins__": {}}, names)  # noqa: S307 - our own literal format
