"""Creation ops (zeros, ones, *_like, alloc, fill, arange, eye) and T.nnet (sigmoid, softmax)
against numpy: values, dtypes, static shapes and errors.

``run`` evaluates in mode "py" and mode "fast" and requires the same results (see
tests/support/both_modes.py); tests that take the ``mode`` fixture run each mode on its own."""

import warnings

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T

import both_modes


def run(inputs, outputs, *values, mode=None):
    """The result in ``mode``; without one, in modes "py" and "fast" (checked to agree)."""
    if mode is None:
        return both_modes.run(inputs, outputs, *values)
    return ss.function(inputs, outputs, mode=mode)(*values)


def compatible(static, actual) -> bool:
    return len(static) == len(actual) and all(s is None or s == a for s, a in zip(static, actual))


# ---------------------------------------------------------------------------- zeros / ones
@pytest.mark.parametrize("make, np_make", [(T.zeros, np.zeros), (T.ones, np.ones)], ids=["zeros", "ones"])
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (1, 4, 2), 5, 0, [2, 2], (np.int32(2), np.int64(3))],
                         ids=repr)
def test_zeros_ones_constant_shape(mode, make, np_make, shape):
    expected = np_make(shape)
    out = make(shape)
    assert out.dtype == ss.config.floatX
    assert out.type.shape == expected.shape
    result = run([], out, mode=mode)
    assert result.dtype == np.dtype(ss.config.floatX)
    assert result.shape == expected.shape
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("make, np_make", [(T.zeros, np.zeros), (T.ones, np.ones)], ids=["zeros", "ones"])
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "float32", "float64", "bool", "complex64"])
def test_zeros_ones_dtype(make, np_make, dtype):
    out = make((2, 3), dtype=dtype)
    assert out.dtype == dtype
    result = run([], out)
    expected = np_make((2, 3), dtype=dtype)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("make, np_make", [(T.zeros, np.zeros), (T.ones, np.ones)], ids=["zeros", "ones"])
def test_zeros_ones_symbolic_shape(rng, mode, make, np_make):
    x = T.tensor3("x")
    n = T.lscalar("n")
    i = T.iscalar("i")
    xv = rng.normal(size=(2, 3, 4))
    cases = [
        (make(x.shape), np_make(xv.shape)),
        (make((x.shape[0], 5)), np_make((2, 5))),
        (make([x.shape[2], x.shape[0] * 2]), np_make((4, 4))),
        (make(n), np_make(3)),
        (make((n, i)), np_make((3, 2))),
        (make((i, 2), dtype="int32"), np_make((2, 2), dtype="int32")),
    ]
    f = ss.function([x, n, i], [c[0] for c in cases], mode=mode, )
    for got, (out, want) in zip(f(xv, 3, 2), cases):
        assert got.dtype == want.dtype
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        assert compatible(out.type.shape, want.shape)
    assert make((n, 5)).type.shape == (None, 5)


def test_zeros_static_shape_from_static_input():
    x = T.tensor("float32", (3, None, 2), name="x")
    assert T.zeros(x.shape).type.shape == (3, None, 2)
    assert T.ones((x.shape[2], x.shape[0], 7)).type.shape == (2, 3, 7)


def test_zeros_ones_errors():
    with pytest.raises(TypeError):
        T.zeros((2.0, 3))
    with pytest.raises(TypeError):
        T.ones((T.scalar("f"),))
    with pytest.raises(TypeError):
        T.zeros(T.vector("v"))
    with pytest.raises(ValueError):
        T.zeros((-1, 2))
    with pytest.raises(TypeError):
        T.ones((2,), dtype="not a dtype")


def test_zeros_result_is_fresh_and_writable(mode):
    f = ss.function([], T.zeros((3,)), mode=mode)
    first = f()
    first[0] = 5
    np.testing.assert_array_equal(f(), np.zeros(3))


