"""Variance and standard deviation (Theano's ``var`` and ``std``), built from existing ops the
way numpy computes them, so that the rewriters and every backend need nothing new."""

from __future__ import annotations

import functools
import operator

import numpy as np

from symscan.graph.basic import Variable, describe
from symscan.tensor.basic import as_tensor_variable, constant, static_int
from symscan.tensor.elemwise import abs, cast, maximum, mul, sqrt, sub, true_div
from symscan.tensor.math import mean, normalize_axis, sum
from symscan.tensor.shape import shape


def var(input, axis=None, ddof: int = 0, keepdims: bool = False, corrected: bool = False) -> Variable:
    """The variance over ``axis`` (None: all axes), dividing by ``N - ddof`` as numpy does.

    ``corrected=True`` is Theano's corrected two-pass algorithm: the sum of the deviations
    (zero in exact arithmetic) corrects the rounding of the mean, ``(Σd² - (Σd)²/N) / (N - ddof)``.
    """
    x = as_tensor_variable(input)
    if isinstance(ddof, Variable) or not isinstance(ddof, (int, np.integer)) or isinstance(ddof, bool):
        raise TypeError(f"var of {describe(x)}: ddof must be a Python int, got {ddof!r}")
    axes = normalize_axis(axis, x.ndim, x, "var")
    axes = tuple(range(x.ndim)) if axes is None else axes
    deviation = sub(x, mean(x, axis=axes, keepdims=True))
    if deviation.dtype.startswith("complex"):  # numpy: d * conj(d), whose real part is |d|²
        deviation = abs(deviation)
    total = sum(mul(deviation, deviation), axis=axes, keepdims=keepdims)
    count = _count(x, axes)
    if corrected:
        drift = sum(deviation, axis=axes, keepdims=keepdims)
        total = sub(total, true_div(mul(drift, drift), count).astype(total.dtype))
    # numpy divides by an int64 count (strong): float32 sums are divided in float64, then rounded
    static = static_int(count)
    divisor = constant(np.int64(max(static - ddof, 0))) if static is not None else maximum(sub(count, ddof), 0)
    return cast(true_div(total, divisor), total.dtype)


def std(input, axis=None, ddof: int = 0, keepdims: bool = False, corrected: bool = False) -> Variable:
    """The standard deviation: the square root of ``var`` (same arguments)."""
    return sqrt(var(input, axis=axis, ddof=ddof, keepdims=keepdims, corrected=corrected))


def _count(x: Variable, axes: tuple[int, ...]) -> Variable:
    """The number of elements reduced over ``axes``, an int64 scalar (a constant when the lengths
    are static)."""
    lengths = [x.type.shape[a] for a in axes]
    if None not in lengths:
        return constant(np.int64(functools.reduce(operator.mul, lengths, 1)))
    sizes = shape(x)
    return functools.reduce(mul, [sizes[a] for a in axes], constant(np.int64(1)))
