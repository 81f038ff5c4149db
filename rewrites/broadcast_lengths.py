"""Equal shapes proven from broadcasting: ``proven_same_shape`` removes the ``sum_to`` and
``fill`` steps of gradients whose shapes the graph shows to be equal.

``shape_sources`` follows one shape source; an elementwise op over two sources (``y * log(p)``
with ``y`` and ``p`` of unknown lengths) stops it. Here each axis's length is the set of
lengths that broadcast into it: where evaluation succeeds, numpy's rule makes that axis the
one length of the set other than 1 (1 when the set is empty), whatever the order or
repetition. Two axes with the same set have the same length in every run that gets there, so
a ``sum_to`` between them sums nothing. Nothing is assumed about lengths the graph does not
tie together (a ``y`` that may have length 1 keeps its ``sum_to``).
"""

from __future__ import annotations

from rewrites.registry import register
from symscan.graph.basic import Constant, Variable
from symscan.graph.traversal import ancestors
from symscan.scan.checks import AfterChecks
from symscan.tensor.basic import constant, static_int
from symscan.tensor.broadcast import SumToShape
from symscan.tensor.elemwise import Cast, Elemwise
from symscan.tensor.gradient_markers import GradientMarker
from symscan.tensor.math import Dot, MatMul, Outer, Reduce
from symscan.tensor.shape import DimShuffle, MakeVector, Shape
from symscan.tensor.subtensor import INT, IncSubtensor, Subtensor

Lengths = tuple  # one frozenset per axis: the lengths (atoms) that broadcast into it
MAX_DEPTH = 48
"""How far up the graph a proof looks (gradient graphs tie shapes within a few ops)."""


def axis_lengths(var: Variable, depth: int = 0, memo: dict | None = None) -> Lengths:
    """``var``'s axes, each as the set of atoms that broadcast into it. An atom is a static
    length above 1, ``(v, axis)`` for an axis of a variable nothing more is known of, or
    ``(scalar, None)`` for a length computed by a scalar expression. ``memo`` keeps the
    answers of one proof (graphs are DAGs: without it, shared operands are walked again)."""
    memo = {} if memo is None else memo
    if var not in memo:
        derived = _derived(var, depth, memo) if var.owner is not None and depth < MAX_DEPTH else None
        if derived is None:
            derived = tuple(frozenset({(var, axis)}) for axis in range(var.ndim))
        memo[var] = tuple(_static(n) if n is not None else lengths for n, lengths in zip(var.type.shape, derived))
    return memo[var]


def _static(n: int) -> frozenset:
    return frozenset() if n == 1 else frozenset({n})


def _derived(var: Variable, depth: int, memo: dict) -> Lengths | None:
    op, inputs = var.owner.op, var.owner.inputs

    def lengths(v: Variable) -> Lengths:
        return axis_lengths(v, depth + 1, memo)

    if isinstance(op, (Elemwise, Cast)):
        return _broadcast([lengths(v) for v in inputs], var.ndim)
    if isinstance(op, (GradientMarker, AfterChecks, IncSubtensor)):
        return lengths(inputs[0])
    if isinstance(op, SumToShape):
        if not op.from_shape:
            return lengths(inputs[1])
        vector = inputs[1].owner
        if vector is None or not isinstance(vector.op, MakeVector):
            return None
        return tuple(scalar_lengths(v, depth + 1, memo) for v in vector.inputs)
    if isinstance(op, DimShuffle):
        source = lengths(inputs[0])
        return tuple(frozenset() if axis == "x" else source[axis] for axis in op.new_order)
    if isinstance(op, Reduce):
        source, axes = lengths(inputs[0]), range(inputs[0].ndim) if op.axis is None else op.axis
        return tuple(frozenset() if i in axes else atoms for i, atoms in enumerate(source)
                     if op.keepdims or i not in axes)
    if isinstance(op, (Dot, MatMul, Outer)):
        return _product(op, inputs, [lengths(v) for v in inputs])
    return None


def _broadcast(operands: list[Lengths], ndim: int) -> Lengths:
    """Each axis: the union of the operands' sets for it (right-aligned, as numpy aligns)."""
    axes = []
    for axis in range(ndim):
        atoms = frozenset()
        for lengths in operands:
            k = axis - (ndim - len(lengths))
            if k >= 0:
                atoms |= lengths[k]
        axes.append(atoms)
    return tuple(axes)


def _product(op, inputs: list, operands: list[Lengths]) -> Lengths | None:
    """A product's axes from its operands' (as ``shape_sources._product_lengths``)."""
    if isinstance(op, Outer):
        return (operands[0][0], operands[1][0]) if all(v.ndim == 1 for v in inputs) else None
    (a, b), (la, lb) = inputs, operands
    if a.ndim > 2 and b.ndim == 2:
        return la[:-1] + lb[1:]
    if not all(1 <= v.ndim <= 2 for v in inputs):
        return None
    return (la[:1] if a.ndim == 2 else ()) + (lb[1:] if b.ndim == 2 else ())


