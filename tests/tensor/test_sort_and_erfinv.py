"""sort/argsort against numpy (stable order, ties, NaN last) in every mode and onnxruntime, inside
a numba loop kernel, their gradients and errors; erfinv against scipy (and symscan's own
implementation, used without scipy), its gradient and its refused ONNX export."""

import math

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.onnx.context import ExportError
from symscan.tensor import elemwise, scalar_special

MODES = ["py", "fast", "numba", "onnxruntime"]
pytest.importorskip("numba")


def with_ties_and_nan(rng, shape, dtype):
    x = rng.integers(-3, 4, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[rng.random(shape) < 0.15] = np.nan
        x[rng.random(shape) < 0.1] = -0.0
        x[rng.random(shape) < 0.1] = np.inf
    return x


def assert_identical(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    # signed zeros keep the stable order's positions
    if want.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


# ---------------------------------------------------------------------------- sort / argsort
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "int8", "bool"])
@pytest.mark.parametrize("axis", [-1, 0, 1, None])
def test_sort_and_argsort_match_numpys_stable_order(mode, dtype, axis, rng):
    x = T.tensor(dtype, shape=(None, None, None), name="x")
    value = with_ties_and_nan(rng, (3, 5, 4), dtype)
    f = ss.function([x], [T.sort(x, axis=axis), T.argsort(x, axis=axis)], mode=mode)
    got_sorted, got_order = f(value)
    assert_identical(got_sorted, np.sort(value, axis=axis, kind="stable"))
    assert_identical(got_order, np.argsort(value, axis=axis, kind="stable").astype(np.int64))


@pytest.mark.parametrize("mode", MODES)
def test_sort_of_an_empty_axis_and_a_vector(mode):
    x, v = T.dmatrix("x"), T.dvector("v")
    f = ss.function([x, v], [T.sort(x), T.argsort(x, axis=0), T.sort(v), T.argsort(v)], mode=mode)
    vec = np.array([2.0, np.nan, -1.0, 2.0, -np.inf])
    out = f(np.zeros((3, 0)), vec)
    assert out[0].shape == (3, 0) and out[1].shape == (3, 0) and out[1].dtype == np.int64
    assert_identical(out[2], np.sort(vec))
    assert_identical(out[3], np.argsort(vec, kind="stable"))


def test_static_shapes_and_dtypes():
    x = T.tensor("float32", shape=(3, None, 4))
    assert T.sort(x).type.shape == (3, None, 4) and T.sort(x).dtype == "float32"
    assert T.argsort(x, axis=1).dtype == "int64"
    assert T.sort(T.tensor("int16", shape=(3, 4)), axis=None).type.shape == (12,)
    assert T.argsort(x, axis=None).type.shape == (None,)
    assert T.sort(T.dscalar(), axis=None).type.shape == (1,)


def test_sort_inside_a_loop_runs_in_the_numba_kernel(rng):
    X = T.dmatrix("X")

    def step(row, acc):
        return acc + T.sort(row) * T.cast(T.argsort(row), "float64")

    out, _ = ss.scan(step, sequences=X, outputs_info=T.zeros_like(X[0]))
    value = with_ties_and_nan(rng, (6, 7), "float64")
    value[~np.isfinite(value)] = 0.5  # NaN or inf times position 0 would hide the order in the sum
    want = ss.function([X], out, mode="py")(value)
    f = ss.function([X], out, mode="numba")
    np.testing.assert_array_equal(f(value), want)
    assert all(line.endswith(": numba") for line in f.backend_report()), f.backend_report()


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort_gradient(axis, rng):
    value = rng.normal(size=(3, 4))
    ss.verify_grad(lambda x: T.sort(x, axis=axis) * np.arange(1.0, 13.0).reshape(
        (12,) if axis is None else (3, 4)), [value])


def test_sort_gradient_of_a_3d_tensor_and_a_vector(rng):
    ss.verify_grad(lambda x: T.sort(x, axis=1), [rng.normal(size=(2, 3, 4))])
    ss.verify_grad(lambda x: T.sort(x) ** 2, [rng.normal(size=5)])


def test_sort_gradient_scatters_the_cotangent_back_in_every_mode():
    x = T.dvector("x")
    g = ss.grad(T.sum(T.sort(x) * np.array([1.0, 10.0, 100.0])), x)
    for mode in MODES:
        np.testing.assert_array_equal(ss.function([x], g, mode=mode)(np.array([3.0, 1.0, 2.0])), [100, 1, 10])


def test_argsort_is_connected_with_zero_gradient():
    x = T.dvector("x")
    g = ss.grad(T.sum(T.argsort(x) * x), x)
    value = np.array([3.0, 1.0, 2.0])
    np.testing.assert_array_equal(g.eval({x: value}), np.argsort(value))


