"""Lowerings of the ops that replace loops (symscan.scan.recurrences, symscan.scan.checks).

A running sum over a stacked operand is ONNX's ``CumSum`` over the initial row and the
operand. ONNX has no accumulate for the other ops and no parallel prefix, so those lower the
scan they stand for (``op.expand``), which the Scan lowering turns into an ONNX Scan or Loop.
The checks these graphs carry are lowered in ``symscan.onnx.checks``.
"""

from __future__ import annotations

import numpy as np

from symscan.graph.fg import FunctionGraph
from symscan.onnx.context import Lowering, lowers
from symscan.onnx.tensor_ops import unsqueeze
from symscan.scan.recurrences import Accumulate, LinearRecurrence

CUMSUM_DTYPES = ("float32", "float64", "int32", "int64", "uint32", "uint64")


@lowers(Accumulate, LinearRecurrence)
def lower_recurrence(ctx: Lowering, node, ins: list[str]) -> list[str]:
    op = node.op
    if isinstance(op, Accumulate) and op.op == "add" and op.per_step and node.outputs[0].dtype in CUMSUM_DTYPES:
        return [_cumsum(ctx, node, ins)]
    return lower_by_expansion(ctx, node, ins)


def _cumsum(ctx: Lowering, node, ins: list[str]) -> str:
    """CumSum over ``[initial, values...]`` (the operand broadcast to the rows' shape first,
    unless the types show it has that shape)."""
    op = node.op
    initial, values = ins[0], ins[1]
    row, operand_row = node.inputs[0].type.shape, node.inputs[1].type.shape[1:]
    if None in row or row != operand_row:  # the operand may broadcast to the rows' shape
        rows_shape = ctx.op1("Concat", [ctx.op1("Slice", [ctx.op1("Shape", [values]), ctx.ints([0]), ctx.ints([1])]),
                                        ctx.op1("Shape", [initial])], axis=0)
        values = ctx.op1("Expand", [values, rows_shape])
    stacked = ctx.op1("Concat", [unsqueeze(ctx, initial, [0]), values], axis=0)
    rows = ctx.op1("CumSum", [stacked, ctx.const(np.asarray(0, "int64"))])
    return ctx.op1("Gather", [rows, ctx.const(np.asarray(-1, "int64"))], axis=0) if op.last else rows


def lower_by_expansion(ctx: Lowering, node, ins: list[str]) -> list[str]:
    inputs = [v.type.make_variable(name=v.name) for v in node.inputs]
    outputs = [node.op.expand(*inputs)]
    return ctx.graph(FunctionGraph(inputs, outputs, clone=False), ins)