# ---------------------------------------------------------------------------- *_like
@pytest.mark.parametrize("make, np_make", [(T.zeros_like, np.zeros_like), (T.ones_like, np.ones_like)],
                         ids=["zeros_like", "ones_like"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "int8", "uint16", "bool"])
def test_like(rng, mode, make, np_make, dtype):
    x = T.tensor(dtype, (None, None), name="x")
    xv = (rng.normal(size=(2, 3)) * 5).astype(dtype)
    out = make(x)
    assert out.dtype == dtype
    result = run([x], out, xv, mode=mode)
    expected = np_make(xv)
    assert result.dtype == expected.dtype and result.shape == expected.shape
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("make, np_make", [(T.zeros_like, np.zeros_like), (T.ones_like, np.ones_like)],
                         ids=["zeros_like", "ones_like"])
@pytest.mark.parametrize("dtype", ["int64", "float32", "bool", "complex128"])
def test_like_dtype_argument(rng, make, np_make, dtype):
    x = T.tensor3("x")
    xv = rng.normal(size=(2, 1, 3))
    out = make(x, dtype=dtype)
    assert out.dtype == dtype
    result = run([x], out, xv)
    expected = np_make(xv, dtype=dtype)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


def test_like_static_shape_and_constants():
    x = T.tensor("float32", (2, None, 1), name="x")
    assert T.zeros_like(x).type.shape == (2, None, 1)
    assert T.ones_like(x, dtype="int8").type.shape == (2, None, 1)
    value = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(run([], T.ones_like(value)), np.ones_like(value))
    np.testing.assert_array_equal(run([], T.zeros_like(T.constant(value), dtype="float32")),
                                  np.zeros_like(value, dtype="float32"))
    scalar = T.scalar("s")
    assert run([scalar], T.ones_like(scalar), 4.0) == 1.0


# ---------------------------------------------------------------------------- alloc / fill
@pytest.mark.parametrize("value, shape", [
    (1.5, (2, 3)), (np.array([1.0, 2.0, 3.0]), (2, 3)), (np.array([[1.0], [2.0]]), (2, 4)),
    (np.array(7, dtype="int32"), (3,)), (np.array([[4]], dtype="int8"), (2, 2, 3)), (2.0, ()),
    (np.array([1, 2], dtype="int16"), (0, 2)),
], ids=repr)
def test_alloc_constant_value(mode, value, shape):
    expected = np.broadcast_to(value, shape)
    out = T.alloc(value, *shape)
    assert out.dtype == np.asarray(value).dtype.name
    assert out.type.shape == expected.shape
    result = run([], out, mode=mode)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)
    assert result.flags.writeable


def test_alloc_symbolic_value_and_lengths(rng, mode):
    v = T.vector("v")
    n, m = T.lscalar("n"), T.iscalar("m")
    vv = rng.normal(size=3)
    out = T.alloc(v, n, 3)
    assert out.type.shape == (None, 3)
    np.testing.assert_array_equal(run([v, n], out, vv, 4, mode=mode), np.broadcast_to(vv, (4, 3)))
    s = T.scalar("s")
    out = T.alloc(s, n, m)
    np.testing.assert_array_equal(run([s, n, m], out, 2.5, 2, 5, mode=mode), np.full((2, 5), 2.5))
    x = T.matrix("x")
    xv = rng.normal(size=(2, 3))
    out = T.alloc(v, x.shape[0], x.shape[1])
    np.testing.assert_array_equal(run([v, x], out, vv, xv, mode=mode), np.broadcast_to(vv, (2, 3)))
    f = ss.function([v, n], T.alloc(v, n, 3), mode=mode)
    with pytest.raises(ValueError):
        f(rng.normal(size=4), 2)  # 4 cannot broadcast to 3


def test_alloc_errors():
    with pytest.raises(TypeError):
        T.alloc(1.0, 2.0)
    with pytest.raises(TypeError):
        T.alloc(1.0, T.vector("v"))
    with pytest.raises(ValueError):
        T.alloc(np.ones((2, 2)), 2)  # more dims than the shape
    with pytest.raises(ValueError):
        T.alloc(np.ones(3), 2, 4)
    with pytest.raises(ValueError):
        T.alloc(T.tensor("float64", (3,)), 2, 1)  # a length-1 target axis cannot take 3
    with pytest.raises(ValueError):
        T.alloc(1.0, -1)


