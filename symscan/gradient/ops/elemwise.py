"""Pullbacks of the elementwise ops and Cast, with Theano 1.0's semantics.

Each rule of ``ELEMWISE_PULLBACKS`` maps ``(g, out, *inputs)`` to one gradient per input, of
the output's (broadcast) shape; the pullback then sums each back to its input's shape
(``sum_to``: numpy broadcasting, transposed). ``ZERO`` marks an input whose gradient is zero
but which stays connected (rounding, comparisons, bit operations, ``floor_div``), as in Theano.
Integer inputs of float functions get real gradients (``grad(x_int * 2.5, x_int)`` is 2.5).
The rule of an integer or bool output runs too (``grad`` asks every op the cost reaches, so
that an undefined gradient below is found), but ``grad`` takes what it returns as zero.
"""

from __future__ import annotations

import math

import numpy as np

from symscan.gradient.grad import float_dtype
from symscan.gradient.registry import pullback
from symscan.gradient.types import NullType
from symscan.tensor.broadcast import sum_to
from symscan.tensor.creation import zeros_like
from symscan.tensor.elemwise import (
    Cast,
    Elemwise,
    cast,
    cos,
    eq,
    exp,
    floor_div,
    gammaln,
    ge,
    imag,
    le,
    log,
    psi,
    real,
    sigmoid,
    sign,
    sin,
    sqrt,
    switch,
)

ZERO = "zero"
"""A rule's gradient for an input on which the output depends with derivative zero."""


def _as_float(x, out):
    """An integer or bool ``x`` as ``out``'s float dtype, where the rule computes with ``x``
    itself (``x * x`` or ``1 + x`` would wrap around in a narrow integer dtype)."""
    return x if np.dtype(x.dtype).kind in "fc" else cast(x, out.dtype)


def _zero_gradient(g, out, *inputs):
    return [ZERO] * len(inputs)


def _pow(g, out, x, y):
    """d/dx = y x^(y-1); d/dy = log(x) x^y, taken as 0 where x == 0 (Theano's choice: the
    limit from x > 0 for y > 0). Where x < 0, log(x) is NaN and so is d/dy: real powers of a
    negative base are defined only at integer y, where the derivative in y does not exist."""
    x, y = _as_float(x, out), _as_float(y, out)
    return [g * y * x ** (y - 1), switch(eq(x, 0), 0, g * log(x) * out)]


def _clip(g, out, x, low, high):
    """x gets g where low <= x <= high (Theano's rule: at a bound, x gets it, not the bound);
    a bound gets g where the result is that bound. numpy's clip gives ``high`` everywhere when
    low > high, so then all goes to ``high`` (Theano's clip gave ``low`` where x < low, and its
    rule sent the gradient there)."""
    return [g * ((x >= low) & (x <= high)), g * ((x < low) & (low <= high)), g * ((x > high) | (low > high))]


_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2


def _is_complex(x) -> bool:
    return x.dtype.startswith("complex")


# Complex inputs get Theano's convention: the gradient of a real cost w.r.t. z = x + iy is
# dC/dx + i dC/dy.
def _real(g, out, z):
    return [cast(g, z.dtype) if _is_complex(z) else g]


def _imag(g, out, z):
    return [g * 1j if _is_complex(z) else ZERO]


def _angle(g, out, z):
    """atan2(y, x): d/dx = -y / |z|^2, d/dy = x / |z|^2, so i z / |z|^2; piecewise constant for real z."""
    if not _is_complex(z):
        return [ZERO]
    return [g * 1j * z / (real(z) ** 2 + imag(z) ** 2)]


def _chi2sf(g, out, x, k):
    """d/dx is minus the density x^(k/2 - 1) e^(-x/2) / (2^(k/2) gamma(k/2)); the derivative in
    k (of the incomplete gamma function's parameter) is not implemented."""
    x, k = _as_float(x, out), _as_float(k, out)
    half = k * 0.5
    log_density = (half - 1) * log(x) - x * 0.5 - half * math.log(2.0) - gammaln(half)
    why = "the gradient of chi2sf w.r.t. its degrees of freedom k is not implemented"
    return [-g * exp(log_density), NullType(why).make_variable()]

