"""Shape ops (shape, reshape, transpose, dimshuffle, expand_dims, squeeze, flatten, concatenate,
stack, make_vector) against numpy: values, dtypes, static shapes and build/run-time errors.

``run`` evaluates in mode "py" and mode "fast" and requires the same results (see
tests/support/both_modes.py); tests that take the ``mode`` fixture run each mode on its own."""

import math

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T

import both_modes


def run(inputs, outputs, *values, mode=None):
    """The result in ``mode``; without one, in modes "py" and "fast" (checked to agree)."""
    if mode is None:
        return both_modes.run(inputs, outputs, *values)
    return ss.function(inputs, outputs, mode=mode)(*values)


def compatible(static, actual) -> bool:
    """A static shape agrees with an actual one: same ndim, known lengths equal."""
    return len(static) == len(actual) and all(s is None or s == a for s, a in zip(static, actual))


def np_dimshuffle(a: np.ndarray, pattern) -> np.ndarray:
    """Theano's dimshuffle written with squeeze / transpose / expand_dims."""
    dropped = [axis for axis in range(a.ndim) if axis not in pattern]
    b = np.squeeze(a, axis=tuple(dropped))
    kept = [p - sum(d < p for d in dropped) for p in pattern if p != "x"]
    b = np.transpose(b, kept)
    new_axes = tuple(i for i, p in enumerate(pattern) if p == "x")
    return np.expand_dims(b, new_axes) if new_axes else b


# ---------------------------------------------------------------------------- shape
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 5), (2, 1, 4), (1, 2, 3, 4)])
def test_shape_matches_numpy(rng, mode, shape):
    x = T.tensor("float64", (None,) * len(shape), name="x")
    value = rng.normal(size=shape)
    out = run([x], x.shape, value, mode=mode)
    np.testing.assert_array_equal(out, np.array(value.shape))
    assert out.dtype == np.int64
    assert x.shape.type.shape == (len(shape),) and x.shape.dtype == "int64"
    np.testing.assert_array_equal(run([x], T.shape(x), value, mode=mode), np.array(value.shape))


def test_shape_entries_are_build_time_constants_when_static():
    x = T.tensor("float32", (3, None, 5), name="x")
    assert T.get_scalar_constant_value(x.shape[0]) == 3
    assert T.get_scalar_constant_value(x.shape[-1]) == 5
    with pytest.raises(T.NotConstantError):
        T.get_scalar_constant_value(x.shape[1])


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_a_shape_unpacks_into_its_entries(rng, ndim):
    """``n, d = X.shape``: a shape has x.ndim entries, known when the graph is built."""
    x = T.tensor("float64", (None,) * ndim, name="x")
    entries = list(x.shape)
    assert len(entries) == ndim and all(e.ndim == 0 and e.dtype == "int64" for e in entries)
    value = rng.normal(size=(2, 3, 4)[:ndim])
    got = both_modes.run([x], entries, value)
    assert [int(g) for g in got] == list(value.shape)


def test_shape_unpacking_in_an_expression(rng):
    X = T.matrix("X")
    n, d = X.shape
    value = rng.normal(size=(3, 5))
    got = both_modes.run([X], X.sum() / (n * d), value)
    np.testing.assert_allclose(got, value.mean(), rtol=1e-14)
    fixed = T.tensor("float64", (3, None), name="fixed")
    rows, _ = fixed.shape
    assert T.get_scalar_constant_value(rows) == 3


def test_vectors_of_known_length_iterate_others_do_not():
    a, b, c = T.constant(np.array([1.0, 2.0, 3.0]))
    assert T.get_scalar_constant_value(b) == 2.0
    assert len(list(T.specify_shape(T.vector("v"), (4,)))) == 4
    assert list(T.tensor("int64", (0,))) == []
    with pytest.raises(TypeError, match=r"'v' \(float64\[\?\]\) cannot be iterated.*known when the graph is built"):
        iter(T.vector("v"))
    with pytest.raises(TypeError, match="cannot be iterated"):
        a, b = T.tensor("float64", (2, 2), name="m")  # Theano iterated vectors only
    with pytest.raises(TypeError, match="cannot be iterated"):
        iter(T.scalar("s"))


