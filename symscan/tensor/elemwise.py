"""Elementwise ops: one ``Elemwise`` op class over a table of numpy functions, and ``Cast``.

Output dtypes are what numpy gives for the input dtypes (asked of numpy once per dtype
combination); output shapes follow numpy broadcasting, checked at build time where static
lengths are known.
"""

from __future__ import annotations

import builtins
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Apply, Op, Variable, describe
from symscan.graph.type import TensorType, normalize_dtype
from symscan.tensor.basic import (
    NotConstantError,
    _is_python_scalar,
    as_operands,
    as_tensor_variable,
    constant,
    get_scalar_constant_value,
)
from symscan.tensor.scalar_special import chi2sf_scalar, erf_scalar, erfc_scalar, erfcinv_scalar, erfinv_scalar


def _sigmoid(x):
    """Stable logistic; the input is first converted to exp's float dtype, because ``-abs(x)``
    wraps around for unsigned ints and is undefined for bools."""
    x = np.asarray(x)
    x = x.astype(np.exp(x.flat[:0]).dtype, copy=False)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(e.dtype, copy=False)


def _softplus(x):
    x = np.asarray(x)
    return np.logaddexp(np.zeros((), dtype=np.exp(x.flat[:0]).dtype), x)


def _float_dtype(*xs: np.ndarray) -> np.dtype:
    """The float dtype ``exp`` gives for the inputs' common dtype (float32 for small ints)."""
    return np.exp(np.zeros((), dtype=np.result_type(*[x.dtype for x in xs]))).dtype


def _float_function(scalar_fn: Callable) -> Callable:
    """A float64 scalar function over (broadcast) arrays, in the float dtype ``exp`` gives for
    the inputs (numpy has no ufunc for it; ``math`` computes it as C does)."""
    vectorized = np.vectorize(scalar_fn, otypes=[np.float64])

    def apply(*xs):
        xs = [np.asarray(x) for x in xs]
        with np.errstate(all="ignore"):  # poles give inf/NaN by design, as scipy's do
            return vectorized(*xs).astype(_float_dtype(*xs), copy=False)

    return apply


def _gamma_scalar(x: float) -> float:
    """scipy's ``gamma``: +-inf at +-0, NaN at the other poles and at -inf, inf on overflow."""
    if x == 0:
        return math.copysign(math.inf, x)
    if math.isnan(x) or x == -math.inf or (x < 0 and x == math.floor(x)):
        return math.nan
    try:
        return math.gamma(x)
    except OverflowError:
        return math.inf


def _gammaln_scalar(x: float) -> float:
    """scipy's ``gammaln`` (log |gamma(x)|): inf at the poles, -inf at -inf (scipy's choice)."""
    if x == -math.inf:
        return -math.inf
    try:
        return math.lgamma(x)
    except ValueError:  # a pole
        return math.inf


def _psi_scalar(x: float) -> float:
    """The digamma function (scipy's ``digamma``): the recurrence psi(x) = psi(x + 1) - 1/x up to
    x >= 10, then the asymptotic series (error below 1e-13); reflection for negative x."""
    if math.isnan(x) or x == -math.inf or (x < 0 and x == math.floor(x)):
        return math.nan
    if x == 0:
        return math.copysign(math.inf, -x)
    if x == math.inf:
        return math.inf
    if x < 0:
        return _psi_scalar(1 - x) - math.pi / math.tan(math.pi * x)
    shift = 0.0
    while x < 10:
        shift -= 1 / x
        x += 1
    f = 1 / (x * x)
    series = f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f / 132))))
    return shift + math.log(x) - 0.5 / x - series


@functools.cache
def _scipy_special(name: str):
    """scipy.special's ufunc ``name``, or None: scipy is optional in symscan."""
    try:
        import scipy.special
    except ImportError:
        return None
    return getattr(scipy.special, name)


def _special(scipy_name: str, own_scalar: Callable, order: tuple[int, ...] | None = None) -> Callable:
    """scipy.special's ``scipy_name`` where scipy is installed (a compiled loop; ``order``: its
    arguments' order), else ``own_scalar`` (``scalar_special``); either way in the float dtype
    ``exp`` gives (scipy computes bools and float16 in float32)."""
    own = _float_function(own_scalar)

    def apply(*xs):
        fn = _scipy_special(scipy_name)
        if fn is None:
            return own(*xs)
        xs = [np.asarray(x) for x in xs]
        with np.errstate(all="ignore"):
            result = fn(*(xs if order is None else [xs[i] for i in order]))
        return np.asarray(result).astype(_float_dtype(*xs), copy=False)

    apply.__name__ = own_scalar.__name__.removesuffix("_scalar")
    return apply


