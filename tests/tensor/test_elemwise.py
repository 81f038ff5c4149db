"""Elementwise ops checked against numpy: values, dtypes, static shapes, broadcasting, errors.

Every expectation is computed with numpy in the test; graphs run in the reference
interpreter (``mode="py"``) and in mode "fast", which must give exactly the same results
(see tests/support/both_modes.py).
"""

import builtins
import math
import warnings

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symscan as ss
import symscan.tensor as T

import both_modes

DTYPES = ["bool", "int8", "int32", "int64", "uint8", "float32", "float64"]
FLOAT_DTYPES = ["float32", "float64"]
INT_DTYPES = ["int8", "int32", "int64", "uint8"]

HYP = settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

BINARY = {
    "add": (T.add, np.add), "sub": (T.sub, np.subtract), "mul": (T.mul, np.multiply),
    "true_div": (T.true_div, np.true_divide), "floor_div": (T.floor_div, np.floor_divide),
    "mod": (T.mod, np.mod), "fmod": (T.fmod, np.fmod), "pow": (T.pow, np.power), "maximum": (T.maximum, np.maximum),
    "minimum": (T.minimum, np.minimum), "eq": (T.eq, np.equal), "neq": (T.neq, np.not_equal),
    "lt": (T.lt, np.less), "le": (T.le, np.less_equal), "gt": (T.gt, np.greater),
    "ge": (T.ge, np.greater_equal), "and_": (T.and_, np.bitwise_and), "or_": (T.or_, np.bitwise_or),
    "xor": (T.xor, np.bitwise_xor),
}
COMPARISONS = {"eq", "neq", "lt", "le", "gt", "ge"}

UNARY = {
    "neg": (T.neg, np.negative), "abs": (T.abs, np.abs), "exp": (T.exp, np.exp), "log": (T.log, np.log),
    "log1p": (T.log1p, np.log1p), "expm1": (T.expm1, np.expm1), "sqrt": (T.sqrt, np.sqrt),
    "sin": (T.sin, np.sin), "cos": (T.cos, np.cos), "tan": (T.tan, np.tan), "tanh": (T.tanh, np.tanh),
    "sign": (T.sign, np.sign), "floor": (T.floor, np.floor), "ceil": (T.ceil, np.ceil),
    "round": (T.round, np.round), "invert": (T.invert, np.invert),
}


# ---------------------------------------------------------------------------- helpers
def evaluate(inputs, output, *values):
    """Run ``output`` in the reference interpreter and in mode "fast" (numpy warnings silenced, as
    for the oracle); the modes agree exactly; returns the reference result."""
    with np.errstate(all="ignore"):
        return np.asarray(both_modes.run(inputs, output, *values))


def reference(fn, *values):
    with np.errstate(all="ignore"):
        return np.asarray(fn(*values))


def numpy_dtype_or_error(fn, dtypes):
    """numpy's result dtype for these input dtypes, or None when numpy has no loop for them."""
    try:
        with np.errstate(all="ignore"):
            return np.asarray(fn(*[np.ones((1,), dtype=d) for d in dtypes])).dtype
    except TypeError:
        return None


def assert_same(actual, expected):
    """Same dtype, same shape and exactly the same values (NaNs in the same places)."""
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_array_equal(actual, expected)


def expected_static_shape(static_shapes, result_shape):
    """The best static shape: a length is known where some operand's known length is not 1,
    or every operand's length on that axis is known."""
    ndim = len(result_shape)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in static_shapes]
    out = []
    for axis, lengths in enumerate(zip(*padded)):
        informative = any(n is not None and n != 1 for n in lengths) or None not in lengths
        out.append(result_shape[axis] if informative else None)
    return tuple(out)


def elements(dtype):
    """Small values, so integer ops stay meaningful and floats stay finite."""
    if dtype == "bool":
        return st.booleans()
    if dtype in INT_DTYPES:
        return st.integers(0 if dtype == "uint8" else -20, 20)
    return st.floats(-20, 20, width=32 if dtype == "float32" else 64, allow_subnormal=False)