ELEMWISE_PULLBACKS = {
    "add": lambda g, out, x, y: [g, g],
    "sub": lambda g, out, x, y: [g, -g],
    "mul": lambda g, out, x, y: [g * y, g * x],
    "true_div": lambda g, out, x, y: [g / y, -g * out / y],  # out / y: no overflow of y * y
    "mod": lambda g, out, x, y: [g, -g * floor_div(x, y)],  # x % y == x - (x // y) * y
    "fmod": lambda g, out, x, y: [g, -g * ((x - out) / y)],  # fmod(x, y) == x - trunc(x / y) * y
    "pow": _pow,
    # To the argument that is the result; at a tie, to both (Theano's rule).
    # the operands compared with each other, not with the output: inside a gradient's loop the
    # output is the forward's saved value and the operands are recomputed (they may round apart)
    "maximum": lambda g, out, x, y: [g * ge(x, y), g * ge(y, x)],
    "minimum": lambda g, out, x, y: [g * le(x, y), g * le(y, x)],
    "logaddexp": lambda g, out, x, y: [g * exp(x - out), g * exp(y - out)],
    "second": lambda g, out, x, y: [ZERO, g],
    "switch": lambda g, out, cond, a, b: [ZERO, switch(cond, g, 0), switch(cond, 0, g)],
    "clip": _clip,
    "neg": lambda g, out, x: [-g],
    "abs": lambda g, out, x: [g * sign(x)],
    "exp": lambda g, out, x: [g * out],
    "expm1": lambda g, out, x: [g * exp(x)],
    "log": lambda g, out, x: [g / x],
    "log1p": lambda g, out, x: [g / (1 + _as_float(x, out))],
    "sqrt": lambda g, out, x: [g / (2 * out)],
    "sin": lambda g, out, x: [g * cos(x)],
    "cos": lambda g, out, x: [-g * sin(x)],
    "tan": lambda g, out, x: [g * (1 + out * out)],
    "tanh": lambda g, out, x: [g * (1 - out * out)],
    "sigmoid": lambda g, out, x: [g * out * (1 - out)],
    "softplus": lambda g, out, x: [g * sigmoid(x)],
    "erf": lambda g, out, x: [g * _TWO_OVER_SQRT_PI * exp(-(_as_float(x, out) ** 2))],
    "erfc": lambda g, out, x: [-g * _TWO_OVER_SQRT_PI * exp(-(_as_float(x, out) ** 2))],
    "arcsin": lambda g, out, x: [g / sqrt(1 - _as_float(x, out) ** 2)],
    "arccos": lambda g, out, x: [-g / sqrt(1 - _as_float(x, out) ** 2)],
    "arctan": lambda g, out, x: [g / (1 + _as_float(x, out) ** 2)],
    "arctanh": lambda g, out, x: [g / (1 - _as_float(x, out) ** 2)],
    "erfinv": lambda g, out, x: [g * _SQRT_PI_OVER_TWO * exp(out * out)],
    "erfcinv": lambda g, out, x: [-g * _SQRT_PI_OVER_TWO * exp(out * out)],
    "chi2sf": _chi2sf,
    "real": _real,
    "imag": _imag,
    "angle": _angle,
    "gamma": lambda g, out, x: [g * out * psi(x)],
    "gammaln": lambda g, out, x: [g * psi(x)],
    # psi has none: its derivative (trigamma) is not an op yet
    **dict.fromkeys(["floor_div", "eq", "neq", "lt", "le", "gt", "ge", "and_", "or_", "xor", "invert", "sign",
                     "floor", "ceil", "round", "isnan", "isinf"], _zero_gradient),
}
"""name -> fn(g, out, *inputs): the gradient w.r.t. each input, before summing to its shape."""


@pullback(Elemwise)
def elemwise_pullback(node, cotangents):
    (g,), (out,) = cotangents, node.outputs
    rule = ELEMWISE_PULLBACKS.get(node.op.name)
    if rule is None:
        raise NotImplementedError(f"{node.op} has no gradient in symscan yet")
    grads = []
    for d, x in zip(rule(g, out, *node.inputs), node.inputs):
        if d is ZERO:
            grads.append(zeros_like(x, dtype=float_dtype(x)))
        elif d is None or len(node.inputs) == 1 or isinstance(d.type, NullType):
            # disconnected or undefined; or the input's shape: nothing to sum
            grads.append(d)
        else:
            grads.append(sum_to(d, x))
    return grads


@pullback(Cast)
def cast_pullback(node, cotangents):
    """Back to a float input's dtype; an integer input gets the float gradient as it is (the
    traversal casts it to floatX). Through a cast to an integer dtype ``grad`` takes it as zero."""
    (g,), (x,) = cotangents, node.inputs
    return [cast(g, x.dtype) if np.dtype(x.dtype).kind in "fc" else g]
