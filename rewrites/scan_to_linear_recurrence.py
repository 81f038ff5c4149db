"""``scan_to_linear_recurrence``: an output affine in its own past values,
``x_t = Σ_j a_j x_{t-j} + b_t`` elementwise, needs no loop.

The body is read as an affine form (see ``rewrites.affine``, no sympy). Coefficients and
forcing that come from sequences and non-sequences are computed for all steps; then

- at most two past values with fixed numeric coefficients, a forcing term that does not
  change with the step, a float64 state and characteristic roots that are rational, of
  modulus at most 1 and separated: the closed form (exact rational weights of
  ``n^k r^n``) evaluated at the steps that are read;
- otherwise a parallel prefix (``LinearRecurrence``): log2(T) vectorised passes. Not in graphs
  bound for mode numba (``numba_ahead == "numba"``): there the loop becomes a kernel, whose one
  pass beats log2(T) passes (G7's gradient: 0.2 ms as a kernel, 0.7 ms as a prefix).

More than one lag needs fixed numeric coefficients. Characteristic roots of modulus above 1
amplify rounding differences like |r|^T, so such recurrences stay loops unless a constant
n_steps keeps that growth under 1e6 (coefficients known only at run time are checked then:
see ``LinearRecurrence``). Below float64, the loop's rounding at each step cannot
be matched within rtol 1e-9; integers wrap alike in any order, so they take the prefix.
"""

from __future__ import annotations

import numpy as np

from rewrites.affine import AFFINE_OPS, AffineForm, Mode, NotAffine, affine_form, as_graph, closed_form, is_number
from rewrites.loop_removal import LoopRemoval, Solution, state_rows
from rewrites.registry import Declined, register
from rewrites.vectorize import NotVectorizable, with_time_axis
from symscan.graph.basic import Variable
from symscan.scan.args import RecurrentEntry
from symscan.scan.op import Scan
from symscan.scan.recurrences import LinearRecurrence
from symscan.tensor.basic import constant, static_int
from symscan.tensor.elemwise import Elemwise, cast, second
from symscan.tensor.elemwise import pow as power

MAX_GROWTH = 1e6
"""Largest |r|^T allowed for a characteristic root r of modulus above 1 (rounding differences
of 1e-16 grow to 1e-10 at most)."""


@register("scan_to_linear_recurrence", phase="vectorize", tracks=(Scan,), tags=("vectorize", "scan"))
def scan_to_linear_recurrence(fgraph, node):
    removal = LoopRemoval(node)
    compiled_loops = getattr(fgraph, "numba_ahead", False) == "numba"
    candidates = [e for e in removal.args.recurrent if _looks_affine(e)]
    if not candidates:
        return None
    problem = removal.loop_problem()
    if problem is not None:
        return Declined(problem)
    for entry in candidates:
        try:
            solution, note = _solve(removal, entry, compiled_loops)
        except (NotAffine, NotVectorizable) as reason:
            removal.decline(entry, str(reason))
            continue
        removal.remove(entry, solution, note)
    return removal.result()


def _looks_affine(entry: RecurrentEntry) -> bool:
    """The new value is computed by an affine op (anything else is not worth a closer look)."""
    node = entry.inner_out.owner
    return node is not None and isinstance(node.op, Elemwise) and node.op.name in AFFINE_OPS


def _solve(removal: LoopRemoval, entry: RecurrentEntry, compiled_loops: bool = False) -> tuple[Solution, str]:
    """The output without the loop, and what was done; raises NotAffine/NotVectorizable
    (with ``compiled_loops``, where only a parallel prefix would remove the loop)."""
    dtype = entry.inner_out.dtype
    if np.dtype(dtype).kind == "f" and dtype != "float64" or np.dtype(dtype).kind not in "fiu":
        raise NotAffine(f"in {dtype} the loop rounds at every step, which a reordered computation cannot "
                        "reproduce within rtol 1e-9")
    form = affine_form(entry.inner_out, {v: -tap for v, tap in zip(entry.inner_in, entry.taps)}, dtype)
    lags = tuple(-tap for tap in entry.taps)
    fixed = all(is_number(form.coefficients[lag]) for lag in lags)
    if entry.span > 1 and not fixed:
        raise NotAffine("with more than one past value the coefficients must be numbers fixed for all steps")
    if fixed:
        _check_roots(removal, entry, form, lags)
    row_ndim = entry.inner_out.ndim
    # a tap fn ignores has coefficient 0: a zero operand for the prefix, and no closed form
    # (it would solve a lower order that the given initial rows over-determine)
    operands = [_over_steps(removal, form.coefficients[lag], dtype) for lag in lags]
    operands = [(constant(np.zeros((), dtype)), False) if v is None else (v, flag) for v, flag in operands]
    forcing = _over_steps(removal, form.forcing, dtype)
    history = removal.history(entry)
    all_lags_read = fixed and all(form.coefficients[lag] != 0 for lag in lags)
    if all_lags_read and not forcing[1] and dtype == "float64":
        numbers = tuple((lag, form.coefficients[lag]) for lag in lags)
        modes = closed_form(numbers, entry.span, forcing[0] is not None)
        if modes is not None:
            b = None if forcing[0] is None else removal.checked(forcing[0], entry)
            return (Solution(history, at_steps=lambda ts: _evaluate(modes, history, b, ts, entry.span, row_ndim)),
                    f"closed form {form.shown(lags)}")
    if compiled_loops:
        raise NotVectorizable("mode numba compiles the loop: one pass beats the log2(T) passes of a parallel prefix")
    if forcing[0] is None:
        forcing = (constant(np.zeros((), dtype)), False)
    values = [(with_time_axis(v, row_ndim) if flag else v, flag) for v, flag in operands + [forcing]]
    op = LinearRecurrence(lags, tuple(flag for _, flag in values), entry.label, removal.args.name)
    full = op(history, *[v for v, _ in values], removal.steps)
    return Solution(history, full=full), f"parallel prefix of {form.shown(lags)}"


