"""Which nodes of a graph are shape and check bookkeeping, folded away by default.

A node is *plumbing* when it reads shapes (``Shape``, ``StepCount``), when it is an integer
scalar or short shape vector computed only from plumbing and constants (``x.shape[0] - 1``,
``MakeVector``), or when its value is read only for its shape or as a check (an argument
of ``Reshape``'s shape, ``SumToShape``'s ``like``, ``AfterChecks``'s checks). Integers the
user computed from data or constants alone (``arange(n)``, ``argmax(x)``) stay visible.

*Pass-through* ops (a check returning its input, ``SumToShape``) are drawn as a label on
the edge of the value flowing through them, when that value is used as data.
"""

from __future__ import annotations

from collections.abc import Iterable

from symscan.graph.basic import Apply, Constant, Variable
from symscan.scan.checks import AfterChecks, CheckRowShape, CheckSequenceLength, CheckStepShape, InitialRows, StepCount
from symscan.tensor.assertion import Assert
from symscan.tensor.broadcast import SumToShape
from symscan.tensor.creation import Alloc
from symscan.tensor.gradient_markers import GradientMarker
from symscan.tensor.shape import Reshape, Shape, SpecifyShape

SHAPE_READERS = (Shape, StepCount)

# op class -> edge label of the data input (inputs[0]) that flows through it
PASS_THROUGH = {
    SumToShape: "sum_to", Assert: "checked", CheckSequenceLength: "checked", CheckRowShape: "checked",
    CheckStepShape: "checked", AfterChecks: "checked", SpecifyShape: "shape checked", InitialRows: "initial rows",
    GradientMarker: "",
}


def pass_through_label(node: Apply) -> str | None:
    """The edge label of a pass-through node (None: not one)."""
    for cls, label in PASS_THROUGH.items():
        if isinstance(node.op, cls):
            return label or str(node.op)
    return None


def is_shape_slot(node: Apply, position: int) -> bool:
    """Whether ``node`` reads its input ``position`` only for a shape, a length or a check."""
    op = node.op
    if isinstance(op, SHAPE_READERS):
        return True
    if isinstance(op, (SumToShape, Reshape, SpecifyShape, Assert, AfterChecks, CheckRowShape, CheckStepShape, Alloc)):
        return position > 0
    return False  # a loop's step count stays drawn when the user gave it (n_steps=k)


def _is_small_int(var: Variable) -> bool:
    dtype = getattr(var.type, "dtype", "")
    shape = getattr(var.type, "shape", None)
    if not dtype or dtype[0] not in "iub" or shape is None:
        return False
    return len(shape) == 0 or (len(shape) == 1 and shape[0] is not None and shape[0] <= 8)


def plumbing_nodes(nodes: list[Apply], outputs: list[Variable], roots: Iterable[Variable] = ()) -> set[Apply]:
    """The plumbing among ``nodes`` (a topological order), never one producing ``outputs``;
    ``roots`` are variables known to be plumbing (a loop body's inputs fed by folded values)."""
    kept = {v.owner for v in outputs if v.owner is not None}
    clients: dict[Variable, list[tuple[Apply, int]]] = {}
    for node in nodes:
        for i, var in enumerate(node.inputs):
            clients.setdefault(var, []).append((node, i))
    folded: set[Apply] = set()
    plumbing_roots = set(roots)
    changed = True
    while changed:
        changed = False
        for node in nodes:
            if node not in folded and node not in kept and _forward(node, folded, plumbing_roots):
                folded.add(node)
                changed = True
        for node in reversed(nodes):
            if node not in folded and node not in kept and _backward(node, folded, clients):
                folded.add(node)
                changed = True
    return folded


def _forward(node: Apply, folded: set[Apply], roots: set[Variable]) -> bool:
    if isinstance(node.op, SHAPE_READERS):
        return True
    if not node.outputs or not all(_is_small_int(v) for v in node.outputs):
        return False
    plumbing = [v in roots or v.owner in folded for v in node.inputs]
    return any(plumbing) and all(p or isinstance(v, Constant) for p, v in zip(plumbing, node.inputs))


def _backward(node: Apply, folded: set[Apply], clients: dict) -> bool:
    """Read only for its shape or as a check (by plumbing, or in shape slots)."""
    if getattr(node.op, "inner", None) is not None:
        return False
    uses = [use for out in node.outputs for use in clients.get(out, [])]
    return bool(uses) and all(reader in folded or is_shape_slot(reader, i) for reader, i in uses)
