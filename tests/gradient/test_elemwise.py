"""Pullbacks of the elementwise ops and Cast (symscan/gradient/ops/elemwise.py): every op
against central differences, verify_grad and modes py/fast/onnxruntime (``grad_check``), over
broadcasting shapes (length-1 axes known statically or only at run time), float32 and integer
inputs; the edge semantics (ties, bounds, switch, fill, zero gradients) with exact values."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symscan as ss
import symscan.tensor as T
from symscan.gradient.ops import elemwise as elemwise_rules
from symscan.graph.traversal import toposort
from symscan.tensor.broadcast import SumToShape

MODES = ("py", "fast", "onnxruntime")


def points(seed: int, *specs):
    """float64 arrays: one per ``(shape, low, high)``, uniform in [low, high)."""
    rng = np.random.default_rng(seed)
    return [rng.uniform(low, high, size=shape) for shape, low, high in specs]


MODES_TOLERANCE = {"float64": (1e-12, 1e-15), "float32": (1e-6, 1e-6), "float16": (2e-3, 1e-3)}
"""(rtol, atol) between modes: onnxruntime's float32 tanh, exp... may differ in the last bit, which
``1 - tanh(x)**2`` turns into a larger relative difference where tanh(x) is near 1."""


def values_in_modes(inputs, outputs, *values):
    """``outputs`` (a list) in every mode; the modes agree; mode "py"'s values."""
    results = {m: [np.asarray(v) for v in ss.function(inputs, outputs, mode=m)(*values)] for m in MODES}
    for mode, got in results.items():
        for g, e in zip(got, results["py"]):
            assert g.dtype == e.dtype, f"mode {mode}: dtype {g.dtype}, py gives {e.dtype}"
            rtol, atol = MODES_TOLERANCE[e.dtype.name]
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"mode {mode}")
    return results["py"]


def weighted_grads(fun, inputs, weights):
    """The gradients of ``sum(weights * fun(*inputs))`` w.r.t. each of ``inputs``."""
    return ss.grad((T.constant(weights) * fun(*inputs)).sum(), list(inputs))


# ---------------------------------------------------------------------------- every op against finite differences
BROADCAST_SHAPES = [
    ((), ()),
    ((4,), (4,)),
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),  # the second broadcast along a leading axis it does not have
    ((3,), (2, 3)),
    ((2, 3), ()),
    ((2, 1), (1, 3)),  # both ways along length-1 axes
    ((1, 3), (2, 1)),
    ((2, 1, 3), (4, 1)),
]
"""Shape pairs; ``grad_check`` declares every length unknown, so each length 1 is only known
(and broadcast) at run time; ``test_binary_static_shapes`` declares them."""

BINARY = {
    "add": (T.add, (-2, 2), (-2, 2)),
    "sub": (T.sub, (-2, 2), (-2, 2)),
    "mul": (T.mul, (-2, 2), (-2, 2)),
    "true_div": (T.true_div, (-2, 2), (0.5, 2)),
    "mod": (T.mod, (-3, 3), (0.6, 1.4)),
    "fmod": (T.fmod, (-3, 3), (0.6, 1.4)),
    "pow": (T.pow, (0.3, 2), (-2, 2)),
    "maximum": (T.maximum, (-2, 2), (-2, 2)),
    "minimum": (T.minimum, (-2, 2), (-2, 2)),
    "logaddexp": (T.logaddexp, (-3, 3), (-3, 3)),
    "second": (T.second, (-2, 2), (-2, 2)),
    "floor_div": (T.floor_div, (-3, 3), (0.6, 1.4)),  # zero gradient for both
}
"""name -> (function, domain of x, domain of y), away from poles and kinks."""


@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary(grad_check, name, shapes):
    fun, x_domain, y_domain = BINARY[name]
    grad_check(fun, *points(list(BINARY).index(name), (shapes[0], *x_domain), (shapes[1], *y_domain)))


