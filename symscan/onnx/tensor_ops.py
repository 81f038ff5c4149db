"""ONNX lowerings of the tensor ops: elementwise, math, shape and creation.

numpy computes in the result dtype, ONNX ops want equal input types: inputs are cast to the
dtype numpy computes in. onnxruntime implements most ops for float32/float64/int32/int64
only, so other dtypes compute in a wider one and are cast back (wrap-around included).
"""

from __future__ import annotations

import numpy as np

from symscan.graph.basic import describe
from symscan.onnx.context import ExportError, Lowering, lowers, onnx_type
from symscan.scan.checks import CheckSequenceLength
from symscan.tensor.creation import Alloc, Arange, Eye
from symscan.tensor.elemwise import Cast, Elemwise
from symscan.tensor.math import ArgReduce, CumOp, Dot, MatMul, Outer, Reduce
from symscan.tensor.random import RandomVariable
from symscan.tensor.shape import DimShuffle, Flatten, Join, MakeVector, Reshape, Shape

NATIVE = ("float32", "float64", "int32", "int64")


def compute_dtype(dtype: str) -> str:
    """The dtype onnxruntime computes ``dtype`` arithmetic in."""
    if dtype in NATIVE or dtype == "bool":
        return dtype
    return "float32" if dtype == "float16" else "int64"


def as_dtype(ctx: Lowering, name: str, var, dtype: str) -> str:
    return ctx.cast(name, var.dtype, dtype)


# ---------------------------------------------------------------------------- elementwise
BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "true_div": "Div", "pow": "Pow", "maximum": "Max",
          "minimum": "Min"}
UNARY_FLOAT = {"exp": "Exp", "log": "Log", "sqrt": "Sqrt", "sin": "Sin", "cos": "Cos", "tan": "Tan",
               "tanh": "Tanh", "sigmoid": "Sigmoid", "softplus": "Softplus", "erf": "Erf"}
COMPARE = {"eq": "Equal", "lt": "Less", "le": "LessOrEqual", "gt": "Greater", "ge": "GreaterOrEqual"}
BOOL_ARITHMETIC = {"add": "Or", "mul": "And", "maximum": "Or", "minimum": "And"}


@lowers(Elemwise)
def lower_elemwise(ctx: Lowering, node, ins: list[str]) -> list[str]:
    name, out = node.op.name, node.outputs[0]
    if name in COMPARE or name == "neq":
        common = np.result_type(*[v.dtype for v in node.inputs]).name
        work = compute_dtype(common)
        args = [as_dtype(ctx, n, v, work) for n, v in zip(ins, node.inputs)]
        result = ctx.op1(COMPARE.get(name, "Equal"), args)
        return [ctx.op1("Not", [result]) if name == "neq" else result]
    if name == "switch":
        cond = as_dtype(ctx, ins[0], node.inputs[0], "bool")
        a, b = (as_dtype(ctx, n, v, out.dtype) for n, v in zip(ins[1:], node.inputs[1:]))
        return [ctx.op1("Where", [cond, a, b])]
    if name == "second":
        return [ctx.op1("Expand", [as_dtype(ctx, ins[1], node.inputs[1], out.dtype), ctx.op1("Shape", [ins[0]])])]
    work = compute_dtype(out.dtype)
    args = [as_dtype(ctx, n, v, work) for n, v in zip(ins, node.inputs)]
    result = _arithmetic(ctx, node, name, args, work)
    return [ctx.cast(result, work, out.dtype)]


def _arithmetic(ctx: Lowering, node, name: str, args: list[str], dtype: str) -> str:
    if dtype == "bool":
        if name in BOOL_ARITHMETIC:
            return ctx.op1(BOOL_ARITHMETIC[name], args)
        if name in ("and_", "or_", "xor"):
            return ctx.op1({"and_": "And", "or_": "Or", "xor": "Xor"}[name], args)
        if name == "invert":
            return ctx.op1("Not", args)
        if name in ("abs", "floor", "ceil", "round"):
            return args[0]
        return ctx.cast(_arithmetic(ctx, node, name, [ctx.cast(a, "bool", "int64") for a in args], "int64"),
                        "int64", "bool")
    integer = np.dtype(dtype).kind in "iu"
    if name in BINARY:
        return ctx.op1(BINARY[name], args)
    if name in UNARY_FLOAT:
        return ctx.op1(UNARY_FLOAT[name], args)
    if name in ("neg", "abs", "sign"):
        return ctx.op1({"neg": "Neg", "abs": "Abs", "sign": "Sign"}[name], args)
    if name in ("floor", "ceil", "round"):
        return args[0] if integer else ctx.op1(name.capitalize(), args)
    if name == "log1p":
        return ctx.op1("Log", [ctx.op1("Add", [args[0], ctx.const(np.ones((), dtype))])])
    if name == "expm1":
        return ctx.op1("Sub", [ctx.op1("Exp", args), ctx.const(np.ones((), dtype))])
    if name == "clip":
        return ctx.op1("Min", [ctx.op1("Max", [args[0], args[1]]), args[2]])
    if name == "mod":
        return _mod(ctx, args, integer, dtype)
    if name == "floor_div":
        if integer:  # exact: (a - a mod b) / b, with numpy's (Python's) sign of the modulo
            return ctx.op1("Div", [ctx.op1("Sub", [args[0], _mod(ctx, args, True, dtype)]), args[1]])
        return ctx.op1("Floor", [ctx.op1("Div", args)])
    if name in ("and_", "or_", "xor", "invert"):
        if ctx.opset < 18:
            raise ExportError(f"bitwise {name} on integers needs opset 18 or newer (the export uses {ctx.opset})")
        op = {"and_": "BitwiseAnd", "or_": "BitwiseOr", "xor": "BitwiseXor", "invert": "BitwiseNot"}[name]
        return ctx.op1(op, args)
    raise ExportError(f"{node.op} has no ONNX lowering (it computes {describe(node.outputs[0])})")


