"""real, imag, angle, erfcinv and chi2sf against numpy/scipy in every mode (numba inside a loop's
kernel), their dtypes, the own scalar code against scipy over the range, gradients (verify_grad,
complex ones by central differences of the real and imaginary parts) and ONNX refusing by name."""

import numpy as np
import pytest
import scipy.special

import symscan as ss
import symscan.tensor as T
from symscan.tensor import elemwise, scalar_special

from modes_tested import MODES_TESTED


def _values(rng):
    y = rng.uniform(0.01, 1.99, size=(2, 5))
    z = rng.normal(size=(2, 5)) + 1j * rng.normal(size=(2, 5))
    return y, z


@pytest.mark.parametrize("mode", MODES_TESTED)
def test_values_match_numpy_and_scipy(mode, rng):
    y, z = _values(rng)
    k = np.array([0.5, 1.0, 3.0, 7.5, 40.0])
    a, c, kk = T.dmatrix("y"), T.zmatrix("z"), T.dvector("k")
    outs = [T.real(c), T.imag(c), T.angle(c), T.real(a), T.imag(a), T.angle(a - 1), T.erfcinv(a),
            T.chi2sf(a * 10, kk), T.erfcinv(a.astype("float32"))]
    got = ss.function([a, c, kk], outs, mode=mode)(y, z, k)
    want = [z.real, z.imag, np.angle(z), y, np.zeros_like(y), np.angle(y - 1), scipy.special.erfcinv(y),
            scipy.special.chdtrc(k, y * 10), scipy.special.erfcinv(y.astype("float32"))]
    for g, w, out in zip(got, want, outs):
        assert g.dtype == w.dtype == out.dtype, (out, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-12 if w.dtype == np.float64 else 1e-6, err_msg=str(out))


@pytest.mark.parametrize("mode", MODES_TESTED)
def test_inside_a_loop_numba_runs_them_in_its_kernel(mode, rng):
    """Push-out is off so that the functions of the sequences stay in the body."""
    y, z = _values(rng)
    ys, zs, k = np.stack([y, y[::-1]]), np.stack([z, -z]), np.array([1.0, 2.0, 3.5, 10.0, 0.5])

    def step(yt, zt, acc, k):
        yt = yt + acc * 1e-3
        parts = [T.erfcinv(yt), T.erfinv(yt - 1), T.chi2sf(yt * 3, k), T.chi2sf(yt[0, 0] * 3, 2.5), T.real(zt),
                 T.imag(zt), T.angle(zt), T.angle(zt[0, 0]), T.erfcinv(yt[0, 1])]
        return acc + sum(parts[1:], parts[0])

    a, c, kk = T.dtensor3("y"), T.ztensor3("z"), T.dvector("k")
    out, _ = ss.scan(step, sequences=[a, c], outputs_info=T.zeros((2, 5), dtype="float64"), non_sequences=kk)
    f = ss.function([a, c, kk], out, mode=mode, rewrites=["-push_out"])
    if mode == "numba":
        assert f.backend_report() == ["scan: numba"], f.backend_report()
    np.testing.assert_allclose(f(ys, zs, k), ss.function([a, c, kk], out, mode="py")(ys, zs, k), rtol=1e-12)


def test_dtypes():
    assert [f(T.zvector()).dtype for f in (T.real, T.imag, T.angle)] == ["float64"] * 3
    assert [f(T.cvector()).dtype for f in (T.real, T.imag, T.angle)] == ["float32"] * 3
    assert (T.real(T.ivector()).dtype, T.imag(T.ivector()).dtype, T.angle(T.ivector()).dtype) == (
        "int32", "int32", "float64")
    assert T.erfcinv(T.fvector()).dtype == "float32" and T.erfcinv(T.ivector()).dtype == "float64"
    assert T.chi2sf(T.fvector(), 3).dtype == "float32" and T.chi2sf(T.fvector(), T.dscalar()).dtype == "float64"


def test_own_scalar_code_against_scipy():
    """Where scipy is absent (and in numba's kernels) these give scipy's values."""
    y = np.concatenate([np.logspace(-300, 0, 400), 2 - np.logspace(-16, 0, 200), np.linspace(0, 2, 501)])
    got = np.array([scalar_special.erfcinv_scalar(v) for v in y])
    np.testing.assert_allclose(got, scipy.special.erfcinv(y), rtol=5e-15)
    x = np.concatenate([np.linspace(0, 60, 121), np.logspace(-5, 3, 50)])
    for k in (0.5, 1, 2, 3, 5.5, 10, 30, 100, 400):
        got = np.array([scalar_special.chi2sf_scalar(v, k) for v in x])
        np.testing.assert_allclose(got, scipy.special.chdtrc(k, x), rtol=1e-12, atol=1e-300)
    edges = [(-1.0, 3.0), (1.0, -1.0), (0.0, 3.0), (np.inf, 3.0), (1.0, 0.0), (np.nan, 1.0)]
    np.testing.assert_array_equal([scalar_special.chi2sf_scalar(x, k) for x, k in edges],
                                  [scipy.special.chdtrc(k, x) for x, k in edges])
    np.testing.assert_array_equal([scalar_special.erfcinv_scalar(v) for v in (0.0, 2.0, -0.5, 2.5)],
                                  scipy.special.erfcinv([0.0, 2.0, -0.5, 2.5]))


