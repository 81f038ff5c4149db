"""Batched forms of numpy indexing for ``vectorize``: ``x_t[i_t]`` and ``set/inc_subtensor``
for all steps at once.

The time axis is indexed by ``arange(n)`` as one more integer array (``X[arange(n), I, J]``),
and each step's integers become arrays of their values over the steps. Integers that are the
same every step become one-element arrays: numpy checks a scalar index even when no step runs,
but an array index only at the positions it reads, so a loop of zero steps stays free of
errors as it was. numpy puts the dims of advanced indices first unless they are adjacent and
preceded by a slice, which can move the time axis elsewhere.

A per-step index on a loop-invariant array after a slice (``B[:, y_t]``: numpy puts the
steps' axis where the ints are) is batched with that axis moved to the front afterwards.

When the index is the same every step and nothing in it can fail at run time (slices, and
constants that building the graph checked), a full slice in front is the batched form
instead (``X[:, idx]``): basic indexing stays basic, a view rather than a gather.

For set/inc_subtensor a base that is the same at every step is tiled along the time axis; a
fill of one value (``zeros_like``, ``zeros``, ``alloc``) becomes one ``Alloc`` of the whole
batch. Positions of different steps never collide (their time index differs), so repeated
positions within a step accumulate (inc) or the last one wins (set) as in the loop, negative
indices wrap per step, and an out-of-range one raises numpy's IndexError.
"""

from __future__ import annotations

import numpy as np

from symscan.graph.basic import Constant, Variable
from symscan.tensor.basic import constant
from symscan.tensor.creation import Alloc, alloc, arange
from symscan.tensor.elemwise import Elemwise, cast
from symscan.tensor.shape import dimshuffle
from symscan.tensor.subtensor import ARRAY, ELLIPSIS, INT, IncSubtensor, Subtensor, infer_shape

FULL_SLICE = ("slice", False, False, False)
INDEXING = (Subtensor, IncSubtensor)


def with_time_axis(var: Variable, ndim: int) -> Variable:
    """A stacked operand with length-1 axes after time so that it has ``ndim + 1`` dims (so that
    it broadcasts, row by row, against per-step values of ``ndim`` dimensions). Every batched
    form needs it; it lives here, below ``vectorize``, which imports this module."""
    missing = ndim - (var.ndim - 1)
    if missing <= 0:
        return var
    return dimshuffle(var, [0] + ["x"] * missing + list(range(1, var.ndim)))


# ---------------------------------------------------------------------------- which form
def index_start(op) -> int:
    """Where the index inputs start: after x (and y for set/inc_subtensor)."""
    return 2 if isinstance(op, IncSubtensor) else 1


def _entries(spec: tuple, values: list) -> list[tuple[tuple, list]]:
    """Each spec entry with its items of ``values`` (one per index input)."""
    it, out = iter(values), []
    for entry in spec:
        count = sum(entry[1:]) if entry[0] == "slice" else (1 if entry in (INT, ARRAY) else 0)
        out.append((entry, [next(it) for _ in range(count)]))
    return out


def _positions(spec: tuple) -> list[int]:
    return [p for p, e in enumerate(spec) if e in (INT, ARRAY)]


def _adjacent(spec: tuple) -> bool:
    positions = _positions(spec)
    return positions == list(range(positions[0], positions[-1] + 1)) if positions else True


def _advanced_first(spec: tuple) -> bool:
    """Whether numpy puts the dims of the advanced (int and array) entries first: they are
    not adjacent, or no entry that makes a dim comes before them."""
    positions = _positions(spec)
    return not positions or not _adjacent(spec) or all(e[0] not in ("slice", "none") for e in spec[:positions[0]])


def _checked_at_build(x: Variable, spec: tuple, index: list[Variable]) -> bool:
    """Every int and array of the index is a constant on an axis of static length: building
    the node checked its bounds, so no run (not even one of zero steps) can fail on them."""
    axis = 0
    for entry, parts in _entries(spec, index):
        if entry in (INT, ARRAY) and not (isinstance(parts[0], Constant) and x.type.shape[axis] is not None):
            return False
        axis += entry[0] not in ("none", "ellipsis")
    return True


def _form(op, inputs: list[Variable], is_stacked: list[bool], tile_bases: bool) -> tuple[str | None, str]:
    """("arange" | "slice" | "moved", "") for the batched form of ``op`` on the per-step
    ``inputs``, or (None, why there is none)."""
    start, spec = index_start(op), op.spec
    if isinstance(op, IncSubtensor) and not is_stacked[0] and not tile_bases:
        return None, "its base is the same every step (repeating it per step is allowed only for map outputs)"
    entries = _entries(spec, is_stacked[start:])
    if any(e[0] == "slice" and any(flags) for e, flags in entries):
        return None, "a slice bound changes from step to step"
    time_axis = isinstance(op, IncSubtensor) or is_stacked[0]  # set/inc tiles a fixed base
    arrays = ARRAY in spec
    batched = ((ARRAY,) if time_axis else ()) + tuple(ARRAY if e == INT else e for e, _ in entries)
    if time_axis and not any(is_stacked[start:]) and (not arrays or _adjacent(spec)) \
            and _checked_at_build(inputs[0], spec, inputs[start:]):
        return "slice", ""
    if _advanced_first(batched) and (not arrays or _advanced_first(spec)):
        return "arange", ""
    if not time_axis and not arrays and ELLIPSIS not in spec:  # (ints that are not adjacent took "arange")
        return "moved", ""
    return None, ("numpy would not put the steps' axis first (advanced indices after a slice), and the index "
                  "is not constant on axes of static length")