def _mod(ctx: Lowering, args: list[str], integer: bool, dtype: str) -> str:
    """numpy's modulo: the sign of the divisor (ONNX Mod with fmod=0 for ints; floats adjusted)."""
    if integer:
        return ctx.op1("Mod", args, fmod=0)
    a, b = args
    r = ctx.op1("Mod", [a, b], fmod=1)
    zero = ctx.const(np.zeros((), dtype))
    differs = ctx.op1("Xor", [ctx.op1("Less", [r, zero]), ctx.op1("Less", [b, zero])])
    adjust = ctx.op1("And", [ctx.op1("Not", [ctx.op1("Equal", [r, zero])]), differs])
    return ctx.op1("Where", [adjust, ctx.op1("Add", [r, b]), r])


@lowers(Cast)
def lower_cast(ctx: Lowering, node, ins: list[str]) -> list[str]:
    return [ctx.op1("Cast", ins, to=onnx_type(node.op.dtype))]


# ---------------------------------------------------------------------------- math
def _product(ctx: Lowering, node, ins: list[str], build) -> list[str]:
    out = node.outputs[0]
    work = compute_dtype(out.dtype) if out.dtype != "bool" else "int64"
    args = [as_dtype(ctx, n, v, work) for n, v in zip(ins, node.inputs)]
    result = build(args)
    if out.dtype == "bool":
        return [ctx.op1("Greater", [result, ctx.const(np.zeros((), work))])]
    return [ctx.cast(result, work, out.dtype)]


@lowers(Dot)
def lower_dot(ctx: Lowering, node, ins: list[str]) -> list[str]:
    a, b = node.inputs
    if a.ndim == 0 or b.ndim == 0:
        return _product(ctx, node, ins, lambda args: ctx.op1("Mul", args))
    if b.ndim <= 2:  # numpy's dot is matmul when the second operand is a vector or a matrix
        return _product(ctx, node, ins, lambda args: ctx.op1("MatMul", args))
    letters = "abcdefghijklmnopqrstuvwxy"
    left = letters[:a.ndim - 1] + "z"
    right = letters[a.ndim - 1:a.ndim - 1 + b.ndim - 2]
    last = letters[a.ndim - 1 + b.ndim - 2]
    equation = f"{left},{right}z{last}->{left[:-1]}{right}{last}"
    return _product(ctx, node, ins, lambda args: ctx.op1("Einsum", args, equation=equation))


@lowers(MatMul)
def lower_matmul(ctx: Lowering, node, ins: list[str]) -> list[str]:
    return _product(ctx, node, ins, lambda args: ctx.op1("MatMul", args))


@lowers(Outer)
def lower_outer(ctx: Lowering, node, ins: list[str]) -> list[str]:
    def build(args):
        column = ctx.op1("Reshape", [args[0], ctx.ints([-1, 1])])
        row = ctx.op1("Reshape", [args[1], ctx.ints([1, -1])])
        return ctx.op1("Mul", [column, row])

    return _product(ctx, node, ins, build)


def reduce(ctx: Lowering, op_type: str, x: str, axes, keepdims: bool) -> str:
    """ONNX Reduce* over ``axes`` (None: all); axes are an input from opset 18 (13 for sum)."""
    as_input = ctx.opset >= (13 if op_type == "ReduceSum" else 18)
    if axes is None:
        return ctx.op1(op_type, [x], keepdims=int(keepdims))
    if as_input:
        return ctx.op1(op_type, [x, ctx.ints(list(axes))], keepdims=int(keepdims))
    return ctx.op1(op_type, [x], axes=list(axes), keepdims=int(keepdims))


