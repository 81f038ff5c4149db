r"""``latex``: the recurrence a scan computes, as LaTeX: ``h_{t} = \tanh(x_{t} W_{in} + h_{t-1} W_{h} + b)``.

The variable is traced back to its Scan node, and ``ScanArgs`` says which inner output it
is and what every inner input stands for: a sequence tap is ``x_{t}`` or ``u_{t-4}``, a past
value of an output ``h_{t-1}``, a non-sequence the user's variable (``W_{in}``). The inner
graph becomes a sympy expression:

- tensors are non-commutative symbols, so a matrix product keeps its operand order
  (``x_{t} W_{in}``, never ``W_{in} x_{t}``); scalars are ordinary symbols;
- elementwise ops map to sympy (``+ - * / **``, ``\exp``, ``\tanh``, ``\max``, ...); an
  elementwise product of two tensors is ``hadamard`` (printed ``\odot``), an elementwise
  quotient by a tensor ``divide`` and a matrix transpose ``transpose``: sympy has no
  elementwise forms of those for non-commutative symbols;
- anything else (reductions, indexing, nested scans, ...) is a named function of its inputs,
  ``\operatorname{sum}(...)``.

With ``go_backwards`` the step ``t`` reads a sequence from its end: ``x_{T-t-1}``, where ``T``
is the sequence's length less its taps' span, and the text says so (``T = \left|x\right|``).

sympy is imported on first use: it takes longer to import than the rest of symscan together.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Apply, Constant, Variable, describe
from symscan.latex.convert import Converter
from symscan.latex.names import Naming, listed_at
from symscan.latex.printer import printer
from symscan.scan.args import RecurrentEntry, ScanArgs, SharedEntry
from symscan.scan.op import Scan
from symscan.tensor.elemwise import Cast, Elemwise
from symscan.tensor.math import Dot, MatMul
from symscan.tensor.random import RandomVariable
from symscan.tensor.shape import DimShuffle
from symscan.tensor.subtensor import ARRAY, ELLIPSIS, INT, NONE, Subtensor


# ---------------------------------------------------------------------------- the result
@dataclass(frozen=True)
class ScanLatex:
    """What ``latex`` returns: ``text`` (LaTeX), and the sympy forms of what it shows.

    ``equations`` holds one ``sympy.Eq(lhs, rhs)`` per output shown, in canonical sympy form
    (compare them with expressions built with ordinary sympy arithmetic); the text keeps the
    order of the graph's sums instead. ``until`` is the stop condition, or None.
    """

    text: str
    equations: tuple
    until: object = None

    @property
    def equation(self):
        """The first (for ``latex(var)``: the only) equation."""
        return self.equations[0]

    def __str__(self) -> str:
        return self.text

    def _repr_latex_(self) -> str:
        """Notebooks render the text as math."""
        return f"${self.text}$"


# ---------------------------------------------------------------------------- public functions
def latex(var: Variable, all_outputs: bool = False) -> ScanLatex:
    r"""The recurrence computing ``var``, an output of scan (what scan returned, a slice of
    it, or the Scan node's own output): ``latex(H).text == r"h_{t} = \tanh\left(...\right)"``.

    With ``all_outputs`` every output of that scan is shown, one equation per line.
    """
    node, index = _scan_output(var)
    hints = {index: var.name} if var.name else {}
    return _render(node, None if all_outputs else index, hints)


def latex_scan(node: Apply) -> ScanLatex:
    """Every output of a Scan node, one equation per line (the user's output order)."""
    if isinstance(node, Variable):
        return latex(node, all_outputs=True)
    if not isinstance(getattr(node, "op", None), Scan):
        raise TypeError(f"latex_scan takes a Scan node, got {node!r}")
    return _render(node, None, {})


def _scan_output(var) -> tuple[Apply, int]:
    """The Scan node computing ``var`` and the output index; slices of the output are looked
    through, since the frontend returns ``buffer[span:]``."""
    if not isinstance(var, Variable):
        raise TypeError(f"latex takes a variable computed by scan, got {type(var).__name__} {var!r}")
    source = var
    while source.owner is not None and isinstance(source.owner.op, Subtensor):
        source = source.owner.inputs[0]
    if source.owner is not None and isinstance(source.owner.op, Scan):
        return source.owner, source.index
    raise TypeError(f"latex: {describe(var)} is not an output of scan; pass a variable scan returned "
                    "(a scan of a constant n_steps of 1 builds no loop to show)")


# ---------------------------------------------------------------------------- rendering
def _render(node: Apply, index: int | None, hints: dict) -> ScanLatex:
    """The equations of one output (``index``) or of all, as text and sympy."""
    import sympy
    from sympy.core.parameters import distribute

    args = ScanArgs.from_node(node)
    entries = args.buffered + args.shared  # in node output order
    names = {i: out.name for i, out in enumerate(node.outputs) if out.name} | hints
    naming = Naming(args, {id(e): names.get(i) for i, e in enumerate(entries)})
    chosen = [entries[index]] if index is not None else sorted(entries, key=lambda e: _user_position(e, entries))
    ordered, canonical = Converter(naming.symbols, ordered=True), Converter(naming.symbols, ordered=False)
    latex_printer = printer()
    rows, equations = [], []
    for entry in chosen:
        lhs = naming.lhs(entry)
        with distribute(False):  # 2 (a + b) stays as written
            rhs_text = latex_printer.doprint(ordered(entry.inner_out))
        relation = r"\leftarrow" if isinstance(entry, SharedEntry) else "="
        rows.append((latex_printer.doprint(lhs), relation, rhs_text))
        equations.append(sympy.Eq(lhs, canonical(entry.inner_out), evaluate=False))
    extras, until = [], None
    if args.until is not None:
        until = canonical(args.until)
        with distribute(False):
            extras.append(r"\text{until } " + latex_printer.doprint(ordered(args.until)))
    text_so_far = " ".join(r for row in rows for r in row)
    extras += [clause for length, clause in naming.lengths if f"{length}-t" in text_so_far]
    return ScanLatex(_layout(rows, extras), tuple(equations), until)


def _layout(rows: list[tuple], extras: list[str]) -> str:
    """One equation on a line; several in an ``aligned`` block with the conditions last."""
    if len(rows) == 1:
        return r",\quad ".join([" ".join(rows[0])] + extras)
    lines = [f"{lhs} &{relation} {rhs}" for lhs, relation, rhs in rows] + [f"&{extra}" for extra in extras]
    return "\\begin{aligned}\n" + " \\\\\n".join(lines) + "\n\\end{aligned}"


def _user_position(entry, entries: list) -> tuple:
    """Where the user listed an output (outputs_info order), then shared states."""
    if isinstance(entry, SharedEntry):
        return (1, entries.index(entry))
    listed = listed_at(entry)
    return (0, entries.index(entry) if listed is None else listed)
