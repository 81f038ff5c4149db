"""Pullbacks of dot, matmul, outer, the reductions, argmax/argmin, cumsum/cumprod and SumToShape:
each against central finite differences, verify_grad and the three modes (``grad_check``), plus
exact values where the function has kinks (ties of max, zeros of prod and cumprod)."""

import numpy as np
import pytest
from gradient_checks import MODES, grads_in_modes

import symscan as ss
import symscan.tensor as T
from symscan.tensor.broadcast import sum_to

RNG = np.random.default_rng(42)


def normal(*shape):
    return RNG.normal(size=shape)


# ---------------------------------------------------------------------------- dot
DOT_SHAPES = {0: (), 1: (3,), 2: (2, 3), 3: (2, 4, 3)}
"""a's shape by ndim (its last axis, 3, is the contracted one)."""
DOT_B_SHAPES = {0: (), 1: (3,), 2: (3, 2), 3: (4, 3, 2), 4: (2, 1, 3, 2)}
"""b's shape by ndim (its second-to-last axis, 3, is the contracted one)."""


@pytest.mark.parametrize("b_ndim", sorted(DOT_B_SHAPES))
@pytest.mark.parametrize("a_ndim", sorted(DOT_SHAPES))
def test_dot_every_ndim(grad_check, a_ndim, b_ndim):
    a, b = normal(*DOT_SHAPES[a_ndim]), normal(*DOT_B_SHAPES[b_ndim])
    grad_check(T.dot, a, b, static=(a_ndim + b_ndim) % 2 == 1)


def test_dot_matches_numpy_transposes():
    """The gradients of a matrix product are the textbook ones: g b^T and a^T g."""
    a, b, w = normal(2, 3), normal(3, 4), normal(2, 4)
    x, y = T.dmatrix("x"), T.dmatrix("y")
    g_a, g_b = grads_in_modes([x, y], (T.constant(w) * T.dot(x, y)).sum(), [x, y], [a, b])
    np.testing.assert_allclose(g_a, w @ b.T, rtol=1e-12)
    np.testing.assert_allclose(g_b, a.T @ w, rtol=1e-12)


def test_dot_with_an_integer_operand(grad_check):
    grad_check(T.dot, normal(2, 3), RNG.integers(-3, 4, size=(3, 2)), wrt=[0])


def test_dot_of_empty_rows(grad_check):
    """Merged axes of length 0 (no -1 in the reshapes, which numpy could not infer)."""
    grad_check(T.dot, normal(0, 2, 3), normal(4, 3, 2), verify=False)


