"""ONNX lowerings of numpy indexing (Subtensor) and of set/inc_subtensor.

Indexing runs in three steps: ``None`` entries become length-1 axes (Unsqueeze), slices
become one Slice, then integer and array indices become Gather (no arrays) or one GatherND
over the broadcast index arrays, with the result's axes moved where numpy puts them.
set/inc_subtensor index a tensor of flat positions the same way and scatter ``y`` into the
flattened ``x`` (accumulating repeated positions for inc, as numpy.add.at does).
"""

from __future__ import annotations

import numpy as np

from symscan.onnx.context import Lowering, lowers
from symscan.onnx.tensor_ops import reduce, unsqueeze
from symscan.tensor.basic import static_int
from symscan.tensor.subtensor import ARRAY, INT, NONE, IncSubtensor, Subtensor

INT64_MAX, INT64_MIN = 2 ** 63 - 1, -(2 ** 63)


def _int64(ctx: Lowering, name: str, var) -> str:
    return ctx.cast(name, var.dtype, "int64")


def _entries(spec: tuple, names: list[str], variables: list) -> list[tuple]:
    """(entry, its index names, its index variables) for each entry of ``spec``."""
    it = iter(zip(names, variables))
    out = []
    for entry in spec:
        count = sum(entry[1:]) if entry[0] == "slice" else (1 if entry in (INT, ARRAY) else 0)
        parts = [next(it) for _ in range(count)]
        out.append((entry, [p[0] for p in parts], [p[1] for p in parts]))
    return out


def _slice_bounds(ctx: Lowering, entry, names, variables, length) -> tuple:
    """ONNX Slice start/end/step for a numpy slice (defaults depend on the step's sign): each an
    int when known now, else a name. ``length()`` gives the axis length, needed when a start
    before the axis may meet a negative step: ONNX clamps that start to 0 (one element), numpy's
    slice is empty."""
    parts = iter(zip(names, variables))
    start = next(parts) if entry[1] else None
    stop = next(parts) if entry[2] else None
    step = next(parts) if entry[3] else None
    known_step = 1 if step is None else static_int(step[1])
    step_bound = known_step if known_step is not None else _int64(ctx, *step)
    sign = None if known_step is None else np.sign(known_step)

    def default(forward: int, backward: int):
        if sign is not None:
            return forward if sign > 0 else backward
        positive = ctx.op1("Greater", [step_bound, ctx.const(np.int64(0))])
        return ctx.op1("Where", [positive, ctx.const(np.int64(forward)), ctx.const(np.int64(backward))])

    def bound(part):
        value = static_int(part[1])
        return value if value is not None else _int64(ctx, *part)

    start_bound = bound(start) if start else default(0, INT64_MAX)
    stop_bound = bound(stop) if stop else default(INT64_MAX, INT64_MIN)
    known_start = static_int(start[1]) if start else None
    if start and sign != 1 and (known_start is None or known_start < 0):
        zero = ctx.const(np.int64(0))
        start_name = _as_name(ctx, start_bound)
        empty = ctx.op1("Less", [ctx.op1("Add", [start_name, length()]), zero])
        if sign is None:
            empty = ctx.op1("And", [empty, ctx.op1("Less", [_as_name(ctx, step_bound), zero])])
        start_bound, stop_bound = (ctx.op1("Where", [empty, zero, _as_name(ctx, n)]) for n in (start_bound, stop_bound))
    return start_bound, stop_bound, step_bound


def _as_name(ctx: Lowering, bound) -> str:
    return ctx.const(np.int64(bound)) if isinstance(bound, (int, np.integer)) else bound