def test_shape_entry_runtime_value(rng):
    x = T.tensor3("x")
    value = rng.normal(size=(2, 3, 4))
    for axis in range(-3, 3):
        assert int(run([x], x.shape[axis], value)) == value.shape[axis]


# ---------------------------------------------------------------------------- reshape
@pytest.mark.parametrize("src, new", [
    ((12,), (3, 4)),
    ((3, 4), (12,)),
    ((3, 4), (4, 3)),
    ((3, 4), (2, -1)),
    ((3, 4), (-1, 6)),
    ((2, 3, 4), (4, -1, 2)),
    ((2, 3, 4), (-1,)),
    ((1,), ()),
    ((), (1, 1)),
    ((0, 3), (3, 0)),
    ((0, 3), (-1, 3)),
    ((6,), (1, 6, 1)),
])
def test_reshape_constant_shapes(rng, mode, src, new):
    value = rng.normal(size=src)
    expected = value.reshape(new)
    x = T.tensor("float64", (None,) * len(src), name="x")
    out = T.reshape(x, new)
    result = run([x], out, value, mode=mode)
    np.testing.assert_array_equal(result, expected)
    assert result.dtype == value.dtype
    assert out.ndim == len(new)
    assert compatible(out.type.shape, expected.shape)
    # Lengths given as ints are known statically; -1 is not (the input size is unknown).
    assert out.type.shape == tuple(None if n == -1 else n for n in new)
    # With a fully static input every length is known, including the -1.
    xs = T.tensor("float64", src, name="xs")
    assert T.reshape(xs, new).type.shape == expected.shape


def test_reshape_call_forms(rng):
    x = T.matrix("x")
    value = rng.normal(size=(3, 4))
    expected = value.reshape(2, 6)
    for out in (x.reshape(2, 6), x.reshape((2, 6)), x.reshape([2, 6]), x.reshape(np.array([2, 6])),
                x.reshape((np.int32(2), np.int64(6))), T.reshape(x, (2, 6), ndim=2)):
        np.testing.assert_array_equal(run([x], out, value), expected)
    np.testing.assert_array_equal(run([x], x.reshape(12), value), value.reshape(12))
    np.testing.assert_array_equal(run([x], x.reshape(-1), value), value.ravel())


def test_reshape_keeps_dtype(rng):
    for dtype in ("int8", "int32", "float32", "bool", "complex64"):
        x = T.tensor(dtype, (None, None), name="x")
        value = (rng.normal(size=(2, 3)) > 0).astype(dtype)
        out = x.reshape((3, 2))
        assert out.dtype == dtype
        result = run([x], out, value)
        assert result.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(result, value.reshape(3, 2))


