"""How a Scan node runs: the rules every backend shares, and the reference loop.

Buffers hold each recurrent output's initial taps followed by the steps; a ring length
keeps only the last rows. A virtual row ``v`` (0 = the oldest initial tap) lives at
``v % len(buffer)``; at the end a ringed output is the last ``ring`` steps in time order.
A loop with ``until`` takes n_steps as a bound only (a while loop may pass 2**63 - 1), so its
buffers start with room for ``GROWTH_START`` steps and double when a step reaches that room.
The checks and the result slicing are functions of plain values, so that the fast
evaluator's generated loops call the very same ones.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from symscan.graph.basic import Apply
from symscan.scan.args import ScanArgs
from symscan.scan.checks import check_sequences, direction_and_steps, initial_rows, shape_error


# ---------------------------------------------------------------------------- shared rules
def buffer_length(ring: int | None, history: int, n_steps: int) -> int:
    """Rows to keep: all of them, or (ring) what the taps read and the output needs."""
    total = history + n_steps
    return total if ring is None else min(max(ring, history), total)


GROWTH_START = 64
"""Steps of room a loop with ``until`` starts with. Doubling copies each row about once
whatever the start, so the start only weighs memory (64 rows of a large state) against
regrowths of short loops (a while loop converging in under 64 steps never grows)."""


def start_room(n_steps: int, until: bool) -> int:
    """Steps the buffers hold rows for before the loop: every step, or (a loop with until,
    whose n_steps is a bound) at most ``GROWTH_START``."""
    return min(n_steps, GROWTH_START) if until else n_steps


def more_room(room: int, n_steps: int) -> int:
    """The room once a step reaches it: twice as many steps, never more than n_steps."""
    return min(2 * room, n_steps)


def may_grow(ring: int | None, history: int) -> bool:
    """Whether a buffer can be longer with more room: a full one, or a ring longer than the
    history and ``GROWTH_START`` steps (a shorter ring has all its rows from the start)."""
    return ring is None or max(ring, history) > history + GROWTH_START


def grown(data: np.ndarray, ring: int | None, history: int, room: int) -> np.ndarray:
    """``data`` with rows for ``room`` steps, each kept at its index: a buffer grows only
    before its first wrap (a ring already at its length is returned as is)."""
    length = buffer_length(ring, history, room)
    if length == data.shape[0]:
        return data
    bigger = np.empty((length,) + data.shape[1:], dtype=data.dtype)
    bigger[:data.shape[0]] = data
    return bigger


def result_rows(data: np.ndarray, history: int, steps_run: int, ring: int | None) -> np.ndarray:
    """The output of a buffer: every row, or (ring) the last ``ring`` steps, in time order."""
    stop = history + steps_run
    start = 0 if ring is None else max(history, stop - ring)
    length = data.shape[0]
    if stop <= length:
        # every row kept is the result: the buffer itself, else a copy of the rows
        return data if (start, stop) == (0, length) else data[start:stop].copy()
    return data[np.arange(start, stop) % length]


def unrun_nit_sot_shapes(args: ScanArgs, sequences: list, recurrent_rows: list, rest: list,
                         evaluate_inner: Callable) -> list[tuple]:
    """The shape of one step of each nit-sot when no step ran (its output is empty).

    A static shape is used as is. Otherwise the body is run once on zeros shaped like the
    first step's inputs (a shape probe: only shapes matter) and its results are discarded;
    if the body cannot run on zeros, unknown lengths are 0.
    """
    static = [tuple(0 if s is None else s for s in e.inner_out.type.shape) for e in args.nit_sot]
    if all(None not in e.inner_out.type.shape for e in args.nit_sot):
        return static
    inner = []
    for seq, data in zip(args.sequences, sequences):
        data = np.asarray(data)
        inner += [np.zeros(data.shape[1:], data.dtype) for _ in seq.taps]
    for entry, rows in zip(args.recurrent, recurrent_rows):
        inner += [np.zeros_like(rows[0]) for _ in entry.taps]
    try:
        with np.errstate(all="ignore"):
            results = evaluate_inner(inner + rest)
    except Exception:
        return static
    first = len(args.recurrent)
    return [tuple(np.shape(r)) for r in results[first:first + len(args.nit_sot)]]


# ---------------------------------------------------------------------------- the reference loop
class _Buffer:
    """One output's rows: ``history`` initial taps, then one row per step (see the module doc)."""

    def __init__(self, args: ScanArgs, label: str, ring: int | None, history: int, room: int):
        self.args, self.label, self.ring, self.history = args, label, ring, history
        self.length = buffer_length(ring, history, room)
        self.data: np.ndarray | None = None

    def grow(self, room: int) -> None:
        self.data = grown(self.data, self.ring, self.history, room)
        self.length = self.data.shape[0]

    def allocate(self, row, dtype) -> None:
        self.data = np.empty((self.length,) + np.shape(row), dtype=dtype)

    def read(self, virtual: int):
        return self.data[virtual % self.length]

    def write(self, virtual: int, value, step: int) -> None:
        row_shape = self.data.shape[1:]
        if np.shape(value) != row_shape:
            raise shape_error(self.args, self.label, row_shape, np.shape(value), step)
        self.data[virtual % self.length] = value

    def result(self, steps_run: int) -> np.ndarray:
        return result_rows(self.data, self.history, steps_run, self.ring)


