"""canonicalize and constant_folding, each alone.

``rewrites=["canonicalize"]`` also selects every rule of the canonicalize phase (the name is a
tag too), so the canonicalize tests exclude constant_folding explicitly.
"""

import tracemalloc

import numpy as np
import pytest

import rewrites
import symscan as ss
import symscan.tensor as T
from symscan.graph.basic import Constant
from symscan.tensor.elemwise import Cast

CANONICALIZE = ["canonicalize", "-constant_folding"]


def _compile(inputs, outputs, rewrite_names=CANONICALIZE):
    return ss.function(inputs, outputs, mode="fast", rewrites=list(rewrite_names))


def _rules(f):
    return {r.rule for r in f.rewrite_report()}


def test_canonicalize_selects_the_phase_unless_excluded():
    names = [r.name for r in rewrites.select(["canonicalize"], ())]
    assert "canonicalize" in names and "constant_folding" in names
    assert [r.name for r in rewrites.select(CANONICALIZE, ()) if r.name in ("canonicalize", "constant_folding")] \
        == ["canonicalize"]


# ---------------------------------------------------------------------------- identities
def _identities():
    x, m, ix = T.vector("x"), T.matrix("m"), T.ivector("ix")
    return {
        "x * 1": ([x], x * 1, x),
        "1 * x": ([x], 1 * x, x),
        "x * 1.0": ([x], x * 1.0, x),
        "x + (-0.0)": ([x], x + (-0.0), x),
        "-0.0 + x": ([x], -0.0 + x, x),
        "int x + 0": ([ix], ix + 0, ix),
        "x - 0": ([x], x - 0, x),
        "x / 1": ([x], x / 1, x),
        "x ** 1": ([x], x ** 1, x),
        "int x ** 1": ([ix], ix ** 1, ix),
        "int x * int8 1": ([ix], ix * np.int8(1), ix),
        "x + [-0.0]": ([x], x + np.array([-0.0]), x),  # a length-1 constant broadcasts to x's length
        "m * [[1.0]]": ([m], m * np.ones((1, 1)), m),
        "m + [-0.0]": ([m], m + np.array([-0.0]), m),
        "neg(neg(x))": ([x], T.neg(T.neg(x)), x),
        "double transpose": ([m], m.T.T, m),
        "dimshuffle round trip": ([m], m.dimshuffle(1, 0).dimshuffle(1, 0), m),
        "added then dropped axis": ([x], x.dimshuffle("x", 0).dimshuffle(1), x),
        "useless cast": ([x], Cast("float64")(x), x),
        "x[:]": ([x], x[:], x),
        "m[:, :]": ([m], m[:, :], m),
        "chain": ([x], ((x * 1.0) + -0.0) / 1.0 - 0.0, x),
    }


@pytest.mark.parametrize("name", list(_identities()))
def test_identities_become_the_variable(name, same_as_py, rng):
    inputs, out, expected = _identities()[name]
    assert out is not expected and out.owner is not None
    before = ss.function(inputs, out, mode="py")
    assert len(before.fgraph.apply_nodes) >= 1
    f = _compile(inputs, out)
    assert len(f.fgraph.apply_nodes) == 0
    assert f.fgraph.outputs[0] is f.fgraph.inputs[0]
    assert f.fgraph.outputs[0].type == out.type
    fired = [r for r in f.rewrite_report() if r.fired]
    assert fired and all(r.rule == "canonicalize" for r in fired)
    var = inputs[0]
    shape = (4,) if var.ndim == 1 else (3, 2)
    value = rng.integers(-5, 5, size=shape).astype(var.dtype) if var.dtype.startswith("int") else \
        rng.standard_normal(shape)
    got = same_as_py(f, value)
    np.testing.assert_array_equal(got, value)
    assert not np.shares_memory(got, value)


