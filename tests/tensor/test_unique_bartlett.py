"""unique (numpy's, every flag, NaNs as one value, a data-dependent length) and bartlett against
numpy in every mode, numba's kernel included; unique exports to ONNX for integers only (the
float kernel of onnxruntime merges NaN into other values) and has no gradient."""

import numpy as np
import pytest

import symscan as ss
import symscan.compat.theano as theano
import symscan.tensor as T

from modes_tested import MODES_TESTED

FLAGS = [dict(), dict(return_index=True), dict(return_inverse=True, return_counts=True),
         dict(return_index=True, return_inverse=True, return_counts=True)]


def as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def check(got, want):
    for g, w in zip(as_list(got), as_list(want)):
        assert g.dtype == w.dtype and g.shape == w.shape, (g, w)
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("mode", MODES_TESTED)
@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: ",".join(f) or "values")
def test_unique_matches_numpy(mode, flags):
    floats = np.array([[3.0, 1.0, np.nan], [1.0, np.nan, -0.0], [0.0, 7.0, 3.0]])
    ints = np.array([5, 5, -2, 9, -2, 0], dtype=np.int32)
    x, i = T.dmatrix("x"), T.ivector("i")
    outs = as_list(T.unique(x, **flags)) + as_list(T.unique(i, **flags))
    got = ss.function([x, i], outs, mode=mode)(floats, ints)
    n = len(outs) // 2
    check(got[:n], np.unique(floats, **flags))
    check(got[n:], np.unique(ints, **flags))
    check(ss.function([i], as_list(T.unique(i, **flags)), mode=mode)(ints[:0]), np.unique(ints[:0], **flags))


@pytest.mark.parametrize("mode", MODES_TESTED)
def test_unique_in_a_loop(mode):
    """The distinct values seen so far, counted at each step (numba compiles unique)."""
    xs = np.array([[1, 2, 2], [3, 1, 3], [4, 4, 4]], dtype=np.int64)
    seq = T.lmatrix("xs")
    counts, _ = ss.scan(lambda row, seen: seen + T.unique(row).shape[0], sequences=seq,
                        outputs_info=T.constant(np.int64(0)))
    f = ss.function([seq], counts, mode=mode, rewrites=["-push_out"])
    np.testing.assert_array_equal(f(xs), np.cumsum([len(np.unique(r)) for r in xs]))
    if mode == "numba":
        assert f.backend_report() == ["scan: numba"], f.backend_report()


def test_unique_types_and_errors():
    values, index, inverse, counts = T.unique(T.tensor("float32", (3, 4)), True, True, True)
    assert (values.type.shape, values.dtype) == ((None,), "float32")
    assert (index.dtype, inverse.type.shape, counts.dtype) == ("int64", (3, 4), "int64")
    with pytest.raises(NotImplementedError, match=r"unique: axis=0 .* not implemented"):
        T.unique(T.dmatrix(), axis=0)
    with pytest.raises(TypeError, match=r"unique: .*complex"):
        T.unique(T.zvector("z"))
    x = T.dvector("x")
    with pytest.raises(TypeError, match=r"undefined.*unique's values change in number"):
        ss.grad(T.unique(x).sum(), x)


@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: ",".join(f) or "values")
def test_unique_of_integers_runs_in_onnxruntime(flags):
    ints = np.array([[5, 5, -2], [9, -2, 0]], dtype=np.int32)
    i = T.imatrix("i")
    check(ss.function([i], as_list(T.unique(i, **flags)), mode="onnxruntime")(ints), np.unique(ints, **flags))


def test_unique_of_floats_is_refused_by_onnx_saying_why():
    x = T.dvector("x")
    with pytest.raises(ss.onnx.ExportError, match=r"Unique.* has no ONNX lowering: .*merges NaN"):
        ss.onnx.export(ss.function([x], T.unique(x), mode="py"))


@pytest.mark.parametrize("mode", MODES_TESTED + ["onnxruntime"])
def test_bartlett_matches_numpy(mode):
    m = T.lscalar("M")
    f = ss.function([m], T.bartlett(m), mode=mode)
    for points in (0, 1, 2, 5, 8):
        got = f(points)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, np.bartlett(points), rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(T.bartlett(7).eval(), np.bartlett(7), rtol=1e-15)
    with pytest.raises(TypeError, match=r"bartlett: M must be an integer scalar"):
        T.bartlett(T.dscalar("m"))


def test_theano_spellings():
    ops = theano.tensor.extra_ops
    x = T.lvector("x")
    values, counts = ops.Unique(False, False, True)(x)
    np.testing.assert_array_equal(ss.function([x], counts)(np.array([2, 2, 7])), [2, 1])
    assert ops.unique is T.unique and ops.bartlett is T.bartlett
