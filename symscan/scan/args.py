"""ScanArgs: the one place that knows how a Scan node's inputs and outputs are laid out.

Outer inputs, in order::

    n_steps, sequences, mit-sot initial taps, sit-sot initial states, shared initial
    values, non-sequences

Outer outputs: mit-sot buffers, sit-sot buffers, nit-sot buffers, shared final values.
Inner inputs: each sequence's taps, each mit-sot's taps, each sit-sot, each shared state,
each non-sequence. Inner outputs: mit-sot, sit-sot, nit-sot, shared new values, then the
``until`` condition when the loop is a while loop.

A recurrent output's buffer holds its initial taps followed by the steps (the frontend
slices the taps off). With a ring length ``L`` (set by save_mem) the loop keeps only the
rows its taps and that output need, and the output is the last ``L`` steps, in order,
without the initial taps (so ``out[-k:]`` of the full output is ``ring_out[-k:]``).

Rewrites read a node with ``from_node``, edit the entries and build a new node with
``to_node``; nobody else slices raw input lists.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from symscan.graph.basic import Apply, Variable, describe
from symscan.graph.fg import FunctionGraph
from symscan.graph.type import TensorType
from symscan.scan.info import ScanInfo, ScanLabels
from symscan.tensor.basic import static_int


def taps_span(taps) -> int:
    """Elements beyond the step count that a sequence's taps need (tap 0 counts as used)."""
    return max(max(taps), 0) - min(min(taps), 0)


@dataclass(eq=False)
class SequenceEntry:
    """A sequence read at ``t + tap`` for each tap; ``inner`` has one variable per tap."""

    outer: Variable
    inner: list[Variable]
    taps: tuple[int, ...]
    label: str = ""

    @property
    def span(self) -> int:
        """Elements beyond the step count that the taps need (tap 0 counts as used)."""
        return taps_span(self.taps)

    def offset(self, tap: int) -> int:
        """Index, in the sequence, of the element ``tap`` reads at the first step."""
        return tap - min(min(self.taps), 0)


@dataclass(eq=False)
class RecurrentEntry:
    """A mit-sot or sit-sot output: reads its own past at each (negative) tap."""

    outer_init: Variable
    inner_in: list[Variable]
    inner_out: Variable
    taps: tuple[int, ...]
    outer_out: Variable | None = None
    ring: int | None = None
    label: str = ""

    @property
    def span(self) -> int:
        """Rows of initial history the taps need: output[-span] .. output[-1]."""
        return -min(self.taps)


@dataclass(eq=False)
class NitSotEntry:
    """An output computed at each step and never fed back (a "map" output)."""

    inner_out: Variable
    outer_out: Variable | None = None
    ring: int | None = None
    label: str = ""


@dataclass(eq=False)
class SharedEntry:
    """A shared variable updated at each step; its final value becomes the update."""

    outer: Variable
    inner_in: Variable
    inner_out: Variable
    outer_out: Variable | None = None
    label: str = ""


@dataclass(eq=False)
class NonSeqEntry:
    """A value passed unchanged to every step."""

    outer: Variable
    inner: Variable
    label: str = ""


