"""The fusion rewrite: which nodes it fuses, and that fused graphs compute what the chains did
(mode "py" and numpy are the references), in every backend but numba (which it skips for now)."""

import numpy as np
import pytest
from fused_graphs import unfused_nodes

import symscan as ss
import symscan.tensor as T
from rewrites import fusion
from symscan.compile.modes import Mode
from symscan.gradient.verify import verify_grad
from symscan.scan.op import Scan
from symscan.tensor.composite import Composite, composite_of
from symscan.tensor.elemwise import Elemwise

PY_FUSED = Mode("py-fused", None, "reference", "every rewrite, then the reference interpreter")
"""The reference interpreter on the rewritten graph: Composite's own ``perform``."""


def _composites(fgraph) -> list:
    return [n for n in fgraph.apply_nodes if isinstance(n.op, Composite)]


def _agree(inputs, outputs, values, modes=("fast", PY_FUSED)) -> list:
    """Each mode's results equal mode py's (dtype, shape, values); the compiled functions."""
    want = ss.function(inputs, outputs, mode="py")(*values)
    compiled = []
    for mode in modes:
        f = ss.function(inputs, outputs, mode=mode)
        got = f(*values)
        for g, w in zip(got if isinstance(got, list) else [got], want if isinstance(want, list) else [want]):
            assert np.asarray(g).dtype == np.asarray(w).dtype and np.shape(g) == np.shape(w)
            np.testing.assert_allclose(g, w, rtol=1e-13, atol=0)
        compiled.append(f)
    return compiled


# ---------------------------------------------------------------------------- structure
def test_a_chain_becomes_one_node_with_broadcast_inputs(rng):
    x, b, s = T.matrix("x"), T.vector("b"), T.scalar("s")
    out = T.tanh(x * b + s) * 2.0 - x
    f, _ = _agree([x, b, s], out, [rng.normal(size=(3, 4)), rng.normal(size=4), np.float64(0.5)])
    (node,) = f.fgraph.apply_nodes
    assert str(node.op) == "Composite{sub(mul(tanh(add(mul(i0, i1), i2)), 2.0), i0)}"
    assert node.inputs == f.fgraph.inputs


def test_fusion_can_be_switched_off():
    x = T.vector("x")
    f = ss.function([x], T.exp(x) + 1.0, mode="fast", rewrites=["-fusion"])
    assert not _composites(f.fgraph) and len(f.fgraph.apply_nodes) == 2
    assert "fusion" in {r.rule for r in ss.function([x], T.exp(x) + 1.0, mode="fast").rewrite_report()}


def test_scalar_and_lower_rank_subchains_stay_out_of_array_groups(rng):
    """Fused into the matrix chain they would run once per element instead of once."""
    x, v, s = T.matrix("x"), T.vector("v"), T.scalar("s")
    out = T.exp(x) * T.exp(v) + T.log(s * 2.0)
    f, _ = _agree([x, v, s], out, [rng.normal(size=(3, 2)), rng.normal(size=2), np.float64(3.0)])
    ranks = sorted((n.outputs[0].ndim, str(n.op)) for n in f.fgraph.apply_nodes)
    assert ranks == [(0, "Composite{log(mul(i0, 2.0))}"), (1, "Elemwise{exp}"),
                     (2, "Composite{add(mul(exp(i0), i1), i2)}")]


def test_a_static_length_one_operand_chain_stays_out(rng):
    x, r = T.matrix("x"), T.tensor("float64", (1, None), name="r")
    out = T.exp(x) * T.sin(r)  # sin(r) runs on one row, not on every row of x
    f, _ = _agree([x, r], out, [rng.normal(size=(3, 2)), rng.normal(size=(1, 2))])
    assert sorted(str(n.op) for n in f.fgraph.apply_nodes) == ["Composite{mul(exp(i0), i1)}", "Elemwise{sin}"]