@st.composite
def operands(draw, nin, dtypes=DTYPES, max_dims=3):
    """``nin`` numpy arrays of mutually broadcastable shapes, and static shapes with some lengths hidden."""
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=nin, min_dims=0, max_dims=max_dims,
                                                    min_side=0, max_side=3)).input_shapes
    dts = [draw(st.sampled_from(dtypes)) for _ in range(nin)]
    values = [draw(hnp.arrays(dt, shape, elements=elements(dt))) for dt, shape in zip(dts, shapes)]
    static = [tuple(n if draw(st.booleans()) else None for n in shape) for shape in shapes]
    return values, static


def symbolic_inputs(values, static, names="abcdefg"):
    return [T.tensor(v.dtype, s, name=n) for v, s, n in zip(values, static, names)]


def check_against_numpy(fn, np_fn, values, static):
    """Build ``fn`` on inputs like ``values``; compare dtype, static shape and values with numpy."""
    xs = symbolic_inputs(values, static)
    want_dtype = numpy_dtype_or_error(np_fn, [v.dtype for v in values])
    if want_dtype is None:
        with pytest.raises(TypeError):
            fn(*xs)
        return
    out = fn(*xs)
    assert out.dtype == want_dtype.name
    expected = reference(np_fn, *values)
    assert out.type.shape == expected_static_shape(static, expected.shape)
    assert_same(evaluate(xs, out, *values), expected)


# ---------------------------------------------------------------------------- binary ops
@pytest.mark.parametrize("name", sorted(BINARY))
@HYP
@given(data=st.data())
def test_binary_matches_numpy(name, data):
    fn, np_fn = BINARY[name]
    values, static = data.draw(operands(2))
    if name == "pow" and values[1].dtype.kind in "iu":
        values[1] = np.abs(values[1])  # numpy refuses negative integer powers of integers
    check_against_numpy(fn, np_fn, values, static)


@pytest.mark.parametrize("name", sorted(BINARY))
@HYP
@given(data=st.data())
def test_binary_with_python_scalar_matches_numpy(name, data):
    """NEP 50: the Python number is weak, on either side; out-of-range ints are build-time errors
    where numpy raises OverflowError (comparisons stay exact)."""
    fn, np_fn = BINARY[name]
    (value,), (static,) = data.draw(operands(1))
    # ints beyond int64/uint64 are left out: numpy compares with them, symscan refuses them
    scalar = data.draw(st.one_of(st.booleans(), st.integers(-300, 300), st.integers(-2**63, 2**64 - 1),
                                 st.floats(-1e3, 1e3, allow_nan=False)))
    scalar_first = data.draw(st.booleans())
    if name == "pow" and value.dtype.kind in "biu":  # numpy refuses negative integer powers of integers
        if scalar_first:
            value = np.abs(value)
        elif type(scalar) is int:
            scalar = builtins.abs(scalar) % 4
    x = T.tensor(value.dtype, static, "x")
    args, np_args = ((scalar, x), (scalar, value)) if scalar_first else ((x, scalar), (value, scalar))
    try:
        with np.errstate(all="ignore"):
            expected = np.asarray(np_fn(*np_args))
    except OverflowError:
        if name in COMPARISONS and value.dtype == bool:
            # numpy overflows comparing bools with ints beyond int64; symscan compares exactly
            expected = np.vectorize(lambda v: bool(np_fn(*((scalar, int(v)) if scalar_first else (int(v), scalar)))),
                                    otypes=[bool])(value)
        else:
            with pytest.raises(ValueError):
                fn(*args)
            return
    except TypeError:
        with pytest.raises(TypeError):
            fn(*args)
        return
    out = fn(*args)
    assert out.dtype == expected.dtype.name
    assert out.type.shape == static
    assert_same(evaluate([x], out, value), expected)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype_a", DTYPES)
