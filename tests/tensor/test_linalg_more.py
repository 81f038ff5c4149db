"""expm, eig, lstsq, tensorinv, tensorsolve and the generalized eigvalsh against numpy/scipy:
values in every mode (top level and inside a loop, where numba compiles expm and lstsq), dtypes
and static shapes, build-time errors, and ONNX refusing each by name."""

import numpy as np
import pytest
import scipy.linalg

import symscan as ss
import symscan.tensor as T
from symscan.tensor import linalg

from modes_tested import MODES_TESTED


def spd(rng, *batch, n=3):
    m = rng.normal(size=batch + (n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def symmetric(rng, n=4):
    m = rng.normal(size=(n, n))
    return m + m.T


def run(inputs, outputs, *values, mode="py"):
    return ss.function(inputs, outputs, mode=mode)(*values)


def as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def assert_close(got, want, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-10 if want.dtype.itemsize >= 8 else 1e-5, atol=1e-12,
                               err_msg=what)


def sorted_eig(w, v):
    """Eigenpairs in one order (by value) with each vector's phase fixed (largest entry real > 0)."""
    order = np.lexsort((np.round(w.imag, 9), np.round(w.real, 9)))
    w, v = w[order], v[:, order]
    index = np.argmax(np.abs(v), axis=0)
    phase = v[index, np.arange(v.shape[1])]
    return w, v / (phase / np.abs(phase))


def _cases(rng):
    small, large = rng.normal(size=(2, 3, 3)), 4 * rng.normal(size=(4, 4))  # large: scaled and squared
    tall, rhs, rhs2 = rng.normal(size=(6, 3)), rng.normal(size=6), rng.normal(size=(6, 2))
    wide = rng.normal(size=(2, 4))
    a4, b4 = symmetric(rng), spd(rng, n=4)
    return [
        ("expm batched", linalg.expm, scipy.linalg.expm, [small]),
        ("expm large norm", linalg.expm, scipy.linalg.expm, [large]),
        ("expm float32", linalg.expm, lambda x: scipy.linalg.expm(x.astype("float64")).astype("float32"),
         [small[0].astype("float32")]),
        ("lstsq vector", linalg.lstsq, lambda a, b: np.linalg.lstsq(a, b, rcond=None), [tall, rhs]),
        ("lstsq matrix", linalg.lstsq, lambda a, b: np.linalg.lstsq(a, b, rcond=None), [tall, rhs2]),
        ("lstsq underdetermined (empty residuals)", linalg.lstsq, lambda a, b: np.linalg.lstsq(a, b, rcond=None),
         [wide, rhs[:2]]),
        ("lstsq rank-deficient", linalg.lstsq, lambda a, b: np.linalg.lstsq(a, b, rcond=None),
         [np.outer(rhs, [1.0, 2.0, 3.0]), rhs]),
        ("eigvalsh generalized", linalg.eigvalsh, lambda a, b: scipy.linalg.eigvalsh(a, b), [a4, b4]),
        ("eigvalsh generalized upper", lambda a, b: linalg.eigvalsh(a, b, UPLO="U"),
         lambda a, b: scipy.linalg.eigvalsh(a, b, lower=False), [np.triu(a4) + 7 * np.tril(a4, -1), b4]),
        ("tensorinv", linalg.tensorinv, np.linalg.tensorinv, [rng.normal(size=(4, 6, 8, 3))]),
        ("tensorinv ind 1", lambda a: linalg.tensorinv(a, 1), lambda a: np.linalg.tensorinv(a, 1),
         [rng.normal(size=(6, 2, 3))]),
        ("tensorsolve", linalg.tensorsolve, np.linalg.tensorsolve,
         [rng.normal(size=(6, 4, 2, 3, 4)), rng.normal(size=(6, 4))]),
        ("tensorsolve axes", lambda a, b: linalg.tensorsolve(a, b, axes=(0,)),
         lambda a, b: np.linalg.tensorsolve(a, b, axes=(0,)), [rng.normal(size=(2, 2, 3, 3)),
                                                                  rng.normal(size=(2, 3))]),
    ]


@pytest.mark.parametrize("mode", MODES_TESTED)
def test_values_match_numpy_and_scipy(mode, rng):
    for name, op, reference, values in _cases(rng):
        inputs = [T.tensor(x.dtype, (None,) * x.ndim) for x in values]
        got = run(inputs, as_list(op(*inputs)), *values, mode=mode)
        for g, w in zip(got, as_list(reference(*values))):
            assert_close(g, w, f"{name} ({mode})")


@pytest.mark.parametrize("mode", MODES_TESTED)
def test_inside_a_loop_numba_compiles_expm_and_lstsq(mode, rng):
    a, b = T.dtensor3("a"), T.dmatrix("b")

    def step(m, v):
        x, residuals, rank, s = linalg.lstsq(m[:, :3], v)
        return linalg.expm(m), x, residuals, rank, s

    out, _ = ss.scan(step, sequences=[a, b])
    values = [rng.normal(size=(3, 4, 4)), rng.normal(size=(3, 4))]
    f = ss.function([a, b], out, mode=mode)
    got = f(*values)
    if mode == "numba":
        assert f.backend_report() == ["scan: numba"], f.backend_report()
    for t in range(3):
        assert_close(got[0][t], scipy.linalg.expm(values[0][t]), f"expm step {t}")
        for g, w in zip(got[1:], np.linalg.lstsq(values[0][t][:, :3], values[1][t], rcond=None)):
            assert_close(g[t], w, f"lstsq step {t}")


@pytest.mark.parametrize("mode", MODES_TESTED)
def test_eig_is_complex_and_matches_numpy_up_to_order_and_phase(mode, rng):
    a = T.dtensor3("a")
    values = rng.normal(size=(2, 4, 4))
    values[1] = values[1] + values[1].T  # real eigenvalues: numpy returns float64, symscan complex128
    w, v = run([a], list(linalg.eig(a)), values, mode=mode)
    assert w.dtype == v.dtype == np.complex128
    for i in range(2):
        want_w, want_v = np.linalg.eig(values[i])
        got, want = sorted_eig(w[i], v[i]), sorted_eig(want_w.astype(complex), want_v.astype(complex))
        np.testing.assert_allclose(got[0], want[0], rtol=1e-10)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(values[i] @ v[i], v[i] * w[i], atol=1e-10)  # a v = v diag(w)
    assert linalg.eig(T.fmatrix())[0].dtype == "complex64"


def test_eig_in_a_numba_loop_runs_in_python_saying_why(rng):
    a = T.dtensor3("a")
    out, _ = ss.scan(lambda m: linalg.eig(m)[0], sequences=a)
    f = ss.function([a], out, mode="numba") if "numba" in MODES_TESTED else None
    if f is None:
        pytest.skip("numba is not installed")
    assert "no numba form for Eig" in f.backend_report()[0], f.backend_report()
    values = rng.normal(size=(2, 3, 3))
    np.testing.assert_allclose(np.sort_complex(f(values)[1]), np.sort_complex(np.linalg.eig(values[1])[0]))


def test_static_shapes_and_dtypes():
    assert linalg.expm(T.tensor("float32", (5, 3, 3))).type.shape == (5, 3, 3)
    assert linalg.expm(T.fmatrix()).dtype == "float32"
    w, v = linalg.eig(T.tensor("float64", (2, None, 4)))
    assert (w.type.shape, v.type.shape, w.dtype) == ((2, 4), (2, 4, 4), "complex128")
    x, residuals, rank, s = linalg.lstsq(T.tensor("float32", (6, 3)), T.tensor("float64", (6, 2)))
    assert (x.type.shape, residuals.type.shape, rank.type.shape, s.type.shape) == ((3, 2), (None,), (), (3,))
    assert (x.dtype, rank.dtype, s.dtype) == ("float64", "int32", "float64")
    assert linalg.tensorinv(T.tensor("float64", (4, 6, 8, 3))).type.shape == (8, 3, 4, 6)
    assert linalg.tensorsolve(T.tensor("float64", (6, 4, 2, 3, 4)), T.dmatrix()).type.shape == (2, 3, 4)
    assert linalg.eigvalsh(T.tensor("float64", (3, 3)), T.tensor("float64", (3, 3))).type.shape == (3,)


@pytest.mark.parametrize("build, match", [
    (lambda: linalg.expm(T.tensor("float64", (2, 3), name="r")), r"expm: a must be square .*\(2, 3\).*'r'"),
    (lambda: linalg.expm(T.imatrix("m")), r"expm: a must be float32 or float64, got .*int32.*astype"),
    (lambda: linalg.eig(T.dvector("v")), r"eig: a must be a matrix .* got 1-d .*'v'"),
    (lambda: linalg.lstsq(T.dtensor3("a"), T.dvector()), r"lstsq: a must be a matrix .* no batch"),
    (lambda: linalg.lstsq(T.tensor("float64", (5, 3)), T.tensor("float64", (4,), name="b")),
     r"lstsq: b has 4 rows but a has 5"),
    (lambda: linalg.tensorinv(T.tensor("float64", (4, 6, 5)), 1), r"tensorinv: the first 1 axes .* 4 entries .* 30"),
    (lambda: linalg.tensorinv(T.dtensor3(), 3), r"tensorinv: ind must be an int in \[1, 3\)"),
    (lambda: linalg.tensorsolve(T.dmatrix("a"), T.dmatrix("b")), r"tensorsolve: a .* must have more axes than b"),
    (lambda: linalg.tensorsolve(T.tensor("float64", (6, 4, 24)), T.tensor("float64", (6, 5))),
     r"tensorsolve: axis 1 of a has length 4 but b's has 5"),
    (lambda: linalg.eigvalsh(T.dmatrix(), T.tensor("float64", (2, 3), name="m")), r"eigvalsh: b must be square"),
    (lambda: linalg.eigvalsh(T.dmatrix(), T.dmatrix(), UPLO="X"), r"eigvalsh: UPLO must be 'L' or 'U'"),
])
def test_build_time_errors(build, match):
    with pytest.raises((TypeError, ValueError), match=match):
        build()


@pytest.mark.parametrize("mode", MODES_TESTED)
def test_not_positive_definite_b_raises_linalg_error_naming_the_op(mode, rng):
    a, b = T.dmatrix("a"), T.dmatrix("b")
    with pytest.raises(np.linalg.LinAlgError, match=r"(cholesky|Cholesky).*not positive definite|Cholesky"):
        run([a, b], linalg.eigvalsh(a, b), symmetric(rng), -np.eye(4), mode=mode)


@pytest.mark.parametrize("op", [linalg.expm, lambda a: linalg.eig(a)[1], lambda a: linalg.lstsq(a, a)[0]])
def test_export_is_refused_by_name(op):
    a = T.fmatrix("a")
    with pytest.raises(ss.onnx.ExportError, match=r"(Expm|Eig|Lstsq).* has no ONNX lowering"):
        ss.onnx.export(ss.function([a], op(a), mode="py"))


def test_reachable_from_the_tensor_namespace():
    for name in ("expm", "eig", "lstsq", "tensorinv", "tensorsolve", "eigvalsh"):
        assert getattr(T.linalg, name) is getattr(linalg, name)