def test_composed_dimshuffles_become_one(same_as_py, rng):
    x, t3 = T.vector("x"), T.tensor3("t3")
    cases = [(x, x.dimshuffle("x", 0).dimshuffle(1, 0)), (t3, t3.dimshuffle(2, 0, 1).dimshuffle(2, 0, 1).T)]
    for var, out in cases:
        f = _compile([var], out)
        assert len(f.fgraph.apply_nodes) == 1
        (node,) = f.fgraph.apply_nodes
        assert node.inputs[0] is f.fgraph.inputs[0]
        same_as_py(f, rng.standard_normal((2, 3, 4)[:var.ndim]))


def test_rewrites_apply_deep_in_a_graph(same_as_py, rng):
    x, y = T.vector("x"), T.vector("y")
    out = T.exp(T.neg(T.neg(x * 1.0))) + (y + -0.0)[:] * 2.0
    py = ss.function([x, y], out, mode="py")
    f = _compile([x, y], out)
    assert len(py.fgraph.apply_nodes) == 8
    assert len(f.fgraph.apply_nodes) == 3  # exp, mul, add
    same_as_py(f, rng.standard_normal(3), rng.standard_normal(3))


# ---------------------------------------------------------------------------- must not fire
def _non_identities():
    x, ix, x32, m = T.vector("x"), T.ivector("ix"), T.fvector("x32"), T.matrix("m")
    return {
        "int x + 0.0": ([ix], ix + 0.0),
        "x + 0.0 (-0.0 + 0.0 is +0.0)": ([x], x + 0.0),
        "0.0 + x": ([x], 0.0 + x),
        "x - (-0.0) (-0.0 - -0.0 is +0.0)": ([x], x - (-0.0)),
        "float32 x + float64 zeros": ([x32], x32 + np.zeros(1)),
        "x + zeros((3,)) (x may have length 1)": ([x], x + T.zeros((3,))),
        "x + constant zeros(3)": ([x], x + np.zeros(3)),
        "x * ones((1, 1)) (adds a dimension)": ([x], x * np.ones((1, 1))),
        "m * ones(2)": ([m], m * np.ones(2)),
        "0 - x": ([x], 0.0 - x),
        "1 / x": ([x], 1.0 / x),
        "1 ** x": ([x], 1.0 ** x),
        "x * 2": ([x], x * 2.0),
        "x + 1e-300": ([x], x + 1e-300),
        "neg(x)": ([x], -x),
        "a narrowing cast": ([x], Cast("int32")(x)),
        "x[::-1]": ([x], x[::-1]),
        "x[1:]": ([x], x[1:]),
        "m.T": ([m], m.T),
    }


@pytest.mark.parametrize("name", list(_non_identities()))
def test_changes_of_dtype_shape_or_value_do_not_fire(name, same_as_py, rng):
    inputs, out = _non_identities()[name]
    py = ss.function(inputs, out, mode="py")
    f = _compile(inputs, out)
    assert len(f.fgraph.apply_nodes) == len(py.fgraph.apply_nodes)
    assert not any(r.fired for r in f.rewrite_report())
    assert f.fgraph.outputs[0].type == out.type
    var = inputs[0]
    for shape in ([(1,), (3,)] if var.ndim == 1 else [(3, 2)]):
        value = rng.integers(1, 5, size=shape).astype(var.dtype) if var.dtype.startswith("int") else \
            rng.uniform(0.5, 2.0, size=shape).astype(var.dtype)
        same_as_py(f, value)


@pytest.mark.parametrize("build", [
    lambda ix, x32: ([ix], ix * 1.0), lambda ix, x32: ([ix], ix / 1), lambda ix, x32: ([x32], x32 * np.float64(1.0)),
    lambda ix, x32: ([ix], ix + np.int64(0)),
], ids=["int32 x * 1.0", "int32 x / 1", "float32 x * float64 1", "int32 x + int64 0"])
def test_a_neutral_operand_that_widens_the_dtype_leaves_a_cast(build, same_as_py, rng):
    """x op c with c neutral is x in the result's dtype: numpy casts x to it before the op."""
    inputs, out = build(T.ivector("ix"), T.fvector("x32"))
    f = _compile(inputs, out)
    (node,) = f.fgraph.apply_nodes
    assert node.op == Cast(out.dtype) and node.inputs[0] is f.fgraph.inputs[0]
    value = (rng.integers(-2**31, 2**31 - 1, size=5).astype("int32") if inputs[0].dtype == "int32"
             else rng.normal(size=5).astype("float32"))
    same_as_py(f, value)


