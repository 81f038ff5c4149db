"""Scalar special functions in plain ``math`` (C's libm): the reference values where scipy is
not installed, and the code numba compiles into a loop's kernel (``symscan.backends.numba.special``
copies these functions' sources there). Each returns scipy.special's value within a few ulps,
poles and NaNs included; tests check them against scipy over their range."""

from __future__ import annotations

import builtins
import math

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def erf_scalar(x: float) -> float:
    """C's erf (a function of this module so that numba's kernels copy it like the others)."""
    return math.erf(x)


def erfc_scalar(x: float) -> float:
    """C's erfc, 1 - erf(x) without the cancellation for large x."""
    return math.erfc(x)


def erfinv_scalar(y: float) -> float:
    """The inverse of erf on [-1, 1] (scipy.special's ``erfinv``): +-inf at +-1, NaN outside.
    Giles' single-precision approximation ("Approximating the erfinv function", 2010) as the
    start, refined in double (within 1e-15 of scipy's, checked on the whole range)."""
    if math.isnan(y) or builtins.abs(y) > 1:
        return math.nan
    if builtins.abs(y) == 1:
        return math.copysign(math.inf, y)
    if y == 0:
        return 0.0  # at -0.0 too, as scipy's
    w = -math.log((1 - y) * (1 + y))
    if w < 5:
        w -= 2.5
        p = 2.81022636e-08
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                  -0.00417768164, 0.246640727, 1.50140941):
            p = c + p * w
    else:
        w = math.sqrt(w) - 3
        p = -0.000200214257
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                  0.00943887047, 1.00167406, 2.83297682):
            p = c + p * w
    x = p * y
    if builtins.abs(y) <= 0.5:
        for _ in range(2):  # Halley on erf(x) - y (erf'' = -2x erf')
            step = (math.erf(x) - y) / (_TWO_OVER_SQRT_PI * math.exp(-x * x))
            x -= step / (1 + x * step)
        return x
    # the tail: 1 - |y| is exact here, and Newton on it keeps the digits erf(x) loses where it
    # rounds to 1
    return math.copysign(erfc_tail_inverse(builtins.abs(x), math.log(1 - builtins.abs(y))), y)


def erfc_tail_inverse(a: float, log_tail: float) -> float:
    """The a > 0 with erfc(a) == exp(log_tail), by Newton on log(erfc(a)) - log_tail (nearly
    quadratic in a: 2-3 steps from a good start, more from a rough one) from the start ``a``."""
    for _ in range(50):
        tail = math.erfc(a)
        step = (math.log(tail) - log_tail) * tail / (_TWO_OVER_SQRT_PI * math.exp(-a * a))
        a += step
        if builtins.abs(step) <= 1e-16 * a:
            break
    return a


def erfcinv_scalar(y: float) -> float:
    """The inverse of erfc on [0, 2] (scipy.special's ``erfcinv``): +inf at 0, -inf at 2, NaN
    outside. Near the ends the tail y (or 2 - y, exact there) is inverted directly, which keeps
    the digits that erfinv(1 - y) would lose."""
    if math.isnan(y) or y < 0 or y > 2:
        return math.nan
    if y == 0:
        return math.inf
    if y == 2:
        return -math.inf
    if 0.5 <= y <= 1.5:
        return erfinv_scalar(1 - y)  # exact: y is within a factor of 2 of 1
    tail = y if y < 1 else 2 - y
    start = math.sqrt(-math.log(tail)) if tail < 1e-15 else erfinv_scalar(1 - tail)
    a = erfc_tail_inverse(start, math.log(tail))
    return a if y < 1 else -a


def _log_gamma_density(a: float, x: float) -> float:
    """log(x^a e^-x / gamma(a)), the factor both expansions of the incomplete gamma share."""
    return a * math.log(x) - x - math.lgamma(a)


def gammaincc_scalar(a: float, x: float) -> float:
    """The regularized upper incomplete gamma Q(a, x) for a > 0, x > 0: the series of P below
    x = a + 1, Lentz's continued fraction of Q above (Numerical Recipes' split)."""
    if x < a + 1:
        term = 1 / a
        total = term
        shifted = a
        for _ in range(10000):
            shifted += 1
            term *= x / shifted
            total += term
            if builtins.abs(term) < builtins.abs(total) * 1e-17:
                break
        return 1 - total * math.exp(_log_gamma_density(a, x))
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if builtins.abs(d) < tiny else d
        c = b + an / c
        c = tiny if builtins.abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if builtins.abs(delta - 1) < 1e-16:
            break
    return math.exp(_log_gamma_density(a, x)) * h


def chi2sf_scalar(x: float, k: float) -> float:
    """The chi-squared survival function P(X > x) for k degrees of freedom (scipy.special's
    ``chdtrc(k, x)``, Theano's ``chi2sf(x, k)``): Q(k / 2, x / 2); NaN for x < 0 or k < 0."""
    if math.isnan(x) or math.isnan(k) or x < 0 or k < 0:
        return math.nan
    if k == 0:
        return math.nan if x == 0 else 0.0
    if x == 0:
        return 1.0
    if x == math.inf:
        return 0.0
    return gammaincc_scalar(k / 2, x / 2)