def scalar_lengths(length: Variable, depth: int = 0, memo: dict | None = None) -> frozenset:
    """The atoms of a length given as a 0-d integer: a constant, ``shape(v)[i]``, the
    ``maximum`` of lengths (how ``shape_sources.computed_shape`` writes a broadcast length:
    the same as the broadcast unless a length is 0 and another 1, where it is wrong and the
    graph without the computed shape gives the broadcast), or itself."""
    if isinstance(length, Constant):
        value = static_int(length)
        if value is not None:
            return _static(value)
    node = length.owner
    if node is not None and node.op == Elemwise("maximum") and length.ndim == 0 and length.dtype == "int64":
        return frozenset().union(*(scalar_lengths(v, depth + 1, memo) for v in node.inputs))
    if (node is not None and isinstance(node.op, Subtensor) and node.op.spec == (INT,)
            and node.inputs[0].owner is not None and isinstance(node.inputs[0].owner.op, Shape)):
        axis, measured = static_int(node.inputs[1]), node.inputs[0].owner.inputs[0]
        if axis is not None and -measured.ndim <= axis < measured.ndim:
            return axis_lengths(measured, depth, memo)[axis]
    return frozenset({(length, None)})


def proven_equal(a: Variable, b: Variable) -> bool:
    """Whether ``a`` and ``b`` have the same shape in every run that computes both."""
    memo = {}
    return a.ndim == b.ndim and axis_lengths(a, memo=memo) == axis_lengths(b, memo=memo)


def _covers(a: Variable, b: Variable) -> bool:
    """Whether broadcasting ``b`` against ``a`` gives ``b``'s shape: ``a``'s atoms are among
    ``b``'s on every axis (then ``a`` broadcasts into ``b`` whenever ``b`` is computed)."""
    if a.ndim > b.ndim:
        return False
    memo = {}
    la, lb = axis_lengths(a, memo=memo), axis_lengths(b, memo=memo)
    return all(atoms <= lb[b.ndim - a.ndim + k] for k, atoms in enumerate(la))


@register("proven_same_shape", phase="canonicalize", tags=("canonicalize", "shapes"),
          tracks=(SumToShape, Elemwise, Shape, Subtensor))
def proven_same_shape(fgraph, node):
    """sum_to(x, like) -> x when x has like's shape; second(a, b) -> b when a broadcasts into b;
    shape(x) -> shape(u) when u is the operand of elementwise x that all others broadcast into;
    shape(dimshuffle(x))[i] -> shape(x)[j] (or 1)."""
    out = node.outputs[0]
    if isinstance(node.op, Subtensor):
        return _transposed_length(node)
    if isinstance(node.op, SumToShape):
        x = node.inputs[0]
        return {out: x} if x.type.dtype == out.type.dtype and proven_equal(x, out) else None
    if isinstance(node.op, Shape):
        source = _shape_operand(node.inputs[0])
        return None if source is None else {out: Shape()(source)}
    if node.op == Elemwise("second"):
        a, b = node.inputs
        if b.type.dtype == out.type.dtype and b.ndim == out.ndim and _covers(a, b) and skippable(a, b):
            return {out: b}
    return None


def skippable(dropped: Variable, kept: Variable) -> bool:
    """Whether not computing ``dropped`` loses no error where ``kept`` is computed: what it
    computes beyond kept's ancestors is elementwise work with floating results (numpy warns,
    never raises, there), casts, and dimshuffles that drop no axis of unknown length.
    Broadcasting in it cannot fail: the proofs that call this show its lengths among kept's,
    which broadcast together."""
    computed, stack, seen = set(ancestors([kept])), [dropped], set()
    while stack:
        var = stack.pop()
        if var in computed or var.owner is None or var in seen:
            continue
        seen.add(var)
        if len(seen) > 64 or not _cannot_raise(var):
            return False
        stack.extend(var.owner.inputs)
    return True


def _cannot_raise(var: Variable) -> bool:
    """Computing ``var`` from its inputs raises nothing but broadcasting errors."""
    op = var.owner.op
    return (isinstance(op, (Cast, GradientMarker)) or _checks_nothing(var) or op == Elemwise("second")
            or isinstance(op, Elemwise) and all(o.dtype[0] in "fc" for o in var.owner.outputs))


def _checks_nothing(var: Variable) -> bool:
    """A dimshuffle that drops no axis of unknown length (dropping one checks it is 1 at run time)."""
    node = var.owner
    return isinstance(node.op, DimShuffle) and all(node.inputs[0].type.shape[a] == 1 for a in node.op.dropped)


def _transposed_length(node) -> dict | None:
    """shape(dimshuffle(x))[i]: the length of x's axis that dimshuffle put at i (1 for a new
    axis), where the dimshuffle cannot fail (``_checks_nothing``)."""
    if node.op.spec != (INT,) or node.inputs[0].owner is None or not isinstance(node.inputs[0].owner.op, Shape):
        return None
    shuffled, axis = node.inputs[0].owner.inputs[0], static_int(node.inputs[1])
    if shuffled.owner is None or not _checks_nothing(shuffled) or axis is None \
            or not -shuffled.ndim <= axis < shuffled.ndim:
        return None
    source = shuffled.owner.op.new_order[axis]
    out = node.outputs[0]
    if source == "x":
        return {out: constant(1, dtype=out.dtype)}
    return {out: Shape()(shuffled.owner.inputs[0])[source]}


def _shape_operand(x: Variable) -> Variable | None:
    """The operand of elementwise ``x`` with x's shape, when every other operand broadcasts into
    it and computing x could not fail where that operand is computed (``shape(zeros_like(w))``
    is ``shape(w)``)."""
    if x.owner is None or not isinstance(x.owner.op, (Elemwise, Cast)):
        return None
    for u in x.owner.inputs:
        if u.ndim == x.ndim and all(v is u or _covers(v, u) for v in x.owner.inputs) and skippable(x, u):
            return u
    return None