def test_x_plus_zeros_of_length_three_keeps_the_broadcast(same_as_py):
    x = T.vector("x")
    for rule_set in (CANONICALIZE, ["canonicalize"]):  # with folding: x + a constant [0, 0, 0]
        f = _compile([x], x + T.zeros((3,)), rule_set)
        np.testing.assert_array_equal(same_as_py(f, np.array([2.0])), [2.0, 2.0, 2.0])
        assert isinstance(same_as_py(f, np.array([1.0, 2.0])), ValueError)
        assert f.fgraph.outputs[0].type.shape == (3,)


# ---------------------------------------------------------------------------- constant folding
def test_constant_subgraphs_fold(same_as_py, rng):
    x = T.vector("x")
    c = (T.constant(2.0) * 3.0 + 1.0) * T.constant(np.arange(3.0)).sum()
    out = x * c
    py = ss.function([x], out, mode="py")
    f = _compile([x], out, ["constant_folding"])
    assert len(py.fgraph.apply_nodes) == 5
    (node,) = f.fgraph.apply_nodes
    assert isinstance(node.inputs[1], Constant) and float(node.inputs[1].data) == 21.0
    assert _rules(f) == {"constant_folding"} and len(f.rewrite_report().fired) == 4
    values = rng.standard_normal(3)
    np.testing.assert_allclose(same_as_py(f, values), values * 21.0)


def test_folded_constants_keep_their_types(same_as_py):
    x = T.ivector("x")
    ten = T.constant(np.int8(2)) * T.constant(np.int8(5))
    f = _compile([x], x + ten, ["constant_folding"])
    (node,) = f.fgraph.apply_nodes
    folded = node.inputs[1]
    assert isinstance(folded, Constant) and folded.type == ten.type and folded.dtype == "int8"
    assert f.fgraph.outputs[0].type == (x + ten).type
    same_as_py(f, np.array([1, 2], dtype="int32"))


def test_a_whole_constant_output_folds(same_as_py):
    out = T.arange(5) * 2 + 1
    f = _compile([], out, ["constant_folding"])
    assert len(f.fgraph.apply_nodes) == 0 and isinstance(f.fgraph.outputs[0], Constant)
    got = same_as_py(f)
    np.testing.assert_array_equal(got, [1, 3, 5, 7, 9])
    got[0] = 100  # the caller's array, not the graph's constant
    np.testing.assert_array_equal(f(), [1, 3, 5, 7, 9])


@pytest.mark.parametrize("build,folds", [
    (lambda: T.arange(200_000), False),
    (lambda: T.arange(0.0, 150_000.0, 1.0), False),
    (lambda: T.zeros((400, 400)), False),
    (lambda: T.alloc(1.5, 100_001), False),
    (lambda: T.arange(100_000), True),
    (lambda: T.ones((100, 1000)), True),
])
def test_big_results_do_not_fold(build, folds):
    x = T.vector("x")
    out = build()
    f = _compile([x], out.sum() + x, ["constant_folding"])
    still_computed = any(n.op == out.owner.op for n in f.fgraph.apply_nodes)
    folded = [r for r in f.rewrite_report() if r.fired and r.node == str(out.owner.op)]
    assert still_computed is not folds and bool(folded) is folds
    assert not any(isinstance(v, Constant) and v.data.size > 100_000 for v in f.fgraph.clients)
    np.testing.assert_allclose(f(np.zeros(1)), ss.function([x], out.sum() + x, mode="py")(np.zeros(1)))


def test_random_draws_do_not_fold():
    srng = ss.RandomStream(7)
    draw = srng.normal(size=(3,))
    f = _compile([], draw * 1.0, ["constant_folding"])
    assert any(type(n.op).__name__ == "RandomVariable" for n in f.fgraph.apply_nodes)
    assert not np.array_equal(f(), f())


