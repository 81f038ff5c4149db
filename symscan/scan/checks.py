"""The loop's run-time rules (step count, sequence lengths, initial rows, row shapes) as plain
functions every backend calls, and as small ops for graphs that compute a scan's outputs
without its loop (an unrolled step, a loop a rewrite replaced): the same errors either way."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Apply, Op, Variable
from symscan.graph.type import TensorType
from symscan.scan.args import RecurrentEntry, ScanArgs, taps_span
from symscan.scan.parse import too_short_message
from symscan.tensor.basic import as_tensor_variable


# ---------------------------------------------------------------------------- the rules
def title(args: ScanArgs) -> str:
    return f"scan {args.name!r}" if args.name else "scan"


def direction_and_steps(args: ScanArgs, n_steps: int) -> tuple[bool, int]:
    """Whether the loop runs backwards, and how many steps (a negative n_steps reverses)."""
    if n_steps >= 0 or args.steps_from_sequences:  # derived and negative: too short, see check_sequences
        return args.go_backwards, n_steps
    return not args.go_backwards, -n_steps


def check_sequences(args: ScanArgs, lengths: list[int], n_steps: int) -> None:
    """Every sequence holds n_steps elements plus its taps' span (errors name it)."""
    for seq, length in zip(args.sequences, lengths):
        need = n_steps + seq.span
        if length >= need and n_steps >= 0:
            continue
        if args.steps_from_sequences:
            raise ValueError(f"{title(args)}: {seq.label or 'a sequence'} has {length} elements but "
                             f"its taps {list(seq.taps)} span {seq.span}; pass a longer sequence")
        raise ValueError(f"{title(args)}: {seq.label or 'a sequence'} has {length} elements but "
                         f"{n_steps} steps with taps {list(seq.taps)} need {need} (n_steps + {seq.span}); "
                         "pass a longer sequence or a smaller n_steps")
    if n_steps < 0:
        raise ValueError(f"{title(args)}: the sequences are shorter than their taps need")


def initial_rows(args: ScanArgs, entry: RecurrentEntry, value) -> np.ndarray:
    """The rows output[-span] .. output[-1] given by an initial value."""
    rows = np.asarray(value)[None] if entry in args.sit_sot else np.asarray(value)
    if rows.shape[0] < entry.span:
        raise ValueError(f"{title(args)}: {entry.label or 'an output'} has {rows.shape[0]} initial rows but "
                         f"taps {list(entry.taps)} need {entry.span}")
    return rows[:entry.span]


def shape_error(args: ScanArgs, label: str, expected: tuple, got: tuple, step: int) -> ValueError:
    return ValueError(f"{title(args)}: {label or 'an output'} has shape {expected} per step but step {step} "
                      f"produced shape {got}; fn must return the same shape at every step")


# ---------------------------------------------------------------------------- as ops
@dataclass(frozen=True)
class CheckSequenceLength(Op):
    """Pass a sequence through, or raise scan's "too short" error naming it.

    The loop checks its sequences itself; an unrolled step reads them directly, so this
    node keeps the same error (which sequence, its length, its taps, the steps needed).
    """

    label: str
    taps: tuple
    steps: int

    @property
    def span(self) -> int:
        return max(max(self.taps), 0) - min(min(self.taps), 0)

    def make_node(self, x) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x], [x.type])

    def perform(self, node, inputs):
        length = np.shape(inputs[0])[0]
        if length < self.steps + self.span:
            raise ValueError(too_short_message(self.label, length, self.taps, self.steps, self.span))
        return [inputs[0]]

    def __str__(self) -> str:
        return f"CheckSequenceLength{{{self.label}}}"


def _skeleton(name: str | None, steps_from_sequences: bool = False, sequences: tuple = ()) -> ScanArgs:
    """The parts of a scan its run-time rules read (names, taps), for the ops below."""
    from symscan.scan.args import SequenceEntry

    return ScanArgs(n_steps=None, name=name, steps_from_sequences=steps_from_sequences,
                    sequences=[SequenceEntry(None, [], taps, label) for label, taps in sequences])


@dataclass(frozen=True)
class StepCount(Op):
    """The number of steps a scan runs (``abs`` of a negative n_steps), after the loop's
    checks that its sequences are long enough. Inputs: n_steps, then the sequences."""

    sequences: tuple = ()  # (label, taps) of each sequence
    steps_from_sequences: bool = False
    name: str | None = None

    @property
    def checks_nothing(self) -> bool:
        """Steps counted from sequences read at tap 0 only: the count is their length, which no
        check could find too short."""
        return self.steps_from_sequences and not any(taps_span(taps) for _, taps in self.sequences)

    @classmethod
    def of(cls, args: ScanArgs):
        """The step count of the scan ``args`` describes, as a variable."""
        op = cls(tuple((s.label, s.taps) for s in args.sequences), args.steps_from_sequences, args.name)
        return op(args.n_steps, *[s.outer for s in args.sequences])

    def make_node(self, n_steps, *sequences) -> Apply:
        inputs = [as_tensor_variable(n_steps)] + [as_tensor_variable(s) for s in sequences]
        return Apply(self, inputs, [TensorType("int64", ())])

    def perform(self, node, inputs):
        args = _skeleton(self.name, self.steps_from_sequences, self.sequences)
        _, steps = direction_and_steps(args, int(inputs[0]))
        check_sequences(args, [np.shape(s)[0] for s in inputs[1:]], steps)
        return [np.int64(steps)]

    def __str__(self) -> str:
        return "StepCount"


