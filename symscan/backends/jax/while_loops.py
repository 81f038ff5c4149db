"""A Scan with ``until(...)`` as ``lax.while_loop``, run in stages.

XLA needs every shape before it runs, but such a loop's outputs are as long as the steps it
ran, which only the run tells. So the loop runs over buffers with room for a number of steps
and ends the trace there (a ``graph.StageEnd``): the jitted function returns the buffers, the
step count and whether the condition held; the evaluator slices the rows on the host as the
reference does (``scan_loop.result_rows``) and calls the function again with those outputs as
arguments (``Trace.known``), which traces the rest of the graph with their real lengths.

The room is the bound (n_steps) when buffers for every step take at most ``UPFRONT_BYTES``;
otherwise (a while loop's bound may be 2**63 - 1) it starts at ``scan_loop.GROWTH_START``
steps and, when the loop fills it, the buffers grow on the host as the reference grows its own
(``scan_loop.grown``: rings keep their layout) and the loop resumes where it stopped in a new
stage. Each room size compiles once. Inside another loop or a branch on a traced condition
there is no stage to end, and such a loop is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from symscan.backends.jax.graph import NotLowerable, StageEnd, Trace, evaluate
from symscan.backends.jax.loops import check_row, non_sequences
from symscan.backends.scan_loop import GROWTH_START, buffer_length, grown, more_room, result_rows
from symscan.graph.basic import Apply
from symscan.scan.args import ScanArgs

UPFRONT_BYTES = 2**20
"""Buffers for every step of the bound up to this many bytes (1 MiB) are allocated at once:
one compile, no growth (they are zeroed and read back on every call, so not more)."""


def run_until(node: Apply, args: ScanArgs, values: dict, xs_at: Callable, n_steps: int, windows: list,
              trace: Trace) -> list:
    """The loop's outputs when earlier stages ran it, else its run (or its run resumed) as
    this stage's end."""
    if not trace.staged:
        raise NotLowerable(f"mode jax cannot lower {node.op}, a loop with until(...), inside another loop, a "
                           "branch on a traced condition or ss.jax.to_jax: its outputs' lengths are known only "
                           "when it has run; run this function in mode 'fast' or 'numba'")
    index = trace.untils_seen
    trace.untils_seen += 1
    known = trace.known[index] if index < len(trace.known) else None
    if isinstance(known, tuple):
        return list(known)
    raise _WhileLoop(node, args, values, xs_at, n_steps).run(windows, resumed=known, slot=index)