@pytest.mark.parametrize("shapes", [((2, 3), (3,)), ((2, 1), (1, 3)), ((2, 1, 3), (4, 1))], ids=str)
@pytest.mark.parametrize("name", ["sub", "pow", "maximum", "second"])
def test_binary_static_shapes(grad_check, name, shapes):
    """Static lengths: ``sum_to`` reduces the known broadcast axes without SumToShape."""
    fun, x_domain, y_domain = BINARY[name]
    grad_check(fun, *points(1, (shapes[0], *x_domain), (shapes[1], *y_domain)), static=True)


UNARY = {
    "neg": (T.neg, (-2, 2)),
    "abs": (T.abs, (0.2, 2)),  # and every other entry negated by test_unary
    "exp": (T.exp, (-2, 2)),
    "log": (T.log, (0.2, 3)),
    "log1p": (T.log1p, (-0.8, 3)),
    "expm1": (T.expm1, (-2, 2)),
    "sqrt": (T.sqrt, (0.2, 3)),
    "sin": (T.sin, (-3, 3)),
    "cos": (T.cos, (-3, 3)),
    "tan": (T.tan, (-1.2, 1.2)),
    "tanh": (T.tanh, (-3, 3)),
    "sigmoid": (T.sigmoid, (-5, 5)),
    "softplus": (T.softplus, (-5, 5)),
    "erf": (T.erf, (-2, 2)),
    # zero gradient away from the jumps
    "sign": (T.sign, (-2, 2)),
    "floor": (T.floor, (-3, 3)),
    "ceil": (T.ceil, (-3, 3)),
    "round": (T.round, (-3, 3)),
}
"""name -> (function, domain)."""


@pytest.mark.parametrize("shape", [(), (5,), (2, 3)], ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_unary(grad_check, name, shape):
    fun, domain = UNARY[name]
    (x,) = points(list(UNARY).index(name), (shape, *domain))
    if name == "abs":
        x = x * np.where(np.arange(x.size).reshape(shape) % 2, -1, 1)
    grad_check(fun, x)


TERNARY_SHAPES = [((), (), ()), ((2, 3), (2, 3), (2, 3)), ((2, 3), (3,), ()), ((3,), (2, 1), (1, 3)),
                  ((2, 1), (1, 3), (2, 3))]


@pytest.mark.parametrize("shapes", TERNARY_SHAPES, ids=str)
def test_switch(grad_check, shapes):
    """Condition from a comparison of a float input: that input gets zeros (connected)."""
    grad_check(lambda c, a, b: T.switch(c > 0.0, a, b),
               *points(3, (shapes[0], -1, 1), (shapes[1], -2, 2), (shapes[2], -2, 2)))


@pytest.mark.parametrize("shapes", TERNARY_SHAPES, ids=str)
def test_clip(grad_check, shapes):
    """x in [-2, 2) around bounds in [-1, 0) and [0, 1): every case (inside, below, above)."""
    grad_check(T.clip, *points(4, (shapes[0], -2, 2), (shapes[1], -1, 0), (shapes[2], 0, 1)))


def test_clip_points_cover_every_case():
    """The points of test_clip fall in all three cases; else those tests would check little."""
    x, low, high = points(4, ((2, 3), -2, 2), ((2, 3), -1, 0), ((2, 3), 0, 1))
    assert (x < low).any() and (x > high).any() and ((low <= x) & (x <= high)).any()


@pytest.mark.parametrize("op", ["lt", "le", "gt", "ge", "eq", "neq"])
def test_comparisons_pass_no_gradient(grad_check, op):
    """A bool output: its inputs get zero from it, the rest of the graph its gradient."""
    compare = getattr(T, op)
    x, y = points(5, ((2, 3), -1, 1), ((3,), -1, 1))
    _, got_y = grad_check(lambda a, b: T.cast(compare(a, b), "float64") * a, x, y)
    assert np.all(got_y == 0)


@pytest.mark.parametrize("op", ["and_", "or_", "xor"])
def test_bit_operations_pass_no_gradient(grad_check, op):
    combine = getattr(T, op)
    grad_check(lambda a, b: T.cast(combine(a > 0, b > 0), "float64") * (a + 2 * b),
               *points(6, ((2, 3), -1, 1), ((2, 1), -1, 1)))


def test_invert_passes_no_gradient(grad_check):
    grad_check(lambda a: T.cast(T.invert(a > 0), "float64") * a * a, *points(7, ((5,), -1, 1)))


SECOND_ORDER = {
    "pow": (T.pow, (0.5, 2), (-2, 2)),
    "true_div": (T.true_div, (-2, 2), (0.5, 2)),
    "logaddexp": (T.logaddexp, (-3, 3), (-3, 3)),
    "mul_sigmoid": (lambda x, y: T.sigmoid(x * y), (-2, 2), (-2, 2)),
    "tanh_softplus": (lambda x, y: T.tanh(x) * T.softplus(y), (-2, 2), (-2, 2)),
    "erf_sqrt": (lambda x, y: T.erf(x) / T.sqrt(y), (-2, 2), (0.5, 2)),
}


@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 1), (1, 3))], ids=str)
@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_derivatives(grad_check, name, shapes):
    """The gradient of a gradient: the rules' graphs are differentiable in turn (with runtime
    broadcasting, through SumToShape's own pullback)."""
    fun, x_domain, y_domain = SECOND_ORDER[name]

    def first_derivatives(x, y):
        gx, gy = ss.grad((fun(x, y) * T.constant(np.linspace(0.5, 1.5, 6).reshape(2, 3))).sum(), [x, y])
        return gx.sum() * 0.7 + gy.sum() * 1.3 + (gx * gx).sum()

    # onnxruntime's float64 erf computes in float32 (symscan/onnx/tensor_ops.py), and d/dy here uses erf's value
    modes = ("py", "fast") if name == "erf_sqrt" else MODES
    grad_check(first_derivatives, *points(11, (shapes[0], *x_domain), (shapes[1], *y_domain)), rtol=1e-5,
               atol=1e-6, modes=modes)