def test_a_value_read_outside_becomes_an_extra_output_when_that_keeps_its_shape(rng):
    x, y = T.vector("x"), T.vector("y")
    e = T.exp(x)
    f, _ = _agree([x], [e * 2.0 + 1.0, e.sum()], [rng.normal(size=5)])
    (node,) = _composites(f.fgraph)
    assert str(node.op) == "Composite{add(mul(exp(i0), 2.0), 1.0), exp(i0)}"
    # fused with y, exp(x) would have the broadcast shape of x and y (x may have length 1)
    f, _ = _agree([x, y], [e * y, e.sum()], [rng.normal(size=1), rng.normal(size=4)])
    assert not _composites(f.fgraph)


def test_a_value_whose_readers_lead_back_into_the_chain_stays_out(rng):
    x = T.vector("x")
    e = T.exp(x)
    f, _ = _agree([x], (e + e.sum()) * 2.0, [rng.normal(size=5)])
    assert [str(n.op) for n in _composites(f.fgraph)] == ["Composite{mul(add(i0, i1), 2.0)}"]


def test_scalar_groups_take_every_value_read_outside(rng):
    n, k = T.lscalar("n"), T.lscalar("k")
    m = T.maximum(n - 1, 0)
    out = [T.arange(m), T.arange(m * k + 1)]
    f, _ = _agree([n, k], out, [np.int64(4), np.int64(3)])
    (node,) = _composites(f.fgraph)
    assert node.op.formula() == "add(mul(maximum(sub(i0, 1), 0), i1), 1), maximum(sub(i0, 1), 0)"
    assert str(node.op) == "Composite{sub,maximum,mul,add (4 ops)}"  # short: pictures and debugprint


def test_scalar_groups_take_sibling_readers_unless_they_depend_on_the_group(rng):
    n = T.lscalar("n")
    empty = T.eq(n, 0)
    a, b = T.switch(empty, 1, n), T.switch(empty, 2, n * 3)
    f, _ = _agree([n], [T.arange(a), T.arange(b)], [np.int64(4)])
    (node,) = _composites(f.fgraph)
    assert node.op.formula() == "switch(eq(i0, 0), 2, mul(i0, 3)), switch(eq(i0, 0), 1, i0)"
    m = T.maximum(n - 1, 0)
    length = T.arange(m * 2).shape[0]  # depends on m: m + length cannot join m's group
    f, _ = _agree([n], [T.arange(m), T.arange(m + length)], [np.int64(4)])
    (node,) = _composites(f.fgraph)
    assert node.op.formula() == "mul(maximum(sub(i0, 1), 0), 2), maximum(sub(i0, 1), 0)"
    assert any(x.op == Elemwise("add") for x in f.fgraph.apply_nodes)


def test_gradient_graphs_have_fewer_nodes():
    """Logistic regression's and softmax cross-entropy's gradients (PyTensor: 18 and 23 nodes;
    symscan keeps numpy's broadcasting of lengths it cannot see, so its gradients keep sum_to
    steps that PyTensor replaces by a shape assertion)."""
    counts = {}
    for name, build in (("logreg", _logistic_regression), ("softmax", _softmax_cross_entropy)):
        for static in (False, True):
            inputs, grads = build(static)
            fused = ss.function(inputs, grads, mode="fast")
            unfused = ss.function(inputs, grads, mode="fast", rewrites=["-fusion"])
            counts[name, static] = (len(unfused.fgraph.apply_nodes), len(fused.fgraph.apply_nodes))
            assert len(unfused_nodes(fused.fgraph)) == len(unfused.fgraph.apply_nodes)
    assert counts == {("logreg", False): (38, 22), ("logreg", True): (20, 9),
                      ("softmax", False): (46, 32), ("softmax", True): (40, 28)}


def _logistic_regression(static: bool):
    X = T.tensor("float64", (100, 5) if static else (None, None), name="X")
    y = T.tensor("float64", (100,) if static else (None,), name="y")
    w, b = T.vector("w"), T.scalar("b")
    cost = T.mean(T.nnet.binary_crossentropy(T.sigmoid(X @ w + b), y))
    return [X, y, w, b], ss.grad(cost, [w, b])


