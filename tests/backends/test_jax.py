"""Mode "jax": the optimised graph as one ``jax.jit`` function, checked against mode "py" (the
oracle) and against numpy loops; loops as ``lax.scan``; symscan's own gradients lowered like
any graph; errors where mode py raises (index checks deferred to after the call); a clear
error naming what is not lowered yet."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T

pytest.importorskip("jax")

from symscan.backends.jax import JaxEvaluator  # noqa: E402
from symscan.backends.jax.graph import NotLowerable  # noqa: E402


def _agree(inputs, outputs, values, rtol=1e-12, **kwargs):
    """Mode jax gives mode py's results: the same dtypes and shapes, values to ``rtol``."""
    f = ss.function(inputs, outputs, mode="jax", **kwargs)
    py = ss.function(inputs, outputs, mode="py", **kwargs)
    got, want = f(*values), py(*values)
    for g, w in zip(*(r if isinstance(r, list) else [r] for r in (got, want))):
        assert isinstance(g, np.ndarray) and g.dtype == np.asarray(w).dtype and g.shape == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)
    assert isinstance(f._evaluate, JaxEvaluator)
    return f


def _scan_nodes(f) -> list:
    from symscan.scan.op import Scan

    return [n for n in f.fgraph.toposort() if isinstance(n.op, Scan)]