def test_grad_check_can_fail(grad_check, monkeypatch):
    """A wrong rule is caught (here: sub's gradient w.r.t. y with the wrong sign)."""
    monkeypatch.setitem(elemwise_rules.ELEMWISE_PULLBACKS, "sub", lambda g, out, x, y: [g, g])
    with pytest.raises(AssertionError, match="input 1"):
        grad_check(T.sub, *points(9, ((2, 3), -1, 1), ((3,), -1, 1)))


# ---------------------------------------------------------------------------- random broadcasting (hypothesis)
def unbroadcast(a: np.ndarray, shape: tuple) -> np.ndarray:
    """numpy: ``a`` summed down to ``shape``, the shape it was broadcast from."""
    a = a.sum(axis=tuple(range(a.ndim - len(shape))))
    return a.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)


@st.composite
def broadcasting_pair(draw):
    """Two shapes that broadcast: a common shape, each operand keeping a suffix of it with
    some lengths set to 1."""
    full = draw(st.lists(st.integers(1, 3), min_size=0, max_size=3))
    shapes = []
    for _ in range(2):
        ndim = draw(st.integers(0, len(full)))
        suffix = full[len(full) - ndim:]
        shapes.append(tuple(1 if draw(st.booleans()) else n for n in suffix))
    return shapes


@settings(max_examples=25, deadline=None, database=None)
@given(shapes=broadcasting_pair(), op=st.sampled_from(["add", "mul", "maximum"]), static=st.booleans(),
       seed=st.integers(0, 2**16))