def _second(a, b):
    """``b`` broadcast to the shape of ``a`` and ``b`` together (Theano's fill/second)."""
    b = np.asarray(b)
    return np.array(np.broadcast_to(b, np.broadcast_shapes(np.shape(a), b.shape)), copy=True)


ELEMWISE_FUNCTIONS: dict[str, tuple[int, Callable]] = {
    "add": (2, np.add), "sub": (2, np.subtract), "mul": (2, np.multiply),
    "true_div": (2, np.true_divide), "floor_div": (2, np.floor_divide), "mod": (2, np.mod), "fmod": (2, np.fmod),
    "pow": (2, np.power), "maximum": (2, np.maximum), "minimum": (2, np.minimum), "logaddexp": (2, np.logaddexp),
    "eq": (2, np.equal), "neq": (2, np.not_equal), "lt": (2, np.less), "le": (2, np.less_equal),
    "gt": (2, np.greater), "ge": (2, np.greater_equal),
    "and_": (2, np.bitwise_and), "or_": (2, np.bitwise_or), "xor": (2, np.bitwise_xor),
    "second": (2, _second),
    "neg": (1, np.negative), "abs": (1, np.abs), "exp": (1, np.exp), "log": (1, np.log),
    "log1p": (1, np.log1p), "expm1": (1, np.expm1), "sqrt": (1, np.sqrt), "sin": (1, np.sin),
    "cos": (1, np.cos), "tan": (1, np.tan), "tanh": (1, np.tanh), "sigmoid": (1, _sigmoid),
    "softplus": (1, _softplus), "erf": (1, _float_function(erf_scalar)), "erfc": (1, _float_function(erfc_scalar)),
    "arcsin": (1, np.arcsin), "arccos": (1, np.arccos), "arctan": (1, np.arctan), "arctanh": (1, np.arctanh),
    "erfinv": (1, _special("erfinv", erfinv_scalar)),
    "erfcinv": (1, _special("erfcinv", erfcinv_scalar)), "chi2sf": (2, _special("chdtrc", chi2sf_scalar, (1, 0))),
    "real": (1, np.real), "imag": (1, np.imag), "angle": (1, np.angle),
    "gamma": (1, _float_function(_gamma_scalar)), "gammaln": (1, _float_function(_gammaln_scalar)),
    "psi": (1, _float_function(_psi_scalar)), "isnan": (1, np.isnan), "isinf": (1, np.isinf),
    "sign": (1, np.sign), "floor": (1, np.floor),
    "ceil": (1, np.ceil), "round": (1, np.round), "invert": (1, np.invert),
    "switch": (3, np.where), "clip": (3, np.clip),
}
"""name -> (number of inputs, numpy implementation). Backends key their tables on the name."""


@functools.cache
def _numpy_result_dtype(name: str, dtypes: tuple[str, ...]) -> str:
    """The dtype numpy's implementation gives for these input dtypes (TypeError if none)."""
    probes = [np.ones((1,), dtype=d) for d in dtypes]
    with np.errstate(all="ignore"):
        return np.asarray(ELEMWISE_FUNCTIONS[name][1](*probes)).dtype.name


def broadcast_static_shapes(operands: list[Variable], opname: str) -> tuple:
    """numpy broadcasting of static shapes; an error when known lengths cannot broadcast."""
    ndim = max((v.ndim for v in operands), default=0)
    padded = [(1,) * (ndim - v.ndim) + v.type.shape for v in operands]
    result = []
    for axis, lengths in enumerate(zip(*padded)):
        known = {n for n in lengths if n is not None and n != 1}
        if len(known) > 1:
            shown = ", ".join(describe(v) for v in operands)
            raise ValueError(f"{opname}: shapes cannot broadcast on axis {axis} (lengths {sorted(known)}): "
                             f"{shown}; reshape or slice one of them")
        result.append(known.pop() if known else (None if None in lengths else 1))
    return tuple(result)


