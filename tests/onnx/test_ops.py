"""ONNX lowerings of the tensor ops: each op, for each dtype numpy allows it on, exported from a
small graph compiled in mode "py", fully checked, run in onnxruntime and in onnx's reference
evaluator, and compared with mode "py" (same dtypes and shapes; ints and bools exact, floats
within ``FLOAT_TOLERANCES`` of tests/conftest.py). Narrow ints (int8, uint8) compute in int64 and
are cast back, so values cover each dtype's whole range to check numpy's wrap-around.

Indexing and set/inc_subtensor are in test_indexing.py."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.onnx.context import ExportError
from symscan.tensor.elemwise import ELEMWISE_FUNCTIONS

DTYPES = ["float64", "float32", "int64", "int32", "int8", "uint8", "bool"]
INTS = ["int64", "int32", "int8", "uint8"]


pytestmark = pytest.mark.usefixtures("quiet_numpy")


# ---------------------------------------------------------------------------- values
FLOATS = [-11.3, -3.7, -2.5, -1.5, -1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 1.5, 2.5, 3.2, 7.9]
TINY = [1e-17, -1e-17, 1e-10, -1e-12, 3e-8, 1e-300, 0.0]


def _ints(dtype, low, high, shape, rng):
    info = np.iinfo(dtype)
    return rng.integers(max(low, info.min), min(high, info.max), size=shape, endpoint=True).astype(dtype)


def full(dtype, shape, rng):
    """The dtype's whole range, its minimum and maximum included (halves for rounding)."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype[0] == "f":
        return rng.choice(FLOATS, shape).astype(dtype)
    info = np.iinfo(dtype)
    values = _ints(dtype, info.min, info.max, shape, rng)
    flat = values.reshape(-1)
    flat[:2] = [info.min, info.max][:flat.size]
    return values