def indexing_unbatchable(op, inputs: list[Variable], is_stacked: list[bool], tile_bases: bool) -> str | None:
    """Why indexing ``op`` on the per-step ``inputs`` has no batched form when the flagged
    ones vary per step (None: it has one); ``tile_bases`` as for ``vectorize``."""
    return _form(op, inputs, is_stacked, tile_bases)[1] or None


# ---------------------------------------------------------------------------- building it
def batched_indexing(node, inputs: list[Variable], is_stacked: list[bool]) -> Variable:
    """``node`` (Subtensor or set/inc_subtensor) for all steps; ``inputs`` are the outer
    values, with the time axis where flagged (check ``indexing_unbatchable`` first)."""
    op, start = node.op, index_start(node.op)
    form, _ = _form(op, node.inputs, is_stacked, tile_bases=True)
    steps = next(v for v, s in zip(inputs, is_stacked) if s).shape[0]
    inc = isinstance(op, IncSubtensor)
    x = tiled(inputs[0], steps) if inc and not is_stacked[0] else inputs[0]
    if form == "slice":
        spec, index = (FULL_SLICE,) + op.spec, inputs[start:]
    else:
        spec, index = _arange_index(node, inputs[start:], is_stacked[start:], steps, inc or is_stacked[0])
    if form == "moved":
        return _steps_axis_first(Subtensor(spec)(x, *index), op.spec)
    if not inc:
        return Subtensor(spec)(x, *index)
    y = inputs[1]
    if is_stacked[1]:  # each step's y broadcasts against that step's x[index] only
        y = with_time_axis(y, len(infer_shape(node.inputs[0], op.spec, node.inputs[start:])))
    return IncSubtensor(spec, op.set_instead_of_inc)(x, y, *index)


def _arange_index(node, index: list[Variable], flags: list[bool], steps: Variable,
                  time_axis: bool) -> tuple[tuple, list[Variable]]:
    """The spec and inputs of the "arange" form: ``arange(steps)`` on the time axis (if
    ``time_axis``), every int and array of the index an array broadcasting against it."""
    per_step = _entries(node.op.spec, node.inputs[index_start(node.op):])
    rank = max([parts[0].ndim for entry, parts in per_step if entry == ARRAY], default=0)
    spec, inputs = ([ARRAY], [with_time_axis(arange(steps), rank)]) if time_axis else ([], [])
    for entry, parts in _entries(node.op.spec, list(zip(index, flags))):
        if entry in (INT, ARRAY):
            (var, stacked), = parts
            spec.append(ARRAY)
            inputs.append(with_time_axis(var, rank) if stacked else _one_element(var, rank))
        else:
            spec.append(entry)
            inputs += [var for var, _ in parts]
    return tuple(spec), inputs


def _steps_axis_first(result: Variable, spec: tuple) -> Variable:
    """``x[:, i]`` over all steps is ``x[:, I]``, whose steps' axis numpy puts where the
    ints are (adjacent, after a slice): moved to the front."""
    at = sum(1 for e in spec[:_positions(spec)[0]] if e[0] in ("slice", "none"))
    return dimshuffle(result, [at] + [i for i in range(result.ndim) if i != at])


def _one_element(var: Variable, rank: int) -> Variable:
    """A loop-invariant int as an array of ``rank + 1`` length-1 axes (it broadcasts against the
    steps' arrays, so numpy checks it only when some step reads it); arrays stay as they are."""
    return dimshuffle(var, ["x"] * (rank + 1)) if var.ndim == 0 else var


# ---------------------------------------------------------------------------- tiling the base
def tiled(base: Variable, steps: Variable) -> Variable:
    """``base`` repeated ``steps`` times along a new first axis. A fill of one value is one
    Alloc of that value (no array of the base's size is read); any other base is broadcast,
    one copy per step as the loop makes."""
    fill = _fill(base)
    if fill is not None:
        value, lengths = fill
        return alloc(value, steps, *lengths)
    return alloc(base, steps, *_lengths(base))


def _fill(base: Variable) -> tuple[Variable, list[Variable]] | None:
    """(the value, the lengths) when ``base`` is one value broadcast to a shape, else None."""
    node = base.owner
    if isinstance(base, Constant):
        data = base.data
        if data.size == 0 or not np.all(data == data.flat[0]):
            return None
        return constant(data.flat[0], dtype=base.dtype), [constant(np.int64(n)) for n in data.shape]
    if node is not None and isinstance(node.op, Alloc):
        return node.inputs[0], list(node.inputs[1:])
    if node is not None and isinstance(node.op, Elemwise) and node.op.name == "second" and node.inputs[1].ndim == 0:
        like, value = node.inputs
        return (value if value.dtype == base.dtype else cast(value, base.dtype)), _lengths(like)
    return None


def _lengths(var: Variable) -> list[Variable]:
    return [var.shape[i] for i in range(var.ndim)]