def test_broadcasting_against_numpy(shapes, op, static, seed):
    rng = np.random.default_rng(seed)
    x, y = (rng.choice([-1.0, -0.5, 0.5, 1.0, 2.0], size=s) for s in shapes)  # ties for maximum
    out_shape = np.broadcast_shapes(x.shape, y.shape)
    w = rng.uniform(0.5, 1.5, size=out_shape)
    xb, yb = np.broadcast_to(x, out_shape), np.broadcast_to(y, out_shape)
    expected = {"add": (w, w), "mul": (w * yb, w * xb),
                "maximum": (w * (xb >= yb), w * (yb >= xb))}[op]
    inputs = [T.tensor("float64", s if static else (None,) * len(s)) for s in shapes]
    got = values_in_modes(inputs, weighted_grads(getattr(T, op), inputs, w), x, y)
    for g, e, s in zip(got, expected, shapes):
        assert g.shape == s
        np.testing.assert_allclose(g, unbroadcast(e, s), rtol=1e-14)


def test_sum_to_shape_only_where_a_length_is_unknown():
    """Static lengths: plain sums; unknown lengths: SumToShape for binary ops; unary: none."""

    def count(outputs):
        return sum(isinstance(node.op, SumToShape) for node in toposort(outputs if isinstance(outputs, list)
                                                                          else [outputs]))

    static = [T.tensor("float64", (2, 3)), T.tensor("float64", (1, 3))]
    unknown = [T.tensor("float64", (None, None)), T.tensor("float64", (None, None))]
    assert count(ss.grad(T.mul(*static).sum(), static)) == 0
    assert count(ss.grad(T.mul(*unknown).sum(), unknown)) == 2
    assert count(ss.grad(T.exp(unknown[0]).sum(), unknown[0])) == 0


# ---------------------------------------------------------------------------- float32 and integer inputs
def float64_grads(fun, values):
    """The gradients at ``values`` (any dtypes) of the same graph on float64 inputs, mode py."""
    shape = np.broadcast_shapes(*(np.shape(v) for v in values))
    weights = np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape)
    inputs = [T.tensor("float64", (None,) * np.ndim(v)) for v in values]
    grads = ss.function(inputs, weighted_grads(fun, inputs, weights), mode="py")(
        *[np.asarray(v, dtype="float64") for v in values])
    return weights, [np.asarray(g) for g in grads]


FLOAT32_CASES = {
    "mul": (T.mul, [((2, 3), -2, 2), ((3,), -2, 2)]),
    "true_div": (T.true_div, [((2, 3), -2, 2), ((2, 1), 0.5, 2)]),
    "pow": (T.pow, [((3,), 0.3, 2), ((2, 3), -2, 2)]),
    "logaddexp": (T.logaddexp, [((2, 3), -3, 3), ((), -3, 3)]),
    "maximum": (T.maximum, [((2, 3), -2, 2), ((1, 3), -2, 2)]),
    "sigmoid": (T.sigmoid, [((5,), -5, 5)]),
    "softplus": (T.softplus, [((5,), -5, 5)]),
    "tanh": (T.tanh, [((5,), -3, 3)]),
    "erf": (T.erf, [((5,), -2, 2)]),
    "sqrt": (T.sqrt, [((5,), 0.2, 3)]),
    "log1p": (T.log1p, [((5,), -0.8, 3)]),
    "clip": (T.clip, [((2, 3), -2, 2), ((3,), -1, 0), ((), 0, 1)]),
}


@pytest.mark.parametrize("name", FLOAT32_CASES)
def test_float32_inputs(name):
    """float32 inputs: float32 gradients, close to float64's; verify_grad at float32's tolerances."""
    fun, specs = FLOAT32_CASES[name]
    values = [p.astype("float32") for p in points(10, *specs)]
    weights, expected = float64_grads(fun, values)
    inputs = [T.tensor("float32", (None,) * v.ndim) for v in values]
    got = values_in_modes(inputs, weighted_grads(fun, inputs, weights.astype("float32")), *values)
    for g, e in zip(got, expected):
        assert g.dtype == np.float32 and g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=2e-5, atol=2e-6)
    ss.verify_grad(fun, values, rng=np.random.default_rng(0), mode="py")