# ---------------------------------------------------------------------------- matmul
MATMUL_SHAPES = [
    ((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((2, 2, 3), (3, 4)), ((3,), (2, 3, 4)),
    ((2, 2, 3), (3,)), ((2, 1, 2, 3), (3, 3, 2)), ((1, 2, 3), (2, 3, 2)), ((2, 2, 3), (2, 3, 1)),
]


@pytest.mark.parametrize("static", [False, True])
@pytest.mark.parametrize("a_shape, b_shape", MATMUL_SHAPES)
def test_matmul(grad_check, a_shape, b_shape, static):
    grad_check(T.matmul, normal(*a_shape), normal(*b_shape), static=static)


def test_matmul_broadcast_batch_sums_exactly():
    """A batch axis of length 1 broadcast against 3 gets the sum of the three batch gradients."""
    a, b, w = normal(1, 2, 3), normal(3, 3, 2), normal(3, 2, 2)
    x, y = T.dtensor3("x"), T.dtensor3("y")
    g_a, g_b = grads_in_modes([x, y], (T.constant(w) * T.matmul(x, y)).sum(), [x, y], [a, b])
    np.testing.assert_allclose(g_a, (w @ np.swapaxes(b, -1, -2)).sum(axis=0, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(g_b, np.swapaxes(a, -1, -2) @ w, rtol=1e-12)


# ---------------------------------------------------------------------------- outer
@pytest.mark.parametrize("a_shape, b_shape", [((3,), (2,)), ((2, 2), ()), ((), (1, 3))])
def test_outer(grad_check, a_shape, b_shape):
    grad_check(T.outer, normal(*a_shape), normal(*b_shape))


# ---------------------------------------------------------------------------- reductions
AXES = [None, 0, -1, (0, 2), ()]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("kind", ["sum", "mean", "prod", "max", "min"])
def test_reduce(grad_check, kind, axis, keepdims):
    x = normal(2, 3, 2)  # no ties, no zeros: every reduction is differentiable here
    grad_check(lambda v: getattr(T, kind)(v, axis=axis, keepdims=keepdims), x, static=axis == -1)


@pytest.mark.parametrize("kind", ["sum", "mean", "prod", "max", "min"])
def test_reduce_of_a_scalar(grad_check, kind):
    grad_check(lambda v: getattr(T, kind)(v), np.array(1.5))


def test_mean_of_float32_stays_float32():
    x = T.fvector("x")
    g = ss.grad(T.mean(x), x)
    assert g.dtype == "float32"
    np.testing.assert_allclose(g.eval({x: np.ones(4, "float32")}), np.full(4, 0.25))


@pytest.mark.filterwarnings("ignore:Mean of empty slice", "ignore:invalid value encountered")
def test_mean_over_an_empty_axis_has_an_empty_gradient():
    """(The cost itself, a mean of nothing, is nan: numpy warns of that, not of the gradient.)"""
    x = T.dmatrix("x")
    g = ss.grad(T.mean(x, axis=0).sum(), x)
    for mode in MODES:
        assert ss.function([x], g, mode=mode)(np.zeros((0, 3))).shape == (0, 3)


PROD_WITH_ZEROS = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]])


@pytest.mark.parametrize("axis, expected", [
    (1, [[0, 6, 0], [0, 0, 0], [8, 4, 2]]),  # one zero, two zeros, none
    (0, [[0, 0, 20], [2, 0, 12], [0, 0, 15]]),
    (None, np.zeros((3, 3))),  # three zeros overall
])
def test_prod_with_zeros_is_exact(axis, expected):
    """One zero in a group: only it gets the product of the others; two or more: all 0."""
    x = T.dmatrix("x")
    (g,) = grads_in_modes([x], T.prod(x, axis=axis).sum(), [x], [PROD_WITH_ZEROS])
    np.testing.assert_array_equal(g, expected)


@pytest.mark.parametrize("axis", [0, 1, None])
def test_prod_with_zeros_against_differences(grad_check, axis):
    """prod is linear in each entry, so central differences are exact at zeros too."""
    x = PROD_WITH_ZEROS.copy()
    x[2, 1] = 0.0
    grad_check(lambda v: T.prod(v, axis=axis, keepdims=True), x)


@pytest.mark.parametrize("kind, expected", [
    ("max", [[0, 1, 1], [1, 0, 1]]),
    ("min", [[1, 0, 0], [0, 1, 0]]),
])
def test_max_min_ties_each_get_the_gradient(kind, expected):
    """As in Theano: every entry equal to the extremum gets the whole cotangent."""
    x = T.dmatrix("x")
    (g,) = grads_in_modes([x], getattr(T, kind)(x, axis=1).sum(), [x], [np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]])])
    np.testing.assert_array_equal(g, expected)


def test_max_over_all_axes_with_a_tie():
    x = T.dmatrix("x")
    (g,) = grads_in_modes([x], 2.0 * T.max(x), [x], [np.array([[1.0, 4.0], [4.0, -1.0]])])
    np.testing.assert_array_equal(g, [[0, 2], [2, 0]])