@dataclass
class ScanArgs:
    """A Scan node taken apart by kind; see the module docstring for the order."""

    n_steps: Variable
    sequences: list[SequenceEntry] = field(default_factory=list)
    mit_sot: list[RecurrentEntry] = field(default_factory=list)
    sit_sot: list[RecurrentEntry] = field(default_factory=list)
    nit_sot: list[NitSotEntry] = field(default_factory=list)
    shared: list[SharedEntry] = field(default_factory=list)
    non_seqs: list[NonSeqEntry] = field(default_factory=list)
    until: Variable | None = None
    go_backwards: bool = False
    steps_from_sequences: bool = False
    truncate_gradient: int = -1
    name: str | None = None
    profile: bool = False

    # ------------------------------------------------------------------ canonical orders
    @property
    def recurrent(self) -> list[RecurrentEntry]:
        return self.mit_sot + self.sit_sot

    @property
    def buffered(self) -> list:
        """Entries that produce a buffer output (mit-sot, sit-sot, nit-sot), in output order."""
        return self.mit_sot + self.sit_sot + self.nit_sot

    def outer_inputs(self) -> list[Variable]:
        return ([self.n_steps] + [s.outer for s in self.sequences] + [r.outer_init for r in self.recurrent]
                + [s.outer for s in self.shared] + [n.outer for n in self.non_seqs])

    def inner_inputs(self) -> list[Variable]:
        return ([v for s in self.sequences for v in s.inner] + [v for r in self.recurrent for v in r.inner_in]
                + [s.inner_in for s in self.shared] + [n.inner for n in self.non_seqs])

    def inner_outputs(self) -> list[Variable]:
        outs = [e.inner_out for e in self.buffered] + [s.inner_out for s in self.shared]
        return outs + ([self.until] if self.until is not None else [])

    def inner_outputs_except(self, entry) -> list[Variable]:
        """The inner outputs of every other entry (and the until condition). By entry, not by
        variable: fn may return the same variable for several outputs."""
        outs = [e.inner_out for e in self.buffered + self.shared if e is not entry]
        return outs + ([self.until] if self.until is not None else [])

    def set_inner_outputs(self, outputs: list[Variable]) -> None:
        """Replace every inner output at once, in the order of ``inner_outputs``."""
        it = iter(outputs)
        for entry in self.buffered + self.shared:
            entry.inner_out = next(it)
        if self.until is not None:
            self.until = next(it)

    def outer_outputs(self) -> list[Variable | None]:
        return [e.outer_out for e in self.buffered] + [s.outer_out for s in self.shared]

    def info(self) -> ScanInfo:
        return ScanInfo(
            seq_taps=tuple(s.taps for s in self.sequences),
            mit_sot_taps=tuple(r.taps for r in self.mit_sot),
            n_sit_sot=len(self.sit_sot), n_nit_sot=len(self.nit_sot), n_shared=len(self.shared),
            n_non_seqs=len(self.non_seqs), as_while=self.until is not None,
            go_backwards=self.go_backwards, steps_from_sequences=self.steps_from_sequences,
            rings=tuple(e.ring for e in self.buffered) if any(e.ring for e in self.buffered) else (),
            truncate_gradient=self.truncate_gradient, name=self.name, profile=self.profile,
            labels=ScanLabels(
                sequences=tuple(s.label for s in self.sequences),
                outputs=tuple(e.label for e in self.buffered),
                shared=tuple(s.label for s in self.shared),
                non_seqs=tuple(n.label for n in self.non_seqs)))

    # ------------------------------------------------------------------ reading and building nodes
    @classmethod
    def from_parts(cls, info: ScanInfo, inner: FunctionGraph, outer_inputs: list[Variable],
                   outer_outputs: list[Variable] | None = None) -> ScanArgs:
        """Split a Scan's inner graph and outer variables into entries by kind."""
        outer_in, inner_in, inner_out = iter(outer_inputs), iter(inner.inputs), iter(inner.outputs)
        outer_out = iter(outer_outputs if outer_outputs is not None else [None] * info.n_outer_outputs)
        labels, rings = info.labels or ScanLabels(), iter(info.rings or (None,) * info.n_buffered)
        take = lambda it, n: [next(it) for _ in range(n)]  # noqa: E731
        args = cls(n_steps=next(outer_in), go_backwards=info.go_backwards,
                   steps_from_sequences=info.steps_from_sequences, truncate_gradient=info.truncate_gradient,
                   name=info.name, profile=info.profile)
        for i, taps in enumerate(info.seq_taps):
            args.sequences.append(SequenceEntry(next(outer_in), take(inner_in, len(taps)), taps,
                                                labels.get("sequences", i)))
        recurrent_taps = list(info.mit_sot_taps) + [(-1,)] * info.n_sit_sot
        recurrent = [RecurrentEntry(next(outer_in), take(inner_in, len(taps)), None, taps)
                     for taps in recurrent_taps]
        args.mit_sot, args.sit_sot = recurrent[:len(info.mit_sot_taps)], recurrent[len(info.mit_sot_taps):]
        shared_outer = take(outer_in, info.n_shared)
        shared_inner = take(inner_in, info.n_shared)
        for i in range(info.n_non_seqs):
            args.non_seqs.append(NonSeqEntry(next(outer_in), next(inner_in), labels.get("non_seqs", i)))
        args.nit_sot = [NitSotEntry(None) for _ in range(info.n_nit_sot)]
        for i, entry in enumerate(args.buffered):
            entry.inner_out, entry.outer_out, entry.ring = next(inner_out), next(outer_out), next(rings)
            entry.label = labels.get("outputs", i)
        for i, (o, n) in enumerate(zip(shared_outer, shared_inner)):
            args.shared.append(SharedEntry(o, n, next(inner_out), next(outer_out), labels.get("shared", i)))
        args.until = next(inner_out) if info.as_while else None
        return args

    @classmethod
    def from_node(cls, node: Apply) -> ScanArgs:
        return cls.from_parts(node.op.info, node.op.inner, list(node.inputs), list(node.outputs))

    def to_node(self) -> Apply:
        """A new Scan node for these entries (the inner graph is copied into the op)."""
        from symscan.scan.op import Scan

        inner = FunctionGraph(self.inner_inputs(), self.inner_outputs(), clone=True)
        return Scan(self.info(), inner).make_node(*self.outer_inputs())

    # ------------------------------------------------------------------ types
    def check(self) -> None:
        """Inner and outer types agree; errors name the entry."""
        if self.n_steps.ndim != 0 or self.n_steps.dtype[0] not in "iu":
            raise TypeError(f"scan: n_steps must be an integer scalar, got {describe(self.n_steps)}")
        for s in self.sequences:
            if s.outer.ndim < 1:
                raise TypeError(f"scan: {s.label or 'a sequence'} must have a time axis, got {describe(s.outer)}")
            element = s.outer.type.clone(shape=s.outer.type.shape[1:])
            for v in s.inner:
                _check_compatible(v.type, element, f"{s.label or 'sequence'} element")
        for r in self.recurrent:
            state = self.state_type(r)
            for v in r.inner_in:
                _check_compatible(v.type, state, f"{r.label or 'recurrent output'} past value")
            _check_compatible(r.inner_out.type, state, f"{r.label or 'recurrent output'} new value")
        for s in self.shared:
            _check_compatible(s.inner_out.type, s.outer.type, f"{s.label or 'shared state'} update")
        for n in self.non_seqs:
            _check_compatible(n.inner.type, n.outer.type, n.label or "non-sequence")
        if self.until is not None and (getattr(self.until.type, "ndim", 0) != 0):
            raise TypeError(f"scan: the until condition must be a scalar, got {describe(self.until)}")

    def state_type(self, entry: RecurrentEntry) -> TensorType:
        """The type of one step of a recurrent output, read off its initial value."""
        init = entry.outer_init.type
        return init if entry in self.sit_sot else init.clone(shape=init.shape[1:])

    def outer_output_types(self) -> list:
        steps = None if self.until is not None else static_int(self.n_steps)
        steps = None if steps is None else abs(steps)
        types = []
        for entry in self.buffered:
            if isinstance(entry, RecurrentEntry):
                state, history = _merge_shapes(self.state_type(entry), entry.inner_out.type), entry.span
            else:
                state, history = entry.inner_out.type, 0
            if entry.ring is None:
                rows = None if steps is None else history + steps
            else:  # a ring output holds the last `ring` steps, without the initial taps
                rows = None if steps is None else min(steps, entry.ring)
            types.append(state.clone(shape=(rows,) + state.shape))
        return types + [s.outer.type for s in self.shared]


def _merge_shapes(a: TensorType, b: TensorType) -> TensorType:
    return a.clone(shape=tuple(x if x is not None else y for x, y in zip(a.shape, b.shape)))


def _check_compatible(inner, outer, what: str) -> None:
    if getattr(inner, "conflicts_with", None) is not None and inner.conflicts_with(outer):
        raise TypeError(f"scan: the {what} has type {inner} inside the loop but {outer} outside")
    if getattr(inner, "conflicts_with", None) is None and type(inner) is not type(outer):
        raise TypeError(f"scan: the {what} has type {inner} inside the loop but {outer} outside")