INT_CASES = {
    "mul by a float": (lambda x: x * 2.5, [np.array([[1, -2, 3], [0, 4, 5]])]),
    "int times float": (T.mul, [np.array([1, -2, 3]), np.array([[0.5], [1.5]])]),
    "int over int": (T.true_div, [np.array([1, -2, 3]), np.array([[2], [-3]])]),
    "pow int exponent": (T.pow, [np.array([0.5, 1.5, 2.0]), np.array([[2], [3]])]),
    "pow int base": (T.pow, [np.array([1, 2, 3]), np.array([0.5, 1.5, -1.0])]),
    "maximum": (T.maximum, [np.array([1, -2, 3]), np.array([[0.5], [2.5]])]),
    "mod": (T.mod, [np.array([5, -7, 3]), np.array([[2.5], [1.5]])]),
    "exp": (T.exp, [np.array([-1, 0, 2])]),
    "log1p int8 at 127": (T.log1p, [np.array([0, 5, 127], dtype="int8")]),  # 1 + x wraps round in int8
    "erf int8 at 16": (T.erf, [np.array([0, 1, -1, 16], dtype="int8")]),  # 16 * 16 wraps round to 0 in int8
    "sqrt uint8": (T.sqrt, [np.array([1, 4, 200], dtype="uint8")]),
    "sigmoid bool": (T.sigmoid, [np.array([True, False])]),
    "cast to float": (lambda x: T.cast(x, "float32") * 3, [np.array([1, 2, 3], dtype="int16")]),
}
"""Integer (and bool) inputs of float-valued functions: the gradient is real, as for floats."""


@pytest.mark.parametrize("name", INT_CASES)
def test_integer_inputs_get_real_gradients(name):
    fun, values = INT_CASES[name]
    weights, expected = float64_grads(fun, values)
    inputs = [T.tensor(np.asarray(v).dtype.name, (None,) * np.ndim(v)) for v in values]
    got = values_in_modes(inputs, weighted_grads(fun, inputs, weights), *values)
    for g, e, v in zip(got, expected, values):
        floating = np.asarray(v).dtype.kind == "f"
        assert g.dtype == (np.asarray(v).dtype if floating else ss.config.floatX)
        rtol = {"float64": 1e-12, "float32": 1e-6, "float16": 4e-3}[fun(*inputs).dtype]  # int8 → float16
        np.testing.assert_allclose(g, e, rtol=rtol, atol=1e-12)


def test_theano_int_example():
    """Theano: ``grad(x_int * 2.5, x_int)`` is 2.5, not zero."""
    x = T.lscalar("x")
    (g,) = values_in_modes([x], [ss.grad(x * 2.5, x)], np.int64(4))
    assert g.dtype == np.float64 and g == 2.5