def test_argmax_is_connected_with_a_zero_gradient():
    """An integer output passes back nothing: d/dx (x * argmax(x)) is argmax(x) alone."""
    x = T.dvector("x")
    value = np.array([0.5, 2.0, -1.0])
    (g,) = grads_in_modes([x], (x * T.argmax(x)).sum(), [x], [value])
    np.testing.assert_array_equal(g, [1.0, 1.0, 1.0])
    (g,) = grads_in_modes([x], (T.argmin(x, axis=0, keepdims=True) * 1.5).sum(), [x], [value])
    np.testing.assert_array_equal(g, np.zeros(3))
    assert g.dtype == np.float64


def test_argmax_in_a_gradient_check(grad_check):
    grad_check(lambda v: v * T.argmax(v, axis=1, keepdims=True), normal(2, 3))


@pytest.mark.parametrize("kind", ["all", "any"])
def test_all_any_pass_back_nothing(kind):
    """A bool output: d/dx (x * any(x)) is any(x) alone."""
    x = T.dvector("x")
    (g,) = grads_in_modes([x], (x * getattr(T, kind)(x)).sum(), [x], [np.array([1.0, 0.0])])
    np.testing.assert_array_equal(g, [1.0, 1.0] if kind == "any" else [0.0, 0.0])