def test_without_scipy_the_own_code_gives_the_same(monkeypatch, rng):
    y = rng.uniform(0.01, 1.99, size=7)
    with_scipy = [elemwise.ELEMWISE_FUNCTIONS[n][1](*args) for n, args in (("erfcinv", [y]), ("chi2sf", [y, 3.0]))]
    monkeypatch.setattr(elemwise, "_scipy_special", lambda name: None)
    without = [elemwise.ELEMWISE_FUNCTIONS[n][1](*args) for n, args in (("erfcinv", [y]), ("chi2sf", [y, 3.0]))]
    for w, g in zip(with_scipy, without):
        assert w.dtype == g.dtype
        np.testing.assert_allclose(g, w, rtol=1e-13)


def test_gradients_verify_grad():
    ss.verify_grad(T.erfcinv, [np.array([0.05, 0.7, 1.2, 1.95])])
    ss.verify_grad(lambda x: T.chi2sf(x, 3.5), [np.array([0.5, 2.0, 7.0])])
    ss.verify_grad(lambda x: T.real(x) + T.imag(x) + T.angle(x), [np.array([0.5, -2.0, 7.0])])  # real x


@pytest.mark.parametrize("fn", [T.real, T.imag, T.angle])
def test_complex_gradients_are_dC_dx_plus_i_dC_dy(fn, rng):
    z = T.zvector("z")
    weights = np.array([1.0, -2.0, 3.0])
    cost = (fn(z) * weights).sum()
    point = rng.normal(size=3) + 1j * rng.normal(size=3)
    got = ss.function([z], ss.grad(cost, z))(point)
    f, h = ss.function([z], cost), 1e-6
    want = [(f(point + h * e) - f(point - h * e)) / (2 * h) + 1j * (f(point + 1j * h * e) - f(point - 1j * h * e))
            / (2 * h) for e in np.eye(3)]
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


def test_chi2sf_gradient_in_x_and_refused_in_k():
    x, k = T.dvector("x"), T.dvector("k")
    values, dof = np.array([0.5, 2.0, 9.0]), np.array([1.0, 3.0, 6.5])
    got = ss.function([x, k], ss.grad(T.chi2sf(x, k).sum(), x))(values, dof)
    h = 1e-6
    np.testing.assert_allclose(got, (scipy.special.chdtrc(dof, values + h) - scipy.special.chdtrc(dof, values - h))
                               / (2 * h), rtol=1e-7)
    with pytest.raises(ss.gradient.NullTypeGradError if hasattr(ss.gradient, "NullTypeGradError") else TypeError,
                       match=r"chi2sf w.r.t. its degrees of freedom k is not implemented"):
        ss.grad(T.chi2sf(x, k).sum(), k)


@pytest.mark.parametrize("fn", [T.erfcinv, lambda x: T.chi2sf(x, 2.0), T.real, T.imag, T.angle])
def test_onnx_export_is_refused_naming_the_op(fn):
    x = T.fvector("x")
    with pytest.raises(ss.onnx.ExportError, match=r"Elemwise\{(erfcinv|chi2sf|real|imag|angle)\} has no ONNX"):
        ss.onnx.export(ss.function([x], fn(x), mode="py"))


INVERSE_TRIG = [("arcsin", np.arcsin), ("arccos", np.arccos), ("arctan", np.arctan), ("arctanh", np.arctanh),
                ("erfc", scipy.special.erfc), ("erf", scipy.special.erf)]


@pytest.mark.parametrize("mode", MODES_TESTED)
def test_inverse_trig_and_erfc_match_numpy_in_a_loop(mode, rng):
    """The loop keeps them (push-out off), so numba's kernel computes them (ufuncs, libm's erf/erfc)."""
    xs = rng.uniform(-0.95, 0.95, size=(3, 4))
    seq = T.dmatrix("xs")

    def step(x, acc):
        return T.tanh(acc) + sum(getattr(T, name)(x) for name, _ in INVERSE_TRIG) + T.erfc(x[0])

    out, _ = ss.scan(step, sequences=seq, outputs_info=T.zeros((4,), dtype="float64"))
    f = ss.function([seq], out, mode=mode, rewrites=["-push_out"])
    if mode == "numba":
        assert f.backend_report() == ["scan: numba"], f.backend_report()
    acc, want = np.zeros(4), []
    for x in xs:
        acc = np.tanh(acc) + sum(fn(x) for _, fn in INVERSE_TRIG) + scipy.special.erfc(x[0])
        want.append(acc)
    np.testing.assert_allclose(f(xs), want, rtol=1e-12)


def test_inverse_trig_and_erfc_gradients_and_dtypes():
    point = [np.array([-0.6, 0.1, 0.7])]
    for name, _ in INVERSE_TRIG:
        ss.verify_grad(getattr(T, name), point)
        assert getattr(T, name)(T.fvector()).dtype == "float32"


def test_inverse_trig_exports_in_float32_and_refuses_float64():
    x = T.fvector("x")
    values = np.array([-0.6, 0.1, 0.7], dtype=np.float32)
    got = ss.function([x], [T.arcsin(x), T.arccos(x), T.arctan(x), T.arctanh(x)], mode="onnxruntime")(values)
    for g, fn in zip(got, (np.arcsin, np.arccos, np.arctan, np.arctanh)):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, fn(values), rtol=1e-6)
    d = T.dvector("d")
    with pytest.raises(ss.onnx.ExportError, match=r"Elemwise\{arcsin\} .*float32 only.*astype\('float32'\)"):
        ss.onnx.export(ss.function([d], T.arcsin(d), mode="py"))
    with pytest.raises(ss.onnx.ExportError, match=r"Elemwise\{erfc\} has no ONNX lowering"):
        ss.onnx.export(ss.function([x], T.erfc(x), mode="py"))
