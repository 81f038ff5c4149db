"""Pullbacks of indexing: x[idx] scatters back (repeated integer positions accumulate);
set_subtensor/inc_subtensor split the cotangent between x and y; indices are disconnected."""

import numpy as np
import pytest
from gradient_checks import grads_in_modes

import symscan as ss
import symscan.tensor as T

RNG = np.random.default_rng(3)


def normal(*shape):
    return RNG.normal(size=shape)


# ---------------------------------------------------------------------------- x[idx]
INDICES = {
    "int": lambda x: x[1],
    "negative int": lambda x: x[-1, 0],
    "slice": lambda x: x[1:3],
    "negative step": lambda x: x[::-1],
    "negative step with bounds": lambda x: x[3:0:-2, ::-1],
    "none": lambda x: x[None, :, None, 1],
    "ellipsis": lambda x: x[..., 0],
    "ellipsis and none": lambda x: x[1, ..., None],
    "to a scalar": lambda x: x[2, 1],
    "array with repeats": lambda x: x[[0, 2, 0, 0]],
    "array on the last axis": lambda x: x[:, [1, 1, 0]],
    "two arrays": lambda x: x[[0, 3, 0], [1, 1, 1]],
    "2-d array": lambda x: x[np.array([[0, 1], [1, 0]])],
    "array and int": lambda x: x[[2, 2], 0],
    "array, ellipsis": lambda x: x[[1, 0], ...],
    "none, array": lambda x: x[None, [3, 3]],
    "empty array": lambda x: x[np.zeros(0, dtype=np.int64)],
    "empty slice": lambda x: x[2:2],
}


@pytest.mark.parametrize("name", sorted(INDICES))
def test_subtensor(grad_check, name):
    grad_check(INDICES[name], normal(4, 2))


def test_subtensor_non_adjacent_arrays(grad_check):
    """Arrays split by a slice put the advanced dims first (numpy's rule)."""
    grad_check(lambda x: x[[0, 1, 1], :, [2, 2, 0]], normal(2, 3, 3), static=True)


def test_subtensor_symbolic_bounds(grad_check):
    """Bounds computed from the (unknown when built) shape; an int point would be perturbed by
    the fixture's differences, changing the slice."""
    def bounds(v):
        return v.shape[0] - 5, v.shape[1] + 3  # 1 and 5 for a (6, 2) value

    x = normal(6, 2)
    grad_check(lambda v: v[bounds(v)[0]:bounds(v)[1]], x)
    grad_check(lambda v: v[bounds(v)[1]:bounds(v)[0]:-1, bounds(v)[0]], x)
    grad_check(lambda v: v[v.shape[1] - 4::-(v.shape[1] + 1)], x)  # v[-2::-3]


def test_subtensor_symbolic_array(grad_check):
    grad_check(lambda v, idx: v[idx], normal(4, 2), np.array([1, 1, 3, 1]), wrt=[0])


def test_subtensor_repeated_positions_accumulate():
    x = T.dvector("x")
    w = np.array([1.0, 10.0, 100.0, 1000.0])
    (g,) = grads_in_modes([x], (T.constant(w) * x[[0, 2, 0, 0]]).sum(), [x], [np.zeros(3)])
    np.testing.assert_array_equal(g, [1101.0, 0.0, 10.0])


def test_subtensor_index_is_disconnected():
    x, i = T.dvector("x"), T.lscalar("i")
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(x[i:].sum(), i)
    idx = T.lvector("idx")
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(x[idx].sum(), idx)


# ---------------------------------------------------------------------------- set / inc
@pytest.mark.parametrize("verb", ["set", "inc"])
@pytest.mark.parametrize("index, y_shape", [
    (lambda x: x[1:], (3, 2)),
    (lambda x: x[1:], (2,)),  # y broadcast along the rows
    (lambda x: x[::-2], (1, 2)),
    (lambda x: x[2], ()),
    (lambda x: x[:, 1], (4,)),
    (lambda x: x[None, 1:3], (2, 2)),
    (lambda x: x[..., 0], (4,)),
    (lambda x: x[[3, 0]], (2, 2)),
])
def test_set_inc_subtensor(grad_check, verb, index, y_shape):
    fn = T.set_subtensor if verb == "set" else T.inc_subtensor
    grad_check(lambda x, y: fn(index(x), y), normal(4, 2), normal(*y_shape))


