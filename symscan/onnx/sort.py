"""ONNX lowerings of sort and argsort: ``TopK`` with ``largest=0, sorted=1`` and k the axis
length. TopK breaks ties by the lower index, which is numpy's stable order, and onnxruntime
puts NaN last as numpy does (tests check both). It has no uint64 or complex kernels; the
narrow ints, bools and float16 sort in a wider dtype that holds them exactly."""

from __future__ import annotations

import numpy as np

from symscan.graph.basic import describe
from symscan.onnx.context import ExportError, Lowering, lowers
from symscan.tensor.sort import ArgSort, Sort
from symscan.tensor.unique import Unique

TOPK_DTYPES = ("float32", "float64", "int32", "int64")


def _work_dtype(node) -> str:
    """The dtype TopK sorts in, holding every value of the input exactly, in the same order."""
    dtype = node.inputs[0].dtype
    if dtype in TOPK_DTYPES:
        return dtype
    if dtype == "float16":
        return "float32"
    if dtype == "bool" or (np.dtype(dtype).kind in "iu" and np.dtype(dtype).itemsize < 8):
        return "int64"
    raise ExportError(f"{node.op} of {describe(node.inputs[0])} has no ONNX lowering: TopK sorts floats and ints "
                      "that fit an int64; cast it first (e.g. uint64 values below 2**63 to int64)")


@lowers(Sort, ArgSort)
def lower_sort(ctx: Lowering, node, ins: list[str]) -> list[str]:
    x, work = node.inputs[0], _work_dtype(node)
    value, axis = ctx.cast(ins[0], x.dtype, work), node.op.axis
    if axis is None:
        value, axis = ctx.op1("Reshape", [value, ctx.ints([-1])]), 0
    k = ctx.op1("Slice", [ctx.op1("Shape", [value]), ctx.ints([axis]), ctx.ints([axis + 1])])
    values, indices = ctx.op("TopK", [value, k], 2, axis=axis, largest=0, sorted=1)
    if isinstance(node.op, ArgSort):
        return [indices]
    return [ctx.cast(values, work, x.dtype)]


@lowers(Unique)
def lower_unique(ctx: Lowering, node, ins: list[str]) -> list[str]:
    """ONNX ``Unique`` (sorted) of the flattened input, for integers (in int64, where onnxruntime
    has its kernel). Floats are refused: onnxruntime's Unique merges NaN into other values."""
    x, op = node.inputs[0], node.op
    if not (x.dtype == "bool" or np.dtype(x.dtype).kind in "iu") or x.dtype == "uint64":
        raise ExportError(f"{op} of {describe(x)} has no ONNX lowering: onnxruntime's Unique takes integers here "
                          "(its float kernel merges NaN into other values, which would be a wrong model)")
    flat = ctx.op1("Reshape", [ctx.cast(ins[0], x.dtype, "int64"), ctx.ints([-1])])
    values, index, inverse, counts = ctx.op("Unique", [flat], 4, sorted=1)
    if op.return_inverse:
        inverse = ctx.op1("Reshape", [inverse, ctx.op1("Shape", [ins[0]])])
    wanted = [(index, op.return_index), (inverse, op.return_inverse), (counts, op.return_counts)]
    return [ctx.cast(values, "int64", x.dtype)] + [name for name, flag in wanted if flag]
