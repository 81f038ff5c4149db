"""ONNX lowerings of the tensor ops: elementwise, math, shape and creation.

numpy computes in the result dtype, ONNX ops want equal input types: inputs are cast to the
dtype numpy computes in. onnxruntime implements most ops for float32/float64/int32/int64
only, so other dtypes compute in a wider one and are cast back (wrap-around included).
"""

from __future__ import annotations

import numpy as np

from symscan.graph.basic import describe
from symscan.onnx.context import ExportError, Lowering, lowers, onnx_type
from symscan.tensor.broadcast import SumToShape
from symscan.tensor.creation import Alloc, Arange, Eye
from symscan.tensor.elemwise import Cast, Elemwise
from symscan.tensor.gradient_markers import GradientMarker
from symscan.tensor.linalg import Det
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
UNARY_FLOAT = {"exp": "Exp", "log": "Log", "sqrt": "Sqrt", "sin": "Sin", "cos": "Cos", "tanh": "Tanh"}
COMPARE = {"eq": "Equal", "lt": "Less", "le": "LessOrEqual", "gt": "Greater", "ge": "GreaterOrEqual"}
FLOAT32_ONLY = {"arcsin": "Asin", "arccos": "Acos", "arctan": "Atan", "arctanh": "Atanh"}
"""ONNX ops onnxruntime implements for float32 only: a float64 one is refused (a float32 model
would be less precise than the graph)."""
BOOL_ARITHMETIC = {"add": "Or", "mul": "And", "maximum": "Or", "minimum": "And"}


@lowers(Elemwise)
def lower_elemwise(ctx: Lowering, node, ins: list[str]) -> list[str]:
    name, out = node.op.name, node.outputs[0]
    if name in COMPARE or name == "neq":
        common = np.result_type(*[v.dtype for v in node.inputs]).name
        work = compute_dtype(common)
        if work == "bool" and name not in ("eq", "neq"):  # ONNX orders numbers only
            work = "int32"
        args = [as_dtype(ctx, n, v, work) for n, v in zip(ins, node.inputs)]
        result = ctx.op1(COMPARE.get(name, "Equal"), args)
        return [ctx.op1("Not", [result]) if name == "neq" else result]
    if name == "switch":  # onnxruntime's Where has no bool (nor int16, ...) branches
        cond = as_dtype(ctx, ins[0], node.inputs[0], "bool")
        work = "uint8" if out.dtype == "bool" else compute_dtype(out.dtype)
        a, b = (as_dtype(ctx, n, v, work) for n, v in zip(ins[1:], node.inputs[1:]))
        return [ctx.cast(ctx.op1("Where", [cond, a, b]), work, out.dtype)]
    if name in ("isnan", "isinf"):
        return [_float_test(ctx, name, ins[0], node.inputs[0])]
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
    if name == "pow" and integer:
        return _int_pow(ctx, args, dtype)
    if name in BINARY:
        return ctx.op1(BINARY[name], args)
    if name in UNARY_FLOAT:
        return ctx.op1(UNARY_FLOAT[name], args)
    if name == "tan":  # onnxruntime has Tan for float32 only
        return ctx.op1("Tan", args) if dtype != "float64" else ctx.op1("Div", [ctx.op1("Sin", args),
                                                                                 ctx.op1("Cos", args)])
    if name == "softplus":  # numpy's logaddexp(0, x): onnxruntime's Softplus is float32 only, log(1 + e) inexact
        x = args[0]
        tail = _log1p(ctx, ctx.op1("Exp", [ctx.op1("Neg", [ctx.op1("Abs", [x])])]), dtype)
        return ctx.op1("Add", [ctx.op1("Max", [x, ctx.const(np.zeros((), dtype))]), tail])
    if name == "logaddexp":
        return _logaddexp(ctx, *args, dtype)
    if name == "erf":
        return _erf(ctx, args[0], dtype)
    if name in FLOAT32_ONLY:
        if dtype != "float32":
            raise ExportError(f"{node.op} of {describe(node.inputs[0])}: onnxruntime implements ONNX "
                              f"{FLOAT32_ONLY[name]} for float32 only; cast the input with .astype('float32') to "
                              "export it in float32")
        return ctx.op1(FLOAT32_ONLY[name], args)
    if name == "sigmoid":  # as numpy's: onnxruntime's Sigmoid flushes the tail to 0 (float32: approximate)
        x, one = args[0], ctx.const(np.ones((), dtype))
        e = ctx.op1("Exp", [ctx.op1("Neg", [ctx.op1("Abs", [x])])])
        total = ctx.op1("Add", [one, e])
        return ctx.op1("Where", [ctx.op1("GreaterOrEqual", [x, ctx.const(np.zeros((), dtype))]),
                                 ctx.op1("Div", [one, total]), ctx.op1("Div", [e, total])])
    if name in ("neg", "abs", "sign"):
        return ctx.op1({"neg": "Neg", "abs": "Abs", "sign": "Sign"}[name], args)
    if name in ("floor", "ceil", "round"):
        return args[0] if integer else ctx.op1(name.capitalize(), args)
    if name == "log1p":
        return _log1p(ctx, args[0], dtype)
    if name == "expm1":
        return _expm1(ctx, args[0], dtype)
    if name == "clip":
        return ctx.op1("Min", [ctx.op1("Max", [args[0], args[1]]), args[2]])
    if name == "fmod":  # C's remainder, as ONNX's Mod with fmod=1 (for integers too)
        return ctx.op1("Mod", args, fmod=1)
    if name in ("mod", "floor_div"):
        quotient, modulo = (_int_divmod if integer else _float_divmod)(ctx, *args, dtype)
        return quotient if name == "floor_div" else modulo
    if name in ("and_", "or_", "xor", "invert"):
        if ctx.opset < 18:
            raise ExportError(f"bitwise {name} on integers needs opset 18 or newer (the export uses {ctx.opset})")
        op = {"and_": "BitwiseAnd", "or_": "BitwiseOr", "xor": "BitwiseXor", "invert": "BitwiseNot"}[name]
        return ctx.op1(op, args)
    raise ExportError(f"{node.op} has no ONNX lowering (it computes {describe(node.outputs[0])})")