@pytest.mark.parametrize("model_dtype, value", [
    ("float64", 3.0), ("float32", 3.0), ("int32", 7), ("float64", np.array([1.0, 2.0, 3.0])),
    ("int8", np.float32(0.5)),
], ids=repr)
def test_fill(rng, mode, model_dtype, value):
    x = T.tensor(model_dtype, (None, None), name="x")
    xv = (rng.normal(size=(2, 3)) * 4).astype(model_dtype)
    out = T.fill(x, value)
    result = run([x], out, xv, mode=mode)
    assert result.shape == np.broadcast_shapes(xv.shape, np.shape(value))
    np.testing.assert_array_equal(result, np.broadcast_to(value, result.shape))
    if isinstance(value, (int, float)):
        assert result.dtype == np.result_type(xv.dtype, value)  # a Python number is weak (NEP 50)
    else:
        assert result.dtype == np.asarray(value).dtype


# ---------------------------------------------------------------------------- arange
@pytest.mark.parametrize("args", [
    (5,), (0,), (-3,), (2, 7), (7, 2), (-4, 4), (0, 10, 3), (10, 0, -3), (-5, 5, 2), (5, 5, 1), (3, -3, -1),
    (0.5,), (0.0, 2.0, 0.25), (1, 2.5, 0.5), (2.0, -1.0, -0.5),
], ids=repr)
def test_arange_constant_args(mode, args):
    expected = np.arange(*args)
    out = T.arange(*args)
    result = run([], out, mode=mode)
    assert result.dtype == expected.dtype
    np.testing.assert_allclose(result, expected)
    assert result.shape == expected.shape
    assert compatible(out.type.shape, expected.shape)
    if all(isinstance(a, int) for a in args):
        assert out.type.shape == expected.shape
        assert out.dtype == "int64"


def test_arange_symbolic_args(mode):
    start, stop, step = T.lscalar("start"), T.lscalar("stop"), T.lscalar("step")
    f = ss.function([start, stop, step], T.arange(start, stop, step), mode=mode)
    g = ss.function([stop], T.arange(stop), mode=mode)
    h = ss.function([start, stop], T.arange(start, stop), mode=mode)
    for a in (-4, 0, 3):
        for b in (-2, 0, 5, 9):
            np.testing.assert_array_equal(h(a, b), np.arange(a, b))
            for c in (-3, -1, 1, 2):
                np.testing.assert_array_equal(f(a, b, c), np.arange(a, b, c))
        np.testing.assert_array_equal(g(a), np.arange(a))
    assert T.arange(stop).type.shape == (None,)


def test_arange_float_symbolic():
    stop = T.dscalar("stop")
    step = T.fscalar("step")
    out = T.arange(0.5, stop, step)
    assert out.dtype == "float64"
    np.testing.assert_allclose(run([stop, step], out, 3.0, np.float32(0.5)), np.arange(0.5, 3.0, 0.5))