@dataclass(frozen=True)
class Elemwise(Op):
    """A numpy elementwise function with broadcasting; ``name`` keys ``ELEMWISE_FUNCTIONS``."""

    name: str

    def make_node(self, *inputs) -> Apply:
        nin, _ = ELEMWISE_FUNCTIONS[self.name]
        if len(inputs) != nin:
            raise TypeError(f"{self.name} takes {nin} inputs, got {len(inputs)}")
        inputs = [as_tensor_variable(i) for i in inputs]
        try:
            dtype = _numpy_result_dtype(self.name, tuple(i.dtype for i in inputs))
        except TypeError as err:
            shown = ", ".join(describe(i) for i in inputs)
            raise TypeError(f"{self.name} is not defined for {shown}: {err}") from None
        shape = broadcast_static_shapes(inputs, self.name)
        return Apply(self, inputs, [TensorType(dtype, shape)])

    def perform(self, node, inputs):
        return [ELEMWISE_FUNCTIONS[self.name][1](*inputs)]

    def static_value(self, node, index):
        """Fold a 0-d node whose inputs are all build-time constants (for static shapes)."""
        if node.outputs[0].ndim != 0:
            return None
        try:
            values = [get_scalar_constant_value(i) for i in node.inputs]
        except NotConstantError:
            return None
        with np.errstate(all="ignore"):
            return np.asarray(self.perform(node, values)[0], dtype=node.outputs[0].dtype)[()]

    def __str__(self) -> str:
        return f"Elemwise{{{self.name}}}"


@dataclass(frozen=True)
class Cast(Op):
    """Conversion to ``dtype`` with numpy's ``astype`` (explicit, so any cast is allowed)."""

    dtype: str

    def __post_init__(self):
        object.__setattr__(self, "dtype", normalize_dtype(self.dtype))

    def make_node(self, x) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x], [TensorType(self.dtype, x.type.shape)])

    def perform(self, node, inputs):
        return [np.asarray(inputs[0]).astype(self.dtype)]

    def static_value(self, node, index):
        try:
            return np.asarray(get_scalar_constant_value(node.inputs[0])).astype(self.dtype)[()]
        except NotConstantError:
            return None

    def __str__(self) -> str:
        return f"Cast{{{self.dtype}}}"


def cast(x, dtype) -> Variable:
    """``x`` as ``dtype`` (``x`` itself when it already has that dtype)."""
    x = as_tensor_variable(x)
    return x if x.dtype == normalize_dtype(dtype) else Cast(dtype)(x)


COMPARISONS = frozenset({"eq", "neq", "lt", "le", "gt", "ge"})
"""The elementwise ops whose result is a comparison's (a variable of these has no truth value)."""


def _wide_int_operands(args: tuple, name: str) -> list:
    """Python ints outside the other operands' int dtype are errors in arithmetic, but numpy
    takes them where it computes in a wider dtype: comparisons are exact (``x_int8 < 1000`` is
    all True) and ``true_div`` divides in float64 (``x_int8 / 1000``). Such an int becomes a
    constant of that wider dtype; the result dtype (bool, float64) is unchanged."""
    args = [a if _is_python_scalar(a) else as_tensor_variable(a) for a in args]
    dtypes = [a.dtype for a in args if isinstance(a, Variable)]
    out = []
    for a in args:
        if type(a) is int and dtypes:
            dtype = np.result_type(*dtypes, a)
            if dtype.kind in "iu" and not np.iinfo(dtype).min <= a <= np.iinfo(dtype).max:
                if name == "true_div" and builtins.abs(a) < 2**1023:
                    a = constant(float(a))
                elif name in COMPARISONS and np.iinfo(np.int64).min <= a <= np.iinfo(np.uint64).max:
                    a = constant(a)  # int64, or uint64 above int64's range
        out.append(a)
    return out


def _elemwise_function(name: str) -> Callable:
    nin = ELEMWISE_FUNCTIONS[name][0]
    op = Elemwise(name)

    def apply(*args):
        if len(args) != nin:
            raise TypeError(f"{name} takes {nin} arguments, got {len(args)}")
        if name in COMPARISONS or name == "true_div":
            args = _wide_int_operands(args, name)
        return op(*as_operands(args, name))

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = f"Elementwise ``{name}`` with numpy broadcasting and dtype rules."
    return apply


