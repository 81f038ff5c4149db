"""Scan as ``lax.scan``: the reference loop (``backends/scan_loop.run_scan``) with its buffers
carried.

Each recurrent output carries a window of its last ``span`` rows (what its taps read) and
gives each step's row as a stacked output, so XLA writes every row once and copies nothing per
step; its result is the initial rows and those, sliced as the reference slices its buffer
(a ring: the last rows). Sequences are gathered per tap into the rows each step reads
(``xs``); nit-sot rows are stacked outputs too. n_steps must be static (``Trace.concrete``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from symscan.backends.jax.graph import Trace, evaluate, first_failure
from symscan.backends.scan_loop import result_rows
from symscan.graph.basic import Apply
from symscan.scan.args import ScanArgs
from symscan.scan.checks import check_sequences, direction_and_steps, initial_rows, shape_error
from symscan.tensor.creation import is_zeros_like


def run_scan(node: Apply, inputs: list, trace: Trace) -> list:
    import jax.numpy as jnp
    from jax import lax

    args = ScanArgs.from_node(node)
    values = dict(zip(node.inputs, inputs))
    n_steps = trace.concrete(values[args.n_steps], "step count", node)
    backwards, n_steps = direction_and_steps(args, int(n_steps))
    sequences = [values[s.outer] for s in args.sequences]
    lengths = [int(np.shape(data)[0]) for data in sequences]
    check_sequences(args, lengths, n_steps)

    windows = _windows(args, values)
    if args.until is not None and n_steps > 0:
        from symscan.backends.jax.while_loops import run_until

        return run_until(node, args, values, _rows_at(args, sequences, lengths, backwards), n_steps, windows, trace)

    xs = []
    for seq, data, length in zip(args.sequences, sequences, lengths):
        usable = length - seq.span
        for tap in seq.taps:  # step t reads row offset + t (backwards: offset + usable - 1 - t): a slice
            first = seq.offset(tap) + (usable - n_steps if backwards else 0)
            rows = jnp.asarray(data)[first:first + n_steps]
            xs.append(jnp.flip(rows, axis=0) if backwards else rows)
    shared = [values[s.outer] for s in args.shared]
    non_seqs = non_sequences(args, values)
    n_rec = len(windows)
    # a ring no longer than the window (log_alphas[-1]: a ring of one) is the last window's
    # end: its rows are not stacked at all
    from_window = [e.ring is not None and e.ring <= e.span and n_steps >= e.ring for e in args.recurrent]

    body_traces: list[Trace] = []

    def step(carry, rows):
        windows, shared = carry  # each window a tuple of rows (XLA copies no small array per step)
        inner = list(rows)
        for entry, window in zip(args.recurrent, windows):
            inner += [window[entry.span + tap] for tap in entry.taps]
        body_traces.append(Trace())
        results = evaluate(node.op.inner, inner + list(shared) + non_seqs(), body_traces[-1])
        new_windows, new_rows = [], []
        for entry, window, value, kept in zip(args.recurrent, windows, results, from_window):
            check_row(args, entry.label, jnp.shape(window[0]), jnp.shape(value))
            row = jnp.asarray(value).astype(window[0].dtype)
            new_windows.append(window[1:] + (row,))
            new_rows.append(None if kept else row)
        nit = [jnp.asarray(v).astype(e.inner_out.type.dtype) for e, v in zip(args.nit_sot, results[n_rec:])]
        n_buffered = n_rec + len(nit)
        new_shared = [_same_type(v, old) for v, old in zip(results[n_buffered:n_buffered + len(shared)], shared)]
        checks = [jnp.asarray(d.holds(), dtype=bool) for d in body_traces[-1].deferred]
        return (new_windows, new_shared), (new_rows, nit, checks)

    carry = ([tuple(w) for w in windows], shared)
    if n_steps == 0:  # the body never runs: its errors must not be raised (the reference never calls it)
        steps_rows = [w[:0] for w in windows]
        nit_rows = _unrun_nit_sot_rows(args, step, carry, xs)
    else:
        (last_windows, shared), (steps_rows, nit_rows, checks) = lax.scan(step, carry, xs, length=n_steps)
        for deferred, passed in zip(body_traces[-1].deferred, checks):
            trace.deferred.append(deferred.in_loop(node, jnp.all(passed), first_failure(passed, n_steps)))
        windows = [jnp.stack(last[len(last) - e.ring:]) if kept else first
                   for last, e, kept, first in zip(last_windows, args.recurrent, from_window, windows)]
    outs = [window if kept else
            result_rows(jnp.concatenate([window, rows]) if n_steps else window, entry.span, n_steps, entry.ring)
            for entry, window, rows, kept in zip(args.recurrent, windows, steps_rows, from_window)]
    outs += [result_rows(rows, 0, n_steps, entry.ring) for entry, rows in zip(args.nit_sot, nit_rows)]
    return outs + list(shared)


def non_sequences(args: ScanArgs, values: dict) -> Callable[[], list]:
    """The body's non-sequences, to call inside the body: one that is ``zeros_like(a)``
    outside is made there, as zeros XLA can see (a gradient's ``acc + inc_subtensor(zeros, v,
    i)`` per step then touches one column, not the whole array: H1's backward loop)."""
    import jax.numpy as jnp

    given = [values[n.outer] for n in args.non_seqs]
    zeros = [is_zeros_like(n.outer) for n in args.non_seqs]
    return lambda: [jnp.zeros(jnp.shape(v), jnp.result_type(v)) if zero else v for v, zero in zip(given, zeros)]