def _float_test(ctx: Lowering, name: str, x: str, var) -> str:
    """IsNaN/IsInf on the input's own float dtype (not the bool result's); integers and bools are
    never NaN nor infinite: ``x != x`` is all False in x's shape."""
    x = as_dtype(ctx, x, var, compute_dtype(var.dtype))
    if np.dtype(var.dtype).kind != "f":
        return ctx.op1("Not", [ctx.op1("Equal", [x, x])])
    return ctx.op1({"isnan": "IsNaN", "isinf": "IsInf"}[name], [x])


def _logaddexp(ctx: Lowering, a: str, b: str, dtype: str) -> str:
    """numpy's: ``max + log1p(exp(-|a - b|))``, and ``a + log 2`` where a == b (infinities)."""
    tail = _log1p(ctx, ctx.op1("Exp", [ctx.op1("Neg", [ctx.op1("Abs", [ctx.op1("Sub", [a, b])])])]), dtype)
    equal = ctx.op1("Add", [a, ctx.const(np.array(np.log(2.0), dtype))])
    return ctx.op1("Where", [ctx.op1("Equal", [a, b]), equal, ctx.op1("Add", [ctx.op1("Max", [a, b]), tail])])


def _int_divmod(ctx: Lowering, a: str, b: str, dtype: str) -> tuple[str, str]:
    """numpy's integer // and % (the sign of the divisor). ``x // 0`` and ``x % 0`` are 0 and
    ``MIN // -1`` wraps to MIN, where onnxruntime's Div and Mod fail (or kill the process with
    SIGFPE), so the divisor is 1 there; the floor is the truncated quotient adjusted (no
    ``a - a % b``, which overflows near MIN)."""
    zero, one, minus_one = (ctx.const(np.array(v, dtype)) for v in (0, 1, -1))
    by_zero, by_minus_one = ctx.op1("Equal", [b, zero]), ctx.op1("Equal", [b, minus_one])
    safe = ctx.op1("Where", [ctx.op1("Or", [by_zero, by_minus_one]), one, b])
    modulo = ctx.op1("Mod", [a, safe], fmod=0)
    inexact = ctx.op1("Not", [ctx.op1("Equal", [modulo, zero])])
    negative = ctx.op1("Xor", [ctx.op1("Less", [a, zero]), ctx.op1("Less", [b, zero])])
    truncated = ctx.op1("Div", [a, safe])
    floor = ctx.op1("Where", [ctx.op1("And", [inexact, negative]), ctx.op1("Sub", [truncated, one]), truncated])
    floor = ctx.op1("Where", [by_minus_one, ctx.op1("Neg", [a]), floor])
    return ctx.op1("Where", [by_zero, zero, floor]), modulo


