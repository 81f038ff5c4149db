"""Converters of ONNX's elementwise ops: arithmetic, comparisons, logic, activations, casts.

ONNX's binary ops take operands of one type and broadcast as numpy does, so symscan's ops
(numpy's rules) compute the same values in the same dtype, with these exceptions handled
here: integer Div truncates (numpy floors), Mod with ``fmod=1`` takes the dividend's sign,
Pow keeps the base's dtype, and integer means and reductions stay in the input's dtype.
"""

from __future__ import annotations

import functools

import numpy as np

import symscan.tensor as T
from symscan.graph.basic import Variable
from symscan.onnx.importer.context import NodeCall, converts, numpy_dtype
from symscan.tensor.basic import constant


def scalar(value, like: Variable) -> Variable:
    """A 0-d constant of ``like``'s dtype (ONNX attributes are float32/int64 Python numbers)."""
    return constant(np.asarray(value).astype(like.dtype))


def as_dtype(var: Variable, dtype: str) -> Variable:
    return T.cast(var, dtype)


# ---------------------------------------------------------------------------- arithmetic
BINARY = {"Add": T.add, "Sub": T.sub, "Mul": T.mul, "Equal": T.eq, "Less": T.lt, "LessOrEqual": T.le,
          "Greater": T.gt, "GreaterOrEqual": T.ge, "And": T.and_, "Or": T.or_, "Xor": T.xor,
          "BitwiseAnd": T.and_, "BitwiseOr": T.or_, "BitwiseXor": T.xor}


@converts(*BINARY)
def convert_binary(node: NodeCall) -> list[Variable]:
    a, b = node.inputs
    return [BINARY[node.op_type](a, b)]


@converts("Div")
def convert_div(node: NodeCall) -> list[Variable]:
    a, b = node.inputs
    if np.dtype(a.dtype).kind in "iu":
        return [truncated_div(a, b)]
    return [T.true_div(a, b)]


def truncated_div(a: Variable, b: Variable) -> Variable:
    """C's integer division (towards zero): numpy's floor division, plus one where the
    division is inexact and the signs differ."""
    floor = T.floor_div(a, b)
    if np.dtype(a.dtype).kind == "u":
        return floor
    zero = scalar(0, a)
    inexact = T.neq(T.mod(a, b), zero)
    signs_differ = T.xor(T.lt(a, zero), T.lt(b, zero))
    return T.switch(T.and_(inexact, signs_differ), floor + scalar(1, a), floor)


@converts("Mod")
def convert_mod(node: NodeCall) -> list[Variable]:
    a, b = node.inputs
    return [T.fmod(a, b) if node.attr("fmod", 0) else T.mod(a, b)]


@converts("Pow")
def convert_pow(node: NodeCall) -> list[Variable]:
    """The base's dtype; an integer base goes through float64, as onnxruntime's does (numpy
    refuses negative integer exponents; ``2 ** -1`` is 0 there)."""
    base, exponent = node.inputs
    if np.dtype(base.dtype).kind in "iu":
        return [as_dtype(T.pow(as_dtype(base, "float64"), as_dtype(exponent, "float64")), base.dtype)]
    return [as_dtype(T.pow(base, exponent), base.dtype)]


def _fold(fn, operands: list[Variable]) -> Variable:
    return functools.reduce(fn, operands)


@converts("Max", "Min", "Sum", "Mean")
def convert_variadic(node: NodeCall) -> list[Variable]:
    operands = [v for v in node.inputs if v is not None]
    fn = {"Max": T.maximum, "Min": T.minimum, "Sum": T.add, "Mean": T.add}[node.op_type]
    result = _fold(fn, operands)
    if node.op_type == "Mean":
        result = as_dtype(result / scalar(len(operands), result), operands[0].dtype)
    return [result]


# ---------------------------------------------------------------------------- unary
UNARY = {"Abs": T.abs, "Neg": T.neg, "Exp": T.exp, "Log": T.log, "Sqrt": T.sqrt, "Sin": T.sin, "Cos": T.cos,
         "Tan": T.tan, "Tanh": T.tanh, "Sigmoid": T.sigmoid, "Softplus": T.softplus, "Erf": T.erf, "Sign": T.sign,
         "Floor": T.floor, "Ceil": T.ceil, "Round": T.round, "Not": T.invert, "BitwiseNot": T.invert}


