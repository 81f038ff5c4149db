"""How the reference interpreter runs a Scan node: the inner graph once per step.

Buffers hold each recurrent output's initial taps followed by the steps; a ring length
keeps only the last rows. A virtual row ``v`` (0 = the oldest initial tap) lives at
``v % len(buffer)``; at the end, a ring is rotated so the rows come out in time order.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from symscan.graph.basic import Apply
from symscan.scan.args import RecurrentEntry, ScanArgs


class _Buffer:
    """One output's rows: ``history`` initial taps, then one row per step.

    Without a ring every row is kept and the output is all of them. With a ring ``L`` the
    buffer keeps only as many rows as the taps read and the output needs (virtual row ``v``
    lives at ``v % length``), and the output is the last ``L`` steps.
    """

    def __init__(self, title: str, label: str, ring: int | None, history: int, n_steps: int):
        self.title, self.label, self.ring, self.history = title, label, ring, history
        total = history + n_steps
        self.length = total if ring is None else min(max(ring, history), total)
        self.data: np.ndarray | None = None

    def allocate(self, row: np.ndarray, dtype) -> None:
        self.data = np.empty((self.length,) + np.shape(row), dtype=dtype)

    def read(self, virtual: int):
        return self.data[virtual % self.length]

    def write(self, virtual: int, value, step: int) -> None:
        slot = self.data[virtual % self.length] if self.length else None
        if slot is None or np.shape(value) != slot.shape:
            raise ValueError(f"{self.title}: {self.label or 'an output'} has shape "
                             f"{slot.shape if slot is not None else '?'} per step but step {step} produced shape "
                             f"{np.shape(value)}; fn must return the same shape at every step")
        self.data[virtual % self.length] = value

    def result(self, steps_run: int) -> np.ndarray:
        """All rows (no ring), or the last ``ring`` steps, in time order."""
        stop = self.history + steps_run
        start = 0 if self.ring is None else max(self.history, stop - self.ring)
        if start == 0 and stop == self.length:
            return self.data  # every row: no copy (a copy would double the peak memory)
        if stop <= self.length:
            return self.data[start:stop].copy()
        return self.data[np.arange(start, stop) % self.length]


def _title(args: ScanArgs) -> str:
    return f"scan {args.name!r}" if args.name else "scan"


def _direction_and_steps(args: ScanArgs, n_steps: int) -> tuple[bool, int]:
    if n_steps >= 0:
        return args.go_backwards, n_steps
    if args.steps_from_sequences:
        return args.go_backwards, n_steps  # the sequences are too short: reported by _check_sequences
    return not args.go_backwards, -n_steps


def _check_sequences(args: ScanArgs, values: dict, n_steps: int) -> None:
    for seq in args.sequences:
        length = np.shape(values[seq.outer])[0]
        need = n_steps + seq.span
        if length < need or n_steps < 0:
            if args.steps_from_sequences:
                raise ValueError(f"{_title(args)}: {seq.label or 'a sequence'} has {length} elements but "
                                 f"its taps {list(seq.taps)} span {seq.span}; pass a longer sequence")
            raise ValueError(f"{_title(args)}: {seq.label or 'a sequence'} has {length} elements but "
                             f"{n_steps} steps with taps {list(seq.taps)} need {need} (n_steps + {seq.span}); "
                             "pass a longer sequence or a smaller n_steps")


def _initial_rows(args: ScanArgs, entry: RecurrentEntry, value) -> np.ndarray:
    rows = np.asarray(value)[None] if entry in args.sit_sot else np.asarray(value)
    if rows.shape[0] < entry.span:
        raise ValueError(f"{_title(args)}: {entry.label or 'an output'} has {rows.shape[0]} initial rows but "
                         f"taps {list(entry.taps)} need {entry.span}")
    return rows[:entry.span]


def run_scan(node: Apply, inputs: list, evaluate_inner: Callable[[list], list]) -> list:
    """Evaluate a Scan node for its outer input values; ``evaluate_inner`` runs the body."""
    args = ScanArgs.from_node(node)
    values = dict(zip(node.inputs, inputs))
    backwards, n_steps = _direction_and_steps(args, int(values[args.n_steps]))
    _check_sequences(args, values, n_steps)
    lengths = {id(s): np.shape(values[s.outer])[0] for s in args.sequences}
    buffers = []
    for entry in args.recurrent:
        buffer = _Buffer(_title(args), entry.label, entry.ring, entry.span, n_steps)
        rows = _initial_rows(args, entry, values[entry.outer_init])
        buffer.allocate(rows[0], entry.inner_out.type.dtype)
        for v, row in enumerate(rows):
            buffer.data[v % buffer.length] = row
        buffers.append(buffer)
    nit_buffers = [_Buffer(_title(args), e.label, e.ring, 0, n_steps) for e in args.nit_sot]
    shared = [values[s.outer] for s in args.shared]
    non_seqs = [values[n.outer] for n in args.non_seqs]
    steps_run = 0
    for step in range(n_steps):
        inner = []
        for seq in args.sequences:
            data, usable = values[seq.outer], lengths[id(seq)] - seq.span
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
        shapes = _unrun_nit_sot_shapes(args, values, buffers, evaluate_inner)
        outs += [np.empty((0,) + shape, dtype=e.inner_out.type.dtype) for e, shape in zip(args.nit_sot, shapes)]
    else:
        outs += [buffer.result(steps_run) for buffer in nit_buffers]
    return outs + [np.asarray(s) if hasattr(s, "dtype") else s for s in shared]



def _unrun_nit_sot_shapes(args: ScanArgs, values: dict, buffers: list, evaluate_inner: Callable) -> list[tuple]:
    """The shape of one step of each nit-sot when no step ran (its output is empty).

    A static shape is used as is. Otherwise the body is run once on zeros shaped like the
    first step's inputs (a shape probe: only shapes matter) and its results are discarded;
    if the body cannot run on zeros, unknown lengths are 0.
    """
    static = [tuple(0 if s is None else s for s in e.inner_out.type.shape) for e in args.nit_sot]
    if all(None not in e.inner_out.type.shape for e in args.nit_sot):
        return static
    inner = []
    for seq in args.sequences:
        data = np.asarray(values[seq.outer])
        inner += [np.zeros(data.shape[1:], data.dtype) for _ in seq.taps]
    for entry, buffer in zip(args.recurrent, buffers):
        inner += [np.zeros_like(buffer.read(entry.span + tap)) for tap in entry.taps]
    rest = [values[s.outer] for s in args.shared] + [values[n.outer] for n in args.non_seqs]
    try:
        with np.errstate(all="ignore"):
            results = evaluate_inner(inner + rest)
    except Exception:
        return static
    return [tuple(np.shape(r)) for r in results[len(buffers):len(buffers) + len(args.nit_sot)]]