def _over_steps(removal: LoopRemoval, value, dtype: str) -> tuple[Variable | None, bool]:
    """A coefficient or the forcing for all steps, in the state's dtype (None for a zero forcing)."""
    if is_number(value) and value == 0:
        return None, False
    result, per_step = removal.over_steps(as_graph(value, dtype))
    if result.dtype != dtype:
        if not np.can_cast(result.dtype, dtype, "same_kind"):
            raise NotAffine(f"a coefficient is {result.dtype}, the state {dtype}")
        result = cast(result, dtype)
    return result, per_step


def _check_roots(removal: LoopRemoval, entry: RecurrentEntry, form: AffineForm, lags: tuple) -> None:
    """Refuse characteristic roots of modulus above 1 unless the step count is a small constant."""
    if np.dtype(entry.inner_out.dtype).kind != "f":
        return  # integers are exact
    char = np.zeros(entry.span + 1)
    char[0] = 1
    for lag in lags:
        char[lag] -= float(form.coefficients[lag])
    largest = max(abs(np.roots(char)))
    if largest <= 1 + 1e-12:
        return
    steps = static_int(removal.args.n_steps)
    if steps is not None and not removal.args.steps_from_sequences and largest ** abs(steps) <= MAX_GROWTH:
        return
    raise NotAffine(f"a characteristic root has modulus {largest:.6g} > 1: rounding differences grow like "
                    f"{largest:.6g}^T and would leave rtol 1e-9 of the loop")


def _evaluate(modes: tuple[Mode, ...], history: Variable, forcing: Variable | None, ts: Variable, span: int,
              row_ndim: int) -> Variable:
    """The closed form at steps ``ts`` (1..T; x(n) has n = t + span - 1), one row per step:
    each mode's weight is a combination of the initial rows and D, times n^k r^n."""
    n = cast(state_rows(ts, row_ndim), "float64") + float(span - 1)
    values = [history[j] for j in range(span)] + ([forcing] if forcing is not None else [])
    rows, uses_n, uses_history = None, False, False
    for mode in modes:
        weight = _combination(mode.weights, values)
        if weight is None:
            continue
        uses_history |= any(w != 0 for w in mode.weights[:span])
        factor = _growth(mode, n)
        uses_n |= factor is not None
        term = weight if factor is None else weight * factor
        rows = term if rows is None else rows + term
    if rows is None:
        rows = constant(np.zeros((), "float64"))
    if not uses_n or not uses_history:
        rows = second(second(n, history[0]), rows)  # each row has the state's shape
    return rows


def _combination(weights: tuple, values: list[Variable]) -> Variable | None:
    """``Σ w_j v_j`` as a graph (None when every weight is 0), each term rounded once
    (``2 v / 3`` rather than ``0.666... v``)."""
    total = None
    for w, v in zip(weights, values):
        if w == 0:
            continue
        term = _scaled(v, abs(w))
        if total is None:
            total = term if w > 0 else -term
        else:
            total = total + term if w > 0 else total - term
    return total


def _scaled(v: Variable, w) -> Variable:
    """``w v`` for a positive fraction ``w``."""
    if w.numerator != 1:
        v = constant(np.asarray(float(w.numerator))) * v
    return v if w.denominator == 1 else v / constant(np.asarray(float(w.denominator)))


def _growth(mode: Mode, n: Variable) -> Variable | None:
    """``n^k r^n`` (None when it is 1)."""
    factor = None
    for _ in range(mode.power):
        factor = n if factor is None else factor * n
    if mode.root != 1:
        power_of_root = power(constant(np.asarray(float(mode.root))), n)
        factor = power_of_root if factor is None else factor * power_of_root
    return factor