@converts(*UNARY)
def convert_unary(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    return [as_dtype(UNARY[node.op_type](x), x.dtype)]


@converts("Reciprocal")
def convert_reciprocal(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    return [scalar(1, x) / x]


@converts("Sinh", "Cosh")
def convert_hyperbolic(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    if node.op_type == "Sinh":  # (e**x - e**-x) / 2 loses digits near 0: expm1 keeps them
        return [(T.expm1(x) - T.expm1(-x)) / scalar(2, x)]
    return [(T.exp(x) + T.exp(-x)) / scalar(2, x)]


@converts("IsNaN")
def convert_isnan(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    return [T.neq(x, x)]


@converts("IsInf")
def convert_isinf(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    positive, negative = T.eq(x, scalar(np.inf, x)), T.eq(x, scalar(-np.inf, x))
    detect = [flag for flag, on in ((positive, node.attr("detect_positive", 1)),
                                    (negative, node.attr("detect_negative", 1))) if on]
    return [_fold(T.or_, detect) if detect else T.zeros_like(x, dtype="bool")]


# ---------------------------------------------------------------------------- activations
@converts("Relu")
def convert_relu(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    return [T.maximum(x, scalar(0, x))]


@converts("LeakyRelu")
def convert_leaky_relu(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    return [T.switch(T.lt(x, scalar(0, x)), x * scalar(node.attr("alpha", 0.01), x), x)]


@converts("PRelu")
def convert_prelu(node: NodeCall) -> list[Variable]:
    x, slope = node.inputs
    return [T.switch(T.lt(x, scalar(0, x)), x * slope, x)]


@converts("ThresholdedRelu")
def convert_thresholded_relu(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    return [T.switch(T.gt(x, scalar(node.attr("alpha", 1.0), x)), x, scalar(0, x))]


@converts("Elu")
def convert_elu(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    return [T.switch(T.lt(x, scalar(0, x)), scalar(node.attr("alpha", 1.0), x) * T.expm1(x), x)]


@converts("Selu")
def convert_selu(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    alpha, gamma = scalar(node.attr("alpha", 1.67326319217681884765625), x), \
        scalar(node.attr("gamma", 1.05070102214813232421875), x)
    return [gamma * T.switch(T.le(x, scalar(0, x)), alpha * T.expm1(x), x)]


@converts("Celu")
def convert_celu(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    alpha = scalar(node.attr("alpha", 1.0), x)
    zero = scalar(0, x)
    return [T.maximum(zero, x) + T.minimum(zero, alpha * T.expm1(x / alpha))]


@converts("HardSigmoid")
def convert_hard_sigmoid(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    linear = scalar(node.attr("alpha", 0.2), x) * x + scalar(node.attr("beta", 0.5), x)
    return [T.maximum(scalar(0, x), T.minimum(scalar(1, x), linear))]


@converts("HardSwish")
def convert_hard_swish(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    gate = T.maximum(scalar(0, x), T.minimum(scalar(1, x), x * scalar(1 / 6, x) + scalar(0.5, x)))
    return [x * gate]


@converts("Softsign")
def convert_softsign(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    return [x / (scalar(1, x) + T.abs(x))]


@converts("Mish")
def convert_mish(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    return [x * T.tanh(T.softplus(x))]


@converts("Shrink")
def convert_shrink(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    lambd, bias = scalar(node.attr("lambd", 0.5), x), scalar(node.attr("bias", 0.0), x)
    return [T.switch(T.lt(x, -lambd), x + bias, T.switch(T.gt(x, lambd), x - bias, scalar(0, x)))]


# ---------------------------------------------------------------------------- selection and casts
@converts("Where")
def convert_where(node: NodeCall) -> list[Variable]:
    cond, a, b = node.inputs
    return [T.switch(cond, a, b)]


@converts("Clip")
def convert_clip(node: NodeCall) -> list[Variable]:
    x = node.inputs[0]
    if node.opset < 11:  # bounds were attributes
        low, high = node.attr("min"), node.attr("max")
        low, high = (None if v is None else scalar(v, x) for v in (low, high))
    else:
        low, high = node.input(1), node.input(2)
    if low is not None:
        x = T.maximum(x, low)
    if high is not None:
        x = T.minimum(x, high)
    return [x]


@converts("Cast")
def convert_cast(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    return [T.cast(x, numpy_dtype(node.attr("to"), f"{node.where}: its 'to' type"))]


@converts("CastLike")
def convert_cast_like(node: NodeCall) -> list[Variable]:
    x, like = node.inputs
    return [T.cast(x, like.dtype)]


@converts("Identity")
def convert_identity(node: NodeCall) -> list[Variable]:
    return [node.inputs[0]]
