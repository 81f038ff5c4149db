"""symscan.tensor.linalg against numpy.linalg / scipy.linalg: values in every mode (numba inside
a loop too), numpy.linalg's batching, dtypes and static shapes, build-time errors, LinAlgError
naming the op, and ONNX export (Det runs in onnxruntime; the others refuse by name)."""

import numpy as np
import pytest
import scipy.linalg

import symscan as ss
import symscan.tensor as T
from symscan.tensor import linalg

from modes_tested import MODES_TESTED


def spd(rng, *batch, n=3):
    """Symmetric positive definite (well conditioned) matrices."""
    m = rng.normal(size=batch + (n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def run(inputs, outputs, *values, mode="py"):
    return ss.function(inputs, outputs, mode=mode)(*values)


def assert_close(got, want, what: str = ""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-10 if want.dtype == np.float64 else 1e-4, atol=1e-12,
                               err_msg=what)


# ---------------------------------------------------------------------------- values
def _cases(rng):
    a, ab = spd(rng), spd(rng, 2)
    lower, upper = np.linalg.cholesky(a), np.linalg.cholesky(a).T
    b, v, bb = rng.normal(size=(3, 2)), rng.normal(size=3), rng.normal(size=(4, 1, 3, 2))
    return [
        ("inv", linalg.inv, np.linalg.inv, [ab]),
        ("det", linalg.det, np.linalg.det, [ab]),
        ("slogdet", linalg.slogdet, np.linalg.slogdet, [-ab]),
        ("solve vector", linalg.solve, np.linalg.solve, [a, v]),
        ("solve batched vector", linalg.solve, np.linalg.solve, [ab, v]),
        ("solve broadcast batch", linalg.solve, np.linalg.solve, [ab, bb]),
        ("cholesky", linalg.cholesky, np.linalg.cholesky, [ab]),
        ("cholesky upper", lambda x: linalg.cholesky(x, lower=False),
         lambda x: scipy.linalg.cholesky(x, lower=False), [a + np.tril(a, -1)]),  # reads the upper triangle
        ("solve_triangular", lambda x, y: linalg.solve_triangular(x, y, lower=True),
         lambda x, y: scipy.linalg.solve_triangular(x, y, lower=True), [a, b]),
        ("solve_triangular trans unit", lambda x, y: linalg.solve_triangular(x, y, trans="T", unit_diagonal=True),
         lambda x, y: scipy.linalg.solve_triangular(x, y, trans="T", unit_diagonal=True), [a, v]),
        ("solve_triangular batched", lambda x, y: linalg.solve_triangular(x, y, lower=True),
         lambda x, y: np.stack([scipy.linalg.solve_triangular(m, y, lower=True) for m in x]), [ab, v]),
        ("cho_solve", lambda c, y: linalg.cho_solve((c, True), y),
         lambda c, y: scipy.linalg.cho_solve((c, True), y), [lower, b]),
        ("cho_solve upper", lambda c, y: linalg.cho_solve((c, False), y),
         lambda c, y: scipy.linalg.cho_solve((c, False), y), [upper, v]),
    ]


@pytest.mark.parametrize("mode", MODES_TESTED)
def test_values_match_numpy_and_scipy(mode, rng):
    for name, op, reference, values in _cases(rng):
        inputs = [T.tensor("float64", (None,) * np.ndim(x)) for x in values]
        out = op(*inputs)
        got = run(inputs, list(out) if isinstance(out, tuple) else out, *values, mode=mode)
        want = reference(*values)
        for g, w in zip(got if isinstance(out, tuple) else [got], want if isinstance(out, tuple) else [want]):
            assert_close(g, w, name)


@pytest.mark.parametrize("mode", MODES_TESTED)
def test_float32_stays_float32_and_mixed_promotes(mode, rng):
    a32, b64 = spd(rng).astype("float32"), rng.normal(size=3)
    a, b = T.fmatrix("a"), T.dvector("b")
    inv, det, x = run([a, b], [linalg.inv(a), linalg.det(a), linalg.solve(a, b)], a32, b64, mode=mode)
    assert_close(inv, np.linalg.inv(a32))
    assert_close(det, np.linalg.det(a32))
    assert_close(x, np.linalg.solve(a32, b64))


def test_static_shapes():
    a, b = T.tensor("float64", (5, 1, 3, 3)), T.tensor("float64", (4, 3, 2))
    assert linalg.inv(a).type.shape == (5, 1, 3, 3)
    assert linalg.det(a).type.shape == (5, 1)
    assert [v.type.shape for v in linalg.slogdet(a)] == [(5, 1), (5, 1)]
    assert linalg.solve(a, b).type.shape == (5, 4, 3, 2)
    assert linalg.solve(a, T.tensor("float64", (3,))).type.shape == (5, 1, 3)
    assert linalg.solve_triangular(T.dmatrix(), T.tensor("float64", (None, 7))).type.shape == (None, 7)
    assert linalg.cholesky(T.tensor("float32", (2, 2))).dtype == "float32"


def test_reachable_from_the_tensor_namespace():
    assert T.linalg.solve is linalg.solve and T.linalg.cho_solve is linalg.cho_solve


# ---------------------------------------------------------------------------- errors
@pytest.mark.parametrize("build, match", [
    (lambda: linalg.inv(T.dvector("v")), r"inv: a must be a matrix .* got 1-d .*'v'"),
    (lambda: linalg.det(T.imatrix("m")), r"det: a must be float32 or float64, got .*int32.*astype\('float64'\)"),
    (lambda: linalg.cholesky(T.tensor("float64", (2, 3), name="r")), r"cholesky: a must be square .*\(2, 3\)"),
    (lambda: linalg.solve(T.tensor("float64", (3, 3)), T.tensor("float64", (4,))),
     r"solve: b has 4 rows but a is 3x3"),
    (lambda: linalg.solve(T.tensor("float64", (2, 3, 3)), T.tensor("float64", (5, 3, 1))),
     r"solve: the batch shapes .* do not broadcast \(2 vs 5\)"),
    (lambda: linalg.solve(T.dmatrix(), T.dscalar("s")), r"solve: b must be at least 1-d"),
    (lambda: linalg.solve_triangular(T.dmatrix(), T.dvector(), trans=3), r"trans must be 0, 1, 2"),
    (lambda: linalg.cho_solve(T.dmatrix(), T.dvector()), r"cho_solve: the first argument must be the pair"),
])
def test_build_time_errors(build, match):
    with pytest.raises((TypeError, ValueError), match=match):
        build()


@pytest.mark.parametrize("mode", MODES_TESTED)
@pytest.mark.parametrize("op, value", [
    (linalg.inv, np.ones((2, 2))),
    (lambda a: linalg.solve(a, T.ones((2,), dtype="float64")), np.ones((2, 2))),
    (linalg.cholesky, -np.eye(2)),
], ids=["inv singular", "solve singular", "cholesky not positive definite"])
def test_linalg_error_names_the_op(mode, op, value):
    a = T.dmatrix("a")
    with pytest.raises(np.linalg.LinAlgError, match=r"(inv|solve|cholesky|MatrixInverse|Solve|Cholesky)\b.*\ba\b"):
        run([a], op(a), value, mode=mode)


def test_linalg_error_inside_a_numba_loop_names_the_op():
    """The kernel raises; the call is run again in the fast evaluator, whose error names the node."""
    a = T.dtensor3("a")
    out, _ = ss.scan(lambda m: linalg.inv(m), sequences=a)
    with pytest.raises(np.linalg.LinAlgError, match=r"MatrixInverse.*float64"):
        run([a], out, np.ones((2, 2, 2)), mode="numba")


# ---------------------------------------------------------------------------- numba loops
def test_numba_runs_unbatched_linalg_in_the_kernel(rng):
    """inv, det, slogdet, solve and cholesky of one float matrix are in numba's np.linalg."""
    a, b = T.dtensor3("a"), T.dmatrix("b")

    def step(m, v):
        sign, logdet = linalg.slogdet(m)
        x = linalg.solve(m, v) + linalg.inv(m).sum() + linalg.det(m) + sign * logdet
        return x + linalg.cholesky(m).sum() + linalg.cholesky(m, lower=False).sum()

    out, _ = ss.scan(step, sequences=[a, b])
    values = [spd(rng, 4), rng.normal(size=(4, 3))]
    f = ss.function([a, b], out, mode="numba")
    assert all(line.endswith(": numba") for line in f.backend_report()), f.backend_report()
    np.testing.assert_allclose(f(*values), run([a, b], out, *values), rtol=1e-12)


@pytest.mark.parametrize("b_shape", [(4,), (2, 3, 4, 2)], ids=["shared vector b", "b of a's batch"])
def test_numba_runs_batched_linalg_in_the_kernel(b_shape, rng):
    """A stack of matrices per step: one loop over the one-matrix forms, in the kernel."""
    a, b = T.tensor("float64", (None,) * 5, name="a"), T.tensor("float64", (None,) * (len(b_shape) + 1), name="b")

    def step(m, v):
        sign, logdet = linalg.slogdet(m)
        w, vectors = linalg.eigh(m)
        return (linalg.solve(m, v).sum() + linalg.inv(m).sum() + linalg.det(m).sum() + (sign * logdet).sum()
                + linalg.cholesky(m, lower=False).sum() + w.sum() + (vectors ** 2).sum() + linalg.eigvalsh(m).sum())

    out, _ = ss.scan(step, sequences=[a, b])
    values = [spd(rng, 3, 2, 3, n=4), rng.normal(size=(3,) + b_shape)]
    f = ss.function([a, b], out, mode="numba")
    assert f.backend_report() == ["scan: numba"], f.backend_report()
    np.testing.assert_allclose(f(*values), run([a, b], out, *values), rtol=1e-12)


def test_numba_keeps_scipy_ops_in_python_with_the_reason(rng):
    a, b = T.dtensor3("a"), T.dmatrix("b")
    out, _ = ss.scan(lambda m, v: linalg.solve_triangular(m, v, lower=True), sequences=[a, b])
    values = [spd(rng, 4), rng.normal(size=(4, 3))]
    f = ss.function([a, b], out, mode="numba")
    assert any("no numba form for SolveTriangular" in line for line in f.backend_report()), f.backend_report()
    np.testing.assert_allclose(f(*values), run([a, b], out, *values), rtol=1e-12)


# ---------------------------------------------------------------------------- ONNX
def test_det_runs_in_onnxruntime(rng):
    a = T.ftensor3("a")
    values = spd(rng, 2).astype("float32")
    f = ss.function([a], [linalg.det(a), linalg.det(a[0])], mode="onnxruntime")
    batched, single = f(values)
    assert_close(batched, np.linalg.det(values))
    assert_close(single, np.linalg.det(values[0]))


def test_float64_det_export_is_refused_with_the_fix():
    """onnxruntime has Det for float32 only; a float32 model for a float64 det would be less precise."""
    a = T.dmatrix("a")
    with pytest.raises(ss.onnx.ExportError, match=r"det of .*float64.*float32 only.*astype\('float32'\)"):
        ss.onnx.export(ss.function([a], linalg.det(a), mode="py"))


@pytest.mark.parametrize("op", [linalg.inv, linalg.cholesky, lambda a: linalg.slogdet(a)[1]])
def test_export_without_an_onnx_op_names_it(op):
    a = T.dmatrix("a")
    with pytest.raises(ss.onnx.ExportError, match=r"(MatrixInverse|Cholesky|SlogDet).* has no ONNX lowering"):
        ss.onnx.export(ss.function([a], op(a), mode="py"))


# ---------------------------------------------------------------------------- built from other ops
def _derived_cases(rng):
    x, m, v, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(3, 3)), rng.normal(size=3), rng.normal(size=(2, 5))
    return [
        ("diagonal", lambda t: linalg.diagonal(t, 1, 1, 2), lambda t: np.diagonal(t, 1, 1, 2), [x]),
        ("diagonal negative offset, swapped axes", lambda t: linalg.diagonal(t, -1, 2, 0),
         lambda t: np.diagonal(t, -1, 2, 0), [x]),
        ("trace", linalg.trace, np.trace, [m]),
        ("trace of stacked planes", lambda t: linalg.trace(t, 1, 1, 2), lambda t: np.trace(t, 1, 1, 2), [x]),
        ("diag of a vector", lambda t: linalg.diag(t, -2), lambda t: np.diag(t, -2), [v]),
        ("diag of a matrix", lambda t: linalg.diag(t, 1), lambda t: np.diag(t, 1), [m]),
        ("kron", linalg.kron, np.kron, [m, b]),
        ("kron of a vector and a 3-d array", linalg.kron, np.kron, [v, x]),
        ("matrix_power 5", lambda t: linalg.matrix_power(t, 5), lambda t: np.linalg.matrix_power(t, 5), [m]),
        ("matrix_power -3", lambda t: linalg.matrix_power(t, -3), lambda t: np.linalg.matrix_power(t, -3), [m]),
        ("matrix_power 0", lambda t: linalg.matrix_power(t, 0), lambda t: np.linalg.matrix_power(t, 0), [m]),
        ("norm", linalg.norm, np.linalg.norm, [x]),
        ("norm vector ord 3", lambda t: linalg.norm(t, 3), lambda t: np.linalg.norm(t, 3), [v]),
        ("norm vector ord 0", lambda t: linalg.norm(t, 0), lambda t: np.linalg.norm(t, 0), [v]),
        ("norm vector -inf, keepdims", lambda t: linalg.norm(t, -np.inf, axis=1, keepdims=True),
         lambda t: np.linalg.norm(t, -np.inf, axis=1, keepdims=True), [x]),
        ("norm matrix 1 over (2, 0)", lambda t: linalg.norm(t, 1, axis=(2, 0)),
         lambda t: np.linalg.norm(t, 1, axis=(2, 0)), [x]),
        ("norm matrix inf, keepdims", lambda t: linalg.norm(t, np.inf, keepdims=True),
         lambda t: np.linalg.norm(t, np.inf, keepdims=True), [m]),
        ("norm fro", lambda t: linalg.norm(t, "fro", axis=(1, 2)),
         lambda t: np.linalg.norm(t, "fro", axis=(1, 2)), [x]),
    ]


@pytest.mark.parametrize("mode", MODES_TESTED + ["onnxruntime"])
def test_derived_values_match_numpy(mode, rng):
    for name, op, reference, values in _derived_cases(rng):
        if mode == "onnxruntime" and name == "matrix_power -3":  # inv has no ONNX op
            continue
        inputs = [T.tensor("float64", (None,) * np.ndim(x)) for x in values]
        assert_close(run(inputs, op(*inputs), *values, mode=mode), reference(*values), name)


def test_derived_static_shapes():
    assert linalg.diagonal(T.tensor("float64", (2, 3, 5)), 1, 1, 2).type.shape == (2, 3)
    assert linalg.diagonal(T.tensor("float64", (4, 4)), -9).type.shape == (0,)
    assert linalg.trace(T.tensor("float64", (2, 3, 5)), 0, 1, 2).type.shape == (2,)
    assert linalg.kron(T.tensor("float64", (2, 3)), T.tensor("float64", (4, 5))).type.shape == (8, 15)
    assert linalg.norm(T.tensor("float32", (2, 3)), axis=1, keepdims=True).type.shape == (2, 1)
    assert linalg.norm(T.ivector()).dtype == "float64"


@pytest.mark.parametrize("build, match", [
    (lambda: linalg.diagonal(T.dvector("v")), r"diagonal: a must be at least 2-d.*use diag\(v\)"),
    (lambda: linalg.diagonal(T.dmatrix(), axis1=1, axis2=-1), r"axis1 and axis2 are both 1"),
    (lambda: linalg.trace(T.dmatrix(), axis2=2), r"diagonal: axis2=2 is out of range"),
    (lambda: linalg.diag(T.dtensor3()), r"diag: v must be 1-d or 2-d"),
    (lambda: linalg.matrix_power(T.dmatrix(), T.iscalar()), r"matrix_power: n must be a Python int"),
    (lambda: linalg.matrix_power(T.tensor("float64", (2, 3)), 2), r"matrix_power: a must be square"),
    (lambda: linalg.norm(T.dmatrix(), 2), r"norm: the matrix norm ord=2 needs singular values"),
    (lambda: linalg.norm(T.dtensor3(), 1), r"norm: ord=1 without axis needs a 1-d or 2-d x"),
    (lambda: linalg.norm(T.dvector(), "fro"), r"ord='fro' is a matrix norm"),
])
def test_derived_build_time_errors(build, match):
    with pytest.raises((TypeError, ValueError), match=match):
        build()


@pytest.mark.parametrize("step", [
    lambda m: linalg.norm(m) + linalg.matrix_power(m, 3).sum(),
    lambda m: linalg.trace(m) + linalg.diagonal(m, 1).sum(),
    lambda m: linalg.kron(m, m).sum() + linalg.diag(linalg.diagonal(m, -1), 1).sum(),
], ids=["norm, matrix_power", "trace, diagonal", "kron, diag"])
def test_derived_ops_in_a_numba_loop_run_in_the_kernel(step, rng):
    """norm and matrix_power compile; diagonal/trace/diag index with integer vectors after full
    slices and kron reshapes, which numba's indexing module compiles as loops."""
    a = T.dtensor3("a")
    values = rng.normal(size=(4, 3, 3))
    out, _ = ss.scan(step, sequences=a)
    f = ss.function([a], out, mode="numba", rewrites=["-push_out_seq"])  # the loop kept (it is a map)
    assert f.backend_report() == ["scan: numba"], f.backend_report()
    np.testing.assert_allclose(f(values), run([a], out, values), rtol=1e-12)
    np.testing.assert_allclose(ss.function([a], out, mode="numba")(values), run([a], out, values), rtol=1e-12)


def test_scipy_ops_without_scipy_name_the_extra(monkeypatch, rng):
    monkeypatch.setitem(__import__("sys").modules, "scipy.linalg", None)  # import scipy.linalg fails
    a, b = T.dmatrix("a"), T.dvector("b")
    f = ss.function([a, b], linalg.solve_triangular(a, b), mode="py")
    with pytest.raises(ImportError, match=r"solve_triangular needs scipy.*symscan\[numba\]"):
        f(spd(rng), rng.normal(size=3))


@pytest.mark.parametrize("mode", MODES_TESTED)
def test_empty_batch(mode):
    a, b = T.dtensor3("a"), T.dvector("b")
    outs = [linalg.solve_triangular(a, b, lower=True), linalg.cho_solve((a, True), b), linalg.solve(a, b)]
    for got in run([a, b], outs, np.zeros((0, 3, 3)), np.ones(3), mode=mode):
        assert got.shape == (0, 3) and got.dtype == np.float64


# ---------------------------------------------------------------------------- decompositions
def symmetric(rng, *batch, n=4):
    """Symmetric matrices with well-separated eigenvalues (-1.5, 0, 1.5, ...)."""
    q, _ = np.linalg.qr(rng.normal(size=batch + (n, n)))
    return (q * (1.5 * np.arange(n) - 1.5)) @ np.swapaxes(q, -1, -2)


def column_signs(m):
    """The sign of each column's largest entry: eigen/singular vectors are unique up to sign."""
    index = np.argmax(np.abs(m), axis=-2)[..., None, :]
    return np.sign(np.take_along_axis(m, index, axis=-2))


def eigh_canonical(w, v):
    return w, v * column_signs(v)


def qr_canonical(q, r=None):
    """q's columns and r's matching rows with one sign (r's rows alone for mode "r")."""
    if r is None:
        return [q * np.swapaxes(column_signs(np.swapaxes(q, -1, -2)), -1, -2)]
    signs = column_signs(q)
    return q * signs, r * np.swapaxes(signs, -1, -2)


def svd_canonical(u, s, vh):
    """u's columns and vh's rows, each with the sign of its largest entry."""
    return u * column_signs(u), s, vh * np.swapaxes(column_signs(np.swapaxes(vh, -1, -2)), -1, -2)


def _decomposition_cases(rng):
    a, ab = symmetric(rng), symmetric(rng, 2)
    tall, wide = rng.normal(size=(2, 5, 3)), rng.normal(size=(3, 5))
    upper_only = a + np.tril(rng.normal(size=a.shape), -1)  # UPLO="U" must ignore the lower triangle
    return [
        ("eigh", linalg.eigh, np.linalg.eigh, eigh_canonical, [ab]),
        ("eigh upper", lambda x: linalg.eigh(x, "U"), lambda x: np.linalg.eigh(x, "U"), eigh_canonical,
         [upper_only]),
        ("eigvalsh", linalg.eigvalsh, np.linalg.eigvalsh, None, [ab]),
        ("eigvalsh upper", lambda x: linalg.eigvalsh(x, UPLO="U"), lambda x: np.linalg.eigvalsh(x, UPLO="U"), None,
         [upper_only]),
        ("qr tall batch", linalg.qr, np.linalg.qr, qr_canonical, [tall]),
        ("qr wide", linalg.qr, np.linalg.qr, qr_canonical, [wide]),
        ("qr complete", lambda x: linalg.qr(x, "complete"), lambda x: np.linalg.qr(x, "complete"), qr_canonical,
         [tall[0]]),
        ("qr r", lambda x: linalg.qr(x, mode="r"), lambda x: np.linalg.qr(x, mode="r"), qr_canonical, [tall[0]]),
        ("svd full", linalg.svd, np.linalg.svd, svd_canonical, [tall]),
        ("svd reduced wide", lambda x: linalg.svd(x, full_matrices=False),
         lambda x: np.linalg.svd(x, full_matrices=False), svd_canonical, [wide]),
        ("svd values", lambda x: linalg.svd(x, compute_uv=False), lambda x: np.linalg.svd(x, compute_uv=False),
         None, [wide]),
        ("pinv", linalg.pinv, np.linalg.pinv, None, [tall]),
        ("pinv wide", linalg.pinv, np.linalg.pinv, None, [wide]),
        ("pinv rank-deficient", linalg.pinv, np.linalg.pinv, None, [np.outer(wide[0], wide[1])]),
    ]


def as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def top_level_and_looped(op, values, mode):
    """op's outputs on values, computed at the top level and inside a one-step scan."""
    inputs = [T.tensor("float64", (None,) * np.ndim(x)) for x in values]
    top = run(inputs, as_list(op(*inputs)), *values, mode=mode)
    stacked = [T.tensor("float64", (None,) * (np.ndim(x) + 1)) for x in values]
    looped, _ = ss.scan(lambda *xs: as_list(op(*xs)), sequences=stacked)
    f = ss.function(stacked, as_list(looped), mode=mode)
    return top, [g[0] for g in f(*[x[None] for x in values])], f


@pytest.mark.parametrize("mode", MODES_TESTED)
def test_decompositions_match_numpy(mode, rng):
    """Values in every mode, top level and inside a loop (numba's kernel for one 2-d matrix),
    with the vectors' signs made canonical on both sides."""
    for name, op, reference, canonical, values in _decomposition_cases(rng):
        want = as_list(reference(*values))
        top, looped, f = top_level_and_looped(op, values, mode)
        if mode == "numba" and np.ndim(values[0]) == 2:  # numba's qr has no complete mode
            where = "fast (QR(mode='complete')" if name == "qr complete" else "numba"
            assert f.backend_report()[0].startswith(f"scan: {where}"), (name, f.backend_report())
        for got in (top, looped):
            if canonical is not None:
                got, want = canonical(*got), canonical(*want)
            for g, w in zip(got, want):
                assert_close(g, w, f"{name} ({mode})")


def test_decomposition_static_shapes_and_dtypes():
    w, v = linalg.eigh(T.tensor("float32", (5, 3, None)))
    assert (w.type.shape, v.type.shape, w.dtype, v.dtype) == ((5, 3), (5, 3, 3), "float32", "float32")
    assert linalg.eigvalsh(T.tensor("float64", (2, None, None))).type.shape == (2, None)
    tall, wide = T.tensor("float64", (7, 5, 3)), T.tensor("float32", (3, 5))
    assert [v.type.shape for v in linalg.qr(tall)] == [(7, 5, 3), (7, 3, 3)]
    assert [v.type.shape for v in linalg.qr(tall, "complete")] == [(7, 5, 5), (7, 5, 3)]
    assert linalg.qr(wide, "r").type.shape == (3, 5) and linalg.qr(wide, "r").dtype == "float32"
    assert [v.type.shape for v in linalg.qr(T.tensor("float64", (None, 3)))] == [(None, None), (None, 3)]
    assert [v.type.shape for v in linalg.svd(tall)] == [(7, 5, 5), (7, 3), (7, 3, 3)]
    assert [v.type.shape for v in linalg.svd(wide, full_matrices=False)] == [(3, 3), (3,), (3, 5)]
    assert linalg.svd(T.tensor("float64", (None, 4)), compute_uv=False).type.shape == (None,)
    assert linalg.pinv(tall).type.shape == (7, 3, 5) and linalg.pinv(wide).dtype == "float32"


@pytest.mark.parametrize("build, match", [
    (lambda: linalg.eigh(T.tensor("float64", (2, 3))), r"eigh: a must be square .*\(2, 3\)"),
    (lambda: linalg.eigh(T.dmatrix(), UPLO="X"), r"eigh: UPLO must be 'L' or 'U'"),
    (lambda: linalg.eigvalsh(T.lmatrix("m")), r"eigvalsh: a must be float32 or float64"),
    (lambda: linalg.qr(T.dmatrix(), mode="raw"), r"qr: mode must be 'reduced', 'complete' or 'r', got 'raw'"),
    (lambda: linalg.qr(T.dvector("v")), r"qr: a must be a matrix .* got 1-d"),
    (lambda: linalg.svd(T.imatrix()), r"svd: a must be float32 or float64"),
    (lambda: linalg.pinv(T.dscalar()), r"pinv: a must be a matrix"),
    (lambda: linalg.solve(T.tensor("float64", (2, 3)), T.dvector()), r"square .* or pinv for any shape"),
])
def test_decomposition_build_time_errors(build, match):
    with pytest.raises((TypeError, ValueError), match=match):
        build()


@pytest.mark.parametrize("op", [lambda a: linalg.eigh(a)[0], linalg.eigvalsh, lambda a: linalg.qr(a)[1],
                                lambda a: linalg.svd(a, compute_uv=False), linalg.pinv])
def test_decomposition_export_is_refused_by_name(op):
    a = T.fmatrix("a")
    with pytest.raises(ss.onnx.ExportError, match=r"(Eigh|Eigvalsh|QR|SVD|Pinv).* has no ONNX lowering"):
        ss.onnx.export(ss.function([a], op(a), mode="py"))
