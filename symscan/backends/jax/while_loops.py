"""A Scan with ``until(...)`` as ``lax.while_loop``, run in stages.

XLA needs every shape before it runs, but such a loop's outputs are as long as the steps it
ran, which only the run tells. So the loop runs over buffers sized by its bound (n_steps: the
most steps it may run) and ends the trace there: the jitted function returns the buffers and the
step count (a ``StageEnd``), the evaluator slices them on the host as the reference does
(``scan_loop.result_rows``) and calls the function again with those outputs as arguments
(``Trace.known``), which traces the rest of the graph with their real shapes. A graph with k
such loops runs in k + 1 jitted stages; each new step count compiles its later stages anew.

The buffers hold n_steps rows, so a bound far beyond the steps a loop runs costs memory:
``MAX_BUFFER_BYTES`` refuses a bound whose buffers would not fit. Inside another loop or a
branch on a traced condition there is no stage to end, and such a loop is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from symscan.backends.jax.graph import Deferred, NotLowerable, StageEnd, Trace, evaluate
from symscan.backends.jax.loops import check_row
from symscan.backends.scan_loop import buffer_length, result_rows
from symscan.graph.basic import Apply
from symscan.scan.args import ScanArgs

MAX_BUFFER_BYTES = 2**30
"""The most bytes the buffers of one loop with until may take (they hold n_steps rows each)."""


@dataclass
class _Layout:
    """Where each output's rows live: its history (initial rows) and ring, and the buffer
    length for n_steps steps."""

    history: int
    ring: int | None
    length: int


def run_until(node: Apply, args: ScanArgs, values: dict, xs_at: Callable, n_steps: int, windows: list,
              trace: Trace) -> list:
    """The loop's outputs when an earlier stage ran it, else its run as this stage's end."""
    if not trace.staged:
        raise NotLowerable(f"mode jax cannot lower {node.op}, a loop with until(...), inside another loop, a "
                           "branch on a traced condition or ss.jax.to_jax: its outputs' lengths are known only "
                           "when it has run; run this function in mode 'fast' or 'numba'")
    index = trace.untils_seen
    trace.untils_seen += 1
    if index < len(trace.known):
        return list(trace.known[index])
    raise _run(node, args, values, xs_at, n_steps, windows)


def _run(node, args: ScanArgs, values: dict, xs_at: Callable, n_steps: int, windows: list) -> StageEnd:
    import jax
    import jax.numpy as jnp
    from jax import lax

    shared = [values[s.outer] for s in args.shared]
    non_seqs = [values[n.outer] for n in args.non_seqs]
    rec = [_Layout(e.span, e.ring, buffer_length(e.ring, e.span, n_steps)) for e in args.recurrent]
    n_rec, n_nit = len(rec), len(args.nit_sot)
    body_traces: list[Trace] = []

    def body_results(i, buffers, shared):
        inner = list(xs_at(i))
        for entry, layout, buffer in zip(args.recurrent, rec, buffers):
            inner += [lax.dynamic_index_in_dim(buffer, (entry.span + i + tap) % layout.length, keepdims=False)
                      for tap in entry.taps]
        body_traces.append(Trace())
        return evaluate(node.op.inner, inner + list(shared) + non_seqs, body_traces[-1])

    first = [jnp.concatenate([w, jnp.zeros((layout.length - w.shape[0],) + w.shape[1:], w.dtype)])
             for w, layout in zip(windows, rec)]
    probe = jax.eval_shape(lambda b, s: body_results(np.int64(0), b, s), first, shared)
    nit_rows = [(tuple(r.shape), np.dtype(e.inner_out.type.dtype)) for e, r in zip(args.nit_sot, probe[n_rec:])]
    nit = [_Layout(0, e.ring, buffer_length(e.ring, 0, n_steps)) for e in args.nit_sot]
    _check_bound(node, n_steps, first, nit, nit_rows)
    n_checks = len(body_traces[-1].deferred)

    def body(state):
        i, _, buffers, nit_buffers, shared, passed = state
        results = body_results(i, buffers, shared)
        new_buffers = []
        for entry, layout, buffer, value in zip(args.recurrent, rec, buffers, results):
            check_row(args, entry.label, buffer.shape[1:], jnp.shape(value))
            row = jnp.asarray(value).astype(buffer.dtype)
            new_buffers.append(lax.dynamic_update_index_in_dim(buffer, row, (entry.span + i) % layout.length, 0))
        new_nit = [lax.dynamic_update_index_in_dim(buffer, jnp.asarray(value).astype(buffer.dtype),
                                                   i % layout.length, 0)
                   for layout, buffer, value in zip(nit, nit_buffers, results[n_rec:n_rec + n_nit])]
        updates = results[n_rec + n_nit:n_rec + n_nit + len(shared)]
        new_shared = [jnp.asarray(v).astype(jnp.asarray(old).dtype) for v, old in zip(updates, shared)]
        passed = [p & jnp.all(jnp.stack([jnp.all(c) for c in d.conditions]))
                  for p, d in zip(passed, body_traces[-1].deferred)]
        stop = jnp.asarray(results[-1]).astype(bool).reshape(())
        return i + 1, stop, new_buffers, new_nit, new_shared, passed

    state = (jnp.int64(0), jnp.asarray(False), first,
             [jnp.zeros((layout.length,) + shape, dtype) for layout, (shape, dtype) in zip(nit, nit_rows)],
             [jnp.asarray(s) for s in shared], [jnp.asarray(True)] * n_checks)
    steps, _, buffers, nit_buffers, shared, passed = lax.while_loop(
        lambda s: (s[0] < n_steps) & ~s[1], body, state)
    checks = [Deferred(f"{d.message} (in {node.op})", d.error, [p]) for d, p in zip(body_traces[-1].deferred, passed)]

    def finish(values: list) -> tuple:
        steps_run = int(values[0])
        rows = [result_rows(np.asarray(v), layout.history, steps_run, layout.ring)
                for layout, v in zip(rec + nit, values[1:1 + n_rec + n_nit])]
        return tuple(rows + [np.asarray(v) for v in values[1 + n_rec + n_nit:]])

    return StageEnd([steps] + list(buffers) + list(nit_buffers) + list(shared), checks, finish, static=False)


def _check_bound(node, n_steps: int, first: list, nit: list, nit_rows: list) -> None:
    total = sum(b.size * b.dtype.itemsize for b in first)
    total += sum(layout.length * int(np.prod(shape)) * dtype.itemsize for layout, (shape, dtype) in zip(nit, nit_rows))
    if total > MAX_BUFFER_BYTES:
        raise NotLowerable(f"mode jax sizes the buffers of {node.op}, a loop with until(...), by its bound "
                           f"n_steps={n_steps}: they would take {total} bytes (at most {MAX_BUFFER_BYTES}); give "
                           "n_steps a smaller bound, or run this function in mode 'fast' or 'numba'")