@pytest.mark.parametrize("make, expected", [
    (lambda: T.arange(T.iscalar("n")), "int32"),
    (lambda: T.arange(T.iscalar("a"), 10), "int32"),
    (lambda: T.arange(0, T.iscalar("n"), 2), "int32"),
    (lambda: T.arange(T.lscalar("n")), "int64"),
    (lambda: T.arange(T.bscalar("n")), "int8"),
    (lambda: T.arange(T.iscalar("a"), T.lscalar("b")), "int64"),
    (lambda: T.arange(T.iscalar("a"), T.bscalar("b")), "int32"),
    (lambda: T.arange(T.fscalar("n")), "float32"),
    (lambda: T.arange(T.fscalar("a"), 5, 0.5), "float32"),
    (lambda: T.arange(0, T.iscalar("n"), 1.5), "float64"),
    (lambda: T.arange(T.iscalar("a"), T.dscalar("b")), "float64"),
    (lambda: T.arange(5), "int64"),
    (lambda: T.arange(np.int32(5)), "int32"),
    (lambda: T.arange(np.int16(1), np.int16(5)), "int16"),
    (lambda: T.arange(5.0), "float64"),
])
def test_arange_dtype_rules(make, expected):
    """Ints stay ints; the dtype is promoted from the arguments with Python numbers weak (NEP 50)."""
    out = make()
    assert out.dtype == expected
    inputs = [v for v in out.owner.inputs if v.owner is None and not isinstance(v, T.TensorConstant)]
    values = [np.array(3, dtype=v.dtype) for v in inputs]
    result = run(inputs, out, *values)
    assert result.dtype == np.dtype(expected)


@pytest.mark.parametrize("dtype", ["int32", "int8", "float32", "float64", "uint8"])
def test_arange_dtype_argument(dtype):
    out = T.arange(1, 6, 2, dtype=dtype)
    assert out.dtype == dtype
    assert out.type.shape == (3,)
    result = run([], out)
    expected = np.arange(1, 6, 2, dtype=dtype)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)
    n = T.lscalar("n")
    result = run([n], T.arange(n, dtype=dtype), 4)
    assert result.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(result, np.arange(4, dtype=dtype))


def test_arange_static_length_from_static_shape():
    x = T.tensor("float64", (4, None), name="x")
    assert T.arange(x.shape[0]).type.shape == (4,)
    assert T.arange(1, x.shape[0], 2).type.shape == (2,)
    assert T.arange(x.shape[1]).type.shape == (None,)


def test_arange_errors(mode):
    with pytest.raises(ValueError):
        T.arange(0, 5, 0)
    with pytest.raises(TypeError):
        T.arange(T.vector("v"))
    with pytest.raises(TypeError):
        T.arange(0, T.lvector("v"))
    step = T.lscalar("step")
    f = ss.function([step], T.arange(0, 5, step), mode=mode)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="step"):
            f(0)


# ---------------------------------------------------------------------------- eye
@pytest.mark.parametrize("n, m, k", [
    (3, None, 0), (1, None, 0), (0, None, 0), (3, 4, 0), (4, 3, 0), (3, 4, 1), (3, 4, -1), (4, 3, -2),
    (3, 3, 5), (3, 3, -5), (2, 5, 3),
], ids=repr)
def test_eye_constant(mode, n, m, k):
    expected = np.eye(n, m, k)
    out = T.eye(n, m, k)
    assert out.dtype == ss.config.floatX
    assert out.type.shape == expected.shape
    result = run([], out, mode=mode)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("dtype", ["int32", "int8", "float32", "bool", "complex64"])
def test_eye_dtype(dtype):
    out = T.eye(3, 2, -1, dtype=dtype)
    assert out.dtype == dtype
    result = run([], out)
    expected = np.eye(3, 2, -1, dtype=dtype)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


def test_eye_symbolic(mode):
    n, m, k = T.lscalar("n"), T.iscalar("m"), T.lscalar("k")
    out = T.eye(n, m, k)
    assert out.type.shape == (None, None)
    f = ss.function([n, m, k], out, mode=mode)
    for a, b, c in [(3, 3, 0), (2, 5, 1), (5, 2, -3), (0, 3, 0)]:
        np.testing.assert_array_equal(f(a, b, c), np.eye(a, b, c))
    square = ss.function([n], T.eye(n), mode=mode)
    np.testing.assert_array_equal(square(4), np.eye(4))
    assert T.eye(3, 4, k).type.shape == (3, 4)
    x = T.tensor("float64", (5, None), name="x")
    assert T.eye(x.shape[0]).type.shape == (5, 5)


