"""``scan_invariant_update`` and ``scan_to_accumulate``: a state updated as
``s_t = s_{t-1} ⊕ g_t`` with ⊕ associative (add, mul, maximum, minimum, logaddexp, and, or;
``s - g`` counts as ``s + (-g)``) needs no loop.

- ``g`` the same at every step (loop-invariant): a closed form, ``s0 + t c``, ``s0 c^t``,
  ``logaddexp(s0, c + log t)``, or ``s0 ⊕ c`` for the idempotent ops, computed only at the
  steps that are read (A**k with only the last step read is one power);
- ``g`` computed from sequences and non-sequences: numpy's ``ufunc.accumulate`` over the
  stacked ``g`` with ``s0`` as its first row, which is the loop's own arithmetic in the
  loop's order; ``ufunc.reduce`` when only the last value is read.
"""

from __future__ import annotations

import numpy as np

from rewrites.loop_removal import LoopRemoval, Solution, state_rows
from rewrites.registry import Declined, register
from rewrites.vectorize import NotVectorizable, with_time_axis
from symscan.graph.basic import Variable
from symscan.scan.args import RecurrentEntry
from symscan.scan.op import Scan
from symscan.scan.recurrences import ACCUMULATING_OPS, Accumulate
from symscan.tensor.elemwise import Elemwise, cast, log, logaddexp, neg, second
from symscan.tensor.elemwise import pow as power

IDEMPOTENT = ("maximum", "minimum", "and_", "or_")
"""``s ⊕ c ⊕ c = s ⊕ c``: after the first step the state no longer changes."""


def fold_of(entry: RecurrentEntry) -> tuple[str, Variable] | str | None:
    """(⊕, g) when the new state is ``state ⊕ g``; a reason when it is another binary op of the
    state; None when the update has some other form."""
    state, node = entry.inner_in[0], entry.inner_out.owner
    if node is None or not isinstance(node.op, Elemwise) or len(node.inputs) != 2 or state not in node.inputs:
        return None
    first, second_input = node.inputs
    if first is second_input:
        return None
    operand = second_input if first is state else first
    if node.op.name == "sub" and first is state:
        return "sub", operand
    if node.op.name in ACCUMULATING_OPS:
        return node.op.name, operand
    return f"s_t = {node.op.name}(...) of the state is not an associative update"


def _folds(removal: LoopRemoval):
    """The sit-sot outputs updated by a fold, with (⊕, g); declines the other binary updates."""
    for entry in list(removal.args.sit_sot):
        fold = fold_of(entry)
        if isinstance(fold, str):
            removal.decline(entry, fold)
        elif fold is not None:
            yield entry, fold[0], fold[1]


def _scan_rule(name: str):
    """Register ``fn(removal)`` as a vectorize rule over Scan nodes."""

    def decorate(fn):
        def rule(fgraph, node):
            removal = LoopRemoval(node)
            problem = removal.loop_problem()
            if problem is not None:
                has_fold = any(isinstance(fold_of(e), tuple) for e in removal.args.sit_sot)
                return Declined(problem) if has_fold else None
            fn(removal)
            return removal.result()

        rule.__name__, rule.__doc__ = fn.__name__, fn.__doc__
        return register(name, phase="vectorize", tracks=(Scan,), tags=("vectorize", "scan"))(rule)

    return decorate


# ---------------------------------------------------------------------------- closed forms
def _closed_form_problem(op: str, dtype: str) -> str | None:
    kind = np.dtype(dtype).kind
    if op in IDEMPOTENT or kind == "b" and op in ("add", "mul"):
        return None
    if kind == "f" and dtype != "float64":
        return (f"in {dtype} the loop rounds at every step, which a closed form cannot reproduce within "
                "rtol 1e-9 (the exact accumulation can)")
    if kind not in "fiu":
        return f"no closed form for {dtype} states"
    return None


def closed_form(op: str, s0: Variable, c: Variable, ts: Variable) -> Variable:
    """Rows ``s_t`` for the step numbers ``ts`` of ``s_t = s_{t-1} ⊕ c`` (c loop-invariant)."""
    dtype, t = s0.dtype, state_rows(ts, s0.ndim)
    kind = np.dtype(dtype).kind
    if op in IDEMPOTENT or kind == "b":
        return second(t, Elemwise(op)(s0, c))
    if kind in "iu":  # exact modular arithmetic: products and powers wrap like the loop's steps
        wide = "uint64" if kind == "u" else "int64"
        t, c_wide = cast(t, wide), cast(c, wide)
        change = cast(t * c_wide if op in ("add", "sub") else power(c_wide, t), dtype)
        return cast(Elemwise(op)(s0, change), dtype)  # s0 + tc, s0 - tc or s0 c^t
    t = cast(t, dtype)
    if op == "logaddexp":
        result = logaddexp(s0, c + log(t))
    elif op == "mul":
        result = s0 * power(c, t)
    else:
        result = Elemwise(op)(s0, t * c)
    return cast(result, dtype)


@_scan_rule("scan_invariant_update")
def scan_invariant_update(removal: LoopRemoval) -> None:
    """``s_t = s_{t-1} ⊕ c`` with c the same at every step: the closed form."""
    for entry, op, operand in _folds(removal):
        try:
            value, per_step = removal.over_steps(operand)
        except NotVectorizable:
            continue  # scan_to_accumulate says why
        if per_step:
            continue
        problem = _closed_form_problem(op, entry.inner_out.dtype)
        if problem is not None:
            removal.decline(entry, problem)
            continue
        s0, c = entry.outer_init, removal.checked(value, entry)
        removal.remove(entry, Solution(removal.history(entry), at_steps=lambda ts, s0=s0, c=c, op=op:
                                       closed_form(op, s0, c, ts)),
                       f"closed form of s_t = s_(t-1) {op} c (c loop-invariant)")


# ---------------------------------------------------------------------------- accumulations
@_scan_rule("scan_to_accumulate")
def scan_to_accumulate(removal: LoopRemoval) -> None:
    """``s_t = s_{t-1} ⊕ g_t``: one accumulate (reduce) over the stacked g."""
    for entry, op, operand in _folds(removal):
        dtype, row_ndim = entry.inner_out.dtype, entry.inner_out.ndim
        try:
            values, per_step = removal.over_steps(operand)
        except NotVectorizable as error:
            removal.decline(entry, f"its operand of {op} needs the loop: {error}")
            continue
        if values.dtype != dtype:
            if not np.can_cast(values.dtype, dtype, "safe"):
                removal.decline(entry, f"its operand of {op} is {values.dtype}, the state {dtype}")
                continue
            values = cast(values, dtype)
        if op == "sub":  # exact: s - g is s + (-g) in IEEE and modular arithmetic (in the state's dtype)
            op, values = "add", neg(values)
        if per_step:
            values = with_time_axis(values, row_ndim)
        last = entry.ring == 1 and not removal.read_inside(entry)
        accumulate = Accumulate(op, per_step, last, entry.label, removal.args.name)
        result = accumulate(entry.outer_init, values, removal.steps)
        what = f"{'reduce' if last else 'accumulate'} of {op}"
        removal.remove(entry, Solution(None, last=result) if last else Solution(None, full=result),
                       f"{what} over {'the stacked operand' if per_step else 'a loop-invariant operand'}")