def test_binary_dtype_table(name, dtype_a):
    """Every dtype pair: the node's dtype is numpy's, or building fails with a TypeError naming the op."""
    fn, np_fn = BINARY[name]
    for dtype_b in DTYPES:
        a, b = T.tensor(dtype_a, (None,), "a"), T.tensor(dtype_b, (None,), "b")
        want = numpy_dtype_or_error(np_fn, [dtype_a, dtype_b])
        if want is None:
            with pytest.raises(TypeError, match=name):
                fn(a, b)
        else:
            assert fn(a, b).dtype == want.name


def test_binary_values_on_known_data():
    """Integer division, modulo and power follow numpy's sign conventions exactly."""
    a_val = np.array([-7, -3, 0, 3, 7, 9], dtype="int32")
    b_val = np.array([2, -2, 5, 2, -3, 4], dtype="int32")
    a, b = T.ivector("a"), T.ivector("b")
    for fn, np_fn in [(T.floor_div, np.floor_divide), (T.mod, np.mod), (T.true_div, np.true_divide)]:
        assert_same(evaluate([a, b], fn(a, b), a_val, b_val), np_fn(a_val, b_val))
    assert_same(evaluate([a, b], T.pow(a, T.abs(b)), a_val, b_val), np.power(a_val, np.abs(b_val)))


def test_float_division_by_zero_follows_numpy():
    a_val = np.array([1.0, -1.0, 0.0, 2.5])
    b_val = np.array([0.0, 0.0, 0.0, -0.0])
    a, b = T.dvector("a"), T.dvector("b")
    for fn, np_fn in [(T.true_div, np.true_divide), (T.floor_div, np.floor_divide), (T.mod, np.mod)]:
        assert_same(evaluate([a, b], fn(a, b), a_val, b_val), reference(np_fn, a_val, b_val))


def test_integer_overflow_wraps_like_numpy():
    a_val = np.array([100, 127, -128], dtype="int8")
    a = T.bvector("a")
    assert_same(evaluate([a], a + a, a_val), reference(np.add, a_val, a_val))
    assert_same(evaluate([a], a * a, a_val), reference(np.multiply, a_val, a_val))
    assert_same(evaluate([a], -a, a_val), reference(np.negative, a_val))


# ---------------------------------------------------------------------------- unary ops
@pytest.mark.parametrize("name", sorted(UNARY))
@HYP
@given(data=st.data())
def test_unary_matches_numpy(name, data):
    fn, np_fn = UNARY[name]
    values, static = data.draw(operands(1))
    check_against_numpy(fn, np_fn, values, static)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_dtype_table(name):
    fn, np_fn = UNARY[name]
    for dtype in DTYPES:
        x = T.tensor(dtype, (2, None), "x")
        want = numpy_dtype_or_error(np_fn, [dtype])
        if want is None:
            with pytest.raises(TypeError, match=name):
                fn(x)
        else:
            out = fn(x)
            assert out.dtype == want.name
            assert out.type.shape == (2, None)


def test_round_is_half_to_even_like_numpy():
    values = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49999999999999994])
    x = T.dvector("x")
    assert_same(evaluate([x], T.round(x), values), np.round(values))