# ---------------------------------------------------------------------------- tensor ops
def test_elementwise_dtypes_follow_numpys_promotion(rng):
    i, x, v = T.ivector("i"), T.fvector("x"), T.vector("v")
    outs = [i + x, i * 2, x / 3, T.sigmoid(v) * T.softplus(-v), T.erf(v), T.switch(v > 0, v, i), (i // 2) % 3,
            T.exp(x) - T.log1p(abs(x)), T.maximum(v, i)]
    _agree([i, x, v], outs, [np.arange(-3, 3, dtype="int32"), rng.normal(size=6).astype("float32"), rng.normal(size=6)],
           rtol=1e-6)


def test_reductions_products_and_shapes(rng):
    A, B, v = T.matrix("A"), T.matrix("B"), T.vector("v")
    outs = [T.dot(A, B), T.dot(v, A), T.outer(v, v), A.sum(axis=0), A.max(axis=1, keepdims=True), A.mean(),
            T.cumsum(A, axis=1), A.T.reshape((-1,)), T.concatenate([A, B.T], axis=0), A.dimshuffle(1, "x", 0)]
    _agree([A, B, v], outs, [rng.normal(size=(3, 4)), rng.normal(size=(4, 3)), rng.normal(size=3)])


def test_indexing_and_increments(rng):
    A, idx, k = T.matrix("A"), T.lvector("idx"), T.lscalar("k")
    outs = [A[1], A[:, 1:3], A[idx], A[idx, idx], T.inc_subtensor(A[idx], 1.0), T.set_subtensor(A[:, 0], 5.0),
            A[k], A[-1, ::2]]
    _agree([A, idx, k], outs, [rng.normal(size=(4, 4)), np.array([0, 2, 2, -1]), 2])


def test_an_index_out_of_range_raises_as_in_mode_py():
    """XLA clamps an out-of-range index: mode jax checks it after the call and raises numpy's error."""
    A, idx = T.matrix("A"), T.lvector("idx")
    f = ss.function([A, idx], A[idx] * 2.0, mode="jax")
    np.testing.assert_array_equal(f(np.ones((3, 2)), np.array([2, -3])), np.full((2, 2), 2.0))
    for bad in ([3], [-4]):
        with pytest.raises(IndexError):
            ss.function([A, idx], A[idx] * 2.0, mode="py")(np.ones((3, 2)), np.array(bad))
        with pytest.raises(IndexError):
            f(np.ones((3, 2)), np.array(bad))


def test_a_shape_error_is_numpys_error():
    x = T.matrix("x")
    for mode in ("py", "jax"):
        with pytest.raises(ValueError):
            ss.function([x], x.reshape((5, -1)), mode=mode)(np.ones((3, 4)))


# ---------------------------------------------------------------------------- loops
def test_elman_rnn_is_one_lax_scan_and_matches_a_numpy_loop(rng):
    X, W, b, h0 = T.tensor3("X"), T.matrix("W"), T.vector("b"), T.matrix("h0")
    hs, _ = ss.scan(lambda x, h, W, b: T.tanh(x + T.dot(h, W) + b), sequences=X, outputs_info=h0,
                    non_sequences=[W, b])
    values = [rng.normal(size=(20, 4, 6)), rng.normal(size=(6, 6)) / 3, rng.normal(size=6), np.zeros((4, 6))]
    f = _agree([X, W, b, h0], hs, values)
    h, expected = values[3], []
    for x in values[0]:
        h = np.tanh(x + h @ values[1] + values[2])
        expected.append(h)
    np.testing.assert_allclose(f(*values), expected, rtol=1e-12)

    jaxpr = f._evaluate.jaxpr(*values)
    assert jaxpr.count("scan[") == 1 and "while[" not in jaxpr


@pytest.mark.parametrize("go_backwards", [False, True])
def test_taps_on_sequences_and_outputs(rng, go_backwards):
    x, y0 = T.vector("x"), T.vector("y0")
    out, _ = ss.scan(lambda a, b, y2, y1: 0.5 * y1 - 0.25 * y2 + a * b,
                     sequences=dict(input=x, taps=[-1, 1]), outputs_info=dict(initial=y0, taps=[-2, -1]),
                     go_backwards=go_backwards)
    _agree([x, y0], [out, out[-1]], [rng.normal(size=12), rng.normal(size=2)])


def test_n_steps_as_an_integer_input_is_static_and_zero_steps_give_empty_outputs(rng):
    s0, k, W = T.vector("s0"), T.iscalar("k"), T.matrix("W")
    states, _ = ss.scan(lambda s, W: T.tanh(T.dot(W, s)), outputs_info=s0, non_sequences=W, n_steps=k)
    rows, _ = ss.scan(lambda s: s * 2.0, sequences=states)
    f = _agree([s0, k, W], [states, rows], [rng.normal(size=3), 5, rng.normal(size=(3, 3))])
    empty = f(rng.normal(size=3), 0, np.eye(3))
    assert [np.shape(r) for r in empty] == [(0, 3), (0, 3)]


@pytest.mark.parametrize("steps", [1, 2, 3, 7])
def test_a_ring_no_longer_than_its_window_is_the_last_window_not_stacked_rows(rng, steps):
    """``x[-1]`` of a two-tap recurrence keeps a ring of one, ``x[-2:]`` one of two: each is
    the carried window's end (no row stacked per step) once the loop has run that many steps."""
    x0, k, W = T.matrix("x0"), T.iscalar("k"), T.matrix("W")
    xs, _ = ss.scan(lambda a, b, W: T.tanh(T.dot(W, a) + b), outputs_info=dict(initial=x0, taps=[-2, -1]),
                    non_sequences=W, n_steps=k)
    values = [rng.normal(size=(2, 3)), steps, rng.normal(size=(3, 3))]
    for outputs in ([xs[-1]], [xs[-2:]], [xs[-1], xs[-2:]]):
        f = _agree([x0, k, W], outputs, values)
        assert any("rings" in str(n.op) for n in _scan_nodes(f)), [str(n.op) for n in _scan_nodes(f)]
        if steps > 2:  # (a window of two rows is f64[2,3] too)
            scan_line = next(line for line in f._evaluate.jaxpr(*values).splitlines() if "= scan[" in line)
            assert f"f64[{steps},3]" not in scan_line, scan_line


def test_a_ring_buffer_and_a_nested_loop(rng):
    """The last total only: save_mem keeps a ring of one row, carried by lax.scan as it is."""
    x, M = T.vector("x"), T.matrix("M")

    def outer(row, acc):
        inner, _ = ss.scan(lambda v, a: a * 0.5 + v, sequences=row, outputs_info=T.zeros_like(acc))
        return acc + inner[-1]

    totals, _ = ss.scan(outer, sequences=M, outputs_info=x)
    f = _agree([x, M], totals[-1], [np.zeros(1), rng.normal(size=(5, 4))], rewrites=["-scan_to_linear_recurrence"])
    assert any("rings" in str(n.op) for n in _scan_nodes(f)), [str(n.op) for n in _scan_nodes(f)]


def test_shared_variables_are_updated_as_in_mode_py(rng):
    values = rng.normal(size=(4, 3))
    totals = []
    for mode in ("py", "jax"):
        total, x = ss.shared(np.zeros(3), name="total"), T.matrix("x")
        f = ss.function([x], (x ** 2).sum(), updates=[(total, total + x.sum(axis=0))], mode=mode)
        f(values), f(values)
        totals.append(total.get_value())
    np.testing.assert_allclose(totals[1], totals[0], rtol=1e-12)
    np.testing.assert_allclose(totals[1], 2 * values.sum(axis=0), rtol=1e-12)


def test_results_are_writable_arrays_the_caller_owns_without_a_copy(rng):
    """XLA's buffers are handed over writable (no copy of a large result): writing into one
    changes neither the next call's results, nor the inputs, nor a shared value."""
    x, state = T.vector("x"), ss.shared(np.ones(3), name="state")
    f = ss.function([x], [T.cumsum(x), x, x * 2, T.constant(np.arange(3.0))],
                    updates=[(state, state + x)], mode="jax")
    values = rng.normal(size=3)
    first = f(values)
    for out in first:
        assert out.flags.writeable
        out += 100.0
    assert not np.shares_memory(first[1], values) and not np.shares_memory(first[0], state.get_value(borrow=True))
    second = f(values)
    np.testing.assert_allclose(second[0], np.cumsum(values), rtol=1e-12)
    np.testing.assert_array_equal(second[1], values)
    np.testing.assert_array_equal(second[3], np.arange(3.0))
    np.testing.assert_allclose(state.get_value(), 1 + 2 * values, rtol=1e-12)
    big = np.asarray(ss.function([x], T.cumsum(x), mode="jax")(np.ones(1000)))
    assert big.base is not None and type(big.base).__name__ == "_Buffer"  # XLA's buffer, not a copy


def test_accumulations_of_one_sequence_share_one_loop_on_a_cpu(rng):
    """W8's running sum and running max, a running product and a last-only sum, all of one
    sequence: one ``lax.scan`` on a CPU (XLA's cumulative ops are for GPUs), mode py's rows."""
    import jax

    x, start = T.matrix("x"), T.vector("start")
    sums, _ = ss.scan(lambda v, s: s + v, sequences=x, outputs_info=T.zeros(3))
    highs, _ = ss.scan(lambda v, m: T.maximum(m, v), sequences=x, outputs_info=T.constant(np.full(3, -np.inf)))
    products, _ = ss.scan(lambda v, p: p * v, sequences=x, outputs_info=T.ones(3))
    total, _ = ss.scan(lambda v, s: s + v, sequences=x, outputs_info=start)
    values = [rng.normal(size=(50, 3)), rng.normal(size=3)]
    f = _agree([x, start], [sums, highs, products, total[-1]], values)
    if jax.default_backend() == "cpu":
        assert not _scan_nodes(f), "the rewrites vectorise these loops"
        assert f._evaluate.jaxpr(*values).count("scan[") == 1


def test_accumulations_of_one_sequence_that_cannot_share_raise_as_alone():
    """An accumulation whose row does not match the sequence's raises the error mode fast (the
    same rewritten graph) raises, for its own node, as it would lowered alone."""
    x, wide = T.matrix("x"), T.vector("wide")
    sums, _ = ss.scan(lambda v, s: s + v, sequences=x, outputs_info=T.zeros(3))
    other, _ = ss.scan(lambda v, s: s * v, sequences=x, outputs_info=wide)
    errors = []
    for mode in ("fast", "jax"):
        f = ss.function([x, wide], [sums, other], mode=mode)
        with pytest.raises(ValueError) as err:
            f(np.ones((4, 3)), np.ones(2))
        errors.append(str(err.value))
    assert errors[0] == errors[1] and "Accumulate{mul}" in errors[1] and "'wide'" in errors[1]


def test_a_zeros_like_non_sequence_is_made_inside_the_body(rng):
    """The backward loop of ``B[:, y_t]`` increments zeros_like(B), a non-sequence: made
    inside the body, XLA sees zeros and updates one column per step (H1's gradient: 6.9 ms
    against 2.8 for JAX when the zeros came in as an argument)."""
    from symscan.scan.args import ScanArgs
    from symscan.tensor.creation import is_zeros_like

    y, B, h0 = T.ivector("y"), T.matrix("B"), T.vector("h0")
    hs, _ = ss.scan(lambda y_t, h, B: T.tanh(h + B[:, y_t]), sequences=y, outputs_info=h0, non_sequences=B)
    values = [np.array([0, 5, 2, 2, 1], dtype="int32"), rng.normal(size=(4, 6)), rng.normal(size=4)]
    f = _agree([y, B, h0], ss.grad(hs[-1].sum(), B), values)
    backward = [n for n in _scan_nodes(f) if any(is_zeros_like(e.outer) for e in ScanArgs.from_node(n).non_seqs)]
    assert backward, "the premise: a backward loop with zeros_like(B) as a non-sequence"
    bodies = [text.split("} in")[0] for text in f._evaluate.jaxpr(*values).split("let jaxpr")[1:]]
    assert any("f64[4,6] = broadcast_in_dim 0.0" in body for body in bodies)


def test_a_large_allocation_is_xlas_fill_not_a_literal_and_stays_numpy_for_shapes():
    """zeros of 20,000 rows read by a lowered op reach XLA as a fill, not as 160 kB compiled
    into the program (W9: 80 MB, copied on every call); read for a length inside a loop it is
    still numpy (mode jax needs lengths before it runs)."""
    y, x = T.vector("y"), T.vector("x")
    f = _agree([y], T.zeros((20000,)) + y[0], [np.ones(3)])
    header = f._evaluate.jaxpr(np.ones(3)).split("let")[0]
    assert "f64[20000]" not in header.split(";")[0], header  # no such constant among the program's
    out, _ = ss.scan(lambda v: v + T.ones((T.cast(T.zeros((10000,))[0], "int64") + 3,)).sum(), sequences=x)
    _agree([x], out, [np.ones(2)], rewrites=["-tag:scan", "-constant_folding", "-canonicalize"])


def test_recurrences_the_rewrites_vectorise_are_lowered_as_their_loops(rng):
    x, y0 = T.vector("x"), T.scalar("y0")
    sums, _ = ss.scan(lambda v, s: s + v, sequences=x, outputs_info=y0)
    decay, _ = ss.scan(lambda v, s: 0.9 * s + v, sequences=x, outputs_info=y0)
    f = _agree([x, y0], [sums, decay], [rng.normal(size=50), np.float64(0.5)])
    names = {type(n.op).__name__ for n in f.fgraph.toposort()}
    assert {"Accumulate", "LinearRecurrence"} & names, names


# ---------------------------------------------------------------------------- gradients and branches
def test_rnn_gradients_are_symscans_and_match_mode_py(rng):
    X, W, U, h0 = T.tensor3("X"), T.matrix("W"), T.matrix("U"), T.matrix("h0")
    hs, _ = ss.scan(lambda x, h, W, U: T.tanh(T.dot(x, W) + T.dot(h, U)), sequences=X, outputs_info=h0,
                    non_sequences=[W, U])
    cost = (hs ** 2).sum()
    grads = ss.grad(cost, [W, U, h0])
    values = [rng.normal(size=(15, 2, 3)), rng.normal(size=(3, 4)) / 2, rng.normal(size=(4, 4)) / 2,
              rng.normal(size=(2, 4))]
    _agree([X, W, U, h0], grads, values, rtol=1e-10)
    truncated = ss.grad((ss.scan(lambda x, h, W, U: T.tanh(T.dot(x, W) + T.dot(h, U)), sequences=X,
                                 outputs_info=h0, non_sequences=[W, U], truncate_gradient=3)[0] ** 2).sum(), U)
    _agree([X, W, U, h0], truncated, values, rtol=1e-10)


@pytest.mark.parametrize("condition", [0.5, -0.5])
def test_ifelse_on_an_input_value_is_a_lax_cond(rng, condition):
    c, x = T.scalar("c"), T.vector("x")
    out = ss.ifelse(c > 0, T.exp(x), x * 2.0)
    f = _agree([c, x], out, [np.float64(condition), rng.normal(size=4)])

    assert "cond[" in f._evaluate.jaxpr(np.float64(condition), np.ones(4))


# ---------------------------------------------------------------------------- numpy's semantics kept
def test_operands_are_promoted_as_numpy_promotes_them():
    """(JAX computes int64 + float32 in float32 and int8 / int8 in float32; numpy in float64)"""
    i, g, a, b, s = T.lvector("i"), T.fvector("g"), T.bvector("a"), T.bvector("b"), T.bvector("s")
    values = [np.array([16777217]), np.zeros(1, "float32"), np.array([1, 3], "int8"), np.array([3, 7], "int8"),
              np.array([100, 100], "int8")]
    _agree([i, g, a, b, s], [i + g, a / b, T.cumsum(s), s.sum(), T.concatenate([i, g])], values, rtol=0)


@pytest.mark.filterwarnings("ignore:divide by zero")
def test_integer_division_by_zero_and_negative_powers_behave_as_in_numpy():
    x, y = T.lvector("x"), T.lvector("y")
    _agree([x, y], [x // y, x % y], [np.array([7, -7, 1]), np.array([2, 2, 0])], rtol=0)
    for mode in ("py", "jax"):
        with pytest.raises(ValueError, match="negative integer powers"):
            ss.function([x, y], x ** y, mode=mode)(np.array([2, 3]), np.array([-1, 2]))


def test_a_length_computed_from_input_values_ends_a_stage():
    """A step count or a length that depends on input values is computed by XLA first, then
    the rest is traced with it (each new value compiles the rest again)."""
    x, n, reps = T.vector("x"), T.scalar("n"), T.lvector("reps")
    out, _ = ss.scan(lambda h: h * 2, outputs_info=x, n_steps=T.cast(n, "int64"))
    outs = [out, T.tile(x, reps, ndim=2), x[:T.cast(n, "int64")], T.alloc(1.0, T.cast(n, "int64") + 1)]
    for n_value in (3.0, 1.0):
        _agree([x, n, reps], outs, [np.array([1.0, 2.0]), np.float64(n_value), np.array([2, 3])])
    inner, _ = ss.scan(lambda k, h: h[:k].sum() + h, sequences=T.arange(2), outputs_info=x)
    with pytest.raises(NotLowerable, match="slice bounds"):  # inside a loop there is no stage to end
        ss.function([x], inner, mode="jax")(np.ones(3))


@pytest.mark.parametrize("condition", [1.0, -1.0])
def test_the_branch_not_taken_never_raises(condition):
    """Both branches are traced for lax.cond: their checks, and errors raised while tracing one,
    count only where that branch is taken (as in mode py, which runs one branch)."""
    from symscan.tensor.assertion import assert_that

    c, x = T.scalar("c"), T.vector("x")
    cases = [ss.ifelse(c > 0, x[T.argmax(x)], x[0]),
             ss.ifelse(c > 0, assert_that(x, x.sum() > 100, message="too small"), x * 2),
             ss.ifelse(c > 0, x[5], x[0])]
    values = [np.float64(condition), np.array([1.0, 2.0, 3.0])]
    for out in cases:
        try:
            want = ss.function([c, x], out, mode="py")(*values)
        except (ValueError, IndexError) as error:
            with pytest.raises(type(error)):
                ss.function([c, x], out, mode="jax")(*values)
        else:
            np.testing.assert_array_equal(ss.function([c, x], out, mode="jax")(*values), want)


def test_linear_algebra_raises_and_reads_as_lapack_does(rng):
    import symscan.tensor.linalg as L

    A, b, B = T.matrix("A"), T.vector("b"), T.matrix("B")
    singular = np.array([[1.0, 0.0], [1.0, 0.0]])
    for out in (L.solve_triangular(A, b, lower=True), L.solve(A, b), L.inv(A)):
        with pytest.raises(np.linalg.LinAlgError):
            ss.function([A, b], out, mode="jax", on_unused_input="ignore")(singular, np.ones(2))
    lopsided = np.array([[4.0, 100.0], [2.0, 5.0]])  # only the lower triangle is read
    _agree([A], [L.cholesky(A), L.eigvalsh(A), L.pinv(A)], [lopsided])
    _agree([A], L.pinv(A), [np.diag([1.0, 2e-15])])
    _agree([A, b], L.solve(A, b), [np.diag([0.5, 1.0]), np.array([1e308, 1.0])])  # an overflow is no error
    stack = np.tril(rng.normal(size=(3, 4, 4))) + 4 * np.eye(4)
    S = T.tensor3("S")
    _agree([S, B], L.solve_triangular(S, B, lower=True), [stack, rng.normal(size=(4, 2))])


def test_what_made_xla_abort_agrees_now(rng):
    """Programs the fuzzer found XLA 0.10's compiler aborting on (tests/fuzz/repros/jax_*): a
    running maximum over zero steps (a join with an empty operand, sliced), and a gradient that
    reverses an increment of a whole array (a scatter with no index axes): blocks are updated
    with dynamic_update_slice instead."""
    x, h = T.dmatrix("x"), T.dvector("h")
    out, _ = ss.scan(lambda x_t, p: T.maximum(p, x_t), sequences=[x], outputs_info=[h], n_steps=0)
    _agree([x, h], out, [rng.normal(size=(4, 3)), np.zeros(3)])
    m, _ = ss.scan(lambda p: p, outputs_info=[h], n_steps=2)
    weights = np.array([[0.7, 1.1], [0.9, 1.3]])
    _agree([h], ss.grad((m[-2:] * weights).sum(), h), [np.ones(2)])
    _agree([h], ss.grad((m[None, -2:][0] * weights).sum(), h), [np.ones(2)])
    A, y = T.dmatrix("A"), T.dvector("y")
    outs = [T.inc_subtensor(A[1:3], y), T.set_subtensor(A[:, 1:], 5.0), T.inc_subtensor(A[-2:, :2], 1.0),
            T.inc_subtensor(A[::2], y), T.inc_subtensor(A[5:], y), T.set_subtensor(A[:], 2.0)]
    _agree([A, y], outs, [rng.normal(size=(4, 3)), rng.normal(size=3)])


# ---------------------------------------------------------------------------- loops with until
def _doubling(x0, n_steps, extra=None):
    """x, 2x, 4x, ... until a value passes 10, at most n_steps steps; a nit-sot of halves."""
    def step(x):
        return [x * 2.0, x / 2.0], ss.until(x * 2.0 > 10.0)
    (out, half), _ = ss.scan(step, outputs_info=[x0, None], n_steps=n_steps)
    return out, half


@pytest.mark.parametrize("bound", [0, 1, 3, 20])
def test_a_loop_with_until_runs_the_steps_mode_py_runs(bound):
    """The loop runs as a while loop over buffers of `bound` rows; its outputs are as long as
    the steps run (a stage of its own), and what follows it sees those lengths."""
    x0, n = T.scalar("x0"), T.lscalar("n")
    out, half = _doubling(x0, n)
    f = _agree([x0, n], [out, half, out.shape[0], (out[-1:] * 3).sum() + half.sum()], [np.float64(1.0), bound])
    assert len(_scan_nodes(f)) == 1


def _counting_stages(f) -> list:
    """The list each call of ``f``'s jitted stages appends to."""
    jitted, calls = f._evaluate._jitted, []

    def counting(*args):
        calls.append(1)
        return jitted(*args)
    f._evaluate._jitted = counting
    return calls


@pytest.mark.parametrize("x0, bound, stages", [(1e-3, 0, 1), (1e-3, 1, 1), (1e-3, 20, 1), (1e-30, 2**40, 2)])
def test_outputs_that_are_slices_of_loops_with_until_need_no_stage_after_them(x0, bound, stages):
    """W6 returns its loop's rows but the first: once the loop has run, the outputs are numpy
    slices of its rows (no stage after the loop's), as mode py computes them. A bound of
    2**40 starts with room for 64 steps, so a loop of about 100 resumes once."""
    x, n = T.scalar("x0"), T.lscalar("n")
    out, half = _doubling(x, n)
    values = [np.float64(x0), bound]
    f = _agree([x, n], [out, half[1:][::2], out[None, -1:]], values)
    calls = _counting_stages(f)
    f(*values)
    assert len(calls) == stages
    g = _agree([x, n], [out, out * 2.0], values)  # a computed output: its stage follows the loop's
    calls = _counting_stages(g)
    g(*values)
    assert len(calls) == stages + (bound > 0)


def test_loops_with_until_in_sequence_and_a_ring(rng):
    """Two loops with until, the second reading the first's last row (three stages), and a
    loop whose last row alone is used (save-mem keeps a ring)."""
    x, y0 = T.vector("x"), T.scalar("y0")
    acc, _ = ss.scan(lambda a, s: (s + a, ss.until(s + a > 3.0)), sequences=[x], outputs_info=[T.constant(0.0)])
    out, half = _doubling(acc[-1] + y0, 30)
    _agree([x, y0], [acc, out, half[-1], out[-1] * acc.sum()], [np.abs(rng.normal(size=12)), np.float64(0.5)])


def test_a_loop_with_until_updates_shared_values_and_differentiates(rng):
    w = ss.shared(np.float64(1.5), name="w")
    count = ss.shared(np.int64(0), name="count")
    x0 = T.scalar("x0")

    def step(x):
        return x * w, {count: count + 1}, ss.until(x * w > 50.0)
    out, updates = ss.scan(step, outputs_info=x0, n_steps=40)
    loss = (out ** 2).sum()
    outputs = [out, loss] + ss.grad(loss, [x0, w])
    results = {}
    for mode in ("py", "jax"):
        count.set_value(np.int64(0))
        f = ss.function([x0], outputs, updates=updates, mode=mode)
        results[mode] = [f(np.float64(2.0)) for _ in range(2)] + [count.get_value()]
    for got, want in zip(results["jax"][:2], results["py"][:2]):
        for g, v in zip(got, want):
            np.testing.assert_allclose(g, v, rtol=1e-12)
    assert results["jax"][2] == results["py"][2] == 2 * len(results["py"][0][0])


def test_an_error_in_a_loop_with_until_raises_as_in_mode_py():
    x, k = T.vector("x"), T.lscalar("k")
    out, _ = ss.scan(lambda h: (h + x[k], ss.until(h > 100.0)), outputs_info=T.constant(0.0), n_steps=10)
    for mode in ("py", "jax"):
        f = ss.function([x, k], out, mode=mode)
        np.testing.assert_array_equal(f(np.ones(3), 1), ss.function([x, k], out, mode="py")(np.ones(3), 1))
        with pytest.raises(IndexError):
            f(np.ones(3), 5)


def test_where_a_loop_with_until_cannot_end_a_stage_it_is_refused_by_name():
    """Inside another loop there is no stage to end; a bound whose buffers would not fit is refused."""
    x0 = T.scalar("x0")
    def inner(x):
        return ss.scan(lambda y: (y * 2.0, ss.until(y > 10.0)), outputs_info=x, n_steps=20)[0][-1]
    outer, _ = ss.scan(inner, outputs_info=x0, n_steps=3)
    with pytest.raises(NotLowerable, match="until"):
        ss.function([x0], outer, mode="jax")(np.float64(1.0))



@pytest.mark.parametrize("steps", [3, 64, 65, 300])
def test_a_loop_with_a_huge_bound_grows_its_buffers_as_the_reference_does(steps):
    """A while loop's bound (2**62 here) is no room to allocate: 64 steps, then twice as many
    each time the loop fills them (a stage each), rings keeping their layout."""
    lim = T.scalar("lim")
    total = ss.shared(np.float64(0.0), name="total")

    def step(c, c2, lim):
        return [c + 1.0, c2 * 0.5 + c, (c + 1.0) * 2.0], {total: total + c}, ss.until(c + 1.0 >= lim)
    (cs, ring, doubled), updates = ss.scan(step, outputs_info=[T.constant(0.0), T.constant(np.ones(2)), None],
                                           non_sequences=lim, n_steps=2**62)
    results = {}
    for mode in ("py", "jax"):
        total.set_value(np.float64(0.0))
        f = ss.function([lim], [cs, ring[-3:], doubled], updates=updates, mode=mode)
        results[mode] = f(float(steps)) + [total.get_value()]
    for got, want in zip(results["jax"], results["py"]):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert len(results["jax"][0]) == steps


# ---------------------------------------------------------------------------- random draws
def _sampler(seed):
    srng = ss.RandomStream(seed)
    x = T.vector("x")
    draws = [srng.normal(size=(2000,), avg=1.0, std=2.0), srng.uniform(size=(3, 4), low=-1.0, high=3.0),
             srng.binomial(size=(50,), n=5, p=0.3), srng.integers(2, 9, size=(40,)),
             srng.choice(10, size=(10,), replace=False), srng.multinomial(n=7, pvals=[0.2, 0.3, 0.5]),
             srng.normal(avg=x, std=0.1, dtype="float32")]
    return x, draws


def test_random_draws_come_from_jax_with_numpys_shapes_dtypes_and_laws():
    x, draws = _sampler(3)
    f = ss.function([x], draws, mode="jax")
    py = ss.function([x], draws, mode="py")
    got, want = f(np.arange(3.0)), py(np.arange(3.0))
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
    normal, uniform, binomial, integers, choice, multinomial, around_x = got
    assert abs(normal.mean() - 1.0) < 0.15 and abs(normal.std() - 2.0) < 0.15
    assert uniform.min() >= -1.0 and uniform.max() < 3.0
    assert binomial.min() >= 0 and binomial.max() <= 5 and integers.min() >= 2 and integers.max() < 9
    assert sorted(choice) == list(range(10)) and multinomial.sum() == 7
    np.testing.assert_allclose(around_x, np.arange(3.0), atol=0.6)
    assert not np.array_equal(normal, want[0])  # JAX's draws, not numpy's (documented)


def test_a_seed_reproduces_the_draws_updates_advance_them_and_without_updates_they_repeat():
    x, draws = _sampler(11)
    first = ss.function([x], draws[0], mode="jax")
    again = ss.function([x], _sampler(11)[1][0], mode="jax")
    other = ss.function([x], _sampler(12)[1][0], mode="jax")
    a, b, c = first(np.zeros(3)), first(np.zeros(3)), again(np.zeros(3))
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, b) and not np.array_equal(a, other(np.zeros(3)))
    fixed = ss.function([x], _sampler(11)[1][0], mode="jax", no_default_updates=True)
    np.testing.assert_array_equal(fixed(np.zeros(3)), fixed(np.zeros(3)))


def test_draws_inside_a_loop_advance_the_stream_each_step():
    srng = ss.RandomStream(5)
    x0 = T.vector("x0")
    out, updates = ss.scan(lambda h: h + srng.normal(size=(4,)), outputs_info=x0, n_steps=6)
    f = ss.function([x0], out, updates=updates, mode="jax")
    first, second = f(np.zeros(4)), f(np.zeros(4))
    steps = np.diff(np.vstack([np.zeros(4), first]), axis=0)
    assert len({tuple(s) for s in steps}) == 6 and not np.array_equal(first, second)


@pytest.mark.parametrize("mode", ["py", "jax"])
def test_a_draw_outside_fn_is_drawn_each_step_one_passed_as_a_non_sequence_once(mode):
    """As in mode py (where tests/scan/test_nesting_and_free_vars.py checks numpy's numbers)."""
    srng = ss.RandomStream(2)
    x = T.matrix("x")
    mask = srng.binomial(size=(4,), p=0.5)
    per_step, updates = ss.scan(lambda row: row * mask, sequences=x)
    once, _ = ss.scan(lambda row, m: row * m, sequences=x, non_sequences=mask)
    a, b = ss.function([x], [per_step, once], updates=updates, mode=mode)(np.ones((8, 4)))
    assert len({tuple(r) for r in a}) > 1 and len({tuple(r) for r in b}) == 1


def test_bad_parameters_of_a_draw_raise_as_in_mode_py():
    srng = ss.RandomStream(1)
    s, lo = T.scalar("s"), T.lscalar("lo")
    for out, values in ((srng.normal(size=(3,), std=s), [np.float64(-1.0)]), (srng.integers(lo, 3, size=(2,)), [5])):
        inputs = [s] if len(values) and isinstance(values[0], np.floating) else [lo]
        for mode in ("py", "jax"):
            with pytest.raises(ValueError):
                ss.function(inputs, out, mode=mode)(*values)


@pytest.mark.parametrize("until", [False, True])
def test_of_a_loops_failed_checks_the_one_failing_first_is_raised(until):
    """x[c] fails at step 5, c ** (n - c) at step 2: mode py raises the power's error (c's
    step depends on h, so that no rewrite takes c out of the loop)."""
    x, n = T.vector("x"), T.lscalar("n")

    def body(h, c):
        outs = [h + x[c] + T.pow(c, n - c), c + T.cast(h >= -1e9, "int64")]
        return (outs, ss.until(h > 1e9)) if until else outs
    (out, _), _ = ss.scan(body, outputs_info=[T.constant(0.0), T.constant(np.int64(0))], n_steps=20)
    for mode in ("py", "jax"):
        with pytest.raises(ValueError, match="negative integer powers"):
            ss.function([x, n], out, mode=mode)(np.ones(5), 1)


def test_a_generator_nothing_draws_from_keeps_its_state():
    srng = ss.RandomStream(3)
    k = T.lscalar("k")
    draws, updates = ss.scan(lambda h: h + srng.normal(size=()), outputs_info=T.constant(0.0), n_steps=k)
    rng = srng.state_updates[-1][0]
    f = ss.function([k], draws, updates=updates, mode="jax")
    before = rng.get_value().bit_generator.state
    f(0)
    assert rng.get_value().bit_generator.state == before
    draw = srng.normal(size=(2,))
    rng = srng.state_updates[-1][0]
    same = ss.function([], draw, updates=[(rng, rng)], mode="jax")
    np.testing.assert_array_equal(same(), same())


def test_bad_draw_parameters_raise_numpys_errors():
    g = ss.RandomStream(4)
    v = T.vector("v")
    cases = [([], g.uniform(size=(3,), low=2.0, high=1.0), [], ValueError),
             ([], g.uniform(size=(2,), low=0.0, high=np.inf), [], OverflowError),
             ([], g.choice(3, size=(2,), p=[1.5, -0.5, 0.0]), [], ValueError),
             ([], g.binomial(size=(3,), n=2.5, p=0.5), [], TypeError),
             ([v], g.normal(size=(3,), avg=v), [np.zeros(2)], ValueError)]
    for inputs, draw, values, error in cases:
        for mode in ("py", "jax"):
            with pytest.raises(error):
                ss.function(inputs, draw, mode=mode)(*values)
    empty = g.integers(0, 0, size=(0,))  # numpy checks nothing for an empty draw
    assert ss.function([], empty, mode="jax")().shape == (0,)


def test_a_profiled_loop_runs_unprofiled_and_says_so():
    x = T.vector("x")
    out, _ = ss.scan(lambda v, s: s + v, sequences=x, outputs_info=T.constant(0.0), profile=True, name="timed")
    with pytest.warns(UserWarning, match="profile=True"):
        f = _agree([x], out, [np.arange(4.0)])
    assert f.profile is None


def test_without_jax_the_mode_says_how_to_install_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "jax", None)  # (an import of jax now fails)
    x = T.vector("x")
    with pytest.raises(ImportError, match=r"pip install 'symscan\[jax\]'"):
        ss.function([x], x * 2.0, mode="jax")


# ---------------------------------------------------------------------------- ss.jax.to_jax
def _elman(truncate_gradient=-1):
    X, W, U, h0 = T.tensor3("X"), T.matrix("W"), T.matrix("U"), T.matrix("h0")
    hs, _ = ss.scan(lambda x, h, W, U: T.tanh(T.dot(x, W) + T.dot(h, U)), sequences=X, outputs_info=h0,
                    non_sequences=[W, U], truncate_gradient=truncate_gradient)
    return [X, W, U, h0], hs


def test_to_jax_runs_under_jit_and_vmaps_over_eight_sequences_as_eight_calls(rng):
    import jax

    inputs, hs = _elman()
    f = ss.function(inputs, hs, mode="jax")
    pure = ss.jax.to_jax(f)
    W, U, h0 = rng.normal(size=(3, 4)) / 2, rng.normal(size=(4, 4)) / 2, rng.normal(size=(2, 4))
    sequences = rng.normal(size=(8, 10, 2, 3))
    (jitted,) = jax.jit(pure)(sequences[0], W, U, h0)
    np.testing.assert_allclose(np.asarray(jitted), f(sequences[0], W, U, h0), rtol=1e-13)
    batched = jax.vmap(lambda x: pure(x, W, U, h0)[0])(sequences)
    np.testing.assert_allclose(np.asarray(batched), [f(x, W, U, h0) for x in sequences], rtol=1e-13)


def test_to_jax_differentiates_with_symscans_pullback(rng):
    """With truncate_gradient the pullback differs from the true derivative JAX's own autodiff
    of lax.scan would give: jax.grad gives symscan's."""
    import jax
    import jax.numpy as jnp

    inputs, hs = _elman(truncate_gradient=3)
    pure = ss.jax.to_jax(ss.function(inputs, hs, mode="jax"))
    values = [rng.normal(size=(12, 2, 3)), rng.normal(size=(3, 4)) / 2, rng.normal(size=(4, 4)) / 2,
              rng.normal(size=(2, 4))]
    got = jax.jit(jax.grad(lambda *a: jnp.sum(pure(*a)[0] ** 2), argnums=(1, 2)))(*values)
    want = ss.function(inputs, ss.grad((hs ** 2).sum(), inputs[1:3]), mode="py")(*values)
    full_inputs, full_hs = _elman()
    full = ss.function(full_inputs, ss.grad((full_hs ** 2).sum(), full_inputs[1:3]), mode="py")(*values)
    for g, w, u in zip(got, want, full):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-11)
        assert not np.allclose(w, u)


def test_to_jax_takes_shared_values_as_arguments_and_returns_the_updates(rng):
    total, x = ss.shared(np.zeros(3), name="total"), T.matrix("x")
    f = ss.function([x], (x ** 2).sum(), updates=[(total, total + x.sum(axis=0))], mode="jax")
    pure = ss.jax.to_jax(f)
    assert pure.shared == [total]
    values = rng.normal(size=(4, 3))
    cost, new_total = pure(values, np.ones(3))
    np.testing.assert_allclose(np.asarray(new_total), 1 + values.sum(axis=0), rtol=1e-13)
    np.testing.assert_allclose(float(cost), (values ** 2).sum(), rtol=1e-13)
    assert np.all(total.get_value() == 0)  # the pure function leaves the shared variable alone
    with pytest.raises(TypeError, match="the inputs, then the shared values"):
        pure(values)