add = _elemwise_function("add")
sub = _elemwise_function("sub")
mul = _elemwise_function("mul")
true_div = _elemwise_function("true_div")
floor_div = _elemwise_function("floor_div")
mod = _elemwise_function("mod")
fmod = _elemwise_function("fmod")
fmod.__doc__ = "``numpy.fmod``: C's remainder, with the dividend's sign (``mod`` has the divisor's)."
pow = _elemwise_function("pow")
maximum = _elemwise_function("maximum")
minimum = _elemwise_function("minimum")
logaddexp = _elemwise_function("logaddexp")
eq = _elemwise_function("eq")
neq = _elemwise_function("neq")
lt = _elemwise_function("lt")
le = _elemwise_function("le")
gt = _elemwise_function("gt")
ge = _elemwise_function("ge")
and_ = _elemwise_function("and_")
or_ = _elemwise_function("or_")
xor = _elemwise_function("xor")
neg = _elemwise_function("neg")
abs = _elemwise_function("abs")
exp = _elemwise_function("exp")
log = _elemwise_function("log")
log1p = _elemwise_function("log1p")
expm1 = _elemwise_function("expm1")
sqrt = _elemwise_function("sqrt")
sin = _elemwise_function("sin")
cos = _elemwise_function("cos")
tan = _elemwise_function("tan")
tanh = _elemwise_function("tanh")
sigmoid = _elemwise_function("sigmoid")
softplus = _elemwise_function("softplus")
erf = _elemwise_function("erf")
erfc = _elemwise_function("erfc")
erfc.__doc__ = "``1 - erf(x)`` computed directly (C's ``erfc``: no cancellation for large x), in a float dtype."
arcsin = _elemwise_function("arcsin")
arccos = _elemwise_function("arccos")
arctan = _elemwise_function("arctan")
arctanh = _elemwise_function("arctanh")
erfinv = _elemwise_function("erfinv")
erfinv.__doc__ = "The inverse of ``erf`` (scipy.special's ``erfinv``): +-inf at +-1, NaN outside [-1, 1]."
erfcinv = _elemwise_function("erfcinv")
erfcinv.__doc__ = "The inverse of ``erfc`` (scipy.special's ``erfcinv``): +inf at 0, -inf at 2, NaN outside [0, 2]."
chi2sf = _elemwise_function("chi2sf")
chi2sf.__doc__ = ("``chi2sf(x, k)``: P(X > x) for X chi-squared with k degrees of freedom (Theano's name; "
                  "scipy.special's ``chdtrc(k, x)``), a float; NaN for x < 0 or k < 0.")
real = _elemwise_function("real")
real.__doc__ = "``numpy.real``: the real part of a complex x (float64 for complex128), x itself otherwise."
imag = _elemwise_function("imag")
imag.__doc__ = "``numpy.imag``: the imaginary part of a complex x, zeros of x's dtype otherwise."
angle = _elemwise_function("angle")
angle.__doc__ = "``numpy.angle``: the argument of x in (-pi, pi] (0 or pi for real x), a float."
gamma = _elemwise_function("gamma")
gamma.__doc__ = "The gamma function (scipy.special's values, poles included), in a float dtype."
gammaln = _elemwise_function("gammaln")
gammaln.__doc__ = "``log |gamma(x)|`` (scipy.special's ``gammaln``), finite where gamma overflows."
psi = _elemwise_function("psi")
psi.__doc__ = "The digamma function, the derivative of ``gammaln`` (scipy.special's ``digamma``)."
isnan = _elemwise_function("isnan")
isinf = _elemwise_function("isinf")
sign = _elemwise_function("sign")
floor = _elemwise_function("floor")
ceil = _elemwise_function("ceil")
round = _elemwise_function("round")
invert = _elemwise_function("invert")
_clip = _elemwise_function("clip")
bitwise_and, bitwise_or, bitwise_xor, bitwise_not = and_, or_, xor, invert
"""numpy's names of the bit operations (logical on bools, as numpy's)."""


def clip(x, low, high) -> Variable:
    """``numpy.clip``. As in numpy, a Python int bound beyond an integer ``x``'s range means no
    bound (``clip(x_int8, 0, 1000)`` stays int8) rather than the out-of-range error of other ops."""
    if not _is_python_scalar(x):
        x = as_tensor_variable(x)
        if np.dtype(x.dtype).kind in "iu":
            info = np.iinfo(x.dtype)
            low = int(info.min) if type(low) is int and low <= info.min else low
            high = int(info.max) if type(high) is int and high >= info.max else high
    return _clip(x, low, high)


second = _elemwise_function("second")
fill = second
"""``fill(model, value)``: ``value`` broadcast to ``model``'s shape (Theano's name)."""
neq.__doc__ = "Elementwise ``!=`` (``x != y`` in Python stays identity; use this)."


def switch(cond, if_true, if_false) -> Variable:
    """``numpy.where``: ``if_true`` where ``cond`` holds, else ``if_false`` (broadcast)."""
    cond = as_tensor_variable(cond)
    a, b = as_operands([if_true, if_false], "switch")
    return Elemwise("switch")(cond, a, b)


where = switch