def test_integer_output_gives_zero_gradient():
    """floor_div and mul of ints: an integer result passes back nothing, so zeros (connected)."""
    x, y = T.lvector("x"), T.dvector("y")
    cost = T.cast((x // 2) * x, "float64").sum() + (y * 0.5).sum()
    gx, gy = values_in_modes([x, y], ss.grad(cost, [x, y]), np.array([3, 4]), np.array([1.0, 2.0]))
    np.testing.assert_array_equal(gx, [0.0, 0.0])
    np.testing.assert_array_equal(gy, [0.5, 0.5])


# ---------------------------------------------------------------------------- edge semantics, exact values
def test_maximum_and_minimum_ties_go_to_both():
    x, y = T.dvector("x"), T.dvector("y")
    xv, yv = np.array([1.0, 2.0, 3.0, -1.0]), np.array([1.0, 0.0, 3.0, 5.0])
    mx, my, nx, ny = values_in_modes([x, y], ss.grad(T.maximum(x, y).sum(), [x, y]) +
                                     ss.grad(T.minimum(x, y).sum(), [x, y]), xv, yv)
    np.testing.assert_array_equal(mx, [1, 1, 1, 0])
    np.testing.assert_array_equal(my, [1, 0, 1, 1])
    np.testing.assert_array_equal(nx, [1, 0, 1, 1])
    np.testing.assert_array_equal(ny, [1, 1, 1, 0])


def test_maximum_ties_with_a_broadcast_scalar():
    x, s = T.dmatrix("x"), T.dscalar("s")
    gx, gs = values_in_modes([x, s], ss.grad(T.maximum(x, s).sum(), [x, s]),
                             np.array([[0.0, 1.0, 2.0], [1.0, -1.0, 1.0]]), np.float64(1.0))
    np.testing.assert_array_equal(gx, [[0, 1, 1], [1, 0, 1]])
    assert gs == 5.0  # three ties and two wins


def test_clip_at_the_bounds():
    """At a bound x gets the gradient and the bound nothing (Theano); beyond it, the bound."""
    x, low, high = T.dvector("x"), T.dscalar("low"), T.dscalar("high")
    w = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    gx, glow, ghigh = values_in_modes([x, low, high], weighted_grads(T.clip, [x, low, high], w),
                                      np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 3.0]), np.float64(-1.0), np.float64(1.0))
    np.testing.assert_array_equal(gx, [0, 2, 3, 4, 0, 0])
    assert glow == 1.0 and ghigh == 11.0


def test_clip_with_low_above_high_follows_numpy():
    """numpy's clip gives ``high`` everywhere when low > high: all the gradient goes there."""
    x, low, high = T.dvector("x"), T.dvector("low"), T.dvector("high")
    xv, lv, hv = np.array([0.0, 5.0, 2.0]), np.array([3.0, 3.0, 3.0]), np.array([1.0, 1.0, 1.0])
    out, gx, glow, ghigh = values_in_modes([x, low, high], [T.clip(x, low, high), *ss.grad(
        T.clip(x, low, high).sum(), [x, low, high])], xv, lv, hv)
    np.testing.assert_array_equal(out, np.clip(xv, lv, hv))
    np.testing.assert_array_equal(gx, [0, 0, 0])
    np.testing.assert_array_equal(glow, [0, 0, 0])
    np.testing.assert_array_equal(ghigh, [1, 1, 1])


def test_clip_equal_bounds():
    x, low, high = T.dvector("x"), T.dscalar("low"), T.dscalar("high")
    gx, glow, ghigh = values_in_modes([x, low, high], ss.grad(T.clip(x, low, high).sum(), [x, low, high]),
                                      np.array([0.0, 1.0, 2.0]), np.float64(1.0), np.float64(1.0))
    np.testing.assert_array_equal(gx, [0, 1, 0])
    assert glow == 1.0 and ghigh == 1.0


def test_switch_routes_the_gradient():
    c, a, b = T.dmatrix("c"), T.dvector("a"), T.dscalar("b")
    cv = np.array([[0.5, -1.0, 2.0], [-0.5, 1.0, -2.0]])
    w = np.arange(1.0, 7.0).reshape(2, 3)
    gc, ga, gb = values_in_modes([c, a, b], weighted_grads(lambda c, a, b: T.switch(c > 0, a, b), [c, a, b], w),
                                 cv, np.array([1.0, 2.0, 3.0]), np.float64(7.0))
    np.testing.assert_array_equal(gc, np.zeros((2, 3)))
    np.testing.assert_array_equal(ga, (w * (cv > 0)).sum(axis=0))
    assert gb == (w * (cv <= 0)).sum()


def test_switch_on_a_float_condition_gives_it_zeros():
    c, a = T.dvector("c"), T.dvector("a")
    gc, ga = values_in_modes([c, a], ss.grad(T.switch(c, a, 0.0).sum(), [c, a]),
                             np.array([0.0, 2.5, -1.0]), np.array([1.0, 2.0, 3.0]))
    assert gc.dtype == np.float64
    np.testing.assert_array_equal(gc, [0, 0, 0])
    np.testing.assert_array_equal(ga, [0, 1, 1])


