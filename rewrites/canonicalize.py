"""``canonicalize``: small algebraic identities, written as a table of (op test, rule) pairs.

Each rule takes a node and returns the variable that can stand for its output, or None.
A rule only fires when the replacement has the output's exact dtype and number of
dimensions and cannot broadcast differently (the neutral operand is a scalar-like constant).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rewrites.registry import register
from rewrites.scan_utils import after_loop_checks, checks_dropped_with
from rewrites.shape_sources import all_ones, computed_shape, same_shape
from symscan.graph.basic import Constant, Variable
from symscan.scan.checks import AfterChecks, StepCount
from symscan.tensor.assertion import Assert
from symscan.tensor.basic import static_int
from symscan.tensor.broadcast import SumToShape
from symscan.tensor.creation import Arange
from symscan.tensor.elemwise import Cast, Elemwise
from symscan.tensor.gradient_markers import GradientMarker
from symscan.tensor.shape import DimShuffle, Shape, dimshuffle, make_vector, shape
from symscan.tensor.subtensor import ARRAY, INT, Subtensor, axis_length


def _is_scalar_constant(var: Variable, value) -> bool:
    """``var`` is a constant holding only ``value``; a float zero must also have the sign of
    ``value`` (x + (-0.0) is x for every x, but -0.0 + 0.0 is +0.0, so x + 0.0 is not x)."""
    if not (isinstance(var, Constant) and all(n == 1 for n in var.data.shape)):
        return False
    data = var.data
    if not np.all(data == value):
        return False
    return not (value == 0 and data.dtype.kind in "fc"
                and bool(np.any(np.signbit(np.real(data)) != np.signbit(np.float64(value)))))


def _same_kind(old: Variable, new: Variable) -> bool:
    return new.type.dtype == old.type.dtype and new.type.ndim == old.type.ndim and (
        not new.type.conflicts_with(old.type))


def _neutral(value, positions: tuple[int, ...]) -> Callable:
    """x op c -> x when c is the neutral constant ``value`` at one of ``positions`` (x cast to
    the result's dtype when c's dtype widened it: numpy casts x so before the op, so int32 x +
    int64 0 is exactly x as int64)."""

    def rule(node):
        out = node.outputs[0]
        for position in positions:
            other = node.inputs[1 - position]
            if _is_scalar_constant(node.inputs[position], value) and other.ndim >= node.inputs[position].ndim:
                if other.dtype == out.dtype:
                    return other
                return Cast(out.dtype)(other) if np.can_cast(other.dtype, out.dtype, "safe") else None
        return None

    return rule


def _double_negation(node):
    inner = node.inputs[0].owner
    return inner.inputs[0] if inner is not None and inner.op == Elemwise("neg") else None


def _compose_dimshuffles(node):
    inner = node.inputs[0].owner
    if inner is None or not isinstance(inner.op, DimShuffle):
        return None
    order = tuple("x" if a == "x" else inner.op.new_order[a] for a in node.op.new_order)
    return dimshuffle(inner.inputs[0], order)


def _useless_cast(node):
    return node.inputs[0] if node.inputs[0].dtype == node.op.dtype else None


def _cast_through_a_wider_type(node):
    """cast(cast(x, mid), out) -> cast(x, out) when ``mid`` holds every value of x exactly and
    the last cast converts the same way from either (integers keep their low bits, floats
    round once, booleans are 0 or 1). Also avoids an onnxruntime bug: a lossless pair of
    Casts computed outside a Loop and read inside it goes missing after the first step."""
    inner = node.inputs[0].owner
    if inner is None or not isinstance(inner.op, Cast):
        return None
    x = inner.inputs[0]
    kinds = {np.dtype(d).kind for d in (x.dtype, inner.op.dtype, node.op.dtype)}
    if not np.can_cast(x.dtype, inner.op.dtype, "safe") or not (x.dtype == "bool" or kinds <= set("iu")
                                                                or kinds == {"f"}):
        return None
    return x if node.op.dtype == x.dtype else Cast(node.op.dtype)(x)


def _useless_sum_to(node):
    """sum_to(x, like) is x when x has like's shape (a gradient's shape is known to be its input's)."""
    x, like = node.inputs
    return x if not node.op.from_shape and same_shape(x, like) else None


def _sum_to_computed_shape(node):
    """sum_to(x, like) reads only like's shape: take it from cheaper variables where the graph
    shows how (``dot(a, b)``'s from a's and b's), so like is not computed for its shape alone
    (a gradient's loop would recompute the forward products at every step)."""
    x, like = node.inputs
    if node.op.from_shape or like.ndim == 0 or like.owner is None or isinstance(like.owner.op, (Subtensor, DimShuffle)):
        return None
    lengths = computed_shape(like)
    if lengths is None:
        return None
    return SumToShape(from_shape=True)(x, make_vector(lengths, dtype="int64"))


def _useless_fill(node):
    """second(a, b) (b broadcast to a's shape) is b when b has that shape already."""
    if node.op != Elemwise("second"):
        return None
    a, b = node.inputs
    return b if (b.ndim >= a.ndim and all_ones(a)) or same_shape(a, b) else None