@dataclass(frozen=True)
class InitialRows(Op):
    """The rows output[-span] .. output[-1] that a recurrent output's initial value gives (a
    sit-sot's state is one row), with the loop's error when it has too few."""

    label: str
    taps: tuple
    sit_sot: bool
    name: str | None = None

    @property
    def span(self) -> int:
        return -min(self.taps)

    def make_node(self, initial) -> Apply:
        initial = as_tensor_variable(initial)
        row = initial.type.shape if self.sit_sot else initial.type.shape[1:]
        return Apply(self, [initial], [TensorType(initial.dtype, (self.span,) + tuple(row))])

    def perform(self, node, inputs):
        args = _skeleton(self.name)
        entry = RecurrentEntry(None, [], None, self.taps, label=self.label)
        (args.sit_sot if self.sit_sot else args.mit_sot).append(entry)
        return [initial_rows(args, entry, inputs[0])]

    def __str__(self) -> str:
        return f"InitialRows{{{self.label}}}"


@dataclass(frozen=True)
class CheckRowShape(Op):
    """Pass ``value`` through, or raise the loop's error when combining it with a state row
    would change the row's shape (checked only when at least one step runs: with none, the
    loop never combines them, so a value that does not fit is replaced by zeros that do).
    Inputs: value, a state row, the step count."""

    label: str
    name: str | None = None

    def make_node(self, value, row, steps) -> Apply:
        value = as_tensor_variable(value)
        return Apply(self, [value, as_tensor_variable(row), as_tensor_variable(steps)], [value.type])

    def perform(self, node, inputs):
        value, row, steps = inputs
        if int(steps) > 0:
            check_row_shape(self.name, self.label, np.shape(row), np.shape(value))
            return [value]
        return [value if _fits(np.shape(value), np.shape(row)) else _fitting_zeros(node.outputs[0].type, np.shape(row))]

    def __str__(self) -> str:
        return f"CheckRowShape{{{self.label}}}"


def _fits(operand: tuple, row: tuple) -> bool:
    try:
        return np.broadcast_shapes(row, operand) == tuple(row)
    except ValueError:
        return False


def _fitting_zeros(value_type: TensorType, row: tuple) -> np.ndarray:
    """Zeros of ``value_type`` (its static 1s kept) that broadcast into ``row``."""
    trailing = row[len(row) - value_type.ndim:] if value_type.ndim else ()
    shape = tuple(1 if known == 1 else n for known, n in zip(value_type.shape, trailing))
    return np.zeros(shape, value_type.dtype)


def check_row_shape(name: str | None, label: str, row: tuple, operand: tuple) -> None:
    """A step combining a state row of shape ``row`` with an operand of shape ``operand``
    keeps the row's shape, else the loop's error (the first step is the one that fails) for
    the scan called ``name``."""
    try:
        produced = np.broadcast_shapes(row, operand)
    except ValueError:
        raise ValueError(f"{title(_skeleton(name))}: {label or 'an output'} has shape {row} per step but its update "
                         f"combines it with shape {operand}, which does not broadcast; fn must return the "
                         "same shape at every step") from None
    if produced != tuple(row):
        raise shape_error(_skeleton(name), label, tuple(row), produced, 0)


@dataclass(frozen=True)
class CheckStepShape(Op):
    """Pass a recurrent output's new value through, or raise the loop's error when its shape
    is not the state's (``row``): a loop's buffer rows all have the initial state's shape.
    Inputs: value, row."""

    label: str
    name: str | None = None

    def make_node(self, value, row) -> Apply:
        value = as_tensor_variable(value)
        return Apply(self, [value, as_tensor_variable(row)], [value.type])

    def perform(self, node, inputs):
        value, row = inputs
        if np.shape(value) != np.shape(row):
            raise shape_error(_skeleton(self.name), self.label, np.shape(row), np.shape(value), 0)
        return [value]

    def __str__(self) -> str:
        return f"CheckStepShape{{{self.label}}}"


@dataclass(frozen=True)
class AfterChecks(Op):
    """Pass ``value`` through once its other inputs, checks that raise a loop's errors
    (``CheckSequenceLength``, ``InitialRows``), are computed.

    A loop checks every sequence and initial state it is given, read or not. Where no loop
    reads them any more (an unrolled step, an output a rewrite dropped), the checks hang on
    a value that is computed anyway, so that their errors stay."""

    def make_node(self, value, *checks) -> Apply:
        value = value if isinstance(value, Variable) else as_tensor_variable(value)  # (a generator too)
        return Apply(self, [value] + [as_tensor_variable(v) for v in checks], [value.type])

    def perform(self, node, inputs):
        return [inputs[0]]

    def __str__(self) -> str:
        return "AfterChecks"