class _WhileLoop:
    def __init__(self, node, args: ScanArgs, values: dict, xs_at: Callable, n_steps: int):
        self.node, self.args, self.xs_at, self.n_steps = node, args, xs_at, n_steps
        self.non_seqs = non_sequences(args, values)
        self.shared = [values[s.outer] for s in args.shared]
        self.histories = [e.span for e in args.recurrent] + [0] * len(args.nit_sot)
        self.rings = [e.ring for e in args.recurrent + args.nit_sot]
        self.n_rec, self.n_nit = len(args.recurrent), len(args.nit_sot)
        self.body_traces: list[Trace] = []

    def run(self, windows: list, resumed: dict | None, slot: int) -> StageEnd:
        """The loop from the start (``windows``: the initial rows) or from where a full room
        stopped it (``resumed``), as a stage's end."""
        import jax.numpy as jnp
        from jax import lax

        if resumed is None:
            shared, step = [jnp.asarray(s) for s in self.shared], 0
            nit_rows, n_checks = self._probe(windows, shared)
            room = self._first_room(windows, nit_rows)
            lengths = [buffer_length(r, h, room) for r, h in zip(self.rings, self.histories)]
            # zeros with the initial rows written in: XLA fills them faster than it concatenates
            buffers = [lax.dynamic_update_slice_in_dim(jnp.zeros((n,) + w.shape[1:], w.dtype), w, 0, 0)
                       for w, n in zip(windows, lengths)]
            buffers += [jnp.zeros((n,) + shape, dtype) for n, (shape, dtype) in zip(lengths[self.n_rec:], nit_rows)]
            passed = [(jnp.asarray(True), jnp.int64(self.n_steps))] * n_checks
        else:
            windows, buffers, step = list(resumed["windows"]), list(resumed["buffers"]), resumed["step"]
            shared, passed = list(resumed["shared"]), list(resumed["passed"])
            self._probe(windows, shared)
        lengths = [b.shape[0] for b in buffers]
        end = self._room(lengths)

        def body(state):
            i, _, windows, buffers, shared, passed = state
            results = self._body_results(i, windows, shared)
            stop = jnp.asarray(results[-1]).astype(bool).reshape(())
            windows, buffers = self._written(i, windows, buffers, lengths, results, end)
            return i + 1, stop, windows, buffers, self._updates(results, shared), self._passed(i, passed)

        state = (jnp.asarray(step, dtype=jnp.int64), jnp.asarray(False), windows, buffers, shared, passed)
        steps, stop, windows, buffers, shared, passed = lax.while_loop(lambda s: (s[0] < end) & ~s[1], body, state)
        checks = [d.in_loop(self.node, p, first) for d, (p, first) in zip(self.body_traces[-1].deferred, passed)]
        finish = _Finish(self.histories, self.rings, self.n_steps, end)
        return StageEnd([steps, stop, windows, buffers, shared, passed], checks, finish, static=False, slot=slot,
                        loop=self.node)

    def _room(self, lengths: list) -> int:
        """The steps these buffers have room for: a buffer that can still grow (its length short
        of the bound's) holds its history and that many rows; with none, every step."""
        growable = [n - h for n, r, h in zip(lengths, self.rings, self.histories)
                    if n < buffer_length(r, h, self.n_steps)]
        return min(growable) if growable else self.n_steps

    def _first_room(self, buffers: list, nit_rows: list) -> int:
        """Every step of the bound when its buffers fit ``UPFRONT_BYTES``, else the reference's start."""
        row_bytes = sum(int(np.prod(b.shape[1:])) * b.dtype.itemsize for b in buffers)
        row_bytes += sum(int(np.prod(shape)) * dtype.itemsize for shape, dtype in nit_rows)
        return self.n_steps if row_bytes * self.n_steps <= UPFRONT_BYTES else min(self.n_steps, GROWTH_START)

    def _probe(self, windows: list, shared: list) -> tuple[list, int]:
        """Each nit-sot's row (shape, dtype) and the number of the body's checks, from the body
        traced abstractly."""
        import jax

        probe = jax.eval_shape(lambda w, s: self._body_results(np.int64(0), w, s), windows, shared)
        rows = [(tuple(r.shape), np.dtype(e.inner_out.type.dtype))
                for e, r in zip(self.args.nit_sot, probe[self.n_rec:])]
        return rows, len(self.body_traces[-1].deferred)

    def _body_results(self, i, windows: list, shared: list) -> list:
        """The body's results at step ``i``: taps read the windows (each recurrent output's last
        rows), never the buffers, which XLA then updates in place (a buffer read and written in
        one loop is copied every step)."""
        inner = list(self.xs_at(i))
        for entry, window in zip(self.args.recurrent, windows):
            inner += [window[entry.span + tap] for tap in entry.taps]
        self.body_traces.append(Trace())
        return evaluate(self.node.op.inner, inner + list(shared) + self.non_seqs(), self.body_traces[-1])

    def _written(self, i, windows: list, buffers: list, lengths: list, results: list,
                 end: int) -> tuple[list, list]:
        """The windows moved on by the step's rows, and each buffer with its row at its place
        (``virtual % length``, as the reference; a buffer with room for all ``end`` steps
        never wraps)."""
        import jax.numpy as jnp
        from jax import lax

        written, moved = [], []
        entries = self.args.recurrent + self.args.nit_sot
        for k, (entry, buffer, value) in enumerate(zip(entries, buffers, results)):
            check_row(self.args, entry.label, buffer.shape[1:], jnp.shape(value))
            row = jnp.asarray(value).astype(buffer.dtype)
            place = self.histories[k] + i
            wraps = lengths[k] < self.histories[k] + end
            written.append(lax.dynamic_update_index_in_dim(buffer, row, place % lengths[k] if wraps else place, 0))
            if k < self.n_rec:
                window = windows[k]
                moved.append(jnp.concatenate([window[1:], row[None]]) if entry.span > 1 else row[None])
        return moved, written

    def _updates(self, results: list, shared: list) -> list:
        import jax.numpy as jnp

        first = self.n_rec + self.n_nit
        return [jnp.asarray(v).astype(jnp.asarray(old).dtype) for v, old in zip(results[first:first + len(shared)],
                                                                               shared)]

    def _passed(self, i, passed: list) -> list:
        """Per check: whether it held at every step so far, and the first step it failed at."""
        import jax.numpy as jnp

        result = []
        for (p, first), d in zip(passed, self.body_traces[-1].deferred):
            holds = d.holds()
            result.append((p & holds, jnp.where(p & ~holds, i, first)))
        return result


@dataclass(frozen=True)
class _Finish:
    """What a stage's run of the loop leaves (as numpy): its outputs, when the until held or
    the bound was reached, else its state in buffers grown as the reference grows them, to
    resume from (it keeps no tracer: the evaluator holds it as long as the jitted stage)."""

    histories: list
    rings: list
    n_steps: int
    room: int

    def __call__(self, values: list) -> tuple | dict:
        steps_run, stop, windows, buffers, shared, passed = values
        steps_run = int(steps_run)
        buffers = [np.asarray(b) for b in buffers]
        if bool(stop) or steps_run >= self.n_steps:
            rows = [result_rows(b, h, steps_run, r) for b, h, r in zip(buffers, self.histories, self.rings)]
            return tuple(rows + [np.asarray(s) for s in shared])
        bigger = more_room(self.room, self.n_steps)
        return {"windows": [np.asarray(w) for w in windows],
                "buffers": [grown(b, r, h, bigger) for b, r, h in zip(buffers, self.rings, self.histories)],
                "step": np.int64(steps_run), "shared": [np.asarray(s) for s in shared],
                "passed": [(np.asarray(p), np.asarray(first)) for p, first in passed]}
