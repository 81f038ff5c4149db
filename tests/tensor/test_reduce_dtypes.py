"""``dtype`` and ``acc_dtype`` of sum/prod/mean (Theano's signature): result dtypes, the
accumulator really used, errors, gradients, and the same numbers in every mode (onnxruntime
included) as numpy computing in the accumulator's dtype."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T

ALL_MODES = ["py", "fast", "numba", "onnxruntime"]


def run(mode: str, inputs, outputs, *values):
    if mode == "numba":
        pytest.importorskip("numba")
    if mode == "onnxruntime":
        pytest.importorskip("onnxruntime")
    return ss.function(inputs, outputs, mode=mode)(*values)


# ---------------------------------------------------------------------------- result dtypes
@pytest.mark.parametrize("in_dtype, kind, kwargs, expected", [
    ("int8", "sum", {}, "int64"),  # Theano's default upcast of small ints (numpy's too)
    ("uint8", "sum", {}, "uint64"),
    ("bool", "sum", {}, "int64"),
    ("float32", "sum", {}, "float32"),  # float32 stays float32
    ("int32", "prod", {}, "int64"),
    ("int32", "mean", {}, "float64"),
    ("float32", "mean", {}, "float32"),
    ("float64", "sum", {"dtype": "float32"}, "float32"),
    ("int32", "mean", {"dtype": "float32"}, "float32"),
    ("float32", "sum", {"acc_dtype": "float64"}, "float32"),  # acc_dtype does not change the result's
    ("int8", "sum", {"acc_dtype": "int16"}, "int64"),
    ("int32", "sum", {"acc_dtype": "float32"}, "int64"),  # a float accumulator for ints is allowed
    ("float32", "prod", {"dtype": "float64", "acc_dtype": "float64"}, "float64"),
    ("float32", "mean", {"dtype": "floatX"}, "float64"),
])
def test_result_dtype(in_dtype, kind, kwargs, expected):
    x = T.tensor(in_dtype, shape=(None, None), name="x")
    out = getattr(T, kind)(x, axis=0, **kwargs)
    assert out.dtype == expected and out.type.shape == (None,)
    assert getattr(x, kind)(0, **kwargs).dtype == expected  # the method, with axis positional


def test_dtype_is_the_second_argument_as_in_numpy_and_theano():
    x = T.dmatrix("x")
    assert T.sum(x, 0, "float32").dtype == "float32" and x.mean(1, "float32", True).type.shape == (None, 1)
    with pytest.raises(TypeError, match="keepdims=... by keyword"):
        T.sum(x, 0, True)


@pytest.mark.parametrize("in_dtype, acc_dtype", [("float64", "float32"), ("int64", "int32"), ("float32", "float16"),
                                                 ("float32", "int64")])
def test_acc_dtype_that_loses_precision_is_refused(in_dtype, acc_dtype):
    x = T.tensor(in_dtype, shape=(None,), name="x")
    with pytest.raises(TypeError, match=f"acc_dtype='{acc_dtype}' would lose precision for 'x'"):
        T.sum(x, acc_dtype=acc_dtype)


def test_no_arguments_build_the_plain_reduction():
    x = T.fvector("x")
    assert T.sum(x).owner.inputs == [x] and T.sum(x, dtype="float32").owner.inputs == [x]


# ---------------------------------------------------------------------------- values in every mode
CANCELLING = np.array([1e8, 1.0, -1e8, 1.0], dtype=np.float32)


@pytest.mark.parametrize("mode", ALL_MODES)
def test_float64_accumulator_for_float32_input(mode):
    """In float32, 1e8 + 1 is 1e8: only a float64 accumulator keeps the ones."""
    x = T.fvector("x")
    got = run(mode, [x], [T.sum(x, acc_dtype="float64"), x.mean(acc_dtype="float64"),
                          T.sum(x, dtype="float64")], CANCELLING)
    assert [g.dtype for g in got] == ["float32", "float32", "float64"]
    assert got[0] == 2.0 and got[1] == 0.5 and got[2] == 2.0


@pytest.mark.parametrize("mode", ALL_MODES)
def test_narrow_integer_accumulator_wraps_as_theano(mode):
    """An int8 accumulator wraps (100 + 100 + 7 is -49 in int8), then the result is int64."""
    x = T.bvector("x")
    values = np.array([100, 100, 7], dtype=np.int8)
    got = run(mode, [x], [T.sum(x, acc_dtype="int8"), T.prod(x, acc_dtype="int16"), T.sum(x)], values)
    expected = [np.int64(np.sum(values, dtype=np.int8)), np.int64(np.prod(values, dtype=np.int16)), np.int64(207)]
    assert [g.dtype for g in got] == ["int64"] * 3
    assert [int(g) for g in got] == [int(e) for e in expected] == [-49, 4464, 207]


@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("kind", ["sum", "prod", "mean"])
def test_values_match_numpy(mode, kind, rng):
    x = T.imatrix("x")
    values = rng.integers(-3, 4, size=(3, 4)).astype(np.int32)
    fn = getattr(T, kind)
    outs = [fn(x, axis=1, dtype="float32"), fn(x, axis=0, dtype="int8", keepdims=True),
            fn(x, acc_dtype="float64"), fn(x, axis=(0, 1), dtype="float64", acc_dtype="int64")]
    got = run(mode, [x], outs, values)
    np_fn = getattr(np, kind)
    acc = "float64" if kind == "mean" else "int64"
    expected = [np_fn(values, axis=1, dtype=acc).astype("float32"),
                np_fn(values, axis=0, dtype=acc, keepdims=True).astype("int8"),
                np_fn(values, dtype="float64").astype("float64" if kind == "mean" else "int64"),
                np_fn(values, dtype=acc).astype("float64")]
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-6)


# ---------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("kind", ["sum", "prod", "mean"])
@pytest.mark.parametrize("kwargs", [{"dtype": "float32"}, {"acc_dtype": "float64"}, {"dtype": "float64",
                                                                                     "acc_dtype": "float64"}])
def test_gradient(kind, kwargs, rng):
    fn = getattr(T, kind)
    point = rng.uniform(0.5, 1.5, size=(3, 4))
    # a float32 result needs a step far above its rounding for finite differences to see it
    tol = dict(eps=1e-2, abs_tol=5e-2, rel_tol=5e-2) if kwargs.get("dtype") == "float32" else {}
    ss.verify_grad(lambda x: fn(x * x, axis=1, **kwargs).astype("float64"), [point], rng=rng, **tol)
    x = T.fmatrix("x")
    g = ss.grad(fn(x, **kwargs).astype("float64"), x)
    assert g.dtype == "float32"
    expected = {"sum": np.ones((2, 2)), "mean": np.full((2, 2), 0.25), "prod": np.array([[24.0, 12.0], [8.0, 6.0]])}
    np.testing.assert_allclose(ss.function([x], g)(np.array([[1, 2], [3, 4]], dtype=np.float32)), expected[kind],
                               rtol=1e-6)