def _softmax_cross_entropy(static: bool):
    X = T.tensor("float64", (100, 5) if static else (None, None), name="X")
    y = T.tensor("float64", (100, 3) if static else (None, None), name="y")
    W, b = T.matrix("W"), T.vector("b")
    cost = T.mean(T.nnet.categorical_crossentropy(T.nnet.softmax(X @ W + b), y))
    return [X, y, W, b], ss.grad(cost, [W, b])


def test_gradient_values_match_numpy(rng):
    inputs, grads = _logistic_regression(static=False)
    X, y, w = rng.normal(size=(50, 4)), (rng.random(50) > 0.5).astype(float), rng.normal(size=4)
    values = [X, y, w, np.float64(0.2)]
    for f in _agree(inputs, grads, values):
        p = 1 / (1 + np.exp(-(X @ w + 0.2)))
        gw, gb = f(*values)
        np.testing.assert_allclose(gw, X.T @ (p - y) / 50, rtol=1e-10)
        np.testing.assert_allclose(gb, np.mean(p - y), rtol=1e-10)
    inputs, grads = _softmax_cross_entropy(static=False)
    _agree(inputs, grads, [rng.normal(size=(6, 4)), np.eye(3)[rng.integers(0, 3, 6)], rng.normal(size=(4, 3)),
                           rng.normal(size=3)])


# ---------------------------------------------------------------------------- semantics kept
@pytest.mark.parametrize("mode", ["fast", PY_FUSED])
def test_broadcasting_errors_are_still_raised(mode):
    x, y = T.vector("x"), T.vector("y")
    f = ss.function([x, y], T.exp(x) * y + 1.0, mode=mode)
    assert _composites(f.fgraph)
    with pytest.raises(ValueError, match="broadcast"):
        f(np.ones(2), np.ones(3))
    np.testing.assert_allclose(f(np.ones(1), np.ones(3)), np.e + 1.0)  # length 1 broadcasts, as numpy