@pytest.mark.parametrize("name", ["exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "tanh"])
def test_float_functions_on_special_values(name):
    fn, np_fn = UNARY[name]
    values = np.array([-np.inf, -1.0, -0.0, 0.0, 1e-300, 1.0, 800.0, np.inf, np.nan])
    x = T.dvector("x")
    assert_same(evaluate([x], fn(x), values), reference(np_fn, values))


# ---------------------------------------------------------------------------- sigmoid, softplus, erf
def stable_sigmoid(x):
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        return np.where(x >= 0, 1 / (1 + np.exp(-x)), np.exp(x) / (1 + np.exp(x)))


def stable_softplus(x):
    x = np.asarray(x, dtype=np.float64)
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def float_tolerance(dtype):
    return {"float16": 2e-3, "float32": 2e-6, "float64": 1e-13}[np.dtype(dtype).name]


SPECIAL = {"sigmoid": (T.sigmoid, stable_sigmoid), "softplus": (T.softplus, stable_softplus),
           "erf": (T.erf, np.vectorize(math.erf, otypes=[np.float64]))}


@pytest.mark.parametrize("name", sorted(SPECIAL))
@pytest.mark.parametrize("dtype", DTYPES)
def test_special_function_dtype_is_that_of_a_float_ufunc(name, dtype):
    """Like np.exp: floats keep their dtype, ints and bools become numpy's float for them."""
    fn, _ = SPECIAL[name]
    out = fn(T.tensor(dtype, (3, None), "x"))
    assert out.dtype == np.exp(np.ones(1, dtype=dtype)).dtype.name
    assert out.type.shape == (3, None)


@pytest.mark.parametrize("name", sorted(SPECIAL))
@HYP
@given(data=st.data())
def test_special_functions_match_reference(name, data):
    fn, ref = SPECIAL[name]
    dtype = data.draw(st.sampled_from(DTYPES))
    if dtype in FLOAT_DTYPES:
        elems = st.floats(-60, 60, width=32 if dtype == "float32" else 64, allow_subnormal=False)
    else:
        elems = elements(dtype)
    value = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
                                 elements=elems))
    x = T.tensor(dtype, (None,) * value.ndim, "x")
    out = fn(x)
    got = evaluate([x], out, value)
    assert got.dtype == out.dtype and got.shape == value.shape
    tol = float_tolerance(out.dtype)
    np.testing.assert_allclose(got.astype(np.float64), ref(value.astype(np.float64)), rtol=tol, atol=tol)


def test_sigmoid_and_softplus_are_stable_at_extremes():
    values = np.array([-1e4, -1000.0, -50.0, -1e-8, 0.0, 1e-8, 50.0, 1000.0, 1e4])
    x = T.dvector("x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow in exp, no 0/0, in either mode
        sig = both_modes.run([x], T.sigmoid(x), values)
        soft = both_modes.run([x], T.softplus(x), values)
    np.testing.assert_allclose(sig, stable_sigmoid(values), rtol=1e-15, atol=0)
    np.testing.assert_allclose(soft, stable_softplus(values), rtol=1e-15, atol=0)
    assert sig[0] == 0.0 and sig[-1] == 1.0 and sig[4] == 0.5
    assert soft[-1] == 1e4 and soft[0] == 0.0 and soft[4] == np.log(2.0)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "bool", "float32"])
def test_sigmoid_of_small_dtypes(dtype):
    """Unsigned and bool inputs must not wrap around in ``-abs(x)``."""
    value = np.array([0, 1, 3, 5, 100] if dtype != "bool" else [True, False], dtype=dtype)
    x = T.tensor(dtype, (None,), "x")
    got = evaluate([x], T.sigmoid(x), value)
    np.testing.assert_allclose(got.astype(np.float64), stable_sigmoid(value), rtol=float_tolerance(got.dtype))