@pytest.mark.parametrize("a_shape, b_shape", [((2, 3), (3,)), ((3,), (2, 3)), ((2, 1), (1, 3))], ids=str)
def test_second_fills_with_b(a_shape, b_shape):
    a, b = T.tensor("float64", (None,) * len(a_shape)), T.tensor("float64", (None,) * len(b_shape))
    out_shape = np.broadcast_shapes(a_shape, b_shape)
    w = np.arange(1.0, 1.0 + np.prod(out_shape)).reshape(out_shape)
    ga, gb = values_in_modes([a, b], weighted_grads(T.second, [a, b], w), np.ones(a_shape), np.ones(b_shape))
    np.testing.assert_array_equal(ga, np.zeros(a_shape))
    np.testing.assert_array_equal(gb, unbroadcast(w, b_shape))


@pytest.mark.parametrize("name", ["floor_div", "sign", "floor", "ceil", "round"])
def test_zero_gradient_ops_give_float_zeros(name):
    """Zero, shaped like the input, float, and connected (no DisconnectedInputError)."""
    fun = BINARY[name][0] if name in BINARY else UNARY[name][0]
    x = T.dmatrix("x")
    out = fun(x, 0.75) if name in BINARY else fun(x)
    (gx,) = values_in_modes([x], [ss.grad(out.sum(), x)], np.array([[0.5, -1.5, 2.5]]))
    assert gx.dtype == np.float64
    np.testing.assert_array_equal(gx, np.zeros((1, 3)))


@pytest.mark.parametrize("name", ["eq", "neq", "lt", "le", "gt", "ge", "and_", "or_", "xor", "invert", "floor_div",
                                  "sign", "floor", "ceil", "round"])
def test_zero_gradient_rules_are_zeros_not_disconnected(name):
    """Called directly (the traversal never passes a cotangent to a bool output, and would
    treat None as zero too): zeros of each input's shape, in a float dtype."""
    x, y = T.tensor("float32", (2, None)), T.tensor("bool", (None,))
    if name in ("and_", "or_", "xor"):
        out = getattr(T, name)(x > 0, y)
    elif name == "invert":
        out = T.invert(y)
    elif name in UNARY:
        out = getattr(T, name)(x)
    else:
        out = getattr(T, name)(x, y)
    g = T.tensor(out.dtype if out.dtype.startswith("float") else "float64", (None, None))
    grads = elemwise_rules.elemwise_pullback(out.owner, [g])
    assert len(grads) == len(out.owner.inputs)
    for grad_, var in zip(grads, out.owner.inputs):
        assert grad_ is not None and grad_.dtype in ("float32", "float64") and grad_.ndim == var.ndim
        assert grad_.owner is not None and grad_.owner.op == T.zeros_like(var).owner.op
        (value,) = ss.function([x, y], [grad_], mode="py", on_unused_input="ignore")(
            np.ones((2, 3), "float32"), np.ones(3, "bool"))
        np.testing.assert_array_equal(value, np.zeros((2, 3)[2 - var.ndim:]))


def test_cast_pullback_returns_the_input_dtype():
    """A float input's gradient in its own dtype; an int input's as it arrives (float)."""
    f, i, g = T.fvector("f"), T.ivector("i"), T.dvector("g")
    (to_f,) = elemwise_rules.cast_pullback(T.cast(f, "float64").owner, [g])
    (to_i,) = elemwise_rules.cast_pullback(T.cast(i, "float64").owner, [g])
    assert to_f.dtype == "float32" and to_i.dtype == "float64"


def test_mod_gradients():
    """d/dx x % y = 1; d/dy = -floor(x / y), also for a negative divisor (numpy's sign)."""
    x, y = T.dvector("x"), T.dvector("y")
    gx, gy = values_in_modes([x, y], ss.grad(T.mod(x, y).sum(), [x, y]), np.array([5.5, -5.5, 5.5, 1.0]),
                             np.array([2.0, 2.0, -2.0, 2.0]))
    np.testing.assert_array_equal(gx, [1, 1, 1, 1])
    np.testing.assert_array_equal(gy, [-2, 3, 3, 0])