def _windows(args: ScanArgs, values: dict) -> list:
    """Per recurrent output, its last ``span`` rows in time order (what its taps read)."""
    return [_initial_rows(args, entry, values[entry.outer_init]).astype(np.dtype(entry.inner_out.type.dtype))
            for entry in args.recurrent]


def _rows_at(args: ScanArgs, sequences: list, lengths: list, backwards: bool):
    """The sequence rows step ``i`` (a traced index) reads, per sequence and tap."""
    from jax import lax

    def rows(i):
        return [lax.dynamic_index_in_dim(data, seq.offset(tap) + (length - seq.span - 1 - i if backwards else i),
                                         keepdims=False)
                for seq, data, length in zip(args.sequences, sequences, lengths) for tap in seq.taps]
    return rows


def _unrun_nit_sot_rows(args: ScanArgs, step, carry, xs) -> list:
    """Empty nit-sot outputs, their rows shaped as the body would make them (the reference's
    ``unrun_nit_sot_shapes``: static lengths, else the body traced on zeros, else 0)."""
    import jax
    import jax.numpy as jnp

    static = [tuple(0 if n is None else n for n in e.inner_out.type.shape) for e in args.nit_sot]
    shapes = static
    if any(None in e.inner_out.type.shape for e in args.nit_sot):
        try:
            first_rows = [jax.ShapeDtypeStruct(x.shape[1:], x.dtype) for x in xs]
            shapes = [r.shape for r in jax.eval_shape(lambda c, r: step(c, r)[1][1], carry, first_rows)]
        except Exception:
            shapes = static
    return [jnp.zeros((0,) + tuple(shape), dtype=e.inner_out.type.dtype) for e, shape in zip(args.nit_sot, shapes)]


def _initial_rows(args, entry, value):
    """``initial_rows`` (its checks on the shape) for a traced value."""
    import jax.numpy as jnp

    stand_in = np.broadcast_to(np.zeros((), dtype=value.dtype), np.shape(value))
    span = initial_rows(args, entry, stand_in).shape[0]
    rows = jnp.asarray(value)[None] if entry in args.sit_sot else jnp.asarray(value)
    return rows[:span]


def check_row(args: ScanArgs, label: str, row_shape: tuple, got: tuple) -> None:
    if tuple(got) != tuple(row_shape):
        raise shape_error(args, label, tuple(row_shape), tuple(got), 0)


def _same_type(value, old):
    import jax.numpy as jnp

    return jnp.asarray(value).astype(jnp.asarray(old).dtype)
