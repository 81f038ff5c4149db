"""``disjoint_increments``: a sum of ``inc_subtensor``s into zeros at disjoint slices becomes one
chain of ``inc_subtensor``s into one zeros.

The gradient of a value read in slices (an LSTM's four gates, cut from one pre-activation)
adds one zeros-with-a-slice-filled per slice: four zeros, four increments and three full-size
additions every step. Where the slices are disjoint, each element of the sum is one slice's
value plus zeros, so writing every slice into one zeros gives the same numbers bit for bit; each
increment still checks its value against its slice, both operands of the addition are proven
to have the zeros' shape, and the zeros no longer read can raise nothing the others do not,
so no error is lost or added.
"""

from __future__ import annotations

import numpy as np

from rewrites.broadcast_lengths import proven_equal, skippable
from rewrites.registry import register
from symscan.graph.basic import Variable
from symscan.tensor.basic import static_int
from symscan.tensor.creation import is_zeros_like
from symscan.tensor.elemwise import Elemwise
from symscan.tensor.subtensor import IncSubtensor

FULL = ("slice", False, False, False)


def _interval(node) -> tuple[int, int, float] | None:
    """(axis, start, stop) of an increment at one basic slice with constant non-negative bounds
    (every other axis whole), else None."""
    op, index = node.op, list(node.inputs[2:])
    if op.set_instead_of_inc or any(entry[0] != "slice" for entry in op.spec):
        return None
    found = None
    for axis, entry in enumerate(op.spec):
        parts = [index.pop(0) if present else None for present in entry[1:]]
        if entry == FULL:
            continue
        start, stop, step = (None if p is None else static_int(p) for p in parts)
        if found is not None or (parts[2] is not None and step != 1) or (parts[0] is not None and start is None) \
                or (parts[1] is not None and stop is None):
            return None
        start, stop = start or 0, np.inf if parts[1] is None else stop
        if start < 0 or stop < 0:
            return None
        found = (axis, start, stop)
    return found


def _increments(var: Variable) -> tuple[Variable, list, list] | None:
    """(zeros, increment nodes from the innermost, their intervals) of a chain of increments
    into zeros, else None."""
    nodes, intervals = [], []
    while var.owner is not None and isinstance(var.owner.op, IncSubtensor):
        interval = _interval(var.owner)
        if interval is None:
            return None
        nodes.insert(0, var.owner)
        intervals.insert(0, interval)
        var = var.owner.inputs[0]
    return (var, nodes, intervals) if nodes and is_zeros_like(var) else None


def _disjoint(intervals: list) -> bool:
    axes = {axis for axis, _, _ in intervals}
    spans = sorted((start, stop) for _, start, stop in intervals)
    return len(axes) == 1 and all(stop <= next_start for (_, stop), (next_start, _) in zip(spans, spans[1:]))


@register("disjoint_increments", phase="canonicalize", tags=("canonicalize", "shapes"), tracks=(Elemwise,))
def disjoint_increments(fgraph, node):
    """inc(zeros, a, s1) + inc(zeros, b, s2) -> inc(inc(zeros, a, s1), b, s2) for disjoint s1, s2."""
    if node.op != Elemwise("add") or len(node.inputs) != 2:
        return None
    chains = [_increments(v) for v in node.inputs]
    if None in chains:
        return None
    (zeros, _, first), (other_zeros, nodes, second) = chains
    out = node.outputs[0]
    if not (out.dtype == zeros.dtype == other_zeros.dtype and out.ndim == zeros.ndim == other_zeros.ndim
            and proven_equal(zeros, other_zeros) and _disjoint(first + second) and skippable(other_zeros, zeros)):
        return None
    chain = node.inputs[0]
    for increment in nodes:
        chain = increment.op(chain, *increment.inputs[1:])
    return {out: chain}
