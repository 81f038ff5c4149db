"""Lowerings of the ops that replace loops (symscan.scan.recurrences, symscan.scan.checks).

ONNX has no accumulate for most ops and no parallel prefix, so those ops lower the scan they
stand for (``op.expand``), which the Scan lowering turns into an ONNX Scan or Loop. The
checks cannot raise in ONNX: they pass their value through.
"""

from __future__ import annotations

from symscan.graph.fg import FunctionGraph
from symscan.onnx.context import Lowering, lowers
from symscan.onnx.tensor_ops import unsqueeze
from symscan.scan.checks import CheckRowShape, InitialRows, StepCount
from symscan.scan.recurrences import Accumulate, LinearRecurrence


@lowers(Accumulate, LinearRecurrence)
def lower_by_expansion(ctx: Lowering, node, ins: list[str]) -> list[str]:
    inputs = [v.type.make_variable(name=v.name) for v in node.inputs]
    outputs = [node.op.expand(*inputs)]
    return ctx.graph(FunctionGraph(inputs, outputs, clone=False), ins)


@lowers(StepCount)
def lower_step_count(ctx: Lowering, node, ins: list[str]) -> list[str]:
    steps = ctx.cast(ins[0], node.inputs[0].dtype, "int64")
    return [steps if node.op.steps_from_sequences else ctx.op1("Abs", [steps])]


@lowers(InitialRows)
def lower_initial_rows(ctx: Lowering, node, ins: list[str]) -> list[str]:
    if node.op.sit_sot:
        return [unsqueeze(ctx, ins[0], [0])]
    return [ctx.op1("Slice", [ins[0], ctx.ints([0]), ctx.ints([node.op.span])])]


@lowers(CheckRowShape)
def lower_check_row_shape(ctx: Lowering, node, ins: list[str]) -> list[str]:
    return [ctx.op1("Identity", [ins[0]])]
