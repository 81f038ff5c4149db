"""Elementwise functions written with the elementwise ops (so every mode, ONNX export and the
gradient follow from theirs): cosh, sinh, square, reciprocal, iround, isclose, allclose."""

from __future__ import annotations

import numpy as np

from symscan.graph.basic import Variable
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.elemwise import abs, cast, eq, exp, floor, isinf, isnan, le, round, sign, switch
from symscan.tensor.math import all


def cosh(x) -> Variable:
    """``(exp(x) + exp(-x)) / 2``."""
    x = as_tensor_variable(x)
    return (exp(x) + exp(-x)) * 0.5


def sinh(x) -> Variable:
    """``(exp(x) - exp(-x)) / 2``."""
    x = as_tensor_variable(x)
    return (exp(x) - exp(-x)) * 0.5


def square(x) -> Variable:
    """``x * x`` in x's dtype (numpy's ``square``; Theano's ``sqr``)."""
    x = as_tensor_variable(x)
    return x * x


def reciprocal(x) -> Variable:
    """``1 / x`` in a float dtype (Theano's elementwise ``inv``; not a matrix inverse)."""
    return 1.0 / as_tensor_variable(x)


def iround(x, mode: str | None = None) -> Variable:
    """``round(x)`` as int64 (Theano's ``iround``); ``mode`` is Theano's ``"half_to_even"``
    (numpy's rounding, the default) or ``"half_away_from_zero"``."""
    x = as_tensor_variable(x)
    if mode in (None, "half_to_even"):
        return cast(round(x), "int64")
    if mode == "half_away_from_zero":
        return cast(sign(x) * floor(abs(x) + 0.5), "int64")
    raise ValueError(f"iround: mode={mode!r} is not a rounding mode; use 'half_to_even' (numpy's, the "
                     "default) or 'half_away_from_zero'")


def isclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Variable:
    """numpy's ``isclose``: ``|a - b| <= atol + rtol * |b|`` (not symmetric), computed in a float
    dtype; infinities are close only to themselves; NaNs to each other only with ``equal_nan``."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    dtype = np.result_type(a.dtype, b.dtype, 1.0).name
    a, b = cast(a, dtype), cast(b, dtype)
    close = switch(isinf(a) | isinf(b), eq(a, b), le(abs(a - b), atol + rtol * abs(b)))
    return close | (isnan(a) & isnan(b)) if equal_nan else close


def allclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Variable:
    """numpy's ``allclose``: a 0-d bool, ``isclose`` everywhere."""
    return all(isclose(a, b, rtol, atol, equal_nan))
