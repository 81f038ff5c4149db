"""Products and reductions checked against numpy: dot, matmul, outer, sum/prod/max/min/mean/all/any,
argmax/argmin, cumsum/cumprod (values, dtypes, static shapes and build-time errors).

Graphs run in mode "py" and mode "fast", which must agree exactly (tests/support/both_modes.py)."""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symscan as ss
import symscan.tensor as T

import both_modes

DTYPES = ["bool", "int8", "int32", "int64", "uint8", "float32", "float64"]
HYP = settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

REDUCTIONS = {"sum": (T.sum, np.sum), "prod": (T.prod, np.prod), "max": (T.max, np.max),
              "min": (T.min, np.min), "mean": (T.mean, np.mean), "all": (T.all, np.all), "any": (T.any, np.any)}
ARG_REDUCTIONS = {"argmax": (T.argmax, np.argmax), "argmin": (T.argmin, np.argmin)}
CUMULATIVE = {"cumsum": (T.cumsum, np.cumsum), "cumprod": (T.cumprod, np.cumprod)}


# ---------------------------------------------------------------------------- helpers
def evaluate(inputs, output, *values):
    """The reference result; mode "fast" gives exactly the same."""
    with np.errstate(all="ignore"):
        return np.asarray(both_modes.run(inputs, output, *values))


def assert_matches(actual, expected):
    """Same dtype and shape; exact values for bools/ints, a tight tolerance for floats (sums may
    be associated differently)."""
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if expected.dtype.kind == "f":
        tol = {4: 1e-5, 8: 1e-12}.get(expected.dtype.itemsize, 1e-2)
        np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(actual, expected)


def assert_static_consistent(static, actual_shape):
    assert len(static) == len(actual_shape), (static, actual_shape)
    assert all(s is None or s == n for s, n in zip(static, actual_shape)), (static, actual_shape)


def small_values(dtype, shape, rng):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0 if dtype == "uint8" else -3, 4, size=shape).astype(dtype)
    return rng.uniform(-2, 2, size=shape).astype(dtype)


def elements(dtype):
    if dtype == "bool":
        return st.booleans()
    if dtype in ("int8", "int32", "int64", "uint8"):
        return st.integers(0 if dtype == "uint8" else -5, 5)
    return st.floats(-10, 10, width=32 if dtype == "float32" else 64, allow_subnormal=False)


@st.composite
def arrays(draw, min_dims=0, max_dims=4, min_side=0, max_side=3, dtypes=DTYPES):
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side))
    return draw(hnp.arrays(dtype, shape, elements=elements(dtype)))


def mask(draw, shape):
    return tuple(n if draw(st.booleans()) else None for n in shape)


@st.composite
def axis_specs(draw, ndim, single=False):
    """None, an int (maybe negative) or, unless ``single``, a tuple of distinct axes."""
    options = [st.none()]
    if ndim:
        options.append(st.integers(-ndim, ndim - 1))
        if not single:
            options.append(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).flatmap(
                lambda axes: st.tuples(*[st.sampled_from([a, a - ndim]) for a in axes])))
    elif not single:
        options.append(st.just(()))
    return draw(st.one_of(options))


def reduced_static_shape(static, axis, keepdims):
    ndim = len(static)
    if axis is None:
        axes = set(range(ndim))
    else:
        axes = {a % ndim for a in ((axis,) if isinstance(axis, int) else axis)}
    return tuple(1 if i in axes else n for i, n in enumerate(static) if keepdims or i not in axes)


# ---------------------------------------------------------------------------- dot
DOT_SHAPES = [
    ((), ()), ((), (3,)), ((3,), ()), ((2, 3), ()), ((), (2, 3, 4)),
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
    ((2, 3, 4), (4,)), ((2, 3, 4), (4, 5)), ((2, 3), (4, 3, 5)), ((2, 3, 4), (5, 4, 2)),
    ((0,), (0,)), ((2, 0), (0, 3)),
]