def _float_divmod(ctx: Lowering, a: str, b: str, dtype: str) -> tuple[str, str]:
    """numpy's float // and % (npy_divmod): the quotient is ``(a - fmod(a, b)) / b`` adjusted and
    rounded to the nearest integer (``floor(a / b)`` is off by one where ``a / b`` rounds up to an
    integer: ``1.0 // 0.1`` is 9); the modulo has the divisor's sign; ``a // 0`` is ``a / 0``."""
    zero, one, half = (ctx.const(np.array(v, dtype)) for v in (0, 1, 0.5))
    fmod = ctx.op1("Mod", [a, b], fmod=1)
    differs = ctx.op1("Xor", [ctx.op1("Less", [fmod, zero]), ctx.op1("Less", [b, zero])])
    adjust = ctx.op1("And", [ctx.op1("Not", [ctx.op1("Equal", [fmod, zero])]), differs])
    modulo = ctx.op1("Where", [adjust, ctx.op1("Add", [fmod, b]), fmod])
    exact = ctx.op1("Div", [ctx.op1("Sub", [a, fmod]), b])
    exact = ctx.op1("Where", [adjust, ctx.op1("Sub", [exact, one]), exact])
    floor = ctx.op1("Floor", [exact])
    floor = ctx.op1("Where", [ctx.op1("Greater", [ctx.op1("Sub", [exact, floor]), half]),
                              ctx.op1("Add", [floor, one]), floor])
    return ctx.op1("Where", [ctx.op1("Equal", [b, zero]), ctx.op1("Div", [a, b]), floor]), modulo


def _log1p(ctx: Lowering, x: str, dtype: str) -> str:
    """log(1 + x) loses all digits where 1 + x rounds: near 0, ``log(w) * x / (w - 1)`` with
    ``w = 1 + x`` (Goldberg) is exact to a few ulps."""
    one, half = ctx.const(np.ones((), dtype)), ctx.const(np.array(0.5, dtype))
    w = ctx.op1("Add", [x, one])
    log = ctx.op1("Log", [w])
    near = ctx.op1("Where", [ctx.op1("Equal", [w, one]), x,
                             ctx.op1("Mul", [log, ctx.op1("Div", [x, ctx.op1("Sub", [w, one])])])])
    return ctx.op1("Where", [ctx.op1("Less", [ctx.op1("Abs", [x]), half]), near, log])


def _expm1(ctx: Lowering, x: str, dtype: str) -> str:
    """exp(x) - 1 loses all digits near 0: there ``(u - 1) * x / log(u)`` with ``u = exp(x)``
    (Kahan) is exact to a few ulps."""
    one, half = ctx.const(np.ones((), dtype)), ctx.const(np.array(0.5, dtype))
    u = ctx.op1("Exp", [x])
    minus = ctx.op1("Sub", [u, one])
    near = ctx.op1("Where", [ctx.op1("Equal", [u, one]), x,
                             ctx.op1("Mul", [minus, ctx.op1("Div", [x, ctx.op1("Log", [u])])])])
    return ctx.op1("Where", [ctx.op1("Less", [ctx.op1("Abs", [x]), half]), near, minus])


def _erf(ctx: Lowering, x: str, dtype: str) -> str:
    """onnxruntime has Erf for float32 only: float64 computes in float32 (about 1e-7 relative
    error), and as ``2/sqrt(pi) * (x - x**3/3)`` near 0, where float32 would flush to zero."""
    if dtype != "float64":
        return ctx.op1("Erf", [x])
    single = ctx.cast(ctx.op1("Erf", [ctx.cast(x, dtype, "float32")]), "float32", dtype)
    cube = ctx.op1("Mul", [x, ctx.op1("Mul", [x, x])])
    series = ctx.op1("Mul", [ctx.const(np.array(2 / np.sqrt(np.pi), dtype)),
                             ctx.op1("Sub", [x, ctx.op1("Div", [cube, ctx.const(np.array(3, dtype))])])])
    small = ctx.op1("Less", [ctx.op1("Abs", [x]), ctx.const(np.array(1e-3, dtype))])
    return ctx.op1("Where", [small, series, single])


