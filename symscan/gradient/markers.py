"""Theano's gradient markers: identities whose gradient is zero, disconnected, undefined,
clipped or scaled (the op is ``symscan.tensor.gradient_markers.GradientMarker``)."""

from __future__ import annotations

from symscan.gradient.registry import connections, pullback
from symscan.gradient.types import grad_undefined
from symscan.graph.basic import Variable
from symscan.tensor.basic import NotConstantError, as_tensor_variable, get_scalar_constant_value
from symscan.tensor.creation import zeros_like
from symscan.tensor.elemwise import clip, mul
from symscan.tensor.gradient_markers import GradientMarker


def zero_grad(x) -> Variable:
    """``x``, whose gradient is zero (the graph above it still counts as connected)."""
    return GradientMarker("zero")(x)


def disconnected_grad(x) -> Variable:
    """``x``, through which no gradient flows: what ``x`` is computed from is disconnected."""
    return GradientMarker("disconnected")(x)


def undefined_grad(x) -> Variable:
    """``x``, whose gradient is undefined (``grad`` raises NullTypeGradError through it)."""
    return GradientMarker("undefined")(x)


def grad_clip(x, lower_bound, upper_bound) -> Variable:
    """``x``, whose incoming gradient is clipped elementwise to [lower_bound, upper_bound]."""
    try:
        lo, hi = get_scalar_constant_value(lower_bound), get_scalar_constant_value(upper_bound)
    except NotConstantError:
        lo = hi = None
    if lo is not None and hi < lo:
        raise ValueError(f"grad_clip: upper_bound {hi} is below lower_bound {lo}; give lower <= upper")
    return GradientMarker("clip")(x, as_tensor_variable(lower_bound), as_tensor_variable(upper_bound))


def grad_scale(x, multiplier) -> Variable:
    """``x``, whose incoming gradient is multiplied by ``multiplier``."""
    return GradientMarker("scale")(x, as_tensor_variable(multiplier))


@connections(GradientMarker)
def _marker_connections(node) -> list[list[bool]]:
    return [[node.op.kind != "disconnected" and i == 0] for i in range(len(node.inputs))]


@pullback(GradientMarker)
def _marker_pullback(node, cotangents):
    (g,), (x, *params), kind = cotangents, node.inputs, node.op.kind
    rest = [None] * len(params)
    if kind == "zero":
        return [zeros_like(g)] + rest
    if kind == "disconnected":
        return [None] + rest
    if kind == "undefined":
        return [grad_undefined(node.op, 0, x, "undefined_grad")] + rest
    if kind == "clip":
        return [clip(g, params[0], params[1])] + rest
    return [mul(g, params[0])] + rest