def _fill_operand(node):
    """x op second(a, k), with k of length-1 axes only, is x op k when x has a's shape: the
    broadcast gives the same shape (gradient graphs fill ones to a shape, then multiply)."""
    for position, operand in enumerate(node.inputs):
        fill = operand.owner
        if fill is None or fill.op != Elemwise("second") or not all_ones(fill.inputs[1]):
            continue
        target, k = fill.inputs
        if k.ndim <= target.ndim and any(same_shape(other, target) for i, other in enumerate(node.inputs)
                                         if i != position):
            inputs = list(node.inputs)
            inputs[position] = k
            return Elemwise(node.op.name)(*inputs)
    return None


def _fill_sink(node):
    """second(a, k) op c, with k and c of length-1 axes only, is second(a, k op c): the scalar
    work moves inside the fill, where constant folding and ``_fill_operand`` can finish it
    (gradient graphs fill a seed of ones, then scale it)."""
    ndim = node.outputs[0].ndim
    for position, operand in enumerate(node.inputs):
        fill = operand.owner
        if fill is None or fill.op != Elemwise("second") or not all_ones(fill.inputs[1]) or operand.ndim != ndim:
            continue
        others = [v for i, v in enumerate(node.inputs) if i != position]
        if not all(all_ones(v) and v.ndim <= ndim for v in others):
            return None
        inputs = list(node.inputs)
        inputs[position] = fill.inputs[1]
        return Elemwise("second")(fill.inputs[0], Elemwise(node.op.name)(*inputs))
    return None


def _settled_conditions(node):
    """An Assert's conditions that are constant True are checked already: drop them (and the
    node when none is left)."""
    pending = [c for c in node.inputs[1:] if not (isinstance(c, Constant) and bool(c.data))]
    if len(pending) == len(node.inputs) - 1:
        return None
    return Assert(node.op.message, node.op.error)(node.inputs[0], *pending) if pending else node.inputs[0]


def _max_with_zero(node):
    """maximum(n, 0) is n for an axis length (an imported ONNX loop's trip count). Only then:
    a value known non-negative from static lengths alone may stop being so known once other
    rules rewrite what it is computed from, and the maximum keeps that knowledge."""
    if node.op != Elemwise("maximum"):
        return None
    for position, other in ((0, 1), (1, 0)):
        if _is_scalar_constant(node.inputs[position], 0) and axis_length(node.inputs[other]) is not None:
            return node.inputs[other]
    return None


def _whole_axis_slice(node):
    """x[:n] and x[0:n] are x when n is x's length (an imported loop's steps are its sequence's)."""
    spec, (x, *bounds) = node.op.spec, node.inputs
    if spec == (("slice", False, True, False),):
        stop = bounds[0]
    elif spec == (("slice", True, True, False),) and static_int(bounds[0]) == 0:
        stop = bounds[1]
    else:
        return None
    return x if _is_length_of(stop, x) else None


def _is_length_of(n: Variable, x: Variable) -> bool:
    """Whether ``n`` is the length of ``x``'s first axis: ``len(x)``, or ``x`` is ``arange(0, n, 1)``
    with ``n`` never negative."""
    if axis_length(n) == (x, 0):
        return True
    lengths = computed_shape(x) if x.ndim else None  # (an x computed from others: their lengths)
    if lengths is not None and axis_length(n) is not None and axis_length(lengths[0]) == axis_length(n):
        return True
    producer = x.owner
    if producer is None or not isinstance(producer.op, Arange):
        return False
    start, stop, step = producer.inputs
    return stop is n and static_int(start) == 0 and static_int(step) == 1 and _a_length(n)


def _a_length(n: Variable) -> bool:
    """Whether ``n`` is never negative by the graph's structure: an axis length, a maximum with 0
    (not by static values, which other rules may rewrite away)."""
    if axis_length(n) is not None:
        return True
    node = n.owner
    return node is not None and node.op == Elemwise("maximum") and any(
        _is_scalar_constant(v, 0) for v in node.inputs)


def _arange_of_the_axis(node):
    """x[arange(0, len(x), 1)] is x: every row, in order (a gather by an imported loop's
    iteration numbers, pushed out of the loop)."""
    if node.op.spec[:1] != (ARRAY,) or any(e != ("slice", False, False, False) for e in node.op.spec[1:]):
        return None
    x, index = node.inputs[0], node.inputs[1]
    if index.owner is None or not isinstance(index.owner.op, Arange):
        return None
    start, stop, step = index.owner.inputs
    if static_int(start) != 0 or static_int(step) != 1 or axis_length(stop) != (x, 0):
        return None
    return x


def _arange_length(node):
    """len(arange(0, n, 1)) is n for n >= 0 (the length of an imported loop's iteration numbers)."""
    if node.op.spec != (INT,) or static_int(node.inputs[1]) != 0:
        return None
    shape_node = node.inputs[0].owner
    if shape_node is None or not isinstance(shape_node.op, Shape):
        return None
    producer = shape_node.inputs[0].owner
    if producer is None or not isinstance(producer.op, Arange):
        return None
    stop = producer.inputs[1]
    return stop if stop.dtype == "int64" and _is_length_of(stop, shape_node.inputs[0]) else None