@pytest.mark.parametrize("build,error", [
    (lambda zero: T.arange(0, 10, zero), ValueError),
    (lambda zero: T.reshape(T.constant(np.arange(6.0)), T.stack([zero + 4])), ValueError),
    (lambda zero: T.constant(np.arange(3.0))[zero + 5], IndexError),
    (lambda zero: T.alloc(1.0, zero - 3), ValueError),
])
def test_a_run_time_error_stays_a_run_time_error(build, error, same_as_py):
    """Folding evaluates constants at compile time; an error there must not surface early."""
    zero = T.constant(np.zeros(2, dtype="int64")).sum()  # a constant that scan-free shape checks cannot see
    x = T.vector("x")
    out = build(zero)
    f = _compile([x], out.sum() + x, ["constant_folding"])  # compiling works
    assert any(r.fired for r in f.rewrite_report())  # the constant arguments did fold
    with pytest.raises(error):
        f(np.zeros(1))
    assert isinstance(same_as_py(f, np.zeros(1)), error)


@pytest.mark.parametrize("build", [
    lambda n: T.alloc(1.5, n),
    lambda n: T.arange(0, n),
    lambda n: T.arange(0.0, T.cast(n, "float64"), 1.0),
    lambda n: T.eye(n // 1000, 1000),
])
def test_a_big_result_is_not_computed_at_compile_time(build):
    """The length is a constant only after folding (a sum of constants): the size check must
    still see it before computing the array."""
    n = T.constant(np.array([2_000_000, 0])).sum()
    x = T.vector("x")
    out = build(n)
    assert None in out.type.shape
    tracemalloc.start()
    try:
        f = _compile([x], out.sum() + x, ["constant_folding"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000 * 8 / 4  # a 16 MB array was never allocated
    assert any(n.op == out.owner.op for n in f.fgraph.apply_nodes)
    assert any(r.fired for r in f.rewrite_report())  # the length itself did fold


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")
@pytest.mark.parametrize("source, mid, out, folds", [
    ("int32", "int64", "int32", True), ("int8", "int32", "uint8", True), ("uint8", "int16", "int8", True),
    ("float32", "float64", "float32", True), ("float32", "float64", "float16", True), ("bool", "int8", "float32", True),
    ("int32", "float32", "int64", False),  # float32 rounds big ints
    ("int32", "float64", "int8", False),  # float -> int is not int -> int out of range
    ("float64", "int32", "float64", False), ("int64", "int32", "int64", False),
])
def test_a_cast_through_a_wider_type_is_one_cast(source, mid, out, folds, same_as_py):
    """cast(cast(x, mid), out) is cast(x, out) when mid holds x exactly and the last cast
    converts alike (found by the fuzzer: onnxruntime loses such a pair computed before a Loop)."""
    x = T.tensor(source, (None,), "x")
    f = _compile([x], T.cast(T.cast(x, mid), out))
    casts = [n.op.dtype for n in f.fgraph.apply_nodes if isinstance(n.op, Cast)]
    assert casts == ([] if source == out else [out]) if folds else sorted(casts) == sorted([mid, out])
    values = {"bool": np.array([True, False]), "float32": np.array([1.5, -2.25, 3e38], "float32")}
    value = values.get(source, np.array([0, 1, -1, 127, -128, 200, 70000]).astype(source))
    same_as_py(f, value)


# ---------------------------------------------------------------------------- fills and sum_to (gradient graphs)
def test_a_fill_to_a_shape_the_value_has_goes(same_as_py, rng):
    """second(a, b) is b when b has a's shape (structurally: an elementwise function of a)."""
    x = T.vector("x")
    t = T.tanh(x)
    f = _compile([x], T.second(t, t * 2.0) + 1.0)
    assert not any(n.op == ss.tensor.elemwise.Elemwise("second") for n in f.fgraph.apply_nodes)
    same_as_py(f, rng.normal(size=3))


def test_a_fill_of_ones_multiplied_by_a_value_of_that_shape_goes(same_as_py, rng):
    x = T.vector("x")
    t = T.tanh(x)
    f = _compile([x], T.second(t, T.constant([1.0])) * (1.0 - t * t))
    names = sorted(n.op.name for n in f.fgraph.apply_nodes)
    assert names == ["mul", "sub", "tanh"]
    same_as_py(f, rng.normal(size=3))


def test_a_fill_stays_where_broadcasting_may_grow_the_shape(same_as_py, rng):
    """y * log(p): y may have length 1 and broadcast, so sum_to and fills of its shape stay."""
    y, p = T.vector("y"), T.vector("p")
    out = T.second(y * p, T.constant([1.0])) * y
    f = _compile([y, p], out)
    assert any(n.op == ss.tensor.elemwise.Elemwise("second") for n in f.fgraph.apply_nodes)
    for shapes in [(3, 3), (1, 3), (3, 1)]:
        same_as_py(f, rng.normal(size=shapes[0]), rng.normal(size=shapes[1]))


def test_sum_to_of_a_known_shape_goes(same_as_py, rng):
    from symscan.tensor.broadcast import SumToShape, sum_to

    x, y = T.vector("x"), T.vector("y")
    kept = _compile([x, y], sum_to(x * y, x))
    assert any(isinstance(n.op, SumToShape) for n in kept.fgraph.apply_nodes)  # y may broadcast x
    for shapes in [(3, 3), (1, 3)]:
        same_as_py(kept, rng.normal(size=shapes[0]), rng.normal(size=shapes[1]))
    gone = _compile([x], sum_to(T.exp(x) * 2.0, x))
    assert not any(isinstance(n.op, SumToShape) for n in gone.fgraph.apply_nodes)
    same_as_py(gone, rng.normal(size=3))


# ---------------------------------------------------------------------------- lengths and indices
def _length_identities():
    """(inputs, output, what it is): a whole axis read by slicing or by an arange (an imported
    ONNX loop's gather by its iteration number, pushed out of the loop, reads so)."""
    x, m = T.vector("x"), T.matrix("m")
    n = x.shape[0]
    squeezed = x.shape[0:1].dimshuffle()  # ONNX's Squeeze(Slice(Shape(x), 0, 1))
    return {
        "x[:len(x)]": ([x], x[:n], x),
        "x[0:len(x)]": ([x], x[0:n], x),
        "x[:squeezed len(x)]": ([x], x[:squeezed], x),
        "x[arange(len(x))]": ([x], x[T.arange(n)], x),
        "x[arange(0, max(len(x), 0), 1)]": ([x], x[T.arange(0, T.maximum(squeezed, 0), 1)], x),
        "m[arange(len(m)), :]": ([m], m[T.arange(m.shape[0]), :], m),
        "x[arange(len(x))[:len(x)]]": ([x], x[T.arange(n)[:n]], x),
    }


@pytest.mark.parametrize("name", list(_length_identities()))
def test_whole_axis_reads_become_the_variable(name, same_as_py, rng):
    inputs, out, expected = _length_identities()[name]
    f = _compile(inputs, out)
    assert len(f.fgraph.apply_nodes) == 0
    assert f.fgraph.outputs[0] is f.fgraph.inputs[0]
    value = rng.standard_normal((5,) if expected.ndim == 1 else (4, 3))
    np.testing.assert_array_equal(same_as_py(f, value), value)
    empty = np.zeros((0,) if expected.ndim == 1 else (0, 3))
    assert same_as_py(f, empty).shape == empty.shape


def test_a_length_at_least_zero_is_the_length(same_as_py):
    x = T.vector("x")
    f = _compile([x], T.maximum(x.shape[0], 0))
    assert [type(n.op).__name__ for n in f.fgraph.toposort()] == ["Shape", "Subtensor"]
    assert same_as_py(f, np.zeros(3)) == 3


def _length_non_identities():
    x, y, m, k = T.vector("x"), T.vector("y"), T.matrix("m"), T.lscalar("k")
    return {
        "x[:len(y)]": ([x, y], x[:y.shape[0]]),
        "x[arange(1, len(x))]": ([x], x[T.arange(1, x.shape[0])]),
        "x[arange(len(x) - 1)]": ([x], x[T.arange(x.shape[0] - 1)]),
        "x[arange(0, len(x), 2)]": ([x], x[T.arange(0, x.shape[0], 2)]),
        "m[:, arange(len(m))] (another axis)": ([m], m[:, T.arange(m.shape[0])]),
        "x[arange(k)] (k may be shorter)": ([x, k], x[T.arange(k)]),
        "maximum(k, 0) (k may be negative)": ([k], T.maximum(k, 0)),
        "x[:k]": ([x, k], x[:k]),
    }


@pytest.mark.parametrize("name", list(_length_non_identities()))
def test_other_lengths_do_not_fire(name, rng):
    inputs, out = _length_non_identities()[name]
    f = _compile(inputs, out)
    assert not any(r.fired for r in f.rewrite_report()), [str(r) for r in f.rewrite_report() if r.fired]
    values = [rng.standard_normal((4, 4) if v.ndim == 2 else 4) if v.ndim else np.int64(-2) for v in inputs]
    np.testing.assert_array_equal(f(*values), ss.function(inputs, out, mode="py")(*values))


def test_settled_assert_conditions_are_dropped(same_as_py):
    from symscan.tensor.assertion import Assert, assert_that

    x = T.vector("x")
    settled = assert_that(x, T.constant(np.bool_(True)), message="never")
    f = _compile([x], settled)
    assert len(f.fgraph.apply_nodes) == 0
    mixed = assert_that(x * 2, T.constant(np.bool_(True)), T.gt(x.sum(), 0), message="sum must be positive")
    g = _compile([x], mixed)
    (check,) = [n for n in g.fgraph.apply_nodes if isinstance(n.op, Assert)]
    assert len(check.inputs) == 2  # the value and the one pending condition
    np.testing.assert_array_equal(same_as_py(g, np.ones(2)), [2.0, 2.0])
    error = same_as_py(g, -np.ones(2))  # the error, in both modes
    assert isinstance(error, ValueError) and "sum must be positive" in str(error)
    failing = _compile([x], assert_that(x, T.constant(np.bool_(False)), message="always fails"))
    with pytest.raises(ValueError, match="always fails"):
        failing(np.ones(2))


def _one_step_mit_sot_gradient():
    """grad unrolls a one-step loop: the loop's "too few initial rows" check hangs on a value
    only a fill reads (``second(a, ones)``), which canonicalize turns into the ones."""
    h, w = T.vector("h"), T.vector("w")
    out, _ = ss.scan(lambda past, w: 0.9 * (w * -0.8).sum(), outputs_info=dict(initial=h, taps=[-2]),
                     non_sequences=w, n_steps=1)
    return [h, w], out.sum(), ss.grad(out.sum(), [h, w], disconnected_inputs="ignore")


@pytest.mark.parametrize("rules", [["canonicalize"], ["-rule:merge"], None])
def test_a_dropped_operand_keeps_the_loops_checks(rules):
    """An error stays an error: with one initial row for taps [-2] the gradient raises as the
    forward does, and the rewritten graph still holds the InitialRows check."""
    from symscan.scan.checks import InitialRows

    inputs, cost, grads = _one_step_mit_sot_gradient()
    f = ss.function(inputs, grads, mode="fast", **({} if rules is None else {"rewrites": rules}))
    assert any(isinstance(node.op, InitialRows) for node in f.fgraph.apply_nodes)
    for outputs in (cost, grads):
        with pytest.raises(ValueError, match="initial rows"):
            ss.function(inputs, outputs, mode="fast")(np.array([1.0]), np.array([0.5]))
    expected = ss.function(inputs, grads, mode="py")(np.array([1.0, 2.0]), np.array([0.5]))
    for got, want in zip(f(np.array([1.0, 2.0]), np.array([0.5])), expected):
        np.testing.assert_allclose(got, want)


def test_checks_still_computed_elsewhere_are_not_hung_again():
    """``checks_dropped_with`` lists only checks nothing else reads: when the forward value is
    an output too, the fill's rewrite adds no AfterChecks."""
    from rewrites.scan_utils import checks_dropped_with
    from symscan.graph.fg import FunctionGraph
    from symscan.tensor.elemwise import Elemwise

    inputs, cost, grads = _one_step_mit_sot_gradient()
    for outputs, expect_checks in (([grads[1]], True), ([grads[1], cost], False)):
        fgraph = FunctionGraph(inputs, outputs)
        fills = [n for n in fgraph.apply_nodes if n.op == Elemwise("second") and n.inputs[0].owner is not None
                 and n.inputs[0].ndim == 1 and n.inputs[0].type.shape == (1,)]
        found = [checks_dropped_with(fgraph, n, n.inputs[1]) for n in fills]
        assert any(found) == expect_checks


def test_a_shape_read_past_slices_reads_the_sliced_array(same_as_py, rng):
    """x[1:][::-1].shape[1] and [-1] are x's: the slices cut axis 0 only (a backward loop's
    trace reads); the slices themselves are not computed for the read."""
    x = T.tensor3("x")
    f = _compile([x], [x[1:][::-1].shape[1], x[1:, :2].shape[-1]])
    assert [type(n.op).__name__ for n in f.fgraph.toposort()].count("Subtensor") == 2
    assert all(n.inputs[0].owner.inputs[0] is f.fgraph.inputs[0] for n in f.fgraph.apply_nodes
               if type(n.op).__name__ == "Subtensor")
    for value in (rng.standard_normal((4, 3, 2)), np.zeros((0, 3, 2))):
        assert same_as_py(f, value) == [3, 2]


def test_a_shape_read_of_a_sliced_axis_or_a_step_of_zero_stays(same_as_py, rng):
    """x[1:].shape[0] is not x's; a step that may be 0 is numpy's error, which stays."""
    x, s = T.matrix("x"), T.lscalar("s")
    f = _compile([x, s], [x[1:].shape[0], x[:, ::s].shape[0]])
    shape_of = [n.inputs[0].owner.inputs[0] for n in f.fgraph.apply_nodes if type(n.op).__name__ == "Subtensor"
                and n.inputs[0].owner is not None and type(n.inputs[0].owner.op).__name__ == "Shape"]
    assert f.fgraph.inputs[0] not in shape_of
    assert same_as_py(f, rng.standard_normal((4, 3)), 2) == [3, 4]
    assert isinstance(same_as_py(f, rng.standard_normal((4, 3)), 0), ValueError)


def test_a_shape_read_past_a_permutation_or_checks_reads_the_source(same_as_py, rng):
    """v.dimshuffle(0, 2, 1).shape[2] is v.shape[1]; AfterChecks(v, ...).shape[1] is v's while
    the checked value is read elsewhere (its checks still run); a DimShuffle that drops an axis
    (an error when that axis is not 1) or adds one is left alone."""
    from symscan.scan.checks import AfterChecks

    x, n = T.tensor3("x"), T.lscalar("n")
    checked = AfterChecks()(x, n)
    f = _compile([x, n], [x.dimshuffle(0, 2, 1).shape[2], checked.shape[1], checked.sum()])
    shapes = [node for node in f.fgraph.apply_nodes if type(node.op).__name__ == "Shape"]
    assert {s.inputs[0] for s in shapes} == {f.fgraph.inputs[0]}
    assert same_as_py(f, rng.standard_normal((2, 3, 4)), 1)[:2] == [3, 3]
    y = T.tensor3("y")
    dropped = y.dimshuffle(0, 2)
    g = _compile([y], [dropped.shape[1], dropped.dimshuffle(0, "x", 1).shape[1]])
    assert isinstance(same_as_py(g, rng.standard_normal((2, 3, 4))), ValueError)
    assert same_as_py(g, rng.standard_normal((2, 1, 4))) == [4, 1]