def index(ctx: Lowering, x: str, spec: tuple, names: list[str], variables: list, ndim: int) -> str:
    """``x[index]`` for an index spec (see symscan.tensor.subtensor) in ONNX ops; ``x`` has ``ndim`` axes."""
    listed = _entries(spec, names, variables)
    # numpy keeps advanced indices' dims in place only when nothing (not even "...") separates them
    positions = [p for p, (entry, _, _) in enumerate(listed) if entry in (INT, ARRAY)]
    adjacent = positions == list(range(positions[0], positions[-1] + 1)) if positions else True
    entries = [e for e in listed if e[0] != ("ellipsis",)]
    full = (("slice", False, False, False), [], [])
    entries += [full] * (ndim - sum(1 for e in entries if e[0] != NONE))  # the axes after the index
    new_axes = [axis for axis, (entry, _, _) in enumerate(entries) if entry == NONE]
    if new_axes:
        x = unsqueeze(ctx, x, new_axes)
        entries = [full if e[0] == NONE else e for e in entries]
    slices = [(axis, e) for axis, e in enumerate(entries) if e[0][0] == "slice" and any(e[0][1:])]
    if slices:
        source = x

        def length_of(axis: int):
            return lambda: ctx.op1("Gather", [ctx.op1("Shape", [source]), ctx.const(np.int64(axis))])

        bounds = [_slice_bounds(ctx, *e, length_of(axis)) for axis, e in slices]
        x = ctx.op1("Slice", [x, _stack(ctx, [b[0] for b in bounds]), _stack(ctx, [b[1] for b in bounds]),
                              ctx.ints([axis for axis, _ in slices]), _stack(ctx, [b[2] for b in bounds])])
    advanced = [axis for axis, (entry, _, _) in enumerate(entries) if entry in (INT, ARRAY)]
    if not advanced:
        return x
    if all(entries[a][0] == INT for a in advanced):
        for axis in reversed(advanced):  # from the last axis, so earlier axes keep their numbers
            _, (name,), (var,) = entries[axis]
            x = ctx.op1("Gather", [x, _int64(ctx, name, var)], axis=axis)
        return x
    return _gather_nd(ctx, x, entries, advanced, adjacent)


def _stack(ctx: Lowering, bounds: list) -> str:
    """A 1-d int64 tensor of slice bounds (one constant when all are known now)."""
    if all(isinstance(b, (int, np.integer)) for b in bounds):
        return ctx.ints([int(b) for b in bounds])
    parts = [unsqueeze(ctx, _as_name(ctx, b), [0]) for b in bounds]
    return ctx.op1("Concat", parts, axis=0) if len(parts) > 1 else parts[0]


def _gather_nd(ctx: Lowering, x: str, entries: list, advanced: list[int], adjacent: bool) -> str:
    """Integer-array indexing: advanced axes first, GatherND, then numpy's placement."""
    ndim = len(entries)
    rest = [a for a in range(ndim) if a not in advanced]
    if advanced + rest != list(range(ndim)):
        x = ctx.op1("Transpose", [x], perm=advanced + rest)
    indices = [_int64(ctx, entries[a][1][0], entries[a][2][0]) for a in advanced]
    zero = ctx.const(np.int64(0))
    broadcast = indices[0]
    for other in indices[1:]:
        broadcast = ctx.op1("Add", [ctx.op1("Mul", [broadcast, zero]), ctx.op1("Mul", [other, zero])])
    shape = ctx.op1("Shape", [broadcast])
    stacked = ctx.op1("Concat", [unsqueeze(ctx, ctx.op1("Expand", [i, shape]), [-1]) for i in indices], axis=-1)
    result = ctx.op1("GatherND", [x, stacked])
    before = advanced[0]
    if not adjacent or before == 0:
        return result
    n_index = max(v.ndim for a in advanced for v in entries[a][2])
    total = n_index + len(rest)
    perm = list(range(n_index, n_index + before)) + list(range(n_index)) + list(range(n_index + before, total))
    return ctx.op1("Transpose", [result], perm=perm)


@lowers(Subtensor)
def lower_subtensor(ctx: Lowering, node, ins: list[str]) -> list[str]:
    parts = ctx.buffer_steps(ins[0])
    if parts is not None and node.op.spec == (("slice", True, False, False),) and \
            static_int(node.inputs[1]) == parts[1]:
        return [parts[0]]  # a loop's buffer without its initial rows: the stacked steps themselves
    result = index(ctx, ins[0], node.op.spec, ins[1:], node.inputs[1:], node.inputs[0].ndim)
    return [ctx.op1("Identity", [result]) if result == ins[0] else result]


@lowers(IncSubtensor)
def lower_inc_subtensor(ctx: Lowering, node, ins: list[str]) -> list[str]:
    x, y = node.inputs[:2]
    shape = ctx.op1("Shape", [ins[0]])
    size = reduce(ctx, "ReduceProd", shape, [0], False) if x.ndim else ctx.const(np.int64(1))
    positions = ctx.op1("Reshape", [ctx.op1("Range", [ctx.const(np.int64(0)), size, ctx.const(np.int64(1))]), shape])
    chosen = index(ctx, positions, node.op.spec, ins[2:], node.inputs[2:], x.ndim)
    values = ctx.op1("Expand", [ctx.cast(ins[1], y.dtype, x.dtype), ctx.op1("Shape", [chosen])])
    flat = ctx.ints([-1])
    scattered = ctx.op1("ScatterElements", [ctx.op1("Reshape", [ins[0], flat]), ctx.op1("Reshape", [chosen, flat]),
                                            ctx.op1("Reshape", [values, flat])],
                        axis=0, reduction="none" if node.op.set_instead_of_inc else "add")
    return [ctx.op1("Reshape", [scattered, shape])]