# ---------------------------------------------------------------------------- cumsum / cumprod
@pytest.mark.parametrize("kind", ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumop(grad_check, kind, axis):
    grad_check(lambda v: getattr(T, kind)(v, axis=axis), normal(3, 4) + (kind == "cumprod") * 0.5,
               static=axis == 0)


@pytest.mark.parametrize("kind", ["cumsum", "cumprod"])
def test_cumop_of_a_scalar(grad_check, kind):
    grad_check(lambda v: getattr(T, kind)(v), np.array(-0.7))


def test_cumsum_gradient_is_the_reversed_cumsum():
    x = T.dvector("x")
    w = np.array([1.0, 10.0, 100.0, 1000.0])
    (g,) = grads_in_modes([x], (T.constant(w) * T.cumsum(x)).sum(), [x], [np.zeros(4)])
    np.testing.assert_array_equal(g, [1111.0, 1110.0, 1100.0, 1000.0])


CUMPROD_ZEROS = [
    [2.0, 0.0, 3.0, 4.0],  # one zero inside
    [0.0, 2.0, 3.0, 0.5],  # a zero first
    [2.0, 3.0, 0.5, 0.0],  # a zero last
    [2.0, 0.0, 3.0, 0.0],  # two zeros
    [0.0, 0.0, 1.5, 2.0],  # two leading zeros
]


@pytest.mark.parametrize("row", CUMPROD_ZEROS)
def test_cumprod_with_zeros_is_exact(row):
    """d/dx_j sum_i w_i prod_{k<=i} x_k, computed term by term in numpy."""
    x, w = np.array(row), np.array([1.0, 10.0, 100.0, 1000.0])
    expected = [sum(w[i] * np.prod(np.delete(x[:i + 1], j)) for i in range(j, 4)) for j in range(4)]
    v = T.dvector("v")
    (g,) = grads_in_modes([v], (T.constant(w) * T.cumprod(v)).sum(), [v], [x])
    np.testing.assert_allclose(g, expected, rtol=1e-15)


def test_cumprod_with_zeros_against_differences(grad_check):
    """cumprod is linear in each entry, so central differences are exact at zeros too."""
    grad_check(lambda v: T.cumprod(v, axis=1), np.array(CUMPROD_ZEROS))
    grad_check(lambda v: T.cumprod(v), np.array(CUMPROD_ZEROS[:2]))


# ---------------------------------------------------------------------------- SumToShape
@pytest.mark.parametrize("like_shape", [(1, 3), (3,), (), (2, 1)])
@pytest.mark.parametrize("static", [False, True])
def test_sum_to_shape(grad_check, like_shape, static):
    """SumToShape (shapes unknown when built) and the static sums: broadcast back."""
    grad_check(lambda x, like: sum_to(x, like), normal(2, 3), normal(*like_shape), wrt=[0], static=static)


def test_sum_to_shape_like_is_disconnected():
    x, like = T.dmatrix("x"), T.dmatrix("like")
    summed = sum_to(x, like)
    assert type(summed.owner.op).__name__ == "SumToShape"
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(summed.sum(), like)


def test_sum_to_shape_twice(grad_check):
    """The gradient of a gradient: SumToShape's own pullback broadcasts, and sum_to undoes it."""
    def fun(x, y):
        (g_y,) = ss.grad((x * y).sum(), [y])
        return g_y * y
    grad_check(fun, normal(2, 3), normal(1, 3), modes=("py",), verify=False)


# ---------------------------------------------------------------------------- dtypes
FLOAT32_CASES = {
    "dot": (lambda a, b: T.dot(a, b), [(2, 2, 3), (3, 2)]),
    "matmul": (lambda a, b: T.matmul(a, b), [(3,), (2, 3, 2)]),
    "outer": (lambda a, b: T.outer(a, b), [(3,), (2,)]),
    "mean": (lambda a, b: T.mean(a * b, axis=1), [(2, 3), (2, 3)]),
    "prod": (lambda a, b: T.prod(a * b, axis=0), [(2, 3), (2, 3)]),
    "max": (lambda a, b: T.max(a * b, axis=1, keepdims=True), [(2, 3), (2, 3)]),
    "cumsum": (lambda a, b: T.cumsum(a * b), [(2, 3), (2, 3)]),
    "cumprod": (lambda a, b: T.cumprod(a * b, axis=1), [(2, 3), (2, 3)]),
}


@pytest.mark.parametrize("name", sorted(FLOAT32_CASES))
def test_float32_gradients_stay_float32(name):
    """No float64 constant or count widens a float32 gradient (and the values match float64's)."""
    fun, shapes = FLOAT32_CASES[name]
    points = [normal(*s) for s in shapes]
    expected = None
    for dtype in ("float64", "float32"):
        inputs = [T.tensor(dtype, (None,) * len(s)) for s in shapes]
        grads = ss.grad(fun(*inputs).sum(), inputs)
        assert [g.dtype for g in grads] == [dtype] * len(grads)
        for mode in MODES:
            values = ss.function(inputs, grads, mode=mode)(*[p.astype(dtype) for p in points])
            assert [np.asarray(v).dtype for v in values] == [dtype] * len(values), mode
            expected = values if expected is None else expected
            for v, e in zip(values, expected):
                np.testing.assert_allclose(v, e, rtol=1e-4, atol=1e-5)


def test_mean_of_an_integer_input_gets_a_float_gradient():
    x = T.lvector("x")
    g = ss.grad(T.mean(x), x)
    assert g.dtype == "float64"
    np.testing.assert_array_equal(ss.function([x], g)(np.array([1, 2, 3, 4])), np.full(4, 0.25))


# ---------------------------------------------------------------------------- second order
def gradient_of_square(f, position=0):
    """x -> d/dx_position sum(f(x)^2): a gradient whose own gradient grad_check then checks."""
    def fun(*xs):
        out = f(*xs)
        return ss.grad((out * out).sum(), xs[position])
    return fun


@pytest.mark.parametrize("f, shapes", [
    (T.dot, [(2, 3), (3, 2)]),
    (T.dot, [(2, 2, 3), (4, 3, 2)]),
    (T.dot, [(3,), (3,)]),
    (T.matmul, [(1, 2, 3), (2, 3, 2)]),
    (T.outer, [(3,), (2,)]),
    (lambda x: T.max(x, axis=0), [(3, 2)]),
    (lambda x: T.mean(x, axis=(0, 2), keepdims=True), [(2, 3, 2)]),
    (lambda x: T.cumsum(x, axis=1), [(2, 3)]),
])
def test_second_order(grad_check, f, shapes):
    points = [normal(*s) for s in shapes]
    for position in range(len(points)):
        grad_check(gradient_of_square(f, position), *points, static=position == 1)