def _shape_past_views(node):
    """v.shape[k] is x.shape[j] when v views x with axis k's length kept: slices that leave axis
    k whole, a DimShuffle that moves x's axis j to k (and drops none), an ``AfterChecks`` (a loop's
    checks on a value; they stay, see ``canonicalize``). A backward loop reads its forward trace
    so: x[a:b][::-1][:n].dimshuffle(0, 2, 1).shape[2] is x.shape[1]."""
    if node.op.spec != (INT,):
        return None
    k, shape_node = static_int(node.inputs[1]), node.inputs[0].owner
    if k is None or shape_node is None or not isinstance(shape_node.op, Shape):
        return None
    viewed = shape_node.inputs[0]
    if not -viewed.ndim <= k < viewed.ndim:
        return None
    source = _axis_source(viewed.owner, k % viewed.ndim)
    return None if source is None else shape(source[0])[source[1]]


def _axis_source(producer, axis: int) -> tuple | None:
    """(x, j): the view ``producer`` makes has x's axis j as its ``axis``, of the same length."""
    op = producer.op if producer is not None else None
    if isinstance(op, AfterChecks):
        return producer.inputs[0], axis
    if isinstance(op, DimShuffle) and not op.dropped and op.new_order[axis] != "x":
        return producer.inputs[0], op.new_order[axis]
    if isinstance(op, Subtensor) and axis >= len(op.spec) and all(e[0] == "slice" for e in op.spec) \
            and _steps_not_zero(producer):
        return producer.inputs[0], axis
    return None


def _steps_not_zero(producer) -> bool:
    """Every slice's step is a constant other than 0 or absent (a step of 0 is numpy's error)."""
    inputs = iter(producer.inputs[1:])
    for entry in producer.op.spec:
        parts = [next(inputs) if present else None for present in entry[1:]]
        if parts[2] is not None and static_int(parts[2]) in (None, 0):
            return False
    return True


def _vacuous_step_count(node):
    """The step count of a loop over its sequences' own length, with no taps beyond tap 0, is
    that length: the check that they are long enough cannot fail."""
    return node.inputs[0] if node.op.checks_nothing and node.inputs[0].dtype == "int64" else None


def _full_slice(node):
    full = all(entry[0] == "slice" and not any(entry[1:]) for entry in node.op.spec)
    return node.inputs[0] if full else None


RULES: list[tuple[Callable, Callable]] = [
    (lambda op: op == Elemwise("add"), _neutral(-0.0, (0, 1))),  # ints: -0.0 == 0 too
    (lambda op: op == Elemwise("mul"), _neutral(1, (0, 1))),
    (lambda op: op == Elemwise("sub"), _neutral(0, (1,))),
    (lambda op: op == Elemwise("true_div"), _neutral(1, (1,))),
    (lambda op: op == Elemwise("pow"), _neutral(1, (1,))),
    (lambda op: op == Elemwise("neg"), _double_negation),
    (lambda op: isinstance(op, DimShuffle), _compose_dimshuffles),
    (lambda op: isinstance(op, Cast), _useless_cast),
    (lambda op: isinstance(op, Cast), _cast_through_a_wider_type),
    (lambda op: isinstance(op, Subtensor), _full_slice),
    (lambda op: isinstance(op, Subtensor), _whole_axis_slice),
    (lambda op: isinstance(op, Subtensor), _arange_of_the_axis),
    (lambda op: isinstance(op, Subtensor), _arange_length),
    (lambda op: isinstance(op, Subtensor), _shape_past_views),
    (lambda op: isinstance(op, Elemwise), _max_with_zero),
    (lambda op: isinstance(op, StepCount), _vacuous_step_count),
    (lambda op: isinstance(op, Assert), _settled_conditions),
    (lambda op: isinstance(op, GradientMarker), lambda node: node.inputs[0]),  # gradients are built by now
    (lambda op: isinstance(op, SumToShape), _useless_sum_to),
    (lambda op: isinstance(op, SumToShape), _sum_to_computed_shape),
    (lambda op: isinstance(op, Elemwise), _useless_fill),
    (lambda op: isinstance(op, Elemwise) and op.name != "second", _fill_operand),
    (lambda op: isinstance(op, Elemwise) and op.name not in ("second", "switch"), _fill_sink),
]


@register("canonicalize", phase="canonicalize", tags=("canonicalize",),
          tracks=(Elemwise, DimShuffle, Cast, Subtensor, GradientMarker, SumToShape, Assert, StepCount))
def canonicalize(fgraph, node):
    out = node.outputs[0]
    for matches, rule in RULES:
        if matches(node.op):
            new = rule(node)
            if new is not None and new is not out and _same_kind(out, new):
                return {out: after_loop_checks(new, checks_dropped_with(fgraph, node, new))}
    return None