def test_sigmoid_float32_extremes():
    values = np.array([-200.0, -20.0, 0.0, 20.0, 200.0], dtype="float32")
    x = T.fvector("x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = both_modes.run([x], T.sigmoid(x), values)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, stable_sigmoid(values), rtol=2e-7, atol=1e-44)


def test_erf_matches_math_erf_exactly_in_float64():
    values = np.array([-np.inf, -3.0, -1.0, -1e-10, 0.0, 0.25, 0.5, 1.0, 2.0, 6.0, np.inf, np.nan])
    x = T.dvector("x")
    got = evaluate([x], T.erf(x), values)
    expected = np.array([math.erf(v) for v in values])
    assert_same(got, expected)


def test_nnet_aliases():
    x = T.dvector("x")
    value = np.array([-2.0, 0.0, 3.0])
    np.testing.assert_allclose(evaluate([x], T.nnet.sigmoid(x), value), stable_sigmoid(value), rtol=1e-15)


# ---------------------------------------------------------------------------- clip, switch/where, cast, fill
@HYP
@given(data=st.data())
def test_clip_matches_numpy(data):
    values, static = data.draw(operands(3, dtypes=["int8", "int32", "int64", "uint8", "float32", "float64"]))
    check_against_numpy(T.clip, np.clip, values, static)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32"])
@pytest.mark.parametrize("low, high", [(0, 1000), (-1000, 50), (-1000, 1000), (0.5, 1000), (-300, 2.5),
                                       (200, 300), (-300, -200), (3, 5)])
def test_clip_with_out_of_range_python_int_bounds(dtype, low, high):
    """numpy drops an int bound that lies beyond the tensor's range, and refuses one that cannot."""
    value = np.array([0, 1, 7, 100], dtype=dtype)
    x = T.tensor(dtype, (None,), "x")
    try:
        expected = np.clip(value, low, high)
    except OverflowError:
        with pytest.raises(ValueError):
            T.clip(x, low, high)
        return
    out = T.clip(x, low, high)
    assert out.dtype == expected.dtype.name
    assert_same(evaluate([x], out, value), expected)


def test_clip_with_python_bounds():
    value = np.array([-3.5, 0.0, 0.5, 2.0, 9.0], dtype="float32")
    x = T.fvector("x")
    out = T.clip(x, 0, 1)
    assert out.dtype == "float32"
    assert_same(evaluate([x], out, value), np.clip(value, 0, 1))


@HYP
@given(data=st.data())
def test_switch_matches_numpy_where(data):
    values, static = data.draw(operands(3))
    check_against_numpy(T.switch, np.where, values, static)


def test_where_is_switch_and_takes_python_scalars():
    assert T.where is T.switch
    value = np.array([-2, 0, 5], dtype="int8")
    x = T.bvector("x")
    out = T.where(x > 0, x, 0)
    assert out.dtype == "int8"  # the weak 0 takes x's dtype
    assert_same(evaluate([x], out, value), np.where(value > 0, value, 0))
    out = T.switch(x > 0, 1.5, x)
    assert out.dtype == np.where(value > 0, 1.5, value).dtype.name
    assert_same(evaluate([x], out, value), np.where(value > 0, 1.5, value))
    with pytest.raises(ValueError, match="1000"):
        T.switch(x > 0, x, 1000)


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES)
def test_cast_matches_astype(src, dst):
    if src == "bool":
        value = np.array([[True, False, True]])
    elif src in FLOAT_DTYPES:
        value = np.array([[0.0, 1.5, 99.75]], dtype=src)
    else:
        value = np.array([[0, 1, 100]], dtype=src)
    x = T.tensor(src, (None, 3), "x")
    out = T.cast(x, dst)
    if src == dst:
        assert out is x
    assert out.dtype == dst and out.type.shape == (None, 3)
    assert_same(evaluate([x], out, value), value.astype(dst))
    assert_same(evaluate([x], x.astype(dst), value), value.astype(dst))


def test_cast_accepts_numpy_dtypes_and_rejects_unsupported():
    x = T.dvector("x")
    assert T.cast(x, np.float32).dtype == "float32"
    assert T.cast(x, np.dtype("int16")).dtype == "int16"
    for bad in ["object", "datetime64[s]", "U3", "not-a-dtype"]:
        with pytest.raises(TypeError):
            T.cast(x, bad)


def test_cast_of_python_value():
    out = T.cast(3, "int8")
    assert out.dtype == "int8"
    assert_same(np.asarray(out.eval()), np.asarray(3).astype("int8"))
    assert_same(np.asarray(both_modes.evaluate(out)), np.asarray(3).astype("int8"))