@pytest.mark.parametrize("sa, sb", DOT_SHAPES)
def test_dot_matches_numpy(sa, sb, rng):
    a_val, b_val = rng.normal(size=sa), rng.normal(size=sb)
    expected = np.dot(a_val, b_val)
    known_a, known_b = T.tensor("float64", sa, "a"), T.tensor("float64", sb, "b")
    out = T.dot(known_a, known_b)
    assert out.type.shape == np.shape(expected)
    assert_matches(evaluate([known_a, known_b], out, a_val, b_val), expected)
    # the same product with no static lengths
    a, b = T.tensor("float64", (None,) * len(sa), "a"), T.tensor("float64", (None,) * len(sb), "b")
    out = T.dot(a, b)
    assert out.ndim == np.ndim(expected)
    assert_matches(evaluate([a, b], out, a_val, b_val), expected)
    # and as a method
    assert_matches(evaluate([a, b], a.dot(b), a_val, b_val), expected)


@pytest.mark.parametrize("sa, sb, want", [
    ((None, 3), (3, 4), (None, 4)),
    ((2, None), (None,), (2,)),
    ((None,), (None, 5), (5,)),
    ((2, None, 4), (5, 4, None), (2, None, 5, None)),
    ((None, 3), (), (None, 3)),
])
def test_dot_partial_static_shapes(sa, sb, want):
    assert T.dot(T.tensor("float64", sa), T.tensor("float64", sb)).type.shape == want


@pytest.mark.parametrize("dtype_a", DTYPES)
def test_dot_dtypes(dtype_a, rng):
    for dtype_b in DTYPES:
        a_val, b_val = small_values(dtype_a, (2, 3), rng), small_values(dtype_b, (3, 2), rng)
        a, b = T.tensor(dtype_a, (2, 3), "a"), T.tensor(dtype_b, (3, 2), "b")
        expected = np.dot(a_val, b_val)
        out = T.dot(a, b)
        assert out.dtype == expected.dtype.name
        assert_matches(evaluate([a, b], out, a_val, b_val), expected)


@pytest.mark.parametrize("sa, sb", [((2, 3), (4, 5)), ((2, 3), (4,)), ((3,), (4,)), ((3,), (4, 2)),
                                    ((2, 3, 4), (5, 3, 6))])
def test_dot_static_length_mismatch(sa, sb):
    a, b = T.tensor("float64", sa, "alpha"), T.tensor("float64", sb, "beta")
    with pytest.raises(ValueError) as info:
        T.dot(a, b)
    assert "alpha" in str(info.value) and "beta" in str(info.value)
    with pytest.raises(ValueError):
        np.dot(np.ones(sa), np.ones(sb))  # numpy agrees that these cannot be multiplied


def test_dot_runtime_mismatch_with_unknown_lengths():
    a, b = T.dmatrix("a"), T.dvector("b")
    f = both_modes.function([a, b], T.dot(a, b))  # a ValueError in both modes
    with pytest.raises(ValueError):
        f(np.ones((2, 3)), np.ones(4))


# ---------------------------------------------------------------------------- matmul
@HYP
@given(data=st.data())
def test_matmul_matches_numpy(data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(signature=np.matmul.signature, max_dims=3,
                                                         min_side=1, max_side=3))
    sa, sb = shapes.input_shapes
    dtype_a = data.draw(st.sampled_from(DTYPES))
    dtype_b = data.draw(st.sampled_from(DTYPES))
    a_val = data.draw(hnp.arrays(dtype_a, sa, elements=elements(dtype_a)))
    b_val = data.draw(hnp.arrays(dtype_b, sb, elements=elements(dtype_b)))
    static_a, static_b = mask(data.draw, sa), mask(data.draw, sb)
    a, b = T.tensor(dtype_a, static_a, "a"), T.tensor(dtype_b, static_b, "b")
    expected = np.matmul(a_val, b_val)
    out = a @ b
    assert out.dtype == expected.dtype.name
    assert_static_consistent(out.type.shape, expected.shape)
    if None not in static_a + static_b:
        assert out.type.shape == expected.shape
    assert_matches(evaluate([a, b], out, a_val, b_val), expected)
    assert_matches(evaluate([a, b], T.matmul(a, b), a_val, b_val), expected)