def test_eye_errors():
    with pytest.raises(TypeError):
        T.eye(2.0)
    with pytest.raises(TypeError):
        T.eye(2, T.scalar("f"))
    with pytest.raises(TypeError):
        T.eye(2, 2, 0.5)
    with pytest.raises(ValueError):
        T.eye(-1)


# ---------------------------------------------------------------------------- nnet
def np_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def test_nnet_aliases():
    assert T.nnet.sigmoid is T.sigmoid
    assert T.nnet.softmax is T.softmax


def test_sigmoid(rng, mode):
    x = T.matrix("x")
    xv = rng.normal(size=(4, 5)) * 5
    out = T.nnet.sigmoid(x)
    assert out.dtype == "float64" and out.ndim == 2
    np.testing.assert_allclose(run([x], out, xv, mode=mode), np_sigmoid(xv), rtol=1e-12)
    f = T.fvector("f")
    fv = np.linspace(-5, 5, 7, dtype="float32")
    result = run([f], T.nnet.sigmoid(f), fv, mode=mode)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, np_sigmoid(fv.astype("float64")), rtol=1e-6)


def test_sigmoid_extreme_values_are_stable():
    x = T.vector("x")
    xv = np.array([-1000.0, -50.0, 0.0, 50.0, 1000.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = run([x], T.nnet.sigmoid(x), xv)
    assert np.all(np.isfinite(result))
    np.testing.assert_allclose(result, [0.0, np_sigmoid(-50.0), 0.5, 1.0, 1.0], atol=1e-300, rtol=1e-12)
    assert result[0] >= 0.0 and result[-1] <= 1.0


def test_softmax_matrix_rows(rng, mode):
    x = T.matrix("x")
    xv = rng.normal(size=(4, 6)) * 3
    out = T.nnet.softmax(x)
    assert out.dtype == "float64" and out.ndim == 2
    result = run([x], out, xv, mode=mode)
    np.testing.assert_allclose(result, np_softmax(xv), rtol=1e-12)
    np.testing.assert_allclose(result.sum(axis=1), np.ones(4), rtol=1e-12)
    assert np.all(result > 0)
    # softmax is invariant under adding a constant to each row
    shifted = run([x], out, xv + rng.normal(size=(4, 1)) * 100, mode=mode)
    np.testing.assert_allclose(shifted, result, rtol=1e-9)


def test_softmax_large_values_are_stable():
    x = T.matrix("x")
    xv = np.array([[1000.0, 0.0, -1000.0], [1e300, 1e300, 0.0], [-1e4, -1e4, -1e4]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = run([x], T.nnet.softmax(x), xv)
    assert np.all(np.isfinite(result))
    np.testing.assert_allclose(result, np_softmax(xv), rtol=1e-12)
    np.testing.assert_allclose(result.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(result[0], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(result[2], [1 / 3] * 3)


def test_softmax_vector_and_axis(rng):
    v = T.vector("v")
    vv = rng.normal(size=5)
    np.testing.assert_allclose(run([v], T.nnet.softmax(v), vv), np_softmax(vv), rtol=1e-12)
    t = T.tensor3("t")
    tv = rng.normal(size=(2, 3, 4))
    for axis in (0, 1, -1):
        result = run([t], T.nnet.softmax(t, axis=axis), tv)
        np.testing.assert_allclose(result, np_softmax(tv, axis=axis), rtol=1e-12)
        np.testing.assert_allclose(result.sum(axis=axis), 1.0, rtol=1e-12)


def test_softmax_float32_and_int_inputs(rng):
    f = T.fmatrix("f")
    fv = rng.normal(size=(3, 4)).astype("float32")
    result = run([f], T.nnet.softmax(f), fv)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, np_softmax(fv.astype("float64")), rtol=1e-5)
    i = T.imatrix("i")
    iv = rng.integers(-3, 3, size=(2, 5)).astype("int32")
    result = run([i], T.nnet.softmax(i), iv)
    assert result.dtype.kind == "f"
    np.testing.assert_allclose(result, np_softmax(iv.astype("float64")), rtol=1e-12)