@HYP
@given(data=st.data())
def test_fill_broadcasts_value_to_model(data):
    (model, value), static = data.draw(operands(2))
    a, b = symbolic_inputs([model, value], static)
    out = T.fill(a, b)
    expected = np.broadcast_to(value, np.broadcast_shapes(model.shape, value.shape))
    assert out.dtype == value.dtype.name
    assert out.type.shape == expected_static_shape(static, expected.shape)
    assert_same(evaluate([a, b], out, model, value), np.array(expected))


def test_fill_is_second_and_takes_python_scalars():
    assert T.fill is T.second
    x = T.tensor("float32", (2, None), "x")
    out = T.fill(x, 0)
    assert out.dtype == "float32" and out.type.shape == (2, None)
    value = np.arange(6, dtype="float32").reshape(2, 3)
    assert_same(evaluate([x], out, value), np.zeros_like(value))
    out = T.fill(x, 2.5)
    assert_same(evaluate([x], out, value), np.full_like(value, 2.5))


# ---------------------------------------------------------------------------- broadcasting and static shapes
STATIC_CASES = [
    ((None, 3), (1, 3), (None, 3)),
    ((None, 1), (4, None), (4, None)),
    ((2, 1, 3), (5, 1), (2, 5, 3)),
    ((), (None,), (None,)),
    ((1,), (None,), (None,)),
    ((1,), (1,), (1,)),
    ((0,), (1,), (0,)),
    ((0,), (None,), (0,)),
    ((None, None), (None,), (None, None)),
    ((), (), ()),
]


@pytest.mark.parametrize("sa, sb, want", STATIC_CASES)
def test_static_shape_inference(sa, sb, want):
    a, b = T.tensor("float64", sa, "a"), T.tensor("float64", sb, "b")
    out = a + b
    assert out.type.shape == want
    assert T.switch(T.tensor("bool", sa), a, b).type.shape == want
    # a run with concrete lengths agrees with the static shape
    def concrete(s):
        aligned = want[len(want) - len(s):] if s else ()
        return tuple(n if n is not None else (w if w is not None else 2) for n, w in zip(s, aligned))

    va, vb = np.ones(concrete(sa)), np.ones(concrete(sb))
    got = evaluate([a, b], out, va, vb)
    assert got.shape == np.broadcast_shapes(va.shape, vb.shape)
    assert all(w is None or w == g for w, g in zip(want, got.shape))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_incompatible_static_shapes_raise_naming_both_operands(name):
    fn, _ = BINARY[name]
    a, b = T.tensor("int64", (2, 3), "alpha"), T.tensor("int64", (4, 3), "beta")
    with pytest.raises(ValueError) as info:
        fn(a, b)
    assert "alpha" in str(info.value) and "beta" in str(info.value)
    # unknown lengths are checked at run time instead
    assert fn(a, T.tensor("int64", (None, 3), "gamma")).type.shape == (2, 3)


def test_incompatible_shapes_in_ternary_ops():
    c = T.tensor("bool", (2,), "cond")
    a, b = T.tensor("float64", (3,), "left"), T.tensor("float64", (1,), "right")
    with pytest.raises(ValueError) as info:
        T.switch(c, a, b)
    assert "cond" in str(info.value) and "left" in str(info.value)
    with pytest.raises(ValueError) as info:
        T.clip(a, T.tensor("float64", (4,), "low"), 1.0)
    assert "left" in str(info.value) and "low" in str(info.value)
    with pytest.raises(ValueError) as info:
        T.fill(a, T.tensor("float64", (2, 5), "val"))
    assert "left" in str(info.value) and "val" in str(info.value)


def test_incompatible_constant_operand():
    a = T.tensor("float64", (None, 3), "alpha")
    with pytest.raises(ValueError, match="alpha"):
        a + np.ones(4)
    assert (a + np.ones(3)).type.shape == (None, 3)