def _int_pow(ctx: Lowering, args: list[str], dtype: str) -> str:
    """Integer powers by repeated squaring in a Loop: onnxruntime's Pow goes through double
    (inexact above 2**53, no wrap-around), numpy multiplies in the integer dtype."""
    from onnx import helper

    zero, one, two = (ctx.const(np.array(v, dtype)) for v in (0, 1, 2))
    shape = ctx.op1("Shape", [ctx.op1("Add", [ctx.op1("Mul", [a, zero]) for a in args])])
    base, exponent = (ctx.op1("Expand", [a, shape]) for a in args)
    body = Lowering(ctx.opset, ctx)
    step, keep_going, result, square, rest = (body.fresh(h) for h in ("step", "cond", "power", "square", "rest"))
    odd = body.op1("Equal", [body.op1("Mod", [rest, two], fmod=0), one])
    results = [body.op1("Where", [odd, body.op1("Mul", [result, square]), result]),
               body.op1("Mul", [square, square]), body.op1("Div", [rest, two])]
    nonzero = body.cast(body.op1("Not", [body.op1("Equal", [results[2], zero])]), "bool", "int64")
    more = body.op1("Greater", [reduce(body, "ReduceMax", nonzero, None, False), body.const(np.int64(0))])
    info = helper.make_tensor_value_info
    graph = helper.make_graph(
        body.nodes, ctx.fresh("pow_body"),
        [info(step, onnx_type("int64"), []), info(keep_going, onnx_type("bool"), [])]
        + [info(n, onnx_type(dtype), None) for n in (result, square, rest)],
        [info(more, onnx_type("bool"), [])] + [info(n, onnx_type(dtype), None) for n in results])
    ones = ctx.op1("Expand", [one, shape])
    return ctx.op("Loop", [ctx.const(np.int64(64)), ctx.const(np.bool_(True)), ones, base, exponent], 3,
                  body=graph)[0]


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
        return _product(ctx, node, ins, lambda args: _matmul(ctx, args, a.ndim, b.ndim))
    letters = "abcdefghijklmnopqrstuvwxy"
    left = letters[:a.ndim - 1] + "z"
    right = letters[a.ndim - 1:a.ndim - 1 + b.ndim - 2]
    last = letters[a.ndim - 1 + b.ndim - 2]
    equation = f"{left},{right}z{last}->{left[:-1]}{right}{last}"
    return _product(ctx, node, ins, lambda args: ctx.op1("Einsum", args, equation=equation))


def _matmul(ctx: Lowering, args: list[str], a_ndim: int, b_ndim: int) -> str:
    """MatMul; a vector on the right is a one-column matrix, because onnxruntime's MatMul fails
    on an empty left operand times a vector ((0, 4) @ (4,))."""
    if b_ndim != 1 or a_ndim < 2:
        return ctx.op1("MatMul", args)
    return squeeze(ctx, ctx.op1("MatMul", [args[0], unsqueeze(ctx, args[1], [1])]), [-1])


@lowers(Det)
def lower_det(ctx: Lowering, node, ins: list[str]) -> list[str]:
    """ONNX Det (opset 11) takes (..., M, M), batched as numpy. onnxruntime implements it for
    float32 only, and computing a float64 det in float32 would silently lose precision, so a
    float64 det is refused. The other linear algebra ops have no ONNX op: exporting them fails
    with the op named (no lowering registered)."""
    (a,) = node.inputs
    if a.dtype != "float32":
        raise ExportError(f"det of {describe(a)}: onnxruntime implements ONNX Det for float32 only, and float32 "
                          "would lose the precision of a float64 det; cast the matrix with .astype('float32') "
                          "before det, or compute the det outside the exported function")
    return [ctx.op1("Det", ins)]