@pytest.mark.parametrize("verb", ["set", "inc"])
@pytest.mark.parametrize("index, y_shape", [
    (lambda x: x[[0, 2, 0]], (3, 2)),
    (lambda x: x[[0, 2, 0]], (2,)),  # y broadcast over repeated rows
    (lambda x: x[[1, 1, 1]], ()),
    (lambda x: x[:, [1, 1]], (4, 2)),
    (lambda x: x[[0, 0, 3], [1, 1, 0]], (3,)),
    (lambda x: x[[3, 3], 1], (2,)),
])
def test_set_inc_subtensor_repeated_positions(grad_check, verb, index, y_shape):
    """Against differences: an overwritten write of set_subtensor does not reach the result."""
    fn = T.set_subtensor if verb == "set" else T.inc_subtensor
    grad_check(lambda x, y: fn(index(x), y), normal(4, 2), normal(*y_shape))


def test_inc_subtensor_repeated_positions_exact():
    """Every write of inc_subtensor adds: y's entries each get the cotangent at their row."""
    x, y = T.dvector("x"), T.dvector("y")
    w = np.array([1.0, 10.0, 100.0, 1000.0])
    cost = (T.constant(w) * T.inc_subtensor(x[[0, 2, 0]], y)).sum()
    g_x, g_y = grads_in_modes([x, y], cost, [x, y], [np.zeros(4), np.zeros(3)])
    np.testing.assert_array_equal(g_x, w)
    np.testing.assert_array_equal(g_y, [1.0, 100.0, 1.0])


def test_set_subtensor_repeated_positions_exact():
    """set_subtensor: the last write of a repeated position wins; earlier ones get 0 (Theano
    gives them the cotangent too), and x gets nothing where it was overwritten."""
    x, y = T.dvector("x"), T.dvector("y")
    w = np.array([1.0, 10.0, 100.0, 1000.0])
    cost = (T.constant(w) * T.set_subtensor(x[[0, 2, 0]], y)).sum()
    g_x, g_y = grads_in_modes([x, y], cost, [x, y], [np.zeros(4), np.zeros(3)])
    np.testing.assert_array_equal(g_x, [0.0, 10.0, 0.0, 1000.0])
    np.testing.assert_array_equal(g_y, [0.0, 100.0, 1.0])


def test_set_subtensor_broadcast_value_on_repeated_positions_exact():
    x, y = T.dvector("x"), T.dscalar("y")
    w = np.array([1.0, 10.0, 100.0])
    cost = (T.constant(w) * T.set_subtensor(x[[0, 0, 1]], y)).sum()
    g_x, g_y = grads_in_modes([x, y], cost, [x, y], [np.zeros(3), np.array(0.0)])
    np.testing.assert_array_equal(g_x, [0.0, 0.0, 100.0])
    assert g_y == 11.0


def test_set_subtensor_symbolic_repeated_index(grad_check):
    grad_check(lambda x, y, idx: T.set_subtensor(x[idx], y), normal(4, 2), normal(5, 2),
               np.array([1, 3, 1, 1, 0]), wrt=[0, 1])


def test_inc_subtensor_symbolic_bounds(grad_check):
    grad_check(lambda x, y: T.inc_subtensor(x[x.shape[0] - y.shape[0]:], y), normal(5), normal(3))
    grad_check(lambda x, y: T.set_subtensor(x[y.shape[0] - 1::-1], y), normal(5), normal(4))


def test_set_subtensor_index_is_disconnected():
    x, y, i = T.dvector("x"), T.dscalar("y"), T.lscalar("i")
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(T.set_subtensor(x[i], y).sum(), i)


def test_set_subtensor_int_value_gets_a_float_gradient():
    x, y = T.dvector("x"), T.lvector("y")
    w = np.array([1.0, 2.0, 3.0])
    g = ss.grad((T.constant(w) * T.set_subtensor(x[1:], y)).sum(), y)
    assert g.dtype == "float64"
    np.testing.assert_array_equal(ss.function([x, y], g)(np.zeros(3), np.array([4, 5])), [2.0, 3.0])


def test_subtensor_of_a_gradient(grad_check):
    """Second order: the pullback of x[idx] is an inc_subtensor, whose own pullback indexes."""
    def fun(x):
        (g,) = ss.grad((x[[0, 0, 2]] * x[[0, 0, 2]]).sum(), [x])
        return g
    grad_check(fun, normal(3))


@pytest.mark.parametrize("verb", ["set", "inc"])
def test_set_inc_subtensor_second_order(grad_check, verb):
    fn = T.set_subtensor if verb == "set" else T.inc_subtensor

    def fun(x, y):
        out = fn(x[[2, 0, 2]], y)
        return ss.grad((out * out).sum(), y)
    grad_check(fun, normal(3, 2), normal(3, 2))