def test_pow_at_zero_and_negative_bases():
    """x == 0: d/dy is 0 (Theano); x < 0: d/dx is exact at integer y, d/dy is NaN (log x)."""
    x, y = T.dvector("x"), T.dvector("y")
    gx, gy = values_in_modes([x, y], ss.grad((x ** y).sum(), [x, y]), np.array([0.0, 0.0, -2.0, 2.0]),
                             np.array([2.0, 1.0, 3.0, 3.0]))
    np.testing.assert_array_equal(gx, [0.0, 1.0, 12.0, 12.0])
    np.testing.assert_array_equal(gy[:2], [0.0, 0.0])
    assert np.isnan(gy[2])
    np.testing.assert_allclose(gy[3], np.log(2.0) * 8.0, rtol=1e-15)


def test_stable_forms_at_large_arguments():
    """No overflow to inf or NaN where the derivative is finite."""
    x, y = T.dvector("x"), T.dvector("y")
    grads = ss.grad(T.logaddexp(x, y).sum() + T.sigmoid(x).sum() + T.softplus(y).sum() + T.tanh(x).sum(), [x, y])
    gx, gy = values_in_modes([x, y], grads, np.array([-1000.0, 1000.0, 0.0]), np.array([-1000.0, 0.0, 1000.0]))
    # logaddexp + sigmoid' + tanh' (x); logaddexp + softplus' (y)
    np.testing.assert_allclose(gx, [0.5 + 0 + 0, 1 + 0 + 0, 0 + 0.25 + 1], rtol=1e-12)
    np.testing.assert_allclose(gy, [0.5 + 0, 0 + 0.5, 1 + 1], rtol=1e-12)


def test_softmax_gradient_at_large_logits():
    """softmax is shifted by its max, so its gradient stays finite at logits of +-1000."""
    x, w = T.dvector("x"), T.dvector("w")
    logits, weights = np.array([-1000.0, 1000.0, 999.0, 0.0]), np.array([1.0, 2.0, 3.0, 4.0])
    (gx,) = values_in_modes([x, w], [ss.grad((T.nnet.softmax(x) * w).sum(), x)], logits, weights)
    p = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    np.testing.assert_allclose(gx, p * (weights - (p * weights).sum()), rtol=1e-12, atol=1e-300)
    assert np.all(np.isfinite(gx))


def test_cast_to_float32_and_back():
    """The cotangent of a float32 cast is float32 (the weights rounded), back in float64."""
    x = T.dvector("x")
    w = np.array([0.1, 1 / 3, 2.0 ** -30 + 1])
    (gx,) = values_in_modes([x], weighted_grads(lambda v: T.cast(v, "float32"), [x], w), np.array([1.0, 2.0, 3.0]))
    assert gx.dtype == np.float64
    np.testing.assert_array_equal(gx, w.astype("float32").astype("float64"))
    assert (gx != w).all()


def test_cast_gradients():
    """float32 → float64 gives a float32 gradient; float → int passes nothing (zeros);
    int → float a floatX gradient."""
    f, i = T.fvector("f"), T.ivector("i")
    cost = (T.cast(f, "float64") * 2.0).sum() + (T.cast(f, "int32") * 3).sum() + (T.cast(i, "float32") * 4.0).sum()
    gf, gi = values_in_modes([f, i], ss.grad(T.cast(cost, "float64"), [f, i]), np.array([1.5, -2.5], "float32"),
                             np.array([3, 4], "int32"))
    assert gf.dtype == np.float32 and gi.dtype == np.dtype(ss.config.floatX)
    np.testing.assert_array_equal(gf, [2.0, 2.0])
    np.testing.assert_array_equal(gi, [4.0, 4.0])