@lowers(MatMul)
def lower_matmul(ctx: Lowering, node, ins: list[str]) -> list[str]:
    a, b = node.inputs
    return _product(ctx, node, ins, lambda args: _matmul(ctx, args, a.ndim, b.ndim))


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
        # over nothing ReduceMax gives int64's minimum (nonzero): compared, not cast, any([]) is False
        return [ctx.op1("Greater", [result, ctx.const(np.int64(0))])]
    work = compute_dtype(out.dtype) if out.dtype != "bool" else "int64"
    value = as_dtype(ctx, ins[0], x, work)
    op_type = {"sum": "ReduceSum", "prod": "ReduceProd", "max": "ReduceMax", "min": "ReduceMin"}.get(kind)
    if x.ndim == 0:
        return [ctx.cast(value, work, out.dtype)]
    if kind in ("sum", "prod") and np.dtype(work).kind in "iu":
        return [ctx.cast(_int_reduce(ctx, kind, value, x.ndim, node.op.axis, node.op.keepdims, work), work, out.dtype)]
    if kind == "mean":  # ReduceMean over nothing gives 0, numpy's 0 / 0 is nan
        axes = list(range(x.ndim)) if node.op.axis is None else list(node.op.axis)
        count = reduce(ctx, "ReduceProd", ctx.op1("Gather", [ctx.op1("Shape", [value]), ctx.ints(axes)]), [0], False)
        total = reduce(ctx, "ReduceSum", value, node.op.axis, node.op.keepdims)
        return [ctx.cast(ctx.op1("Div", [total, ctx.cast(count, "int64", work)]), work, out.dtype)]
    return [ctx.cast(reduce(ctx, op_type, value, node.op.axis, node.op.keepdims), work, out.dtype)]


def _int_reduce(ctx: Lowering, kind: str, x: str, ndim: int, axes, keepdims: bool, dtype: str) -> str:
    """onnxruntime's integer ReduceSum/ReduceProd compute in floating point and saturate; numpy's
    are exact and wrap. The reduced axes are moved first and flattened, then summed by a MatMul
    with ones (exact) or multiplied by a running product."""
    axes = list(range(ndim)) if axes is None else list(axes)
    kept = [a for a in range(ndim) if a not in axes]
    shape = ctx.op1("Shape", [x])
    kept_shape = ctx.op1("Gather", [shape, ctx.ints(kept)])
    length = reduce(ctx, "ReduceProd", ctx.op1("Gather", [shape, ctx.ints(axes)]), [0], True)
    moved = ctx.op1("Transpose", [x], perm=axes + kept) if axes + kept != list(range(ndim)) else x
    if kind == "sum":
        size = reduce(ctx, "ReduceProd", kept_shape, [0], True)
        flat = ctx.op1("Reshape", [moved, ctx.op1("Concat", [length, size], axis=0)], allowzero=1)
        ones = ctx.op1("Expand", [ctx.const(np.ones((), dtype)), length])
        result = ctx.op1("Reshape", [ctx.op1("MatMul", [ones, flat]), kept_shape], allowzero=1)
    else:
        flat = ctx.op1("Reshape", [moved, ctx.op1("Concat", [length, kept_shape], axis=0)], allowzero=1)
        result = _running_product(ctx, flat, dtype)[0]
    return unsqueeze(ctx, result, axes) if keepdims else result


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
    perm = [axis] + [i for i in range(ndim) if i != axis]
    moved = ctx.op1("Transpose", [value], perm=perm) if axis else value
    stacked = _running_product(ctx, moved, dtype)[1]
    inverse = [perm.index(i) for i in range(ndim)]
    return ctx.op1("Transpose", [stacked], perm=inverse) if axis else stacked