@pytest.mark.parametrize("sa, sb, want", [
    ((5, 1, 2, 3), (4, 3, 7), (5, 4, 2, 7)),
    ((None, 2, 3), (3,), (None, 2)),
    ((3,), (4, 3, 2), (4, 2)),
    ((3,), (3,), ()),
    ((None, 1, 2, 3), (None, 3, 4), (None, None, 2, 4)),
    ((1, 2, 3), (None, 3, 4), (None, 2, 4)),
    ((6, 2, None), (None, 4), (6, 2, 4)),
])
def test_matmul_static_shapes(sa, sb, want, rng):
    a, b = T.tensor("float64", sa, "a"), T.tensor("float64", sb, "b")
    out = T.matmul(a, b)
    assert out.type.shape == want
    concrete_a = tuple(3 if n is None and i == len(sa) - 1 else (2 if n is None else n) for i, n in enumerate(sa))
    concrete_b = tuple(3 if n is None and i == len(sb) - 2 else (2 if n is None else n) for i, n in enumerate(sb))
    a_val, b_val = rng.normal(size=concrete_a), rng.normal(size=concrete_b)
    assert_matches(evaluate([a, b], out, a_val, b_val), np.matmul(a_val, b_val))


@pytest.mark.parametrize("sa, sb", [((), (3,)), ((3, 3), ()), ((), ())])
def test_matmul_rejects_0d(sa, sb):
    a, b = T.tensor("float64", sa, "alpha"), T.tensor("float64", sb, "beta")
    with pytest.raises(ValueError, match="matmul"):
        T.matmul(a, b)
    with pytest.raises(ValueError):
        a @ b


@pytest.mark.parametrize("sa, sb", [((2, 3), (4, 5)), ((3,), (4,)), ((2, 3, 4), (5, 4, 2)), ((3,), (2, 4, 5))])
def test_matmul_static_mismatch(sa, sb):
    a, b = T.tensor("float64", sa, "alpha"), T.tensor("float64", sb, "beta")
    with pytest.raises(ValueError) as info:
        T.matmul(a, b)
    assert "alpha" in str(info.value) and "beta" in str(info.value)
    with pytest.raises(ValueError):
        np.matmul(np.ones(sa), np.ones(sb))


def test_matmul_with_numpy_array_on_the_left(rng):
    m = rng.normal(size=(2, 3))
    x = T.dmatrix("x")
    out = m @ x
    assert out.type.shape == (2, None)
    x_val = rng.normal(size=(3, 4))
    assert_matches(evaluate([x], out, x_val), m @ x_val)


# ---------------------------------------------------------------------------- outer
@pytest.mark.parametrize("sa, sb", [((3,), (4,)), ((), (2,)), ((2, 2), (3,)), ((0,), (3,)), ((2, 1, 2), ())])
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("int8", "float32"), ("bool", "bool"),
                                    ("uint8", "int32")])
def test_outer_matches_numpy(sa, sb, dtypes, rng):
    a_val, b_val = small_values(dtypes[0], sa, rng), small_values(dtypes[1], sb, rng)
    expected = np.outer(a_val, b_val)
    a, b = T.tensor(dtypes[0], sa, "a"), T.tensor(dtypes[1], sb, "b")
    out = T.outer(a, b)
    assert out.dtype == expected.dtype.name
    assert out.type.shape == expected.shape
    assert_matches(evaluate([a, b], out, a_val, b_val), expected)
    a, b = T.tensor(dtypes[0], (None,) * len(sa), "a"), T.tensor(dtypes[1], sb, "b")
    out = T.outer(a, b)
    assert out.type.shape == ((None if sa else 1), expected.shape[1])
    assert_matches(evaluate([a, b], out, a_val, b_val), expected)


