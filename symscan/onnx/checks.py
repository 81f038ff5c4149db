"""Lowerings of a scan's run-time checks (symscan.scan.checks) and the checks a loop makes.

ONNX has no op that raises; ``Lowering.guard`` makes the model fail with the check's message
in a node name, which mode "onnxruntime" raises as the ValueError modes "py" and "fast" raise.
The messages state the rule (the lengths and shapes are only known at run time).
"""

from __future__ import annotations

import numpy as np

from symscan.graph.basic import describe
from symscan.onnx.context import Lowering, lowers
from symscan.onnx.tensor_ops import as_dtype, unsqueeze
from symscan.scan.args import taps_span
from symscan.scan.checks import (
    AfterChecks,
    CheckRowShape,
    CheckSequenceLength,
    CheckStepShape,
    InitialRows,
    StepCount,
)
from symscan.tensor.assertion import Assert
from symscan.tensor.shape import SpecifyShape


# ---------------------------------------------------------------------------- the rules, as guards
def length_of(ctx: Lowering, data: str) -> str:
    """The leading dimension of ``data`` as an int64 scalar."""
    return ctx.op1("Gather", [ctx.op1("Shape", [data]), ctx.const(np.int64(0))])


def check_sequence(ctx: Lowering, value: str, dtype, data: str, steps: str, label: str, taps: tuple,
                   scan: str = "scan") -> str:
    """``value`` (of ``dtype``) once the sequence ``data`` holds ``steps`` (an int64 scalar)
    elements plus its taps' span."""
    span = taps_span(taps)
    ok = ctx.op1("GreaterOrEqual", [length_of(ctx, data), ctx.op1("Add", [steps, ctx.const(np.int64(span))])])
    return ctx.guard(value, dtype, ok, f"{scan}: {label or 'a sequence'} has fewer elements than n_steps + {span} "
                                       f"(taps {list(taps)}); pass a longer sequence or a smaller n_steps")


def check_initial_rows(ctx: Lowering, initial: str, dtype, label: str, taps: tuple, scan: str = "scan") -> str:
    """A mit-sot's initial value once it has the rows its taps need."""
    span = -min(taps)
    ok = ctx.op1("GreaterOrEqual", [length_of(ctx, initial), ctx.const(np.int64(span))])
    return ctx.guard(initial, dtype, ok, f"{scan}: {label or 'an output'} has fewer than {span} initial rows, "
                                         f"which taps {list(taps)} need")


def same_shape(ctx: Lowering, shape: str, expected: str) -> str:
    """A bool scalar: the int64 vectors ``shape`` and ``expected`` (of one length) are equal."""
    differ = ctx.op1("Not", [ctx.op1("Equal", [shape, expected])])
    count = ctx.op1("ReduceSum", [ctx.cast(differ, "bool", "int64")], keepdims=0)
    return ctx.op1("Equal", [count, ctx.const(np.int64(0))])


def title(name: str | None) -> str:
    return f"scan {name!r}" if name else "scan"


# ---------------------------------------------------------------------------- the check ops
@lowers(CheckSequenceLength)
def lower_check_sequence(ctx: Lowering, node, ins: list[str]) -> list[str]:
    op = node.op
    steps = ctx.const(np.int64(op.steps))
    return [check_sequence(ctx, ins[0], node.inputs[0].dtype, ins[0], steps, op.label, op.taps)]


@lowers(StepCount)
def lower_step_count(ctx: Lowering, node, ins: list[str]) -> list[str]:
    op, scan = node.op, title(node.op.name)
    steps = ctx.cast(ins[0], node.inputs[0].dtype, "int64")
    if op.steps_from_sequences:  # negative when a sequence is shorter than its taps' span
        if op.checks_nothing:
            return [steps]  # a length: never negative
        ok = ctx.op1("GreaterOrEqual", [steps, ctx.const(np.int64(0))])
        return [ctx.guard(steps, "int64", ok, f"{scan}: the sequences are shorter than their taps need")]
    steps = ctx.op1("Abs", [steps])
    for (label, taps), data in zip(op.sequences, ins[1:]):
        steps = check_sequence(ctx, steps, "int64", data, steps, label, taps, scan)
    return [steps]


@lowers(InitialRows)
def lower_initial_rows(ctx: Lowering, node, ins: list[str]) -> list[str]:
    op = node.op
    if op.sit_sot:
        return [unsqueeze(ctx, ins[0], [0])]
    checked = check_initial_rows(ctx, ins[0], node.inputs[0].dtype, op.label, op.taps, title(op.name))
    return [ctx.op1("Slice", [checked, ctx.ints([0]), ctx.ints([op.span])])]


@lowers(CheckRowShape)
def lower_check_row_shape(ctx: Lowering, node, ins: list[str]) -> list[str]:
    return [ctx.op1("Identity", [ins[0]])]  # not checked in ONNX: a row that does not fit fails later


@lowers(AfterChecks)
def lower_after_checks(ctx: Lowering, node, ins: list[str]) -> list[str]:
    """The value. The checks are its other inputs: guards, whose ``If`` nodes onnxruntime runs
    though nothing reads them (tests/scan/test_steps.py and test_remove_unused.py check it)."""
    return [ctx.op1("Identity", [ins[0]])]


@lowers(CheckStepShape)
def lower_check_step_shape(ctx: Lowering, node, ins: list[str]) -> list[str]:
    op, value = node.op, ins[0]
    if node.inputs[0].ndim == 0:
        return [ctx.op1("Identity", [value])]
    ok = same_shape(ctx, ctx.op1("Shape", [value]), ctx.op1("Shape", [ins[1]]))
    return [ctx.guard(value, node.inputs[0].dtype, ok, f"{title(op.name)}: {op.label or 'an output'} has its initial "
                                                       "state's shape, but fn returned another; fn must return the "
                                                       "same shape at every step")]


@lowers(SpecifyShape)
def lower_specify_shape(ctx: Lowering, node, ins: list[str]) -> list[str]:
    """The input once its shape is the one specified (the actual shape is not in the message)."""
    x, op = node.inputs[0], node.op
    ok = same_shape(ctx, ctx.op1("Shape", [ins[0]]), as_dtype(ctx, ins[1], node.inputs[1], "int64"))
    return [ctx.guard(ins[0], x.dtype, ok, f"{op.caller}: {describe(x)} does not have the shape specified; {op.fix}")]


@lowers(Assert)
def lower_assert(ctx: Lowering, node, ins: list[str]) -> list[str]:
    """A guard with the assert's message (``symscan.onnx.importer`` reads it back as an Assert)."""
    ok = ins[1]
    for cond in ins[2:]:
        ok = ctx.op1("And", [ok, cond])
    return [ctx.guard(ins[0], node.inputs[0].dtype, ok, node.op.message)]