@lowers(Reduce)
def lower_reduce(ctx: Lowering, node, ins: list[str]) -> list[str]:
    x, out, kind = node.inputs[0], node.outputs[0], node.op.kind
    if node.op.axis == ():
        return [ctx.cast(ins[0], x.dtype, out.dtype)]
    if kind in ("all", "any"):
        flags = ctx.cast(as_dtype(ctx, ins[0], x, "bool"), "bool", "int64")
        result = reduce(ctx, "ReduceMin" if kind == "all" else "ReduceMax", flags, node.op.axis, node.op.keepdims)
        return [ctx.cast(result, "int64", "bool")]
    work = compute_dtype(out.dtype) if out.dtype != "bool" else "int64"
    value = as_dtype(ctx, ins[0], x, work)
    op_type = {"sum": "ReduceSum", "prod": "ReduceProd", "max": "ReduceMax", "min": "ReduceMin",
               "mean": "ReduceMean"}[kind]
    if x.ndim == 0:
        return [ctx.cast(value, work, out.dtype)]
    return [ctx.cast(reduce(ctx, op_type, value, node.op.axis, node.op.keepdims), work, out.dtype)]


@lowers(ArgReduce)
def lower_argreduce(ctx: Lowering, node, ins: list[str]) -> list[str]:
    x = node.inputs[0]
    work = "float64" if x.dtype[0] in "fb" else "int64"
    value = as_dtype(ctx, ins[0], x, work)
    op_type = "ArgMax" if node.op.kind == "argmax" else "ArgMin"
    if node.op.axis is not None:
        return [ctx.op1(op_type, [value], axis=node.op.axis, keepdims=int(node.op.keepdims))]
    flat = ctx.op1("Reshape", [value, ctx.ints([-1])])
    result = ctx.op1(op_type, [flat], axis=0, keepdims=0)
    if node.op.keepdims:
        result = ctx.op1("Reshape", [result, ctx.ints([1] * x.ndim)])
    return [result]


@lowers(CumOp)
def lower_cumop(ctx: Lowering, node, ins: list[str]) -> list[str]:
    x, out = node.inputs[0], node.outputs[0]
    work = compute_dtype(out.dtype) if out.dtype != "bool" else "int64"
    value = as_dtype(ctx, ins[0], x, work)
    axis = node.op.axis
    if axis is None:
        value, axis = ctx.op1("Reshape", [value, ctx.ints([-1])]), 0
    if node.op.kind == "cumsum":
        result = ctx.op1("CumSum", [value, ctx.const(np.int64(axis))])
    else:
        result = _cumprod(ctx, value, axis, out.ndim, work)
    return [ctx.cast(result, work, out.dtype)]


def _cumprod(ctx: Lowering, value: str, axis: int, ndim: int, dtype: str) -> str:
    """No ONNX op computes it: a Scan multiplying a running product along ``axis``."""
    from onnx import helper

    perm = [axis] + [i for i in range(ndim) if i != axis]
    moved = ctx.op1("Transpose", [value], perm=perm) if axis else value
    body = Lowering(ctx.opset, ctx)
    state, element = body.fresh("running"), body.fresh("element")
    product = body.op1("Mul", [state, element])
    copy = body.op1("Identity", [product])
    info = [helper.make_tensor_value_info(n, onnx_type(dtype), None) for n in (state, element)]
    outs = [helper.make_tensor_value_info(n, onnx_type(dtype), None) for n in (product, copy)]
    graph = helper.make_graph(body.nodes, ctx.fresh("cumprod_body"), info, outs)
    first = ctx.op1("Gather", [moved, ctx.const(np.int64(0))], axis=0)
    ones = ctx.op1("Expand", [ctx.const(np.ones((), dtype)), ctx.op1("Shape", [first])])
    _, stacked = ctx.op("Scan", [ones, moved], 2, body=graph, num_scan_inputs=1)
    inverse = [perm.index(i) for i in range(ndim)]
    return ctx.op1("Transpose", [stacked], perm=inverse) if axis else stacked


# ---------------------------------------------------------------------------- shapes
@lowers(Shape)
def lower_shape(ctx: Lowering, node, ins: list[str]) -> list[str]:
    return [ctx.op1("Shape", ins)]


def unsqueeze(ctx: Lowering, x: str, axes: list[int]) -> str:
    if ctx.opset >= 13:
        return ctx.op1("Unsqueeze", [x, ctx.ints(axes)])
    return ctx.op1("Unsqueeze", [x], axes=axes)


def squeeze(ctx: Lowering, x: str, axes: list[int]) -> str:
    if ctx.opset >= 13:
        return ctx.op1("Squeeze", [x, ctx.ints(axes)])
    return ctx.op1("Squeeze", [x], axes=axes)