# ---------------------------------------------------------------------------- reductions
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@HYP
@given(data=st.data())
def test_reduction_matches_numpy(name, data):
    fn, np_fn = REDUCTIONS[name]
    nonempty = name in ("max", "min", "mean")  # numpy errors (or warns) on empty max/min/mean
    value = data.draw(arrays(min_side=1 if nonempty else 0))
    axis = data.draw(axis_specs(value.ndim))
    keepdims = data.draw(st.booleans())
    static = mask(data.draw, value.shape)
    x = T.tensor(value.dtype, static, "x")
    out = fn(x, axis=axis, keepdims=keepdims)
    expected = np.asarray(np_fn(value, axis=axis, keepdims=keepdims))
    assert out.dtype == expected.dtype.name
    assert out.type.shape == reduced_static_shape(static, axis, keepdims)
    assert_matches(evaluate([x], out, value), expected)
    # the method spelling builds the same computation
    assert_matches(evaluate([x], getattr(x, name)(axis=axis, keepdims=keepdims), value), expected)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_reduction_dtypes(name, dtype):
    fn, np_fn = REDUCTIONS[name]
    x = T.tensor(dtype, (None, 3), "x")
    for axis in [None, 0, (0, 1)]:
        assert fn(x, axis=axis).dtype == np.asarray(np_fn(np.ones((2, 3), dtype=dtype), axis=axis)).dtype.name


@pytest.mark.parametrize("name", sorted(REDUCTIONS) + sorted(ARG_REDUCTIONS) + sorted(CUMULATIVE))
@pytest.mark.parametrize("axis", [2, -3, 5, (0, 2)])
def test_axis_out_of_range(name, axis):
    fn = {**REDUCTIONS, **ARG_REDUCTIONS, **CUMULATIVE}[name][0]
    x = T.tensor("float64", (2, 3), "x")
    with pytest.raises(ValueError, match="axis"):
        fn(x, axis=axis)


@pytest.mark.parametrize("name", sorted(REDUCTIONS) + sorted(ARG_REDUCTIONS) + sorted(CUMULATIVE))
@pytest.mark.parametrize("axis", [True, 1.0, "0", (0, 1.5)])
def test_axis_must_be_integers(name, axis):
    """numpy refuses these with a TypeError too (bool is an int in Python, but not an axis)."""
    fn, np_fn = {**REDUCTIONS, **ARG_REDUCTIONS, **CUMULATIVE}[name]
    with pytest.raises(TypeError):
        np_fn(np.ones((2, 3)), axis=axis)
    with pytest.raises(TypeError):
        fn(T.tensor("float64", (2, 3), "x"), axis=axis)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_repeated_axis(name):
    fn = REDUCTIONS[name][0]
    x = T.tensor("float64", (2, 3, 4), "x")
    for axis in [(0, 0), (1, -2)]:
        with pytest.raises(ValueError, match="repeated"):
            fn(x, axis=axis)
        with pytest.raises(ValueError):
            np.sum(np.ones((2, 3, 4)), axis=axis)


def test_reduction_on_python_and_numpy_values():
    value = np.arange(6, dtype="int16").reshape(2, 3)
    assert_matches(np.asarray(T.sum(value, axis=1).eval()), value.sum(axis=1))
    assert_matches(np.asarray(T.max([[1.0, 5.0], [7.0, 2.0]], axis=0).eval()), np.array([7.0, 5.0]))
    assert_matches(np.asarray(both_modes.evaluate(T.sum(value, axis=1))), value.sum(axis=1))
    assert_matches(np.asarray(both_modes.evaluate(T.max([[1.0, 5.0], [7.0, 2.0]], axis=0))), np.array([7.0, 5.0]))


def test_mean_of_integers_is_float64_and_exact():
    value = np.array([[1, 2], [3, 5]], dtype="int8")
    x = T.bmatrix("x")
    assert_matches(evaluate([x], T.mean(x, axis=0), value), np.mean(value, axis=0))
    assert_matches(evaluate([x], T.mean(x), value), np.mean(value))