def test_runtime_broadcast_error_for_unknown_lengths():
    a, b = T.dvector("a"), T.dvector("b")
    f = both_modes.function([a, b], a + b)  # a ValueError in both modes
    with pytest.raises(ValueError):
        f(np.ones(2), np.ones(3))


# ---------------------------------------------------------------------------- build-time dtype errors
@pytest.mark.parametrize("fn", [T.and_, T.or_, T.xor])
@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("float64", "int32"), ("bool", "float64")])
def test_bitwise_ops_reject_floats(fn, dtypes):
    a, b = T.tensor(dtypes[0], (None,), "a"), T.tensor(dtypes[1], (None,), "b")
    with pytest.raises(TypeError, match=fn.__name__):
        fn(a, b)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_invert_rejects_floats(dtype):
    with pytest.raises(TypeError, match="invert"):
        ~T.tensor(dtype, (None,), "x")


def test_neg_and_sub_reject_bool():
    x, y = T.tensor("bool", (None,), "x"), T.tensor("bool", (None,), "y")
    with pytest.raises(TypeError, match="neg"):
        _ = -x
    with pytest.raises(TypeError, match="sub"):
        x - y
    with pytest.raises(TypeError, match="sign"):
        T.sign(x)


def test_wrong_number_of_arguments():
    x = T.dvector("x")
    with pytest.raises(TypeError):
        T.add(x)
    with pytest.raises(TypeError):
        T.exp(x, x)
    with pytest.raises(TypeError):
        T.clip(x, 0.0)


# ---------------------------------------------------------------------------- NEP 50 weak Python scalars
NEP50_CASES = [
    ("float32", "mul", 2), ("float32", "mul", 2.5), ("float32", "add", True), ("float32", "add", 1j),
    ("float32", "true_div", 3), ("float64", "pow", 2), ("float32", "maximum", 1e30),
    ("int8", "add", 100), ("int8", "add", 127), ("int8", "add", -128), ("int8", "add", 1.5),
    ("int8", "mul", 2.0), ("int8", "true_div", 2), ("int8", "lt", 5), ("int8", "and_", 3),
    ("int32", "mul", 2.0), ("int32", "add", 2**31 - 1), ("int64", "add", 2**63 - 1),
    ("uint8", "add", 255), ("uint8", "sub", 0), ("bool", "add", 1), ("bool", "and_", True),
    ("bool", "add", 1.5), ("int16", "floor_div", 3),
    # out of range for the tensor's dtype: numpy raises OverflowError, symscan a build-time ValueError
    ("int8", "add", 1000), ("int8", "add", -129), ("int8", "mul", 128), ("uint8", "add", -1),
    ("uint8", "maximum", 256), ("int32", "add", 2**31), ("int64", "add", 2**63),
    # comparisons with out-of-range ints are exact in numpy, not errors
    ("int8", "lt", 1000), ("int8", "ge", -129), ("int8", "eq", 128), ("uint8", "gt", -1), ("uint8", "neq", -1),
    ("int32", "le", 2**40), ("int64", "lt", 2**63), ("uint8", "le", 2**64 - 1),
    # so is true division, which numpy does in float64
    ("int8", "true_div", 1000), ("uint8", "true_div", -3), ("int64", "true_div", 2**63), ("bool", "true_div", 2**70),
]


@pytest.mark.parametrize("dtype, name, scalar", NEP50_CASES)
def test_python_scalars_are_weak(dtype, name, scalar):
    fn = getattr(T, name)
    np_fn = BINARY[name][1]
    value = np.array([0, 1, 2, 5], dtype=dtype)
    x = T.tensor(dtype, (None,), "x")
    for order in [(x, scalar), (scalar, x)]:
        np_args = [value if a is x else a for a in order]
        try:
            with np.errstate(all="ignore"):
                expected = np.asarray(np_fn(*np_args))
        except OverflowError:
            with pytest.raises(ValueError, match=str(scalar)):
                fn(*order)
            continue
        out = fn(*order)
        assert out.dtype == expected.dtype.name
        assert_same(evaluate([x], out, value), expected)


