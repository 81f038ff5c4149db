"""What the ``vectorize`` rules share: computing recurrent outputs of a scan over all steps at
once and taking them out of the loop.

A rule looks at a scan through ``LoopRemoval``: the step count (an op that raises the loop's
errors about short sequences), inner expressions of sequences and non-sequences computed
for all steps (``over_steps``), and ``remove(entry, solution)`` for an output it can compute
without the loop. The rest of the body reads what it needs of removed outputs as new
sequences; when nothing is left, the loop is gone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rewrites.registry import Declined, Rewritten
from rewrites.scan_utils import (
    after_loop_checks,
    aligned,
    keep_initial_rows_check,
    loop_checks,
    rebuild,
    replace_inner,
    steps_known_non_negative,
)
from rewrites.vectorize import NotVectorizable, vectorize_flagged
from symscan.graph.basic import Variable
from symscan.graph.traversal import ancestors
from symscan.scan.args import RecurrentEntry, ScanArgs, SequenceEntry
from symscan.scan.checks import CheckRowShape, InitialRows, StepCount
from symscan.tensor.basic import constant
from symscan.tensor.creation import arange
from symscan.tensor.elemwise import maximum
from symscan.tensor.shape import dimshuffle
from symscan.tensor.subtensor import set_subtensor


@dataclass
class Solution:
    """An output computed without the loop: its initial rows ``history`` and either the whole
    buffer ``full`` (history, then one row per step), only the value after the last step
    (``last``), or ``at_steps(ts)``: the rows after steps ``ts`` (an int64 vector in 1..T)."""

    history: Variable
    full: Variable | None = None
    last: Variable | None = None
    at_steps: Callable[[Variable], Variable] | None = None


class LoopRemoval:
    """One scan node being taken apart by a rule (see the module docstring)."""

    def __init__(self, node):
        self.args = ScanArgs.from_node(node)
        self.node = node
        self.labels = {id(e): e.label or f"output {i}" for i, e in enumerate(self.args.buffered)}
        self.removed: list[tuple[RecurrentEntry, Solution]] = []
        self.notes: list[str] = []
        self.declines: list[str] = []
        self._steps: Variable | None = None
        self._memo: dict = {}
        self._full: dict[int, Variable] = {}

    # ------------------------------------------------------------------ reading the scan
    def loop_problem(self) -> str | None:
        """Why no output of this scan can leave its loop, if that is so."""
        if self.args.until is not None:
            return "a while loop (until): how many steps run depends on the values computed"
        if self.args.profile:
            return "profile=True: the loop stays, so that f.profile times it"
        return None

    def label(self, entry) -> str:
        return self.labels[id(entry)]

    @property
    def steps(self) -> Variable:
        """The number of steps the loop would run (after its checks of the sequences)."""
        if self._steps is None:
            self._steps = StepCount.of(self.args)
        return self._steps

    def history(self, entry: RecurrentEntry) -> Variable:
        sit_sot = entry in self.args.sit_sot
        return InitialRows(entry.label, entry.taps, sit_sot, self.args.name)(entry.outer_init)

    def checked(self, value: Variable, entry: RecurrentEntry) -> Variable:
        """``value`` (combined with the state at each step) with the loop's row-shape error."""
        row = entry.outer_init if entry in self.args.sit_sot else entry.outer_init[0]
        return CheckRowShape(entry.label, self.args.name)(value, row, self.steps)

    def read_inside(self, entry: RecurrentEntry) -> bool:
        """Whether the rest of the body reads this output's past or new values."""
        used = set(ancestors(self.args.inner_outputs_except(entry), stop_at=self.args.inner_inputs()))
        return any(v in used for v in [*entry.inner_in, entry.inner_out])

    def over_steps(self, var: Variable) -> tuple[Variable, bool]:
        """An inner expression of sequences, non-sequences and constants for all steps: an
        array whose row t is its value at step t (True), or its value when that is the same at
        every step (False). Raises NotVectorizable (with the reason) for anything else."""
        args = self.args
        taps = {v: (s, tap) for s in args.sequences for v, tap in zip(s.inner, s.taps)}
        read = [v for v in ancestors([var], stop_at=args.inner_inputs()) if v in taps]
        if read and not steps_known_non_negative(args):
            raise NotVectorizable("n_steps may be negative at run time (that reverses the loop)")
        others = {v: self.labels.get(id(e), "") for e in args.recurrent for v in e.inner_in}
        others.update({s.inner_in: s.label or "a shared variable" for s in args.shared})
        reads_state = [others[v] for v in ancestors([var], stop_at=args.inner_inputs()) if v in others]
        if reads_state:
            raise NotVectorizable(f"it reads the state of {reads_state[0]}")
        stacked = {v: aligned(s, tap, self.steps, args.go_backwards) for v, (s, tap) in taps.items() if v in read}
        invariant = {n.inner: n.outer for n in args.non_seqs}
        return vectorize_flagged(var, stacked, invariant, self._memo)

    # ------------------------------------------------------------------ taking outputs out
    def decline(self, entry: RecurrentEntry, reason: str) -> None:
        self.declines.append(f"{self.label(entry)}: {reason}")

    def remove(self, entry: RecurrentEntry, solution: Solution, note: str) -> bool:
        """Take ``entry`` out of the loop (or decline, when the rest of the body reads it and
        the loop's direction is only known at run time)."""
        if self.read_inside(entry) and not steps_known_non_negative(self.args):
            self.decline(entry, "the loop reads its values and n_steps may be negative at run time")
            return False
        self.removed.append((entry, solution))
        self.notes.append(f"{self.label(entry)}: {note}")
        return True

    def result(self) -> Rewritten | Declined | None:
        """The replacements for the scan's outputs (and the smaller scan, if any is left)."""
        if not self.removed:
            return Declined("; ".join(self.declines)) if self.declines else None
        args = self.args
        for entry, _ in self.removed:
            if entry in args.sit_sot:
                args.sit_sot.remove(entry)
            else:  # its outputs carry its check; the loop left, maybe without readers, too
                args.mit_sot.remove(entry)
                keep_initial_rows_check(args, entry)
        used = set(ancestors(args.inner_outputs(), stop_at=args.inner_inputs())) if args.inner_outputs() else set()
        replacements, feeds = {}, {}
        checks = loop_checks(ScanArgs.from_node(self.node))  # of the whole loop, before the edits
        for entry, solution in self.removed:
            if entry.outer_out is not None:
                replacements[entry.outer_out] = after_loop_checks(self._output(entry, solution), checks)
            feeds.update(self._feed(entry, solution, used))
        replace_inner(args, feeds)
        loop_left = bool(args.buffered or args.shared)
        result = rebuild(args) if loop_left else {}
        result.update(replacements)
        detail = "; ".join(self.notes) + ("" if loop_left else "; the loop is gone")
        if self.declines:
            detail += f" (kept in the loop: {'; '.join(self.declines)})"
        return Rewritten(result, detail)

    def _whole(self, entry: RecurrentEntry, solution: Solution) -> Variable:
        """The buffer: initial rows, then one row per step. A closed form computes the buffer
        in one array: its first rows (step 1's values, ``ts`` starts at 1) are then
        overwritten by the initial rows, in place, with no second array the buffer's size."""
        if id(entry) not in self._full:
            if solution.full is not None:
                self._full[id(entry)] = solution.full
            else:
                span = entry.span
                ts = maximum(arange(1 - span, self.steps + 1, dtype="int64"), constant(1, dtype="int64"))
                rows = solution.at_steps(ts)
                self._full[id(entry)] = set_subtensor(rows[:span], solution.history)
        return self._full[id(entry)]

    def _output(self, entry: RecurrentEntry, solution: Solution) -> Variable:
        """What the scan gave for this output: the buffer, or (ring) its last steps."""
        ring, steps = entry.ring, self.steps
        if ring is None:
            return self._whole(entry, solution)
        if ring == 1 and solution.last is not None:
            return dimshuffle(solution.last, ["x"] + list(range(solution.last.ndim)))[:steps]
        if solution.at_steps is not None and solution.full is None:
            return solution.at_steps(arange(maximum(steps - ring, 0) + 1, steps + 1, dtype="int64"))
        return self._whole(entry, solution)[entry.span:][-ring:]

    def _feed(self, entry: RecurrentEntry, solution: Solution, used: set) -> dict[Variable, Variable]:
        """New sequences for the values of ``entry`` that the rest of the body reads."""
        mapping = {}
        reads = list(zip(entry.taps, entry.inner_in)) + [(0, entry.inner_out)]
        for tap, var in reads:
            if var not in used:
                continue
            start = entry.span + tap
            rows = self._whole(entry, solution)[start:start + self.steps]
            placeholder = var.type.make_variable(name=var.name)
            stored = rows[::-1] if self.args.go_backwards else rows
            label = f"{self.label(entry)} at tap {tap}"
            self.args.sequences.append(SequenceEntry(stored, [placeholder], (0,), label))
            mapping[var] = placeholder
        return mapping


def state_rows(ts: Variable, row_ndim: int) -> Variable:
    """Step numbers ``ts`` shaped to broadcast against rows of ``row_ndim`` dimensions."""
    return dimshuffle(ts, [0] + ["x"] * row_ndim)
