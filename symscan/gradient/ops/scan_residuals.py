"""Which forward values a loop's reverse step reads from a recording instead of computing them
again (JAX's residuals): products and linear algebra the forward step computes.

A value is worth a trace-sized array when it is costly (work superlinear in its size), varies
from step to step (a loop-invariant product is hoisted out of the reverse loop by the rewrites,
for one matrix instead of T), and has the same shape at every step (a recording is one array of
rows: ``M[:k]`` with a per-step k could not be recorded, and recording it would turn a working
gradient into an error). Each is recorded at the end of the elementwise chain that alone reads
it, so an LSTM's ``x W + h U + b`` is one recording, not two products.
"""

from __future__ import annotations

from symscan.graph.basic import Variable
from symscan.graph.traversal import ancestors, toposort
from symscan.tensor.broadcast import SumToShape
from symscan.tensor.composite import Composite
from symscan.tensor.elemwise import Elemwise
from symscan.tensor.linalg.matrix_functions import Expm
from symscan.tensor.linalg.solvers import Cholesky, ChoSolve, Det, MatrixInverse, Solve, SolveTriangular
from symscan.tensor.math import Dot, MatMul
from symscan.tensor.shape import DimShuffle, Reshape, Shape
from symscan.tensor.subtensor import IncSubtensor, Subtensor

COSTLY_OPS = (Dot, MatMul, MatrixInverse, Solve, SolveTriangular, ChoSolve, Cholesky, Det, Expm)
"""Single-output ops whose work is superlinear in what they produce (a multi-output op, a QR,
would still run in the reverse step for its other outputs)."""

SHAPE_OF_INPUT_SHAPES = (Elemwise, Composite, DimShuffle) + COSTLY_OPS
"""Ops whose output shape follows from their inputs' shapes alone."""

INDEXED = {Subtensor: 1, IncSubtensor: 2, Reshape: 1}
"""Ops whose output shape also follows from the values of their inputs from this position on."""


def values_to_record(outputs: list, forward_of: dict, per_step: set) -> list[Variable]:
    """The reverse body's variables (among ``outputs``' ancestors) to read from a recording.

    ``forward_of`` maps the body's copies of forward values to the forward's own: only those are
    recorded, values the forward computes at every step anyway (no new error can arise).
    ``per_step``: the copies of the forward's sequence taps and past states."""
    nodes = toposort(outputs)
    readers: dict = {}
    for node in nodes:
        for v in _value_inputs(node):
            readers.setdefault(v, []).append(node)
    values_read = set(outputs)  # the values computed for their values, not only their shapes
    for node in reversed(nodes):
        if values_read.intersection(node.outputs):
            values_read.update(_value_inputs(node))
    ends, body_outputs = [], set(outputs)
    for node in nodes:
        if isinstance(node.op, COSTLY_OPS) and len(node.outputs) == 1 and node.outputs[0] in forward_of:
            end = _chain_end(node.outputs[0], readers, forward_of, body_outputs)
            if end in values_read and per_step & set(ancestors([end])) and _same_shape_every_step(end, per_step):
                ends.append(end)
    return list(dict.fromkeys(ends))


def _value_inputs(node) -> list:
    """The inputs whose values ``node`` reads: not those it reads only the shape of (the
    rewrites compute such shapes from the operands' shapes)."""
    if isinstance(node.op, Shape):
        return []
    if isinstance(node.op, SumToShape) and not node.op.from_shape:
        return node.inputs[:1]
    return node.inputs


def _chain_end(var: Variable, readers: dict, forward_of: dict, outputs: set) -> Variable:
    """Follow ``var`` through forward elementwise ops that are its only reader (reads of its
    shape aside) and keep its number of dimensions; the last value of that chain."""
    while var not in outputs:
        users = list(dict.fromkeys(readers.get(var, [])))
        if len(users) != 1 or not isinstance(users[0].op, Elemwise) or len(users[0].outputs) != 1:
            return var
        out = users[0].outputs[0]
        if out not in forward_of or out.ndim != var.ndim:
            return var
        var = out
    return var


def _same_shape_every_step(var: Variable, per_step: set) -> bool:
    """Whether ``var``'s shape is the same at every step: computed from the step's inputs (rows
    of one shape each) by ops whose shape follows from their inputs' shapes, and from index or
    shape values that do not change from step to step."""
    for node in toposort([var], stop_at=per_step):
        if isinstance(node.op, SHAPE_OF_INPUT_SHAPES):
            continue
        first = INDEXED.get(type(node.op))
        if first is None or per_step & set(ancestors(node.inputs[first:])):
            return False
    return True