def test_integer_and_float_dtypes_stay_those_of_the_chain(rng):
    i, j = T.vector("i", dtype="int8"), T.vector("j", dtype="int32")
    h = T.vector("h", dtype="float32")
    wraps = (i * i + i) * 3  # int8 arithmetic wraps around before the float ops read it
    out = [T.exp(wraps.astype("float32") * 0.01) * h, (j // 3 + i) % 5, T.sqrt(h * h + 1) / 3]
    values = [np.arange(-60, 59, 7, dtype="int8"), np.arange(17, dtype="int32") * 1000, rng.random(17).astype("f4")]
    f, _ = _agree([i, j, h], out, values)
    assert len(_composites(f.fgraph)) == 3
    assert [v.dtype for v in f.fgraph.outputs] == ["float32", "int32", "float32"]


def test_division_by_zero_and_nan_follow_numpy(rng):
    x, y = T.vector("x"), T.vector("y", dtype="int64")
    out = [T.log(x) / x, (y // (y - y)) + 1]
    with np.errstate(all="ignore"):
        _agree([x, y], out, [np.array([0.0, -1.0, 2.0, np.inf]), np.array([3, 0, -2])])


def test_scalar_chains_compute_numpy_scalars():
    a, k = T.scalar("a"), T.lscalar("k")
    out = T.exp(a * 2.0 + 1.0) / T.maximum(k, 1).astype("float64")
    f, _ = _agree([a, k], out, [np.float64(0.3), np.int64(0)])
    assert len(_composites(f.fgraph)) == 1
    assert "np.maximum" not in f.source and "out=" not in f.source  # scalar code, no buffers


# ---------------------------------------------------------------------------- the fast evaluator's buffers
def test_a_chain_allocates_once_per_shape_and_dtype(rng):
    x, y = T.matrix("x"), T.matrix("y")
    out = ((x * y + 1.0) * (x - y) - 2.0) / 3.0  # five ops of one shape
    f, _ = _agree([x, y], out, [rng.normal(size=(40, 40)), rng.normal(size=(40, 40))])
    assert f.source.count("out=f") == 4  # and two arrays: (x - y) needs its own while x * y + 1 lives
    assert [line.split(" = ")[1] for line in f.source.splitlines() if "np." not in line and " = (" in line] == \
        ["(in0 * in1)", "(in0 - in1)"]


def test_buffers_keep_dtypes_and_grown_shapes_apart(rng):
    x, v = T.matrix("x"), T.vector("v")
    ints = T.vector("n", dtype="int64")
    out = (v + 1.0) * x + (ints * 2).astype("float64")  # the vector's buffer cannot hold the matrix
    _agree([x, v, ints], out, [rng.normal(size=(3, 4)), rng.normal(size=4), np.arange(4)])


@pytest.mark.parametrize("n", [3, 2000])
def test_an_input_nothing_else_reads_is_overwritten_by_values_of_its_shape(rng, n):
    A, v, y = T.matrix("A"), T.vector("v"), T.vector("y")
    out = T.tanh(T.dot(A, v) * 2.0 + 1.0) * y  # A @ v is fresh memory nothing else reads: lent to the chain
    f, _ = _agree([A, v, y], out, [rng.normal(size=(n, 2)), rng.normal(size=2), rng.normal(size=n)])
    assert "out=in" not in f.source and "out=v0" in f.source
    # A @ v too small to hold the result
    _agree([A, v, y], out, [rng.normal(size=(1, 2)), rng.normal(size=2), rng.normal(size=n)])


def test_loop_bodies_and_branches_are_fused(rng):
    xs, h0, W, c = T.matrix("xs"), T.vector("h0"), T.matrix("W"), T.scalar("c")

    def step(x, h, W):
        return T.tanh(T.dot(h, W) * 0.5 + x) * 2.0 - 1.0

    hs, _ = ss.scan(step, sequences=xs, outputs_info=h0, non_sequences=W)
    branch = ss.ifelse(c > 0, T.exp(h0) * 2.0 + 1.0, T.log(T.abs(h0) + 1.0) * 3.0)
    inputs, outputs = [xs, h0, W, c], [hs, branch]
    for steps in (0, 1, 2, 5):
        values = [rng.normal(size=(steps, 3)), rng.normal(size=3), rng.normal(size=(3, 3)) * 0.3, np.float64(steps - 1)]
        f, _ = _agree(inputs, outputs, values)
    (loop,) = [n for n in f.fgraph.apply_nodes if isinstance(n.op, Scan)]
    assert any(isinstance(n.op, Composite) for n in loop.op.inner.apply_nodes)


def test_fusion_where_numba_compiles_and_the_loop_stays_a_kernel(monkeypatch):
    """Graphs bound for numba are fused too: a kernel writes a Composite in its body as loops
    over the elements (backends/numba/fused.py); ``FUSE_FOR_NUMBA`` keeps them unfused."""
    pytest.importorskip("numba")
    x, xs = T.vector("x"), T.matrix("xs")
    chain = T.exp(x) + 1.0
    loop, _ = ss.scan(lambda row, acc: T.tanh(acc * 0.5 + row) * 2.0, sequences=xs, outputs_info=x)
    assert _composites(ss.function([x], chain, mode="numba").fgraph)
    f = ss.function([x, xs], loop, mode="numba", rewrites=["-vectorize"])
    (body,) = [n.op.inner for n in f.fgraph.apply_nodes if isinstance(n.op, Scan)]
    assert _composites(body)
    assert f.backend_report() == ["scan: numba"]
    values = [np.linspace(-1, 1, 3), np.arange(12.0).reshape(4, 3) / 7]
    np.testing.assert_array_equal(f(*values), ss.function([x, xs], loop, mode="fast", rewrites=["-vectorize"])(*values))
    monkeypatch.setattr(fusion, "FUSE_FOR_NUMBA", False)
    assert not _composites(ss.function([x], chain, mode="numba").fgraph)


# ---------------------------------------------------------------------------- gradients, ONNX
def test_gradients_through_a_composite_match_finite_differences(rng):
    def fun(x, b):
        chain = T.sigmoid(x * b) * T.exp(b) + x / (b * b + 1.0)
        op, (out,) = composite_of([x, b], [chain])
        return out

    for mode in ("py", "fast"):
        verify_grad(fun, [rng.normal(size=(3, 4)), rng.normal(size=4)], rng=rng, mode=mode)


def test_grad_of_a_compiled_fused_graph(rng):
    x, y = T.matrix("x"), T.vector("y")
    f = ss.function([x, y], T.tanh(x * y) + x, mode="fast")
    (fused,) = f.fgraph.outputs
    assert isinstance(fused.owner.op, Composite)
    grads = ss.grad(fused.sum(), f.fgraph.inputs)
    reference = ss.grad((T.tanh(x * y) + x).sum(), [x, y])
    values = [rng.normal(size=(2, 3)), rng.normal(size=3)]
    for got, want in zip(ss.function(f.fgraph.inputs, grads, mode="py")(*values),
                         ss.function([x, y], reference, mode="py")(*values)):
        np.testing.assert_allclose(got, want, rtol=1e-13)


def test_onnx_export_of_a_fused_graph_runs_in_onnxruntime(rng):
    pytest.importorskip("onnxruntime")
    inputs, grads = _logistic_regression(static=False)
    values = [rng.normal(size=(30, 4)), (rng.random(30) > 0.5).astype(float), rng.normal(size=4), np.float64(0.1)]
    fast = ss.function(inputs, grads, mode="fast")
    onnx_fn = ss.function(inputs, grads, mode="onnxruntime")
    assert _composites(onnx_fn.fgraph)
    for got, want in zip(onnx_fn(*values), fast(*values)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


# ---------------------------------------------------------------------------- printing, pictures, latex
def test_debugprint_pictures_and_latex_show_the_chain(tmp_path):
    from symscan.drawing.describe import op_label
    from symscan.latex import latex_scan

    x, b = T.matrix("x"), T.vector("b")
    f = ss.function([x, b], T.sigmoid(x * b + 1.0) * 2.0, mode="fast")
    (node,) = f.fgraph.apply_nodes
    assert "Composite{mul(sigmoid(add(mul(i0, i1), 1.0)), 2.0)}" in ss.dprint(f, file="str")
    assert op_label(node) == "sigmoid((i0 * i1) + 1) * 2"
    assert "sigmoid" in open(ss.draw(f, tmp_path / "fused.svg")).read()
    long_chain = x
    for k in range(12):
        long_chain = T.tanh(long_chain * b + float(k))
    (node,) = ss.function([x, b], long_chain, mode="fast").fgraph.apply_nodes
    assert op_label(node) == "fused 36: * + tanh"
    xs, h0, W = T.matrix("xs"), T.vector("h0"), T.matrix("W")
    hs, _ = ss.scan(lambda x, h, W: T.tanh(T.dot(h, W) * 0.5 + x) * 2.0, sequences=xs, outputs_info=h0,
                    non_sequences=W)
    (loop,) = [n for n in ss.function([xs, h0, W], hs, mode="fast").fgraph.apply_nodes if isinstance(n.op, Scan)]
    assert any(isinstance(n.op, Composite) for n in loop.op.inner.apply_nodes)
    assert latex_scan(loop).text == ss.latex(hs).text


def test_the_rewrite_diff_picture_of_a_fused_graph(tmp_path):
    a = T.vector("a")
    f = ss.function([a], T.exp(a) * 2.0 + T.exp(a), mode="fast")
    text = open(ss.draw(f, tmp_path / "diff.svg", rewrites="diff")).read()
    assert "exp(i0) * 2" in text  # the fused node, added in place of the chain


def test_real_of_a_float_chain_keeps_its_value_when_the_chain_goes_on():
    """np.real of a float array is the array itself: the chain must not write over it."""
    x = T.vector("x")
    b = T.real(x + 1.0)
    d = b + T.exp(x) * 3.0
    data = np.arange(5.0)
    for got, want in zip(ss.function([x], [d, b], mode="fast")(data), ss.function([x], [d, b], mode="py")(data)):
        np.testing.assert_array_equal(got, want)