def small(dtype, shape, rng):
    """Few distinct values, so comparisons see equal operands; no overflow in exp."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype[0] == "f":
        return rng.choice([-10.0, -2.5, -1.0, 0.0, 0.5, 1.0, 1.5, 3.0, 9.25], shape).astype(dtype)
    return _ints(dtype, -10, 10, shape, rng)


def wide(dtype, shape, rng):
    """Where sigmoid, tanh, softplus and erf saturate, and tiny arguments."""
    if dtype[0] != "f":
        return small(dtype, shape, rng)
    return rng.choice([-40.0, -30.0, -17.5, -5.0, -0.7, -1e-5, -1e-300, 0.0, 1e-10, 0.3, 2.0, 6.5, 30.0],
                      shape).astype(dtype)


def positive(dtype, shape, rng):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype[0] == "f":
        return rng.choice([1e-30, 0.01, 0.5, 1.0, 2.0, 17.3, 1e6], shape).astype(dtype)
    return _ints(dtype, 1, 120, shape, rng)


def near_zero_log1p(dtype, shape, rng):
    """log1p where 1 + x rounds (numpy is exact there), and its whole domain (-1, inf)."""
    if dtype[0] != "f":
        return positive(dtype, shape, rng)
    return rng.choice(TINY + [-0.999, -0.6, -0.3, 0.45, 0.6, 3.0, 1e10], shape).astype(dtype)


def near_zero_expm1(dtype, shape, rng):
    """expm1 where exp(x) - 1 cancels, and large arguments (overflow to inf included)."""
    if dtype[0] != "f":
        return small(dtype, shape, rng)
    return rng.choice(TINY + [-800.0, -30.0, -0.45, -0.6, 0.3, 0.7, 5.0, 700.0, 1000.0], shape).astype(dtype)


def divisor(dtype, shape, rng):
    """Never zero (test_division_by_zero has those); -1 and numbers like 0.1 that are not exact."""
    if dtype == "bool":
        return np.ones(shape, dtype=bool)
    if dtype[0] == "f":
        return rng.choice([-3.5, -0.7, -0.1, 0.1, 0.3, 1.0, 2.0, 4.0], shape).astype(dtype)
    values = _ints(dtype, -7, 7, shape, rng)
    return np.where(values == 0, 1, values).astype(dtype)


def base(dtype, shape, rng):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype[0] == "f":
        return rng.choice([-2.0, 0.1, 0.5, 1.0, 1.7, 3.0, 4.0], shape).astype(dtype)
    return _ints(dtype, -5, 7, shape, rng)


def exponent(dtype, shape, rng):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype[0] == "f":
        return rng.choice([-2.0, -0.5, 0.0, 1.0, 2.0, 3.0], shape).astype(dtype)
    return _ints(dtype, 0, 9, shape, rng)  # 7 ** 9 wraps int8, int32 stays exact below 2 ** 31


def nonfinite(dtype, shape, rng):
    """NaNs and infinities among ordinary values (for isnan/isinf); other dtypes as ``full``."""
    if dtype[0] != "f":
        return full(dtype, shape, rng)
    return rng.choice([np.nan, np.inf, -np.inf, 0.0, -1.5, 2.0], shape).astype(dtype)


def condition(dtype, shape, rng):
    return rng.random(shape) < 0.5


DOMAINS = {
    "add": (full, full), "sub": (full, full), "mul": (full, full), "true_div": (full, divisor),
    "floor_div": (full, divisor), "mod": (full, divisor), "fmod": (full, divisor), "pow": (base, exponent),
    "maximum": (full, full), "minimum": (full, full), "logaddexp": (wide, wide),
    "eq": (small, small), "neq": (small, small), "lt": (small, small), "le": (small, small),
    "gt": (small, small), "ge": (small, small),
    "and_": (full, full), "or_": (full, full), "xor": (full, full), "second": (full, full),
    "neg": (full,), "abs": (full,), "exp": (wide,), "log": (positive,), "log1p": (near_zero_log1p,),
    "expm1": (near_zero_expm1,), "sqrt": (positive,), "sin": (small,), "cos": (small,), "tan": (small,),
    "tanh": (wide,), "sigmoid": (wide,), "softplus": (wide,), "erf": (wide,), "sign": (full,),
    "floor": (full,), "ceil": (full,), "round": (full,), "invert": (full,),
    "switch": (condition, full, full), "clip": (full, small, small),
    "isnan": (nonfinite,), "isinf": (nonfinite,),
}
NO_ONNX_OP = {"erfinv", "gamma", "gammaln", "psi", "erfc", "erfcinv", "chi2sf", "real", "imag", "angle"}
"""Elementwise ops ONNX (onnxruntime) has no operator for: export refuses them, naming the op."""
FLOAT32_ONLY = {"arcsin", "arccos", "arctan", "arctanh"}
"""Exported in float32 only (tests/tensor/test_special_more.py checks them)."""
SHAPES = [(4, 5), (5,), (1, 5)]  # the other operands broadcast against the first


def test_every_elementwise_op_has_a_domain():
    assert set(DOMAINS) | NO_ONNX_OP | FLOAT32_ONLY == set(ELEMWISE_FUNCTIONS)


@pytest.mark.parametrize("name", sorted(NO_ONNX_OP))
def test_elementwise_ops_without_onnx_operator_refuse_export(name):
    x = T.dvector("x")
    with pytest.raises(ExportError, match=f"Elemwise{{{name}}} has no ONNX lowering"):
        ss.function([x], getattr(T, name)(*[x] * ELEMWISE_FUNCTIONS[name][0]), mode="onnxruntime")


def _elemwise(name, *xs):
    return getattr(T, name)(*xs)


def _valid(name: str, dtype: str) -> bool:
    """numpy defines ``name`` for operands of ``dtype`` (``switch``: its branches)."""
    xs = [T.tensor("bool" if (name, i) == ("switch", 0) else dtype, (None,)) for i in range(len(DOMAINS[name]))]
    try:
        _elemwise(name, *xs)
    except TypeError:
        return False
    return True


CASES = [(name, dtype) for name in sorted(DOMAINS) for dtype in DTYPES if _valid(name, dtype)]


@pytest.mark.parametrize("name, dtype", CASES, ids=[f"{n}-{d}" for n, d in CASES])
def test_elementwise(onnx_agree, rng, name, dtype):
    makers = DOMAINS[name]
    dtypes = ["bool" if (name, i) == ("switch", 0) else dtype for i in range(len(makers))]
    xs = [T.tensor(d, (None,) * len(shape), name=f"x{i}") for i, (d, shape) in enumerate(zip(dtypes, SHAPES))]
    values = [make(d, shape, rng) for make, d, shape in zip(makers, dtypes, SHAPES)]
    onnx_agree(xs, _elemwise(name, *xs), *values)


def test_elementwise_ops_on_every_dtype_are_covered():
    """Each op is checked on several dtypes; the ones numpy refuses are exactly the expected."""
    refused = {(n, d) for n in DOMAINS for d in DTYPES} - set(CASES)
    assert refused == {("sub", "bool"), ("neg", "bool"), ("sign", "bool")} | {
        (n, d) for n in ("and_", "or_", "xor", "invert") for d in ("float64", "float32")}


MIXED = [("int8", "uint8"), ("int8", "float32"), ("int32", "float32"), ("bool", "int8"), ("uint8", "int64"),
         ("int64", "float64"), ("int32", "int8"), ("bool", "float32"), ("uint8", "float64")]
MIXED_OPS = ["add", "sub", "mul", "true_div", "floor_div", "mod", "pow", "maximum", "minimum", "lt", "eq",
             "and_", "xor"]


@pytest.mark.parametrize("a_dtype, b_dtype", MIXED, ids=["-".join(p) for p in MIXED])
def test_mixed_dtypes_compute_like_numpy(onnx_agree, rng, a_dtype, b_dtype):
    """Operands of different dtypes are cast to the dtype numpy computes in (int8 + uint8 is int16)."""
    a, b = T.tensor(a_dtype, (None, None), name="a"), T.tensor(b_dtype, (None,), name="b")
    outputs = []
    for name in MIXED_OPS:
        try:
            outputs.append(_elemwise(name, a, b))
        except TypeError:  # numpy refuses it too (bitwise ops on floats, bool - bool)
            continue
    a_value = DOMAINS["add"][0](a_dtype, (4, 5), rng)
    b_value = np.abs(divisor(b_dtype, (5,), rng)) if b_dtype != "int8" else _ints("int8", 1, 5, (5,), rng)
    onnx_agree([a, b], outputs, a_value, b_value.astype(b_dtype))
    assert {o.dtype for o in outputs} >= {np.result_type(a_dtype, b_dtype).name}


def test_python_scalars_keep_the_tensor_dtype(onnx_agree):
    """NEP 50: Python scalars take the tensor's dtype (x_int8 + 100 wraps in int8, x_uint8 * 3 in uint8)."""
    x, u, f = T.bvector("x"), T.tensor("uint8", (None,), name="u"), T.fvector("f")
    outputs = [x + 100, x * 3, x // 3, x % -3, x ** 3, u * 3, u - 1, 2 - u, f * 0.1, f + 1, x < 1000, u > -1,
               x / 1000, T.clip(x, 0, 1000), T.maximum(u, 7)]
    onnx_agree([x, u, f], outputs, np.array([-128, -1, 0, 50, 127], dtype="int8"),
               np.array([0, 1, 100, 255, 7], dtype="uint8"), np.array([0.5, -2, 3e8, 1e-3, 7], dtype="float32"))


