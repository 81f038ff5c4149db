"""Pullbacks of the shape ops: shape, make_vector, reshape, specify_shape, dimshuffle, flatten,
join; shape arguments are disconnected."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T

RNG = np.random.default_rng(7)
MODES = ("py", "fast", "onnxruntime")


def normal(*shape):
    return RNG.normal(size=shape)


def gradient_in_modes(inputs, cost, wrt, points):
    grads = ss.grad(cost, wrt)
    results = [np.asarray(ss.function(inputs, grads, mode=mode)(*points)) for mode in MODES]
    for mode, got in zip(MODES[1:], results[1:]):
        np.testing.assert_allclose(got, results[0], rtol=1e-12, err_msg=f"mode {mode}")
    return results[0]


# ---------------------------------------------------------------------------- shape
def test_shape_is_disconnected():
    x, y = T.dmatrix("x"), T.dvector("y")
    cost = y.sum() * x.shape[0]
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(cost, x)
    g = gradient_in_modes([x, y], cost, y, [np.zeros((3, 2)), np.ones(4)])
    np.testing.assert_array_equal(g, np.full(4, 3.0))


def test_shape_disconnected_can_be_ignored():
    x = T.dmatrix("x")
    g = ss.grad(T.shape(x).sum() * 1.0, x, disconnected_inputs="ignore")
    np.testing.assert_array_equal(g.eval({x: np.ones((2, 3))}), np.zeros((2, 3)))


# ---------------------------------------------------------------------------- make_vector
def test_make_vector(grad_check):
    grad_check(lambda a, b: T.stack([a, b * b, a * b]), np.array(1.5), np.array(-0.5))


def test_make_vector_of_an_int_is_a_float_gradient():
    a, i = T.dscalar("a"), T.lscalar("i")
    w = np.array([2.0, 3.0])
    g = ss.grad((T.constant(w) * T.make_vector([a, i], dtype="float64")).sum(), i)
    assert g.dtype == "float64"
    assert float(ss.function([a, i], g)(1.0, 4)) == 3.0


# ---------------------------------------------------------------------------- reshape
@pytest.mark.parametrize("shape, new", [
    ((2, 3), (3, 2)), ((2, 3), (-1,)), ((6,), (2, 1, 3)), ((2, 1, 3), (3, -1)), ((), (1, 1)), ((1,), ()),
])
def test_reshape(grad_check, shape, new):
    grad_check(lambda x: T.reshape(x, new), normal(*shape))


def test_reshape_to_a_symbolic_shape(grad_check):
    grad_check(lambda x, y: T.reshape(x, y.shape) * y, normal(6), normal(2, 3))
    grad_check(lambda x, y: x.reshape((y.shape[1], -1)), normal(2, 3), normal(3, 1), wrt=[0])


def test_reshape_shape_argument_is_disconnected():
    """A shape given as a vector of unknown length passes a SpecifyShape first; still disconnected."""
    x, s = T.dvector("x"), T.lvector("s")
    cost = T.reshape(x, s, ndim=2).sum()
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(cost, s)
    g = ss.grad(cost, [x, s], disconnected_inputs="ignore")
    values = ss.function([x, s], g)(np.arange(6.0), np.array([2, 3]))
    np.testing.assert_array_equal(values[0], np.ones(6))
    np.testing.assert_array_equal(values[1], np.zeros(2))
    assert values[1].dtype == np.float64
    assert ss.grad(cost, s, disconnected_inputs="ignore", return_disconnected="None") is None


# ---------------------------------------------------------------------------- specify_shape
def test_specify_shape(grad_check):
    grad_check(lambda x: T.specify_shape(x, (2, 3)) * x, normal(2, 3))


def test_specify_shape_lengths_are_disconnected():
    x, n = T.dvector("x"), T.lscalar("n")
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(T.specify_shape(x, (n,)).sum(), n)


# ---------------------------------------------------------------------------- dimshuffle
@pytest.mark.parametrize("shape, pattern", [
    ((2, 3, 4), (2, 0, 1)),  # a permutation
    ((2, 3), ("x", 1, "x", 0)),  # new axes
    ((2, 1, 3), (0, 2)),  # a dropped length-1 axis
    ((1, 3, 2), (2, "x", 1)),  # all three at once
    ((1,), ()),  # to a scalar
    ((), ("x", "x")),  # from a scalar
])
@pytest.mark.parametrize("static", [False, True])
def test_dimshuffle(grad_check, shape, pattern, static):
    grad_check(lambda x: T.dimshuffle(x, pattern), normal(*shape), static=static)


def test_transpose_gradient_is_transposed():
    x = T.dtensor3("x")
    w = normal(4, 2, 3)
    g = gradient_in_modes([x], (T.constant(w) * x.transpose(2, 0, 1)).sum(), x, [normal(2, 3, 4)])
    np.testing.assert_array_equal(g, w.transpose(1, 2, 0))


# ---------------------------------------------------------------------------- flatten
@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_flatten(grad_check, ndim):
    grad_check(lambda x: T.flatten(x, ndim), normal(2, 3, 2))


def test_flatten_with_an_empty_axis(grad_check):
    grad_check(lambda x: T.flatten(x, 2), normal(0, 3, 2), verify=False)


# ---------------------------------------------------------------------------- join
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("static", [False, True])
def test_join(grad_check, axis, static):
    lengths = [(2, 1, 3), (2, 2, 3), (2, 3, 3)]
    shapes = [tuple(n[k] if k == axis % 3 else (2, 3, 2)[k] for k in range(3)) for n in lengths]
    grad_check(lambda *xs: T.concatenate(xs, axis=axis), *[normal(*s) for s in shapes], static=static)


def test_join_one_tensor_and_empty_parts(grad_check):
    grad_check(lambda x: T.concatenate([x], axis=0), normal(2, 2))
    grad_check(lambda x, y, z: T.join(1, x, y, z), normal(2, 0), normal(2, 3), normal(2, 0), verify=False)


def test_join_splits_the_gradient_exactly():
    x, y = T.dmatrix("x"), T.dmatrix("y")
    w = np.arange(10.0).reshape(2, 5)
    cost = (T.constant(w) * T.concatenate([x, y], axis=1)).sum()
    g_x = gradient_in_modes([x, y], cost, x, [np.ones((2, 2)), np.ones((2, 3))])
    g_y = gradient_in_modes([x, y], cost, y, [np.ones((2, 2)), np.ones((2, 3))])
    np.testing.assert_array_equal(g_x, w[:, :2])
    np.testing.assert_array_equal(g_y, w[:, 2:])


def test_join_gives_an_integer_input_its_float_gradient():
    """As in Theano: an int input merely converted into a float result gets that gradient."""
    x, i = T.dvector("x"), T.lvector("i")
    w = np.array([1.0, 2.0, 3.0, 4.0])
    cost = (T.constant(w) * T.concatenate([x, i])).sum()
    g = ss.grad(cost, i)
    assert g.dtype == "float64"
    np.testing.assert_array_equal(ss.function([x, i], g)(np.zeros(1), np.array([5, 6, 7])), [2.0, 3.0, 4.0])


def test_stack(grad_check):
    grad_check(lambda x, y: T.stack([x, y], axis=1), normal(2, 3), normal(2, 3))


@pytest.mark.parametrize("f, shapes", [
    (lambda x: T.dimshuffle(x, (2, "x", 0)), [(2, 1, 3)]),
    (lambda x: T.reshape(x, (3, -1)), [(2, 3)]),
    (lambda x: T.flatten(x, 2), [(2, 3, 2)]),
    (lambda x, y: T.concatenate([x, y, x], axis=1), [(2, 1), (2, 3)]),
])
def test_second_order(grad_check, f, shapes):
    """The gradient of sum(f(x)^2), itself checked: the pullbacks of the pullbacks' ops."""
    def fun(*xs):
        out = f(*xs)
        return ss.grad((out * out).sum(), xs[0])
    grad_check(fun, *[normal(*s) for s in shapes])