def run_scan(node: Apply, inputs: list, evaluate_inner: Callable[[list], list]) -> list:
    """Evaluate a Scan node for its outer input values; ``evaluate_inner`` runs the body."""
    args = ScanArgs.from_node(node)
    values = dict(zip(node.inputs, inputs))
    backwards, n_steps = direction_and_steps(args, int(values[args.n_steps]))
    sequences = [values[s.outer] for s in args.sequences]
    lengths = [np.shape(data)[0] for data in sequences]
    check_sequences(args, lengths, n_steps)
    room = start_room(n_steps, args.until is not None)
    buffers, first_rows = [], []
    for entry in args.recurrent:
        buffer = _Buffer(args, entry.label, entry.ring, entry.span, room)
        rows = initial_rows(args, entry, values[entry.outer_init])
        buffer.allocate(rows[0], entry.inner_out.type.dtype)
        for v, row in enumerate(rows):
            buffer.data[v % buffer.length] = row
        buffers.append(buffer)
        first_rows.append(rows)
    nit_buffers = [_Buffer(args, e.label, e.ring, 0, room) for e in args.nit_sot]
    shared = [values[s.outer] for s in args.shared]
    non_seqs = [values[n.outer] for n in args.non_seqs]
    steps_run = 0
    for step in range(n_steps):
        if step == room:  # (only a loop with until starts with less room than n_steps)
            room = more_room(room, n_steps)
            for buffer in buffers + nit_buffers:
                buffer.grow(room)
        inner = []
        for seq, data, length in zip(args.sequences, sequences, lengths):
            usable = length - seq.span
            for tap in seq.taps:
                inner.append(data[seq.offset(tap) + (usable - 1 - step if backwards else step)])
        for entry, buffer in zip(args.recurrent, buffers):
            inner += [buffer.read(entry.span + step + tap) for tap in entry.taps]
        # Copy views first: one output may alias a buffer row that another write overwrites.
        results = [r.copy() if isinstance(r, np.ndarray) else r for r in evaluate_inner(inner + shared + non_seqs)]
        for entry, buffer, value in zip(args.recurrent, buffers, results):
            buffer.write(entry.span + step, value, step)
        for entry, buffer, value in zip(args.nit_sot, nit_buffers, results[len(buffers):]):
            if buffer.data is None:
                buffer.allocate(value, entry.inner_out.type.dtype)
            buffer.write(step, value, step)
        n_buffered = len(buffers) + len(nit_buffers)
        shared = results[n_buffered:n_buffered + len(shared)]
        steps_run = step + 1
        if args.until is not None and bool(results[-1]):
            break
    outs = [b.result(steps_run) for b in buffers]
    if steps_run == 0:  # nothing was written: the nit-sot buffers were never allocated
        shapes = unrun_nit_sot_shapes(args, sequences, first_rows, shared + non_seqs, evaluate_inner)
        outs += [np.empty((0,) + shape, dtype=e.inner_out.type.dtype) for e, shape in zip(args.nit_sot, shapes)]
    else:
        outs += [buffer.result(steps_run) for buffer in nit_buffers]
    return outs + [np.asarray(s) if hasattr(s, "dtype") else s for s in shared]
