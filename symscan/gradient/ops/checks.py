"""Pullbacks of scan's run-time check ops (the value passes through, the check inputs are
disconnected) and of the recurrence ops the vectorize rewrites make (no gradient: they appear after grad ran)."""

from __future__ import annotations

from symscan.gradient.registry import connections, pullback
from symscan.gradient.types import grad_not_implemented
from symscan.scan.checks import (
    AfterChecks,
    CheckRowShape,
    CheckSequenceLength,
    CheckStepShape,
    InitialRows,
    StepCount,
)
from symscan.scan.recurrences import Accumulate, LinearRecurrence
from symscan.tensor.creation import zeros_like
from symscan.tensor.subtensor import inc_subtensor


@connections(CheckRowShape, CheckStepShape, AfterChecks)
def value_connections(node):
    return [[i == 0] for i in range(len(node.inputs))]


@pullback(CheckSequenceLength, CheckStepShape, AfterChecks)
def pass_through_pullback(node, cotangents):
    (g,) = cotangents
    return [g] + [None] * (len(node.inputs) - 1)


@pullback(CheckRowShape)
def check_row_shape_pullback(node, cotangents):
    """The value passes through, so g goes to it. Not handled: with zero steps a value that
    does not fit the row comes out as zeros of another shape, whose gradient is zeros of the
    value's shape. The node feeds a recurrence op (built when a function is compiled), which
    has no gradient, so grad does not reach it there."""
    (g,) = cotangents
    return [g, None, None]


@pullback(InitialRows)
def initial_rows_pullback(node, cotangents):
    """The rows are the first ``span`` rows of the initial value (a sit-sot's value is its
    one row): g goes back there, and the rows past them get zeros."""
    (g,), (initial,), op = cotangents, node.inputs, node.op
    if op.sit_sot:
        return [g[0]]
    return [inc_subtensor(zeros_like(initial, dtype=g.dtype)[:op.span], g)]


@connections(StepCount)
def step_count_connections(node):
    return [[i == 0] for i in range(len(node.inputs))]  # the sequences give only their lengths


@pullback(StepCount)
def step_count_pullback(node, cotangents):
    return [None] * len(node.inputs)  # an integer output: grad takes n_steps' (connected) None as zero


@pullback(Accumulate, LinearRecurrence)
def recurrence_pullback(node, cotangents):
    """These ops are made by the vectorize rewrites, which run when a function is compiled,
    after ``grad`` has built its graph from the scan; met here, a graph was rewritten first."""
    why = (f"{type(node.op).__name__} replaces a scan loop when a function is compiled; take gradients of the "
           "graph as built (from its scan), not of a rewritten one")
    return [grad_not_implemented(node.op, i, x, why) for i, x in enumerate(node.inputs)]