def test_bool_sum_counts():
    value = np.array([[True, False, True], [True, True, True]])
    x = T.tensor("bool", (None, 3), "x")
    out = x.sum(axis=1)
    assert out.dtype == np.sum(value, axis=1).dtype.name
    assert_matches(evaluate([x], out, value), np.sum(value, axis=1))


# ---------------------------------------------------------------------------- argmax / argmin
@pytest.mark.parametrize("name", sorted(ARG_REDUCTIONS))
@HYP
@given(data=st.data())
def test_arg_reduction_matches_numpy(name, data):
    fn, np_fn = ARG_REDUCTIONS[name]
    value = data.draw(arrays(min_side=1))
    axis = data.draw(axis_specs(value.ndim, single=True))
    keepdims = data.draw(st.booleans())
    static = mask(data.draw, value.shape)
    x = T.tensor(value.dtype, static, "x")
    out = fn(x, axis=axis, keepdims=keepdims)
    expected = np.asarray(np_fn(value, axis=axis, keepdims=keepdims))
    assert out.dtype == "int64"
    assert out.type.shape == reduced_static_shape(static, axis, keepdims)
    assert_matches(evaluate([x], out, value), expected.astype(np.int64))
    assert_matches(evaluate([x], getattr(x, name)(axis=axis, keepdims=keepdims), value), expected)


def test_argmax_ties_pick_the_first():
    value = np.array([[1, 3, 3], [2, 2, 0]], dtype="int32")
    x = T.imatrix("x")
    for axis in [None, 0, 1, -1]:
        assert_matches(evaluate([x], T.argmax(x, axis=axis), value), np.argmax(value, axis=axis))
        assert_matches(evaluate([x], T.argmin(x, axis=axis), value), np.argmin(value, axis=axis))


@pytest.mark.parametrize("fn", [T.argmax, T.argmin, T.cumsum, T.cumprod])
def test_single_axis_ops_reject_several_axes(fn):
    with pytest.raises(ValueError):
        fn(T.dmatrix("x"), axis=(0, 1))


# ---------------------------------------------------------------------------- cumsum / cumprod
@pytest.mark.parametrize("name", sorted(CUMULATIVE))
@HYP
@given(data=st.data())
def test_cumulative_matches_numpy(name, data):
    fn, np_fn = CUMULATIVE[name]
    value = data.draw(arrays(min_dims=0))
    axis = data.draw(axis_specs(value.ndim, single=True))
    static = mask(data.draw, value.shape)
    x = T.tensor(value.dtype, static, "x")
    out = fn(x, axis=axis)
    expected = np_fn(value, axis=axis)
    assert out.dtype == expected.dtype.name
    if axis is None:
        assert out.type.shape == ((value.size if None not in static else None),)
    else:
        assert out.type.shape == static
    assert_matches(evaluate([x], out, value), expected)
    assert_matches(evaluate([x], getattr(x, name)(axis=axis), value), expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cumulative_dtypes(dtype):
    x = T.tensor(dtype, (None,), "x")
    probe = np.ones(2, dtype=dtype)
    assert T.cumsum(x).dtype == np.cumsum(probe).dtype.name
    assert T.cumprod(x).dtype == np.cumprod(probe).dtype.name


# ---------------------------------------------------------------------------- modes
def test_products_and_reductions_in_every_mode(mode, rng):
    a, b = T.dmatrix("a"), T.dvector("b")
    out = T.cumsum(T.dot(a, b) + T.outer(b, b).sum(axis=0).mean(), axis=0) * T.argmax(a, axis=1)
    a_val, b_val = rng.normal(size=(4, 3)), rng.normal(size=3)
    expected = np.cumsum(a_val @ b_val + np.outer(b_val, b_val).sum(axis=0).mean(), axis=0) * a_val.argmax(axis=1)
    got = ss.function([a, b], out, mode=mode)(a_val, b_val)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-12)