def test_reshape_symbolic_entries(rng, mode):
    x = T.matrix("x")
    value = rng.normal(size=(3, 4))
    cases = {
        (x.shape[0], -1): (3, -1),
        (x.shape[1], x.shape[0]): (4, 3),
        (-1, x.shape[0]): (-1, 3),
        (x.shape[0] * x.shape[1],): (12,),
        (x.shape[1] // 2, 2, x.shape[0]): (2, 2, 3),
    }
    for symbolic, numeric in cases.items():
        np.testing.assert_array_equal(run([x], x.reshape(symbolic), value, mode=mode), value.reshape(numeric))


def test_reshape_symbolic_scalar_inputs(rng):
    x = T.vector("x")
    n = T.iscalar("n")
    m = T.lscalar("m")
    value = rng.normal(size=12)
    f = both_modes.function([x, n, m], x.reshape((n, m)))
    for a, b in [(3, 4), (4, 3), (1, 12), (12, 1)]:
        np.testing.assert_array_equal(f(value, a, b), value.reshape(a, b))
    g = both_modes.function([x, n], x.reshape((n, -1)))
    np.testing.assert_array_equal(g(value, 6), value.reshape(6, -1))
    # a single scalar variable is a 1-entry shape
    h = both_modes.function([x, m], x.reshape(m))
    np.testing.assert_array_equal(h(value, 12), value)
    assert x.reshape((n, m)).type.shape == (None, None)


def test_reshape_by_shape_vector_of_other_variable(rng):
    x = T.vector("x")
    y = T.matrix("y")
    xv, yv = rng.normal(size=6), rng.normal(size=(2, 3))
    out = x.reshape(y.shape)
    assert out.ndim == 2
    np.testing.assert_array_equal(run([x, y], out, xv, yv), xv.reshape(2, 3))


def test_reshape_by_int32_shape_vector(rng):
    x = T.vector("x")
    shape = T.tensor("int32", (2,), name="shape")
    value = rng.normal(size=6)
    out = x.reshape(shape)
    assert out.ndim == 2
    np.testing.assert_array_equal(run([x, shape], out, value, np.array([3, 2], dtype="int32")), value.reshape(3, 2))
    np.testing.assert_array_equal(run([x], x.reshape(np.array([2, -1], dtype="int8")), value), value.reshape(2, 3))


def test_reshape_static_inference_from_static_shape_entries():
    xs = T.tensor("float64", (3, 4), name="xs")
    assert xs.reshape((xs.shape[1], -1)).type.shape == (4, 3)
    assert xs.reshape((xs.shape[0] * 2, 2)).type.shape == (6, 2)
    partly = T.tensor("float64", (3, None), name="partly")
    assert partly.reshape((partly.shape[0], -1)).type.shape == (3, None)
    assert partly.reshape((-1,)).type.shape == (None,)
    n = T.lscalar("n")
    assert xs.reshape((n, -1)).type.shape == (None, None)


@pytest.mark.parametrize("new", [(5, -1), (5, 3), (13,), (2, 2, 2), (0, -1), (-1, 5)])
def test_reshape_impossible_static_shape_is_build_error(new):
    xs = T.tensor("float64", (3, 4), name="xs")
    with pytest.raises(ValueError, match="xs"):
        xs.reshape(new)


@pytest.mark.parametrize("new", [(-1, -1), (-2, 6), (3, -3)])
def test_reshape_invalid_entries(new):
    with pytest.raises(ValueError):
        T.matrix("x").reshape(new)


def test_reshape_bad_arguments():
    x = T.matrix("x")
    with pytest.raises(TypeError):
        x.reshape((2.0, 6))
    with pytest.raises(TypeError):
        x.reshape((T.scalar("f"), 6))
    with pytest.raises(TypeError):
        x.reshape(T.vector("v"))  # a float shape vector
    with pytest.raises(TypeError):
        x.reshape(T.lvector("unknown_length"))  # the number of entries must be static
    with pytest.raises(ValueError):
        T.reshape(x, (2, 6), ndim=3)


def test_reshape_by_a_vector_of_unknown_length_with_ndim(rng):
    """Theano's ``reshape(x, newshape, ndim)``: ndim gives the result's number of dimensions."""
    x, shape = T.vector("x"), T.lvector("shape")
    reshaped = T.reshape(x, shape, ndim=2)
    assert reshaped.type.shape == (None, None)
    assert x.reshape(shape, ndim=3).ndim == 3
    value = rng.normal(size=12)
    f = both_modes.function([x, shape], reshaped)
    np.testing.assert_array_equal(f(value, [3, 4]), value.reshape(3, 4))
    np.testing.assert_array_equal(f(value, [-1, 6]), value.reshape(2, 6))
    expected = r"reshape\(\.\.\., ndim=2\): 'shape' \(int64\[\?\]\) has shape \(3,\).*\(2,\)"
    with pytest.raises(ValueError, match=expected):
        f(value, [2, 3, 2])
    i32 = T.ivector("i32")
    np.testing.assert_array_equal(both_modes.run([x, i32], T.reshape(x, i32, ndim=1), value, np.array([12], "int32")),
                                  value)


def test_reshape_by_a_vector_of_unknown_length_needs_ndim():
    with pytest.raises(TypeError, match=r"'shape' \(int64\[\?\]\) is not known.*pass ndim="):
        T.reshape(T.vector("x"), T.lvector("shape"))
    with pytest.raises(TypeError, match="int vector"):
        T.reshape(T.vector("x"), T.vector("floats"), ndim=1)


def test_reshape_newshape_keyword():
    x = T.vector("x")
    assert T.reshape(x, newshape=(2, 3)).type.shape == (2, 3)


def test_reshape_impossible_at_run_time(rng):
    x = T.matrix("x")
    f = both_modes.function([x], x.reshape((5, -1)))  # a ValueError in both modes
    with pytest.raises(ValueError):
        f(rng.normal(size=(3, 4)))
    np.testing.assert_array_equal(f(np.ones((5, 2))), np.ones((5, 2)))


# ---------------------------------------------------------------------------- transpose
@pytest.mark.parametrize("shape, axes", [
    ((3,), None),
    ((2, 3), None),
    ((2, 3, 4), None),
    ((2, 3, 4), (1, 0, 2)),
    ((2, 3, 4), (2, 0, 1)),
    ((2, 3, 4), (-1, 0, -2)),
    ((2, 3, 4, 5), (3, 1, 0, 2)),
    ((), None),
])
def test_transpose(rng, mode, shape, axes):
    value = rng.normal(size=shape)
    x = T.tensor("float64", (None,) * len(shape), name="x")
    expected = np.transpose(value, axes)
    out = T.transpose(x, axes)
    np.testing.assert_array_equal(run([x], out, value, mode=mode), expected)
    static = T.tensor("float64", shape, name="xs")
    assert T.transpose(static, axes).type.shape == expected.shape


def test_transpose_method_forms(rng):
    x = T.tensor3("x")
    value = rng.normal(size=(2, 3, 4))
    np.testing.assert_array_equal(run([x], x.T, value), value.T)
    np.testing.assert_array_equal(run([x], x.transpose(), value), value.transpose())
    np.testing.assert_array_equal(run([x], x.transpose(1, 2, 0), value), value.transpose(1, 2, 0))
    np.testing.assert_array_equal(run([x], x.transpose((2, 1, 0)), value), value.transpose((2, 1, 0)))
    np.testing.assert_array_equal(run([x], x.transpose([0, 2, 1]), value), value.transpose([0, 2, 1]))


@pytest.mark.parametrize("axes", [(0, 0, 1), (0, 1), (0, 1, 3), (0, 1, -4), (0, 1, 2, 3)])
def test_transpose_invalid_axes(axes):
    with pytest.raises(ValueError):
        T.transpose(T.tensor3("x"), axes)


def test_transpose_does_not_mutate_input(rng):
    x = T.matrix("x")
    value = rng.normal(size=(2, 3))
    before = value.copy()
    result = run([x], x.T, value)
    result[...] = 0
    np.testing.assert_array_equal(value, before)


# ---------------------------------------------------------------------------- dimshuffle
@pytest.mark.parametrize("shape, pattern", [
    ((2, 3), (1, 0)),
    ((2, 3), (0, 1)),
    ((2, 3), ("x", 0, 1)),
    ((2, 3), (0, "x", 1)),
    ((2, 3), (1, "x", 0, "x")),
    ((3,), ("x", 0)),
    ((3,), (0, "x")),
    ((), ("x",)),
    ((), ("x", "x")),
    ((2, 1, 3), (0, 2)),
    ((2, 1, 3), (2, 0)),
    ((2, 1, 3), (2, "x", 0)),
    ((1, 1), ()),
    ((1, 3, 1, 2), ("x", 3, 1)),
    ((2, 3, 4), (2, 0, 1)),
])
def test_dimshuffle(rng, mode, shape, pattern):
    value = rng.normal(size=shape)
    expected = np_dimshuffle(value, pattern)
    # Dropped axes declared with static length 1; others unknown.
    static = tuple(1 if n == 1 else None for n in shape)
    x = T.tensor("float64", static, name="x")
    out = x.dimshuffle(*pattern) if pattern else x.dimshuffle(())
    result = run([x], out, value, mode=mode)
    np.testing.assert_array_equal(result, expected)
    assert compatible(out.type.shape, expected.shape)
    assert all(out.type.shape[i] == 1 for i, p in enumerate(pattern) if p == "x")
    np.testing.assert_array_equal(run([x], T.dimshuffle(x, list(pattern)), value), expected)
    xs = T.tensor("float64", shape, name="xs")
    assert xs.dimshuffle(list(pattern)).type.shape == expected.shape


def test_dimshuffle_drops_unknown_length_one_axis_at_run_time(rng, mode):
    x = T.matrix("x")  # axis 1 length unknown at build time
    out = x.dimshuffle(0)
    f = ss.function([x], out, mode=mode)
    value = rng.normal(size=(4, 1))
    np.testing.assert_array_equal(f(value), value[:, 0])
    with pytest.raises(ValueError, match="axis 1"):
        f(rng.normal(size=(4, 3)))


def test_dimshuffle_dropping_static_non_one_axis_is_build_error():
    x = T.tensor("float64", (None, 3), name="x")
    with pytest.raises(ValueError, match="axis 1"):
        x.dimshuffle(0)


@pytest.mark.parametrize("pattern", [(0, 0), (0, 2), (-1, 0), (0, 1, 1)])
def test_dimshuffle_invalid_pattern(pattern):
    with pytest.raises(ValueError):
        T.matrix("x").dimshuffle(*pattern)


def test_dimshuffle_keeps_dtype(rng):
    x = T.imatrix("x")
    value = rng.integers(-5, 5, size=(2, 3)).astype("int32")
    out = x.dimshuffle(1, "x", 0)
    assert out.dtype == "int32"
    result = run([x], out, value)
    assert result.dtype == np.int32
    np.testing.assert_array_equal(result, value.T[:, None, :])


# ---------------------------------------------------------------------------- expand_dims / squeeze
@pytest.mark.parametrize("shape, axis", [
    ((3,), 0), ((3,), 1), ((3,), -1), ((3,), -2),
    ((2, 3), 1), ((2, 3), (0, 1)), ((2, 3), (0, 3)), ((2, 3), (-1, 0)), ((2, 3), (1, -2)),
    ((), 0), ((), (0, 1)),
])
def test_expand_dims(rng, mode, shape, axis):
    value = rng.normal(size=shape)
    expected = np.expand_dims(value, axis)
    x = T.tensor("float64", (None,) * len(shape), name="x")
    out = T.expand_dims(x, axis)
    np.testing.assert_array_equal(run([x], out, value, mode=mode), expected)
    assert compatible(out.type.shape, expected.shape)
    assert T.expand_dims(T.tensor("float64", shape), axis).type.shape == expected.shape


@pytest.mark.parametrize("axis", [3, -4, (0, 0), (0, 4)])
def test_expand_dims_invalid_axis(axis):
    with pytest.raises(ValueError):
        T.expand_dims(T.matrix("x"), axis)


@pytest.mark.parametrize("shape, axis", [
    ((1, 3), 0), ((3, 1), 1), ((3, 1), -1), ((1, 3, 1), (0, 2)), ((1, 3, 1), (-1, 0)), ((1,), 0), ((1, 1), None),
])
def test_squeeze(rng, mode, shape, axis):
    value = rng.normal(size=shape)
    expected = np.squeeze(value, axis)
    x = T.tensor("float64", tuple(1 if n == 1 else None for n in shape), name="x")
    out = T.squeeze(x, axis)
    np.testing.assert_array_equal(run([x], out, value, mode=mode), expected)
    assert compatible(out.type.shape, expected.shape)
    if axis is not None:
        np.testing.assert_array_equal(run([x], x.squeeze(axis), value), expected)


def test_squeeze_without_axis_drops_only_static_length_one_axes(rng):
    # Theano semantics: only axes known to be length 1 at build time go.
    x = T.tensor("float64", (1, None, 1, None), name="x")
    out = T.squeeze(x)
    assert out.ndim == 2
    value = rng.normal(size=(1, 1, 1, 3))  # axis 1 is 1 at run time but not declared so
    result = run([x], out, value)
    np.testing.assert_array_equal(result, value.reshape(1, 3))
    assert x.squeeze().ndim == 2
    assert T.squeeze(T.matrix("y")).ndim == 2


def test_squeeze_errors(rng):
    x = T.tensor("float64", (None, 3), name="x")
    with pytest.raises(ValueError):
        T.squeeze(x, 1)  # static length 3
    with pytest.raises(ValueError):
        T.squeeze(x, 2)  # out of range
    with pytest.raises(ValueError):
        T.squeeze(x, -3)
    f = both_modes.function([x], T.squeeze(x, 0))  # a ValueError in both modes
    np.testing.assert_array_equal(f(np.ones((1, 3))), np.ones(3))
    with pytest.raises(ValueError):
        f(rng.normal(size=(2, 3)))


# ---------------------------------------------------------------------------- flatten
def np_flatten(a: np.ndarray, ndim: int) -> np.ndarray:
    """Theano's flatten: keep the first ndim-1 axes, merge the rest."""
    return a.reshape(a.shape[:ndim - 1] + (math.prod(a.shape[ndim - 1:]),))


@pytest.mark.parametrize("shape, ndim", [
    ((), 1), ((5,), 1), ((2, 3), 1), ((2, 3), 2), ((2, 3, 4), 1), ((2, 3, 4), 2), ((2, 3, 4), 3),
    ((2, 3, 4, 5), 2), ((2, 3, 4, 5), 3), ((0, 3), 1), ((0, 3, 4), 2), ((3, 0, 4), 2), ((0, 3, 4), 3),
])
def test_flatten(rng, mode, shape, ndim):
    value = rng.normal(size=shape)
    expected = np_flatten(value, ndim)
    assert expected.ndim == ndim
    x = T.tensor("float64", (None,) * len(shape), name="x")
    out = T.flatten(x, ndim)
    result = run([x], out, value, mode=mode)
    assert result.shape == expected.shape
    np.testing.assert_array_equal(result, expected)
    assert out.ndim == ndim
    np.testing.assert_array_equal(run([x], x.flatten(ndim), value), expected)
    assert T.flatten(T.tensor("float64", shape), ndim).type.shape == expected.shape


def test_flatten_default_is_one_dimensional(rng):
    x = T.tensor3("x")
    value = rng.normal(size=(2, 3, 4))
    np.testing.assert_array_equal(run([x], x.flatten(), value), value.flatten())
    np.testing.assert_array_equal(run([x], T.flatten(x), value), value.ravel())


def test_flatten_static_shape_partial():
    x = T.tensor("float32", (2, None, 4), name="x")
    assert T.flatten(x, 1).type.shape == (None,)
    assert T.flatten(x, 2).type.shape == (2, None)
    assert T.flatten(x, 3).type.shape == (2, None, 4)
    assert T.flatten(T.tensor("float32", (None, 3, 4)), 2).type.shape == (None, 12)
    assert T.flatten(x, 2).dtype == "float32"


@pytest.mark.parametrize("ndim", [0, 3, -1])
def test_flatten_invalid_ndim(ndim):
    with pytest.raises(ValueError):
        T.flatten(T.matrix("x"), ndim)


# ---------------------------------------------------------------------------- concatenate / join
@pytest.mark.parametrize("shapes, axis", [
    ([(2,), (3,)], 0),
    ([(2,), (0,), (1,)], 0),
    ([(2, 3), (4, 3)], 0),
    ([(2, 3), (2, 5)], 1),
    ([(2, 3), (2, 5), (2, 1)], -1),
    ([(2, 3), (1, 3)], -2),
    ([(2, 3, 4), (2, 1, 4)], 1),
    ([(2, 3, 4), (2, 3, 2), (2, 3, 1)], 2),
    ([(3, 4)], 0),
])
def test_concatenate(rng, mode, shapes, axis):
    values = [rng.normal(size=s) for s in shapes]
    expected = np.concatenate(values, axis=axis)
    xs = [T.tensor("float64", (None,) * len(s), name=f"x{i}") for i, s in enumerate(shapes)]
    out = T.concatenate(xs, axis=axis)
    np.testing.assert_array_equal(run(xs, out, *values, mode=mode), expected)
    np.testing.assert_array_equal(run(xs, T.join(axis, *xs), *values, mode=mode), expected)
    statics = [T.tensor("float64", s) for s in shapes]
    assert T.concatenate(statics, axis=axis).type.shape == expected.shape


def test_concatenate_default_axis_is_zero(rng):
    a, b = T.matrix("a"), T.matrix("b")
    av, bv = rng.normal(size=(1, 2)), rng.normal(size=(3, 2))
    np.testing.assert_array_equal(run([a, b], T.concatenate([a, b]), av, bv), np.concatenate([av, bv]))


@pytest.mark.parametrize("dtypes", [
    ("int8", "uint8"), ("int32", "float32"), ("float32", "float64"), ("int64", "float32"), ("bool", "int8"),
    ("uint8", "uint16"), ("int16", "int16"), ("float32", "complex64"), ("bool", "bool"), ("int8", "int32", "float16"),
])
def test_concatenate_dtype_promotion_like_numpy(rng, dtypes):
    values = [(rng.normal(size=(2,)) * 3).astype(d) for d in dtypes]
    expected = np.concatenate(values)
    xs = [T.tensor(d, (None,), name=f"x{i}") for i, d in enumerate(dtypes)]
    out = T.concatenate(xs)
    assert out.dtype == expected.dtype.name
    result = run(xs, out, *values)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


def test_concatenate_with_constants(rng):
    x = T.ivector("x")
    value = np.array([1, 2], dtype="int32")
    const = np.array([7, 8, 9], dtype="int32")
    out = T.concatenate([x, const])
    assert out.dtype == "int32"
    np.testing.assert_array_equal(run([x], out, value), np.concatenate([value, const]))
    floats = np.array([0.5], dtype="float64")
    out = T.concatenate([floats, x])
    assert out.dtype == np.concatenate([floats, value]).dtype.name
    np.testing.assert_array_equal(run([x], out, value), np.concatenate([floats, value]))


def test_concatenate_static_lengths():
    a = T.tensor("float64", (2, None), name="a")
    b = T.tensor("float64", (None, 3), name="b")
    assert T.concatenate([a, b], axis=0).type.shape == (None, 3)
    assert T.concatenate([a, b], axis=1).type.shape == (2, None)
    c = T.tensor("float64", (4, 3), name="c")
    assert T.concatenate([b, c], axis=0).type.shape == (None, 3)
    assert T.concatenate([c, c], axis=0).type.shape == (8, 3)


def test_concatenate_static_length_mismatch_is_build_error():
    a = T.tensor("float64", (2, 3), name="a")
    b = T.tensor("float64", (2, 4), name="b")
    with pytest.raises(ValueError, match="axis 1"):
        T.concatenate([a, b], axis=0)
    T.concatenate([a, b], axis=1)  # fine along the differing axis
    with pytest.raises(ValueError):
        T.join(0, a, b)


def test_concatenate_mismatch_at_run_time(rng):
    a, b = T.matrix("a"), T.matrix("b")
    f = both_modes.function([a, b], T.concatenate([a, b], axis=0))  # a ValueError in both modes
    with pytest.raises(ValueError):
        f(rng.normal(size=(2, 3)), rng.normal(size=(2, 4)))


def test_concatenate_errors():
    v, m = T.vector("v"), T.matrix("m")
    with pytest.raises(ValueError):
        T.concatenate([v, m])  # ndim differs
    with pytest.raises(ValueError):
        T.concatenate([m, m], axis=2)
    with pytest.raises(ValueError):
        T.concatenate([m, m], axis=-3)
    with pytest.raises(ValueError):
        T.concatenate([T.scalar("s"), T.scalar("t")])  # 0-d
    with pytest.raises(ValueError):
        T.concatenate([])


# ---------------------------------------------------------------------------- stack
@pytest.mark.parametrize("shape, n, axis", [
    ((3,), 2, 0), ((3,), 2, 1), ((3,), 3, -1), ((3,), 2, -2),
    ((2, 3), 2, 0), ((2, 3), 3, 1), ((2, 3), 2, 2), ((2, 3), 2, -1), ((2, 3), 2, -3),
    ((), 3, 0), ((), 1, -1),
])
def test_stack(rng, mode, shape, n, axis):
    values = [rng.normal(size=shape) for _ in range(n)]
    expected = np.stack(values, axis=axis)
    xs = [T.tensor("float64", (None,) * len(shape), name=f"x{i}") for i in range(n)]
    out = T.stack(xs, axis=axis)
    np.testing.assert_array_equal(run(xs, out, *values, mode=mode), expected)
    assert compatible(out.type.shape, expected.shape)
    assert out.type.shape[axis] == n
    statics = [T.tensor("float64", shape) for _ in range(n)]
    assert T.stack(statics, axis=axis).type.shape == expected.shape


def test_stack_scalars_and_python_numbers(rng):
    a, b = T.dscalar("a"), T.dscalar("b")
    out = T.stack([a, 2.5, b])
    assert out.type.shape == (3,)
    np.testing.assert_array_equal(run([a, b], out, 1.0, -3.0), np.array([1.0, 2.5, -3.0]))
    i, j = T.iscalar("i"), T.lscalar("j")
    ints = T.stack([i, j])
    assert ints.dtype == np.result_type(np.int32, np.int64).name
    np.testing.assert_array_equal(run([i, j], ints, 4, 5), np.array([4, 5]))
    mixed = T.stack([i, T.fscalar("f")])
    assert mixed.dtype == np.result_type(np.int32, np.float32).name


def test_stack_dtype_promotion(rng):
    a, b = T.bvector("a"), T.fvector("b")
    av, bv = np.array([1, 2], dtype="int8"), np.array([0.5, 1.5], dtype="float32")
    expected = np.stack([av, bv])
    out = T.stack([a, b])
    assert out.dtype == expected.dtype.name
    result = run([a, b], out, av, bv)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


def test_stack_errors():
    with pytest.raises(ValueError):
        T.stack([])
    with pytest.raises(ValueError):
        T.stack([T.scalar(), T.scalar()], axis=1)
    with pytest.raises(ValueError):
        T.stack([T.matrix(), T.matrix()], axis=3)
    with pytest.raises(ValueError):
        T.stack([T.matrix(), T.matrix()], axis=-4)
    with pytest.raises(ValueError):
        T.stack([T.vector(), T.matrix()])
    with pytest.raises(ValueError):
        T.stack([T.tensor("float64", (2,)), T.tensor("float64", (3,))])


def test_stack_shape_mismatch_at_run_time(rng):
    a, b = T.vector("a"), T.vector("b")
    f = both_modes.function([a, b], T.stack([a, b]))  # a ValueError in both modes
    with pytest.raises(ValueError):
        f(np.ones(2), np.ones(3))


# ---------------------------------------------------------------------------- make_vector
def test_make_vector(rng):
    a, b = T.lscalar("a"), T.lscalar("b")
    out = T.make_vector([a, 3, b])
    assert out.type.shape == (3,) and out.dtype == "int64"
    np.testing.assert_array_equal(run([a, b], out, 1, 2), np.array([1, 3, 2]))
    f = T.make_vector([a, T.dscalar("d")])
    assert f.dtype == "float64"
    as_float32 = T.make_vector([a, b], dtype="float32")
    assert as_float32.dtype == "float32"
    result = run([a, b], as_float32, 5, 6)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, np.array([5, 6], dtype="float32"))
    empty = T.make_vector([])
    assert empty.type.shape == (0,)
    assert run([], empty).shape == (0,)


def test_make_vector_errors():
    with pytest.raises(TypeError):
        T.make_vector([T.vector("v")])
    with pytest.raises(TypeError):
        T.make_vector([T.dscalar("d")], dtype="int64")


def test_list_of_variables_becomes_vector(rng):
    a, b = T.dscalar("a"), T.dscalar("b")
    out = T.as_tensor_variable([a, b, a])
    assert out.type.shape == (3,)
    np.testing.assert_array_equal(run([a, b], out, 1.5, 2.5), np.array([1.5, 2.5, 1.5]))