@lowers(MakeVector)
def lower_make_vector(ctx: Lowering, node, ins: list[str]) -> list[str]:
    if not ins:
        return [ctx.const(np.zeros(0, dtype=node.op.dtype))]
    parts = [unsqueeze(ctx, as_dtype(ctx, n, v, node.op.dtype), [0]) for n, v in zip(ins, node.inputs)]
    return [ctx.op1("Concat", parts, axis=0) if len(parts) > 1 else parts[0]]


@lowers(Reshape)
def lower_reshape(ctx: Lowering, node, ins: list[str]) -> list[str]:
    shape = as_dtype(ctx, ins[1], node.inputs[1], "int64")
    return [ctx.op1("Reshape", [ins[0], shape], allowzero=1)]


@lowers(DimShuffle)
def lower_dimshuffle(ctx: Lowering, node, ins: list[str]) -> list[str]:
    op, x = node.op, ins[0]
    if op.dropped:
        x = squeeze(ctx, x, list(op.dropped))
    kept = [a for a in range(op.input_ndim) if a not in op.dropped]
    order = [kept.index(a) for a in op.new_order if a != "x"]
    if order != sorted(order):
        x = ctx.op1("Transpose", [x], perm=order)
    new_axes = [i for i, a in enumerate(op.new_order) if a == "x"]
    return [unsqueeze(ctx, x, new_axes) if new_axes else ctx.op1("Identity", [x])]


@lowers(Flatten)
def lower_flatten(ctx: Lowering, node, ins: list[str]) -> list[str]:
    keep = node.op.ndim - 1
    shape = ctx.op1("Shape", ins)
    rest = reduce(ctx, "ReduceProd", ctx.op1("Slice", [shape, ctx.ints([keep]), ctx.ints([2 ** 62])]),
                  [0], True) if node.inputs[0].ndim > keep else ctx.ints([1])
    target = ctx.op1("Concat", [ctx.op1("Slice", [shape, ctx.ints([0]), ctx.ints([keep])]), rest], axis=0)
    return [ctx.op1("Reshape", [ins[0], target], allowzero=1)]


@lowers(Join)
def lower_join(ctx: Lowering, node, ins: list[str]) -> list[str]:
    dtype = node.outputs[0].dtype
    parts = [as_dtype(ctx, n, v, dtype) for n, v in zip(ins, node.inputs)]
    return [ctx.op1("Concat", parts, axis=node.op.axis)]


# ---------------------------------------------------------------------------- creation
def shape_from_scalars(ctx: Lowering, names: list[str], variables) -> str:
    if not names:
        return ctx.ints([])
    parts = [unsqueeze(ctx, as_dtype(ctx, n, v, "int64"), [0]) for n, v in zip(names, variables)]
    return ctx.op1("Concat", parts, axis=0) if len(parts) > 1 else parts[0]


@lowers(Alloc)
def lower_alloc(ctx: Lowering, node, ins: list[str]) -> list[str]:
    shape = shape_from_scalars(ctx, ins[1:], node.inputs[1:])
    return [ctx.op1("Expand", [ins[0], shape])]


@lowers(Arange)
def lower_arange(ctx: Lowering, node, ins: list[str]) -> list[str]:
    dtype = node.op.dtype
    work = dtype if dtype in ("float32", "float64", "int16", "int32", "int64") else "float64"
    args = [as_dtype(ctx, n, v, work) for n, v in zip(ins, node.inputs)]
    return [ctx.cast(ctx.op1("Range", args), work, dtype)]


@lowers(Eye)
def lower_eye(ctx: Lowering, node, ins: list[str]) -> list[str]:
    from symscan.tensor.basic import static_int

    k = static_int(node.inputs[2])
    if k is None:
        raise ExportError(f"eye with a diagonal offset known only at run time ({describe(node.inputs[2])}) has no "
                          "ONNX form (EyeLike takes k as an attribute); pass k as a Python int")
    shape = shape_from_scalars(ctx, ins[:2], node.inputs[:2])
    zeros = ctx.op1("ConstantOfShape", [shape])
    return [ctx.op1("EyeLike", [zeros], k=k, dtype=onnx_type(node.op.dtype))]


@lowers(CheckSequenceLength)
def lower_check(ctx: Lowering, node, ins: list[str]) -> list[str]:
    return [ctx.op1("Identity", ins)]  # ONNX cannot raise scan's error; a short sequence fails in the slice


@lowers(RandomVariable)
def lower_random(ctx: Lowering, node, ins: list[str]) -> list[str]:
    raise ExportError(f"{node.op} cannot be exported: its numpy generator stream has no ONNX equivalent "
                      "(ONNX random ops would draw other numbers and cannot advance a generator state); "
                      f"draw the values outside the exported function and pass them in ({describe(node.outputs[1])})")