def _running_product(ctx: Lowering, moved: str, dtype: str) -> tuple[str, str]:
    """(the product, the running products) along axis 0, by a Scan over a row of ones and then
    ``moved``: onnxruntime cannot run a Scan of no iterations (an empty axis)."""
    from onnx import helper

    body = Lowering(ctx.opset, ctx)
    state, element = body.fresh("running"), body.fresh("element")
    product = body.op1("Mul", [state, element])
    copy = body.op1("Identity", [product])
    info = [helper.make_tensor_value_info(n, onnx_type(dtype), None) for n in (state, element)]
    outs = [helper.make_tensor_value_info(n, onnx_type(dtype), None) for n in (product, copy)]
    graph = helper.make_graph(body.nodes, ctx.fresh("cumprod_body"), info, outs)
    rest = ctx.op1("Slice", [ctx.op1("Shape", [moved]), ctx.ints([1]), ctx.ints([2 ** 62])])
    ones = ctx.op1("Expand", [ctx.const(np.ones((), dtype)), rest])
    padded = ctx.op1("Concat", [unsqueeze(ctx, ones, [0]), moved], axis=0)
    product, stacked = ctx.op("Scan", [ones, padded], 2, body=graph, num_scan_inputs=1)
    return product, ctx.op1("Slice", [stacked, ctx.ints([1]), ctx.ints([2 ** 62])])


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


@lowers(SumToShape)
def lower_sum_to_shape(ctx: Lowering, node, ins: list[str]) -> list[str]:
    """Sum over the axes chosen at run time: the leading ones ``like`` lacks, and those where
    ``like`` has length 1 and ``x`` not (``ReduceSum`` with a computed axes input)."""
    x = node.inputs[0]
    lead = x.ndim - node.op.target_ndim(node)
    like_shape = ins[1] if node.op.from_shape else ctx.op1("Shape", [ins[1]])
    padded = ctx.op1("Concat", [ctx.ints([1] * lead), like_shape], axis=0) if lead else like_shape
    one = ctx.const(np.int64(1))
    mask = ctx.op1("And", [ctx.op1("Equal", [padded, one]),
                           ctx.op1("Not", [ctx.op1("Equal", [ctx.op1("Shape", [ins[0]]), one])])])
    if lead:
        mask = ctx.op1("Or", [mask, ctx.const(np.arange(x.ndim) < lead)])
    axes = ctx.op1("Reshape", [ctx.op1("NonZero", [mask]), ctx.ints([-1])])
    summed = ctx.op1("ReduceSum", [ins[0], axes], keepdims=1, noop_with_empty_axes=1)
    return [ctx.op1("Reshape", [summed, like_shape], allowzero=1)]


@lowers(GradientMarker)
def lower_gradient_marker(ctx: Lowering, node, ins: list[str]) -> list[str]:
    return [ctx.op1("Identity", [ins[0]])]  # only the gradient differs


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
    values = ctx.op1("Range", args)
    if work in ("float32", "float64"):  # numpy's start + i * delta: Range's running sum drifts
        common = np.result_type(*[v.dtype for v in node.inputs]).name
        start, step = (as_dtype(ctx, ins[k], node.inputs[k], common) for k in (0, 2))
        delta = ctx.op1("Sub", [ctx.cast(ctx.op1("Add", [start, step]), common, work), args[0]])
        count = ctx.op1("Shape", [values])
        steps = ctx.op1("Range", [ctx.const(np.int64(0)), squeeze(ctx, count, [0]), ctx.const(np.int64(1))])
        values = ctx.op1("Add", [args[0], ctx.op1("Mul", [ctx.cast(steps, "int64", work), delta])])
    return [ctx.cast(values, work, dtype)]


@lowers(Eye)
def lower_eye(ctx: Lowering, node, ins: list[str]) -> list[str]:
    from symscan.tensor.basic import static_int

    k = static_int(node.inputs[2])
    if k is None:
        raise ExportError(f"eye with a diagonal offset known only at run time ({describe(node.inputs[2])}) has no "
                          "ONNX form (EyeLike takes k as an attribute); pass k as a Python int")
    shape = shape_from_scalars(ctx, ins[:2], node.inputs[:2])
    zeros = ctx.op1("ConstantOfShape", [shape])
    work = "int32" if node.op.dtype == "bool" else compute_dtype(node.op.dtype)  # onnxruntime: no int8, bool
    return [ctx.cast(ctx.op1("EyeLike", [zeros], k=k, dtype=onnx_type(work)), work, node.op.dtype)]


@lowers(RandomVariable)
def lower_random(ctx: Lowering, node, ins: list[str]) -> list[str]:
    raise ExportError(f"{node.op} cannot be exported: its numpy generator stream has no ONNX equivalent "
                      "(ONNX random ops would draw other numbers and cannot advance a generator state); "
                      f"draw the values outside the exported function and pass them in ({describe(node.outputs[1])})")