def test_integer_wrap_around_like_numpy(onnx_agree):
    """Overflowing integer arithmetic wraps like numpy's in every integer dtype, also where ONNX
    computes in a wider dtype (narrow ints) or through double (onnxruntime's integer Pow)."""
    outputs, values = [], []
    for i, dtype in enumerate(INTS):
        info = np.iinfo(dtype)
        a, b = T.tensor(dtype, (None,), name=f"a{i}"), T.tensor(dtype, (None,), name=f"b{i}")
        outputs += [a + b, a - b, a * b, -a, abs(a), a ** b, a // b, a % b, T.sum(a), T.prod(a), T.cumsum(a),
                    T.cumprod(a), T.dot(a, b), T.outer(a, b)]
        values += [np.array([info.max, info.min, 3, info.max // 2 + 1, 7], dtype=dtype),
                   np.array([1, info.max, 40, 2, 23], dtype=dtype)]
    onnx_agree([v for o in [outputs] for v in _inputs_of(o)], outputs, *values)


def _inputs_of(outputs):
    from symscan.graph.traversal import graph_inputs

    return [v for v in graph_inputs(outputs) if v.name and v.name[0] in "ab" and not hasattr(v, "data")]


def test_integer_powers_are_exact(onnx_agree):
    """Exact where the value needs more than double's 53 bits, wrapping where it overflows."""
    a, b = T.lvector("a"), T.lvector("b")
    i, j = T.ivector("i"), T.ivector("j")
    onnx_agree([a, b, i, j], [a ** b, i ** j, a ** 2, 3 ** b],
               np.array([3, 7, 3, 2, -3, 0, 1, -1, 5]), np.array([33, 22, 40, 63, 39, 0, 70, 71, 0]),
               np.array([3, -7, 2, 46341, 10], dtype="int32"), np.array([19, 11, 31, 2, 0], dtype="int32"))


def test_integer_powers_of_empty_and_zero_exponents(onnx_agree):
    a, b = T.lvector("a"), T.lmatrix("b")
    onnx_agree([a, b], a ** b, np.zeros(0, dtype="int64"), np.zeros((3, 0), dtype="int64"))
    onnx_agree([a, b], a ** b, np.array([5, -2]), np.zeros((3, 2), dtype="int64"))


@pytest.mark.parametrize("dtype", INTS + ["bool"])
def test_integer_division_by_zero_and_by_minus_one(onnx_agree, dtype):
    """numpy's ``x // 0`` and ``x % 0`` are 0, ``MIN // -1`` wraps to MIN and ``MIN % -1`` is 0;
    onnxruntime's Div and Mod fail there or kill the process (SIGFPE)."""
    a, b = T.tensor(dtype, (None,), name="a"), T.tensor(dtype, (None,), name="b")
    if dtype == "bool":
        values = np.array([True, False, True, False]), np.array([False, False, True, True])
    else:
        info = np.iinfo(dtype)
        low = info.min if info.min else 200
        values = (np.array([low, low, info.max, 7, 0, -7 if info.min else 9], dtype=dtype),
                  np.array([0, -1 if info.min else 1, 0, 0, 0, -1 if info.min else 255], dtype=dtype))
    onnx_agree([a, b], [a // b, a % b, a / b], *values)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_float_floor_division_and_modulo_like_numpy(onnx_agree, dtype):
    """numpy's divmod: 1.0 // 0.1 is 9.0 (floor(1.0 / 0.1) is 10), signs of the divisor, division
    by zero (inf, nan), infinities."""
    a, b = T.tensor(dtype, (None,), name="a"), T.tensor(dtype, (None,), name="b")
    inf, big, tiny = np.inf, np.finfo(dtype).max / 4, np.finfo(dtype).tiny * 4
    av = np.array([1.0, -1.0, 7.0, -7.0, 0.3, 5.0, 0.0, 3.0, -3.0, inf, 2.0, -2.0, big, 0.0, 6.0], dtype=dtype)
    bv = np.array([0.1, 0.1, -0.7, -0.7, 0.1, 0.0, 0.0, -0.0, 0.0, 2.0, inf, inf, tiny, -2.5, 2.0], dtype=dtype)
    onnx_agree([a, b], [a // b, a % b], av, bv)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_nan_and_infinities_like_numpy(onnx_agree, dtype):
    x, y = T.tensor(dtype, (None,), name="x"), T.tensor(dtype, (None,), name="y")
    outputs = [T.maximum(x, y), T.minimum(x, y), T.clip(x, -1.0, y), x < y, T.eq(x, y), T.neq(x, y), T.sign(x),
               T.round(x), T.floor(x), T.abs(x), T.sigmoid(x), T.softplus(x), T.tanh(x), T.erf(x), T.log1p(x),
               T.expm1(x), T.exp(x), x ** y, T.switch(x > 0, x, y), T.cast(x, "bool")]
    nan, inf = np.nan, np.inf
    onnx_agree([x, y], outputs, np.array([nan, 1.0, nan, inf, -inf, inf, 0.0, -inf], dtype=dtype),
               np.array([1.0, nan, nan, 2.0, 3.0, inf, nan, -inf], dtype=dtype))


# ---------------------------------------------------------------------------- casts, switch, fill
CAST_DTYPES = DTYPES + ["int16", "uint16", "float16"]


def _castable(src: str, dst: str, rng) -> np.ndarray:
    """Values of ``src`` whose conversion to ``dst`` is defined (float -> int: in range)."""
    if src[0] == "f":
        values = [-3.7, -1.5, -0.5, 0.0, 0.5, 1.5, 2.9, 100.7, 127.2]
        if dst[0] == "u" or dst == "bool":
            values = [v for v in values if v >= 0 or dst == "bool"]
        return np.array(values, dtype=src)
    return full(src, (12,), rng)


CASTS = [(s, d) for s in CAST_DTYPES for d in CAST_DTYPES]


@pytest.mark.parametrize("src, dst", CASTS, ids=[f"{s}-{d}" for s, d in CASTS])
def test_cast(onnx_agree, rng, src, dst):
    """numpy's astype: truncation toward zero, wrap-around between ints, nonzero is True."""
    x = T.tensor(src, (None,), name="x")
    out = T.cast(x, dst)
    onnx_agree([x], [out, x.astype(dst) * 1], _castable(src, dst, rng))


@pytest.mark.parametrize("dtype", DTYPES)
def test_switch_with_conditions_of_any_dtype(onnx_agree, rng, dtype):
    """The condition is true where nonzero; the branches broadcast and promote like numpy.where."""
    c = T.tensor(dtype, (None, 1), name="c")
    a, b = T.fvector("a"), T.tensor(dtype, (), name="b")
    onnx_agree([c, a, b], [T.switch(c, a, b), T.where(c, b, c), T.switch(c, 1, 0)], small(dtype, (4, 1), rng),
               np.arange(3, dtype="float32"), full(dtype, (), rng))


@pytest.mark.parametrize("dtype", DTYPES)
def test_fill_second_zeros_like_ones_like(onnx_agree, rng, dtype):
    x, v = T.tensor(dtype, (None, None), name="x"), T.tensor(dtype, (None,), name="v")
    outputs = [T.fill(x, v), T.second(x, 3), T.fill(v, x), T.zeros_like(x), T.ones_like(x), T.zeros_like(x, "int8"),
               T.ones_like(v, dtype="float32"), T.fill(x, np.float32(2.5))]
    onnx_agree([x, v], outputs, full(dtype, (2, 3), rng), full(dtype, (3,), rng))


# ---------------------------------------------------------------------------- reductions
def exact(dtype, shape, rng):
    """Floats whose sums and products are exact in any order (so float32 results compare at
    rtol 1e-6 even with cancellation); ints over the whole range (sums and products wrap)."""
    if dtype[0] == "f":
        return rng.choice([-2.0, -1.0, -0.75, -0.5, 0.25, 0.5, 1.0, 1.5, 2.0, 4.0], shape).astype(dtype)
    return full(dtype, shape, rng)


AXES = [None, 0, 1, -1, (0, 2), (2, 0), (1, 2), (0, 1, 2), ()]
REDUCTIONS = ["sum", "prod", "max", "min", "mean", "all", "any"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", REDUCTIONS)
def test_reduction(onnx_agree, rng, kind, dtype):
    """Every axis form (None, int, negative, tuple in any order, empty tuple) with and without keepdims,
    on 3-d, 1-d and 0-d inputs; the method forms too."""
    x, v, s = (T.tensor(dtype, (None,) * n, name=name) for n, name in ((3, "x"), (1, "v"), (0, "s")))
    fn = getattr(T, kind)
    outputs = [fn(x, axis=axis, keepdims=keep) for axis in AXES for keep in (False, True)]
    outputs += [fn(v), fn(v, axis=0, keepdims=True), fn(s), fn(s, keepdims=True)]
    if kind in ("sum", "prod", "max", "min", "mean"):
        outputs += [getattr(x, kind)(axis=1), getattr(v, kind)()]
    onnx_agree([x, v, s], outputs, exact(dtype, (3, 4, 5), rng), exact(dtype, (7,), rng), exact(dtype, (), rng))


@pytest.mark.parametrize("kind", ["sum", "prod", "mean", "all", "any"])
def test_reduction_over_empty_axes(onnx_agree, kind):
    x, i = T.matrix("x"), T.lmatrix("i")
    fn = getattr(T, kind)
    outputs = [fn(x), fn(x, axis=0), fn(x, axis=1, keepdims=True), fn(i), fn(i, axis=0), fn(i, axis=(0, 1))]
    onnx_agree([x, i], outputs, np.zeros((3, 0)), np.zeros((0, 2), dtype="int64"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["argmax", "argmin"])
def test_argmax_argmin(onnx_agree, rng, kind, dtype):
    """The first of equal extremes, like numpy; axis None (flattened), int, negative; keepdims."""
    x, v = T.tensor(dtype, (None, None, None), name="x"), T.tensor(dtype, (None,), name="v")
    fn = getattr(T, kind)
    outputs = [fn(x, axis=axis, keepdims=keep) for axis in (None, 0, 1, -1) for keep in (False, True)] + [fn(v)]
    onnx_agree([x, v], outputs, small(dtype, (3, 4, 5), rng), small(dtype, (6,), rng))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["cumsum", "cumprod"])
def test_cumulative(onnx_agree, rng, kind, dtype):
    x, v = T.tensor(dtype, (None, None), name="x"), T.tensor(dtype, (None,), name="v")
    fn = getattr(T, kind)
    outputs = [fn(x), fn(x, axis=0), fn(x, axis=1), fn(x, axis=-1), fn(v), fn(v, axis=0)]
    onnx_agree([x, v], outputs, exact(dtype, (3, 4), rng), exact(dtype, (5,), rng))


@pytest.mark.parametrize("kind", ["cumsum", "cumprod"])
def test_cumulative_over_empty_axes(onnx_agree, kind):
    x = T.matrix("x")
    fn = getattr(T, kind)
    onnx_agree([x], [fn(x), fn(x, axis=0), fn(x, axis=1)], np.zeros((0, 3)))
    onnx_agree([x], [fn(x), fn(x, axis=0), fn(x, axis=1)], np.zeros((3, 0)))


# ---------------------------------------------------------------------------- products
DOT_SHAPES = [((), ()), ((), (2, 3)), ((2, 3), ()), ((4,), (4,)), ((2, 4), (4,)), ((4,), (4, 3)), ((2, 4), (4, 3)),
              ((2, 3, 4), (4, 5)), ((2, 3, 4), (4,)), ((4,), (2, 4, 5)), ((2, 3, 4), (5, 4, 6)),
              ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (2, 4, 3)), ((2, 0), (0, 3)), ((0, 4), (4,))]


@pytest.mark.parametrize("dtype", DTYPES)
def test_dot(onnx_agree, rng, dtype):
    """numpy's dot for 0-d, 1-d, 2-d and n-d operands (n-d by matrix, n-d by n-d), empty sums."""
    inputs, outputs, values = [], [], []
    for k, (sa, sb) in enumerate(DOT_SHAPES):
        a = T.tensor(dtype, (None,) * len(sa), name=f"a{k}")
        b = T.tensor(dtype, (None,) * len(sb), name=f"b{k}")
        inputs += [a, b]
        outputs.append(T.dot(a, b))
        values += [exact(dtype, sa, rng), exact(dtype, sb, rng)]
    onnx_agree(inputs, outputs, *values)


MATMUL_SHAPES = [((4,), (4,)), ((0, 4), (4,)), ((2, 0, 4), (4,)), ((0,), (0,)), ((4,), (2, 4, 0)),
                 ((2, 4), (4,)), ((4,), (4, 3)), ((2, 4), (4, 3)), ((2, 2, 3), (3, 4)), ((1, 2, 3), (4, 3, 5)),
                 ((3,), (4, 3, 5)), ((4, 2, 3), (3,)), ((2, 1, 2, 3), (5, 3, 2))]


@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul_and_outer(onnx_agree, rng, dtype):
    inputs, outputs, values = [], [], []
    for k, (sa, sb) in enumerate(MATMUL_SHAPES):
        a = T.tensor(dtype, (None,) * len(sa), name=f"a{k}")
        b = T.tensor(dtype, (None,) * len(sb), name=f"b{k}")
        inputs += [a, b]
        outputs += [T.matmul(a, b), a @ b]
        values += [exact(dtype, sa, rng), exact(dtype, sb, rng)]
    v, m = T.tensor(dtype, (None,), name="v"), T.tensor(dtype, (None, None), name="m")
    s = T.tensor(dtype, (), name="s")
    outputs += [T.outer(v, v), T.outer(m, v), T.outer(s, m), T.outer(v, np.array([], dtype=dtype))]
    onnx_agree(inputs + [v, m, s], outputs, *values, exact(dtype, (3,), rng), exact(dtype, (2, 2), rng),
               exact(dtype, (), rng))


def test_products_of_mixed_dtypes(onnx_agree, rng):
    a, b, c = T.bmatrix("a"), T.tensor("uint8", (None, None), name="b"), T.fmatrix("c")
    outputs = [T.dot(a, b), T.dot(a, c), T.matmul(b, c), T.outer(a, b), T.dot(T.cast(a, "bool"), b)]
    onnx_agree([a, b, c], outputs, full("int8", (2, 2), rng), full("uint8", (2, 2), rng), exact("float32", (2, 2), rng))


# ---------------------------------------------------------------------------- shapes
@pytest.mark.parametrize("dtype", DTYPES)
def test_shape_ops(onnx_agree, rng, dtype):
    x = T.tensor(dtype, (None, 1, None), name="x")
    s, n = T.tensor(dtype, (), name="s"), T.lscalar("n")
    outputs = [
        T.shape(x), x.shape, x.shape[0], x.shape[-1] * 2,
        x.reshape((-1,)), x.reshape((n, -1)), T.reshape(x, (x.shape[2], -1, 1)), x.reshape((2, 3, 2)),
        T.reshape(x, T.stack([n, n * 3])), T.reshape(s, (1, 1)), T.reshape(x, (-1, 2, 1, 3)),
        x.T, T.transpose(x, (1, 2, 0)), T.transpose(x, (-1, 0, 1)),
        x.dimshuffle(2, "x", 0), x.dimshuffle(0, 2), x.dimshuffle("x", 2, 0, "x"), x.dimshuffle(2, 1, 0),
        T.dimshuffle(s, ("x", "x")),
        T.expand_dims(x, 0), T.expand_dims(x, -1), T.expand_dims(x, (0, 2)), T.expand_dims(s, 0),
        T.squeeze(x), T.squeeze(x, 1), T.squeeze(x, axis=-2), T.squeeze(T.expand_dims(s, (0, 1))),
        T.flatten(x), T.flatten(x, 2), T.flatten(x, 3), x.flatten(), T.flatten(s),
        T.concatenate([x, x[:1]], axis=0), T.concatenate([x, x], axis=2), T.concatenate([x, x, x], axis=-2),
        T.join(1, x, x), T.concatenate([x]),
        T.stack([x, x]), T.stack([x, x[::-1]], axis=-1), T.stack([x], axis=2), T.stack([s, s * 1, s]),
        T.make_vector([s, s]),
    ]
    onnx_agree([x, s, n], outputs, full(dtype, (3, 1, 4), rng), full(dtype, (), rng), np.int64(2))


def test_shape_ops_on_empty_and_mixed_dtypes(onnx_agree):
    x, i, b = T.matrix("x"), T.ivector("i"), T.bvector("b")
    n, k = T.lscalar("n"), T.iscalar("k")
    outputs = [x.reshape((n, -1, 3)), x.reshape((0, 5)), T.flatten(x), T.flatten(x, 2), x.T, T.shape(x),
               T.concatenate([i, b]), T.concatenate([x, T.cast(i, "float32")[None, :3]], axis=0),
               T.stack([i, b]), T.make_vector([n, k]), T.make_vector([k, k], dtype="int8"),
               T.make_vector([n, k], dtype="float64"), T.make_vector([]), T.stack([n, k])]
    onnx_agree([x, i, b, n, k], outputs, np.zeros((0, 3)), np.array([1, -2, 2 ** 31 - 1], dtype="int32"),
               np.array([-128, 5, 127], dtype="int8"), np.int64(2), np.int32(-7))


# ---------------------------------------------------------------------------- creation
@pytest.mark.parametrize("dtype", DTYPES)
def test_zeros_ones_alloc_eye(onnx_agree, rng, dtype):
    n, m = T.lscalar("n"), T.iscalar("m")
    v, s = T.tensor(dtype, (None,), name="v"), T.tensor(dtype, (), name="s")
    outputs = [T.zeros((2, 3), dtype=dtype), T.ones((n, 3), dtype=dtype), T.zeros((), dtype=dtype),
               T.ones(v.shape, dtype=dtype), T.zeros((n, 0), dtype=dtype), T.ones((m, n)),
               T.alloc(v, n, 3), T.alloc(s, 2, m), T.alloc(s), T.alloc(v, 0, 3),
               T.eye(3, dtype=dtype), T.eye(n, dtype=dtype), T.eye(n, 4, k=1, dtype=dtype),
               T.eye(3, 2, k=-1, dtype=dtype), T.eye(n, m, k=5, dtype=dtype), T.eye(m, k=-2, dtype=dtype),
               T.eye(0, 2, dtype=dtype), T.eye(2)]
    onnx_agree([n, m, v, s], outputs, np.int64(4), np.int32(3), full(dtype, (3,), rng), full(dtype, (), rng))


def test_eye_with_a_symbolic_diagonal_cannot_be_exported():
    """ONNX EyeLike takes the diagonal as an attribute: the error names the op and says what to do."""
    n, k = T.lscalar("n"), T.lscalar("k")
    f = ss.function([n, k], T.eye(n, n, k), mode="py")
    with pytest.raises(ss.onnx.ExportError, match=r"eye .*diagonal offset.*pass k as a Python int"):
        ss.onnx.export(f)


ARANGES = [(0, 5, 1), (1, 10, 3), (5, 0, -1), (4, 4, 1), (5, 1, 1), (-3, 4, 2), (7, -8, -3)]


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8", "int16"])
def test_arange_of_ints(onnx_agree, dtype):
    start, stop, step = (T.tensor(dtype, (), name=name) for name in ("start", "stop", "step"))
    n = T.lscalar("n")
    outputs = [T.arange(start, stop, step), T.arange(stop), T.arange(n), T.arange(1, n, 2), T.arange(n, 0, -1),
               T.arange(0, 5, dtype=dtype), T.arange(stop, dtype="float32"), T.arange(n, dtype=dtype)]
    for a, b, c in ARANGES:
        if dtype == "uint8" and (min(a, b, c) < 0 or (b - a) * c < 0):
            continue  # numpy computes stop - start in uint8: arange(5, 1) would have 252 elements
        onnx_agree([start, stop, step, n], outputs, *(np.array(v, dtype=dtype) for v in (a, b, c)), np.int64(6))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_arange_of_floats(onnx_agree, dtype):
    """numpy computes ``start + i * delta`` (``delta = (start + step) - start``); a running sum
    would drift, visibly near zero."""
    start, stop, step = (T.tensor(dtype, (), name=name) for name in ("start", "stop", "step"))
    outputs = [T.arange(start, stop, step), T.arange(0.0, 1.0, 0.1), T.arange(-1, 1, 0.1, dtype=dtype),
               T.arange(stop), T.arange(start, stop, 1)]
    for values in [(-1.0, 1.0, 0.1), (0.5, 2.0, 0.25), (3.0, -2.0, -0.3), (0.0, 0.0, 1.0), (1.0, 0.0, 0.5),
                   (-10.0, 10.0, 0.7)]:
        onnx_agree([start, stop, step], outputs, *(np.array(v, dtype=dtype) for v in values))


# ---------------------------------------------------------------------------- export
def test_an_op_without_lowering_raises_export_error_naming_it():
    x = T.vector("x")
    f = ss.function([x], x + ss.RandomStream(1).normal(size=(3,)), mode="py")
    with pytest.raises(ss.onnx.ExportError, match=r"RandomVariable\{normal.* cannot be exported") as info:
        ss.onnx.export(f)
    assert isinstance(info.value, NotImplementedError)
    assert "pass them in" in str(info.value)


def test_export_writes_a_loadable_file(tmp_path, onnx_agree):
    import onnx
    import onnxruntime as ort

    x = T.matrix("x")
    f = ss.function([x], [x.sum(axis=0), x.T @ x], mode="py")
    path = tmp_path / "model.onnx"
    model = ss.onnx.export(f, path=str(path))
    loaded = onnx.load(str(path))
    assert loaded.SerializeToString() == model.SerializeToString()
    onnx.checker.check_model(str(path), full_check=True)
    xv = np.arange(6.0).reshape(2, 3)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for got, want in zip(session.run(None, {"x": xv}), f(xv)):
        np.testing.assert_array_equal(got, want)


def test_default_opset_is_recent_and_runs_in_onnxruntime(onnx_agree):
    import onnx

    assert ss.onnx.default_opset() >= 16
    assert ss.onnx.default_opset() <= onnx.defs.onnx_opset_version()
    x = T.matrix("x")
    model = onnx_agree([x], [x.max(axis=1), T.squeeze(x[:1], 0), x.astype("int32") & 6], np.arange(6.0).reshape(2, 3))
    assert [(o.domain, o.version) for o in model.opset_import] == [("", ss.onnx.default_opset())]


def test_opset_16_reductions_and_squeeze(onnx_agree, rng):
    """Before opset 18 the Reduce* ops (but ReduceSum) take their axes as an attribute; Squeeze and
    Unsqueeze take them as an input from opset 13."""
    x, i, b = T.tensor3("x"), T.tensor("int8", (None, 1, None), name="i"), T.tensor("bool", (None, None), name="b")
    outputs = [fn(x, axis=axis, keepdims=keep) for fn in (T.sum, T.prod, T.max, T.min, T.mean)
               for axis in (None, 1, (0, 2)) for keep in (False, True)]
    outputs += [T.all(b, axis=0), T.any(b, axis=(0, 1), keepdims=True), T.sum(i, axis=(0, 2)), T.prod(i, axis=1),
                T.argmax(x, axis=1, keepdims=True), T.squeeze(i, 1), T.squeeze(i), T.expand_dims(x, (0, 3)),
                i.dimshuffle(2, 0), T.flatten(x, 2), T.cumprod(x, axis=1), x.mean()]
    model = onnx_agree([x, i, b], outputs, exact("float64", (2, 3, 4), rng), full("int8", (3, 1, 2), rng),
                       small("bool", (2, 3), rng), opset=16)
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 16)]
    kinds = {(n.op_type, len(n.input), any(a.name == "axes" for a in n.attribute)) for n in model.graph.node}
    assert ("ReduceMax", 1, True) in kinds and ("ReduceSum", 2, False) in kinds and ("Squeeze", 2, False) in kinds


def test_opsets_too_old_or_without_bitwise_ops():
    x = T.ivector("x")
    f = ss.function([x], x & 3, mode="py")
    with pytest.raises(ValueError, match="opset 15 is too old"):
        ss.onnx.export(f, opset=15)
    with pytest.raises(ss.onnx.ExportError, match="bitwise and_ on integers needs opset 18"):
        ss.onnx.export(f, opset=16)
    b = T.tensor("bool", (None,), name="b")
    ss.onnx.export(ss.function([b], [b & ~b, b ^ b, b | b], mode="py"), opset=16)  # bools need no bitwise ops


def test_inputs_and_outputs_keep_the_variable_names(onnx_agree):
    x, weights = T.vector("x"), T.matrix("weights")
    score = T.dot(weights, x)
    score.name = "score"
    model = onnx_agree([x, weights], [score, score, x, score * 2], np.ones(3), np.arange(6.0).reshape(2, 3))
    assert [i.name for i in model.graph.input] == ["x", "weights"]
    names = [o.name for o in model.graph.output]
    assert names[0] == "score" and len(set(names)) == 4  # repeated values and inputs get unique names
    assert names[1].startswith("score") and names[2].startswith("x")
    typed = {i.name: (i.type.tensor_type.elem_type, len(i.type.tensor_type.shape.dim)) for i in model.graph.input}
    assert typed == {"x": (11, 1), "weights": (11, 2)}  # 11 is DOUBLE


def test_exporting_output_variables_finds_the_inputs():
    import onnx

    x, n = T.vector("x"), T.lscalar("n")
    model = ss.onnx.export([x[:n] * 2, T.arange(n)])
    onnx.checker.check_model(model, full_check=True)
    assert sorted(i.name for i in model.graph.input) == ["n", "x"]
    model = ss.onnx.export(x * 2, inputs=[x])
    assert [i.name for i in model.graph.input] == ["x"]


def test_shared_variables_are_inputs_with_initializers(onnx_agree):
    """Shared variables follow the function's inputs, initialized with their current values: they
    may be left out of the feeds (or fed); updated values follow the outputs."""
    import onnxruntime as ort
    from onnx import numpy_helper

    x = T.vector("x")
    w = ss.shared(np.array([1.0, -2.0, 0.5]), name="w")
    count = ss.shared(np.int64(3), name="count")
    scale = ss.shared(np.float32(2.0))
    out = T.dot(x, w) * scale
    model = onnx_agree([x], out, np.array([1.0, 2.0, 3.0]), updates={count: count + 1, w: w * 2})
    names = [i.name for i in model.graph.input]
    assert names[0] == "x" and len(names) == 4
    (unnamed,) = set(names[1:]) - {"w", "count"}
    initial = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    assert set(initial) == set(names[1:])
    np.testing.assert_array_equal(initial["w"], w.get_value())
    assert initial["count"] == 3 and initial[unnamed].dtype == np.float32
    outputs = [o.name for o in model.graph.output]
    assert outputs[1:] == ["count_updated", "w_updated"]
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = session.run(None, {"x": np.ones(3), "w": np.array([1.0, 1.0, 1.0])})  # a shared value fed
    np.testing.assert_allclose(got[0], 6.0)
    np.testing.assert_array_equal(got[2], [2.0, 2.0, 2.0])
    assert w.get_value()[1] == -2.0 and count.get_value() == 3  # exporting changes no shared value


# ---------------------------------------------------------------------------- Theano-port ops
@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
def test_specify_shape_passes_a_value_of_that_shape(onnx_agree, rng, dtype):
    x, n = T.tensor(dtype, (None, None), name="x"), T.lscalar("n")
    checked = T.specify_shape(x, (n, 3))
    model = onnx_agree([x, n], [checked, checked.sum(axis=0)], full(dtype, (2, 3), rng), np.int64(2))
    assert [node.op_type for node in model.graph.node].count("If") == 1  # the guard


def test_specify_shape_of_a_scalar_and_of_a_shape_vector(onnx_agree):
    s, x, shape = T.scalar("s"), T.matrix("x"), T.lvector("shape")
    onnx_agree([s, x, shape], [T.specify_shape(s, ()) * 2.0, T.specify_shape(x, shape)],
               np.float64(1.5), np.ones((2, 4)), np.array([2, 4]))


@pytest.mark.parametrize("bad", [(3, 2), (2, 4), (1, 3)])
def test_specify_shape_fails_in_onnxruntime_with_the_message(bad):
    x = T.matrix("x")
    f = ss.function([x], T.specify_shape(x, (2, 3)) + 1.0, mode="onnxruntime")
    np.testing.assert_array_equal(f(np.zeros((2, 3))), np.ones((2, 3)))
    expected = r"^specify_shape: 'x' \(float64\[\?, \?\]\) does not have the shape specified"
    with pytest.raises(ValueError, match=expected):
        f(np.ones(bad))


def test_reshape_by_a_vector_with_ndim_exports(onnx_agree, rng):
    x, shape = T.vector("x"), T.lvector("shape")
    onnx_agree([x, shape], T.reshape(x, shape, ndim=2), rng.normal(size=12), np.array([3, -1]))
    f = ss.function([x, shape], T.reshape(x, shape, ndim=2), mode="onnxruntime")
    with pytest.raises(ValueError, match=r"reshape\(\.\.\., ndim=2\): 'shape'.*pass a shape of 2 entries"):
        f(np.ones(12), np.array([2, 2, 3]))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_var_std_and_copy_export(onnx_agree, rng, dtype):
    x = T.tensor(dtype, (None, None), name="x")
    outputs = [x.var(), x.std(axis=0, ddof=1), x.var(axis=1, keepdims=True, corrected=True), x.copy()]
    onnx_agree([x], outputs, (rng.normal(size=(4, 3)) * 5).astype(dtype))


def test_multinomial_is_not_exported():
    f = ss.function([], ss.RandomStream(1).multinomial(n=3, pvals=[0.5, 0.5]), mode="py")
    with pytest.raises(ss.onnx.ExportError, match=r"RandomVariable\{multinomial, int64\} cannot be exported"):
        ss.onnx.export(f)
