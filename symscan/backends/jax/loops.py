"""Scan as ``lax.scan``: the reference loop (``backends/scan_loop.run_scan``) with its buffers
carried.

Each recurrent output's buffer (its initial taps, then a row per step, or a ring of the last
rows) is part of the carry and read and written at ``virtual row % length``, as the reference
keeps it; sequences are gathered per tap into the rows each step reads (``xs``); nit-sot rows
are ``lax.scan``'s stacked outputs. n_steps must be known when the function is traced (from
shapes, constants or an integer input, which mode jax passes as a static value).
"""

from __future__ import annotations

import numpy as np

from symscan.backends.jax.graph import Deferred, NotLowerable, Trace, evaluate, is_traced
from symscan.backends.scan_loop import buffer_length
from symscan.graph.basic import Apply
from symscan.scan.args import ScanArgs
from symscan.scan.checks import check_sequences, direction_and_steps, initial_rows, shape_error


def run_scan(node: Apply, inputs: list, trace: Trace) -> list:
    import jax.numpy as jnp
    from jax import lax

    args = ScanArgs.from_node(node)
    values = dict(zip(node.inputs, inputs))
    if args.until is not None:
        raise NotLowerable(f"mode jax does not lower scans with until(...) yet ({node.op}); run this function "
                           "in mode 'fast' or 'numba'")
    n_steps = values[args.n_steps]
    if is_traced(n_steps):
        raise NotLowerable(f"mode jax needs the step count of {node.op} before the call; pass n_steps as an "
                           "integer input or a constant")
    backwards, n_steps = direction_and_steps(args, int(np.asarray(n_steps)))
    sequences = [values[s.outer] for s in args.sequences]
    lengths = [int(np.shape(data)[0]) for data in sequences]
    check_sequences(args, lengths, n_steps)

    xs = []
    for seq, data, length in zip(args.sequences, sequences, lengths):
        usable = length - seq.span
        steps = np.arange(n_steps)
        for tap in seq.taps:
            xs.append(jnp.asarray(data)[seq.offset(tap) + (usable - 1 - steps if backwards else steps)])

    buffers = []
    for entry in args.recurrent:
        rows = _initial_rows(args, entry, values[entry.outer_init])
        length = buffer_length(entry.ring, entry.span, n_steps)
        dtype = np.dtype(entry.inner_out.type.dtype)
        data = jnp.zeros((length,) + tuple(rows.shape[1:]), dtype=dtype)
        for v in range(entry.span):
            data = data.at[v % length].set(rows[v].astype(dtype))
        buffers.append(data)
    shared = [values[s.outer] for s in args.shared]
    non_seqs = [values[n.outer] for n in args.non_seqs]
    n_rec = len(buffers)

    body_traces: list[Trace] = []

    def step(carry, rows):
        t, buffers, shared = carry
        inner = list(rows)
        for entry, data in zip(args.recurrent, buffers):
            inner += [data[(entry.span + t + tap) % data.shape[0]] for tap in entry.taps]
        body_traces.append(Trace())
        results = evaluate(node.op.inner, inner + list(shared) + non_seqs, body_traces[-1])
        new_buffers = []
        for entry, data, value in zip(args.recurrent, buffers, results):
            _check_row(args, entry.label, data.shape[1:], jnp.shape(value))
            new_buffers.append(data.at[(entry.span + t) % data.shape[0]].set(jnp.asarray(value).astype(data.dtype)))
        nit = [jnp.asarray(v).astype(e.inner_out.type.dtype) for e, v in zip(args.nit_sot, results[n_rec:])]
        n_buffered = n_rec + len(nit)
        new_shared = [_same_type(v, old) for v, old in zip(results[n_buffered:n_buffered + len(shared)], shared)]
        checks = [jnp.all(jnp.stack([jnp.all(c) for c in d.conditions])) for d in body_traces[-1].deferred]
        return (t + 1, new_buffers, new_shared), (nit, checks)

    carry = (jnp.asarray(0, dtype=jnp.int64), buffers, shared)
    if n_steps == 0:  # the body never runs: its errors must not be raised (the reference never calls it)
        nit_rows = _unrun_nit_sot_rows(args, step, carry, xs)
    else:
        (_, buffers, shared), (nit_rows, checks) = lax.scan(step, carry, xs, length=n_steps)
        for deferred, passed in zip(body_traces[-1].deferred, checks):
            trace.deferred.append(Deferred(f"{deferred.message} (in {node.op})", deferred.error, [passed]))
    outs = [_result_rows(data, entry.span, n_steps, entry.ring) for entry, data in zip(args.recurrent, buffers)]
    outs += [rows if entry.ring is None else rows[max(0, n_steps - entry.ring):]
             for entry, rows in zip(args.nit_sot, nit_rows)]
    return outs + list(shared)


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
            shapes = [r.shape for r in jax.eval_shape(lambda c, r: step(c, r)[1][0], carry, first_rows)]
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


def _check_row(args: ScanArgs, label: str, row_shape: tuple, got: tuple) -> None:
    if tuple(got) != tuple(row_shape):
        raise shape_error(args, label, tuple(row_shape), tuple(got), 0)


def _same_type(value, old):
    import jax.numpy as jnp

    return jnp.asarray(value).astype(jnp.asarray(old).dtype)


def _result_rows(data, history: int, steps_run: int, ring: int | None):
    """``scan_loop.result_rows`` for a JAX buffer."""
    import jax.numpy as jnp

    stop = history + steps_run
    start = 0 if ring is None else max(history, stop - ring)
    length = data.shape[0]
    if stop <= length:
        return data[start:stop]
    return data[jnp.asarray(np.arange(start, stop) % length)]