def test_sort_errors_name_the_argument():
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        T.sort(T.dmatrix("m"), axis=2)
    with pytest.raises(ValueError, match="0-d .*axis=None"):
        T.argsort(T.dscalar("s"))
    with pytest.raises(ValueError, match="kind='bogosort' is not a sort kind"):
        T.sort(T.dvector(), kind="bogosort")
    with pytest.raises(ValueError, match="order="):
        T.argsort(T.dvector(), order="field")
    with pytest.raises(TypeError, match="axis must be an int or None, got 1.5"):
        T.sort(T.dvector(), axis=1.5)
    with pytest.raises(TypeError, match="axis must be an int or None"):
        T.argsort(T.dmatrix(), axis=(0, 1))
    assert T.sort(T.dvector(), kind="quicksort").owner.op == T.sort(T.dvector()).owner.op


@pytest.mark.parametrize("dtype", ["uint64", "complex128"])
def test_sort_export_refuses_dtypes_topk_cannot_sort(dtype):
    x = T.tensor(dtype, shape=(None,), name="x")
    with pytest.raises(ExportError, match="TopK"):
        ss.function([x], T.sort(x), mode="onnxruntime")


def test_theano_names():
    from symscan.compat.theano import tensor as TT

    assert TT.sort is T.sort and TT.argsort is T.argsort and TT.erfinv is T.erfinv


# ---------------------------------------------------------------------------- erfinv
ERFINV_VALUES = np.array([0.0, -0.0, 0.3, -0.5, 0.51, 0.9, -0.999, 1 - 1e-12, np.nextafter(1.0, 0.0), 1e-310,
                          1.0, -1.0, 1.5, -2.0, np.nan])


@pytest.mark.parametrize("mode", ["py", "fast", "numba"])
def test_erfinv_matches_scipy(mode):
    sp = pytest.importorskip("scipy.special")
    x = T.dvector("x")
    got = ss.function([x], T.erfinv(x), mode=mode)(ERFINV_VALUES)
    np.testing.assert_allclose(got, sp.erfinv(ERFINV_VALUES), rtol=1e-15, atol=0)
    np.testing.assert_array_equal(np.signbit(got[:2]), [False, False])  # scipy's +0 at -0.0


def test_own_erfinv_is_accurate_without_scipy(rng):
    sp = pytest.importorskip("scipy.special")
    y = np.concatenate([rng.uniform(-1, 1, 20000), 1 - np.logspace(-15.9, -1, 300), -np.logspace(-300, -1, 300),
                        ERFINV_VALUES])
    got = np.array([scalar_special.erfinv_scalar(float(v)) for v in y])
    want = sp.erfinv(y)
    finite = np.isfinite(want) & (want != 0)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-14, atol=0)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    assert math.copysign(1, scalar_special.erfinv_scalar(-0.0)) == 1  # as scipy's


def test_erfinv_without_scipy_gives_the_same_dtypes_and_values(monkeypatch):
    values = np.array([0.25, -0.75, 1.0, 2.0], dtype=np.float32)
    erfinv = elemwise.ELEMWISE_FUNCTIONS["erfinv"][1]
    with_scipy = erfinv(values)
    monkeypatch.setattr(elemwise, "_scipy_special", lambda name: None)
    without = erfinv(values)
    assert with_scipy.dtype == without.dtype == np.float32
    np.testing.assert_allclose(without, with_scipy, rtol=1e-6)
    assert erfinv(np.array([True, False])).dtype == np.float16  # exp's float dtype, as erf's


def test_erfinv_dtypes():
    assert T.erfinv(T.fvector()).dtype == "float32"
    assert T.erfinv(T.ivector()).dtype == "float64"


def test_erfinv_inverts_erf_and_its_gradient(rng):
    x = T.dvector("x")
    value = rng.uniform(-0.99, 0.99, 50)
    np.testing.assert_allclose(T.erf(T.erfinv(x)).eval({x: value}), value, rtol=1e-14)
    ss.verify_grad(T.erfinv, [np.array([-0.9, -0.3, 0.0, 0.4, 0.95])])
    g = ss.grad(T.sum(T.erfinv(x)), x).eval({x: np.array([0.0])})
    np.testing.assert_allclose(g, [math.sqrt(math.pi) / 2], rtol=1e-15)


def test_erfinv_refuses_onnx_export_naming_the_op():
    x = T.dvector("x")
    with pytest.raises(ExportError, match="erfinv"):
        ss.function([x], T.erfinv(x), mode="onnxruntime")