def test_weak_scalar_examples_from_the_contract():
    x32 = T.fvector("x32")
    assert (x32 * 2).dtype == "float32"
    assert (2 * x32).dtype == "float32"
    assert (x32 + 0.1).dtype == "float32"
    x8 = T.bvector("x8")
    with pytest.raises(ValueError, match="1000"):
        x8 + 1000
    with pytest.raises(ValueError, match="int8"):
        1000 + x8
    assert (x8 + 1.0).dtype == "float64"
    assert (x8 * 3).dtype == "int8"
    # the error happens while building, without a value ever being fed
    value = np.array([1.0, 2.0], dtype="float32")
    assert_same(evaluate([x32], x32 * 2.5, value), value * 2.5)


def test_weak_scalar_next_to_0d_tensor():
    s = T.fscalar("s")
    out = s + 1.5
    assert out.dtype == "float32" and out.type.shape == ()
    assert_same(evaluate([s], out, np.float32(2.25)), np.asarray(np.float32(2.25) + 1.5))


def test_numpy_scalars_are_strong():
    x32 = T.fvector("x32")
    value = np.array([1.0, 2.0], dtype="float32")
    out = x32 * np.float64(2)
    assert out.dtype == (value * np.float64(2)).dtype.name == "float64"
    assert_same(evaluate([x32], out, value), value * np.float64(2))
    x8 = T.bvector("x8")
    assert (x8 + np.int16(1000)).dtype == "int16"


def test_only_python_scalars():
    cases = [(T.add, 1, 2), (T.true_div, 1, 2), (T.mul, 2, 2.5), (T.add, True, True), (T.floor_div, 7, 2),
             (T.pow, 2.0, 3)]
    for fn, a, b in cases:
        out = fn(a, b)
        expected = np.asarray(fn_numpy(fn)(np.asarray(a), np.asarray(b)))
        assert out.dtype == expected.dtype.name
        assert_same(np.asarray(out.eval()), expected)
        assert_same(np.asarray(both_modes.evaluate(out)), expected)


def fn_numpy(fn):
    return {T.add: np.add, T.true_div: np.true_divide, T.mul: np.multiply, T.floor_div: np.floor_divide,
            T.pow: np.power}[fn]


# ---------------------------------------------------------------------------- misc
def test_inputs_are_not_modified():
    a_val = np.array([1.0, 2.0, 3.0])
    b_val = np.array([4.0, 5.0, 6.0])
    a, b = T.dvector("a"), T.dvector("b")
    out = T.exp(a) + T.sin(b) * a - T.clip(b, 4.5, 5.5)
    evaluate([a, b], out, a_val, b_val)
    assert_same(a_val, np.array([1.0, 2.0, 3.0]))
    assert_same(b_val, np.array([4.0, 5.0, 6.0]))


def test_composite_expression_in_every_mode(mode):
    """The rewritten graph ("fast") agrees with the reference interpreter."""
    a, b = T.dmatrix("a"), T.dvector("b")
    out = T.switch(a > b, T.exp(a - b) * 2, T.sigmoid(b) + T.maximum(a, 0.5)) ** 2 // 3 % 7
    a_val = np.linspace(-2, 2, 12).reshape(4, 3)
    b_val = np.array([0.5, -1.0, 1.5])
    got = ss.function([a, b], out, mode=mode)(a_val, b_val)
    expected = np.where(a_val > b_val, np.exp(a_val - b_val) * 2,
                        stable_sigmoid(b_val) + np.maximum(a_val, 0.5)) ** 2 // 3 % 7
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    assert got.dtype == expected.dtype
