"""numpy indexing ``x[idx]`` and ``set_subtensor`` / ``inc_subtensor`` against numpy: values, static
shapes (random index tuples from hypothesis, explicit cases for every index kind) and build-time errors.

``run`` evaluates in mode "py" and mode "fast" and requires the same results (see
tests/support/both_modes.py)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symscan as ss
import symscan.tensor as T

import both_modes

MODES = ("py", "fast")


def run(inputs, outputs, *values, mode=None):
    """The result in ``mode``; without one, in modes "py" and "fast" (checked to agree)."""
    if mode is None:
        return both_modes.run(inputs, outputs, *values)
    return ss.function(inputs, outputs, mode=mode)(*values)


def compatible(static, actual) -> bool:
    """A static shape agrees with an actual one: same ndim, known lengths equal."""
    return len(static) == len(actual) and all(s is None or s == a for s, a in zip(static, actual))


def np_inc(a: np.ndarray, index, y) -> np.ndarray:
    """numpy's ``a[index] += y`` that accumulates repeated positions (what inc_subtensor promises)."""
    out = a.copy()
    np.add.at(out, index, y)
    return out


def np_set(a: np.ndarray, index, y) -> np.ndarray:
    out = a.copy()
    out[index] = y
    return out


# ---------------------------------------------------------------------------- random index tuples
class IndexCase:
    """An index over a random array: the symbolic items, the symbolic inputs with their values,
    and the numpy index those values make."""

    def __init__(self, shape, static):
        self.shape, self.static = shape, static
        self.items, self.np_items = [], []
        self.inputs, self.values = [], []
        self.all_constant = True

    def symbolic(self, var, value):
        self.inputs.append(var)
        self.values.append(value)
        self.all_constant = False
        return var


def _scalar(draw, case: IndexCase, value: int, allow_symbolic: bool = True):
    """``value`` as a Python int, a numpy integer, or a symbolic int scalar input."""
    kind = draw(st.sampled_from(["py", "np64", "np32", "sym32", "sym64"] if allow_symbolic else ["py", "np64"]))
    if kind == "py":
        return value
    if kind == "np64":
        return np.int64(value)
    if kind == "np32":
        return np.int32(value)
    var = T.iscalar(f"i{len(case.inputs)}") if kind == "sym32" else T.lscalar(f"l{len(case.inputs)}")
    return case.symbolic(var, value)


def _array(draw, case: IndexCase, length: int, adv_shape: tuple):
    """An integer array that broadcasts to ``adv_shape`` (constant, list or symbolic)."""
    keep = draw(st.integers(0, len(adv_shape)))
    shape = tuple(n if draw(st.booleans()) else 1 for n in adv_shape[len(adv_shape) - keep:])
    dtype = draw(st.sampled_from(["int64", "int32", "int8", "uint8"]))
    low = 0 if dtype == "uint8" else -length
    value = np.array(draw(st.lists(st.integers(low, length - 1), min_size=int(np.prod(shape)),
                                   max_size=int(np.prod(shape)))), dtype=dtype).reshape(shape)
    kind = draw(st.sampled_from(["const", "list", "sym"]))
    if kind == "const" or (kind == "list" and value.ndim == 0):
        return value, value
    if kind == "list":
        return value.tolist(), value
    if dtype == "uint8":
        value = value.astype("int32")
    var = T.tensor(dtype if dtype != "uint8" else "int32", (None,) * value.ndim, name=f"a{len(case.inputs)}")
    return case.symbolic(var, value), value


def _slice(draw, case: IndexCase, length: int):
    parts, np_parts = [], []
    for which in ("start", "stop", "step"):
        if draw(st.booleans()):
            parts.append(None)
            np_parts.append(None)
            continue
        if which == "step":
            value = draw(st.sampled_from([-3, -2, -1, 1, 2, 3]))
        else:
            value = draw(st.integers(-length - 2, length + 2))
        parts.append(_scalar(draw, case, value))
        np_parts.append(value)
    return slice(*parts), slice(*np_parts)


@st.composite
def index_cases(draw):
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    static = tuple(n if draw(st.booleans()) else None for n in shape)
    case = IndexCase(shape, static)
    consumed = draw(st.integers(0, ndim))
    ellipsis_at = draw(st.one_of(st.none(), st.integers(0, consumed)))
    if ellipsis_at is None:
        axes = list(range(consumed))
    else:
        axes = list(range(ellipsis_at)) + list(range(ndim - (consumed - ellipsis_at), ndim))
    adv_shape = draw(st.sampled_from([(), (1,), (2,), (3,), (2, 1), (1, 3), (2, 3)]))
    for axis in axes:
        length = shape[axis]
        kind = draw(st.sampled_from(["int", "slice", "array"]))
        if kind == "int":
            value = draw(st.integers(-length, length - 1))
            case.items.append(_scalar(draw, case, value))
            case.np_items.append(value)
        elif kind == "slice":
            item, np_item = _slice(draw, case, length)
            case.items.append(item)
            case.np_items.append(np_item)
        else:
            item, value = _array(draw, case, length, adv_shape)
            case.items.append(item)
            case.np_items.append(value)
    if ellipsis_at is not None:
        case.items.insert(ellipsis_at, Ellipsis)
        case.np_items.insert(ellipsis_at, Ellipsis)
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(case.items)))
        case.items.insert(at, None)
        case.np_items.insert(at, None)
    return case


def _index(items):
    """A lone item is passed bare (``x[i]``), several as a tuple (``x[i, j]``)."""
    return items[0] if len(items) == 1 else tuple(items)


SETTINGS = settings(max_examples=500, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@given(case=index_cases(), seed=st.integers(0, 2**16))
def test_random_index_matches_numpy(case, seed):
    rng = np.random.default_rng(seed)
    xv = rng.normal(size=case.shape)
    x = T.tensor("float64", case.static, name="x")
    np_index = _index(case.np_items)
    expected = xv[np_index]
    out = x[_index(case.items)]
    assert out.dtype == "float64"
    assert compatible(out.type.shape, expected.shape), (out.type.shape, expected.shape)
    if case.all_constant and None not in case.static:
        assert out.type.shape == expected.shape
    result = run([x] + case.inputs, out, xv, *case.values)
    assert result.shape == expected.shape
    np.testing.assert_array_equal(result, expected)


@SETTINGS
@given(case=index_cases(), seed=st.integers(0, 2**16), trailing=st.integers(0, 3), ones=st.booleans())
def test_random_index_set_and_inc_match_numpy(case, seed, trailing, ones):
    rng = np.random.default_rng(seed)
    xv = rng.normal(size=case.shape)
    before = xv.copy()
    x = T.tensor("float64", case.static, name="x")
    np_index = _index(case.np_items)
    target = xv[np_index].shape
    # The value: the full target shape, or a trailing part of it (broadcast), maybe with 1s.
    yshape = target[len(target) - min(trailing, len(target)):] if trailing < 3 else target
    if ones and yshape:
        yshape = (1,) + yshape[1:]
    yv = rng.normal(size=yshape)
    y = T.tensor("float64", (None,) * len(yshape), name="y")
    x_index = x[_index(case.items)]
    set_out = T.set_subtensor(x_index, y)
    inc_out = T.inc_subtensor(x_index, y)
    assert set_out.type == x.type and inc_out.type == x.type
    got_set, got_inc = both_modes.run([x, y] + case.inputs, [set_out, inc_out], xv, yv, *case.values)
    np.testing.assert_array_equal(got_set, np_set(xv, np_index, yv))
    np.testing.assert_allclose(got_inc, np_inc(xv, np_index, yv), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(xv, before)


# ---------------------------------------------------------------------------- ints
def test_int_indices(rng):
    xv = rng.normal(size=(3, 4, 5))
    x = T.tensor3("x")
    for i in range(-3, 3):
        np.testing.assert_array_equal(run([x], x[i], xv), xv[i])
        for j in range(-4, 4):
            np.testing.assert_array_equal(run([x], x[i, j], xv), xv[i, j])
            np.testing.assert_array_equal(run([x], x[i, :, j - 1], xv), xv[i, :, j - 1])
    scalar = run([x], x[1, 2, -1], xv)
    assert scalar.shape == () and scalar == xv[1, 2, -1]
    assert x[0].ndim == 2 and x[0, 0].ndim == 1 and x[0, 0, 0].ndim == 0


def test_int_index_kinds_and_static_shape():
    x = T.tensor("float32", (3, None, 5), name="x")
    for i in (1, -1, np.int64(2), np.int32(0), np.uint8(1), T.constant(2)):
        assert x[i].type.shape == (None, 5)
        assert x[:, :, i].type.shape == (3, None)
        assert x[i].dtype == "float32"


@pytest.mark.parametrize("make", [T.iscalar, T.lscalar, T.bscalar, lambda name: T.tensor("uint16", (), name)])
def test_symbolic_int_scalar_index(rng, make):
    xv = rng.normal(size=(4, 4))
    x = T.matrix("x")
    i = make("i")
    f = both_modes.function([x, i], [x[i], x[:, i - 1], x[i, 0]])
    low = 1 if np.dtype(i.dtype).kind == "u" else -3
    for value in range(low, 4):
        rows, cols, element = f(xv, value)
        np.testing.assert_array_equal(rows, xv[value])
        np.testing.assert_array_equal(cols, xv[:, value - 1])
        assert element == xv[value, 0]


def test_symbolic_int_out_of_range_at_run_time(rng):
    x = T.matrix("x")
    i = T.lscalar("i")
    f = both_modes.function([x, i], x[i])  # an IndexError in both modes
    with pytest.raises(IndexError):
        f(rng.normal(size=(2, 3)), 2)
    with pytest.raises(IndexError):
        f(rng.normal(size=(2, 3)), -3)


def test_index_computed_from_shape(rng):
    x = T.matrix("x")
    xv = rng.normal(size=(4, 3))
    np.testing.assert_array_equal(run([x], x[x.shape[0] - 1], xv), xv[-1])
    np.testing.assert_array_equal(run([x], x[x.shape[0] // 2:], xv), xv[2:])
    np.testing.assert_array_equal(run([x], x[:, x.shape[1] - 2::-1], xv), xv[:, 1::-1])


# ---------------------------------------------------------------------------- slices
SLICES = [
    slice(None), slice(1, None), slice(None, 2), slice(1, 3), slice(-2, None), slice(None, -1),
    slice(None, None, 2), slice(None, None, -1), slice(None, None, -2), slice(3, 0, -1), slice(-1, -4, -1),
    slice(-10, 10), slice(10, None), slice(None, -10), slice(0, 0), slice(2, 1), slice(5, None, -2),
    slice(1, -1, 3), slice(-1, None, -3), slice(None, 0, -1),
]


@pytest.mark.parametrize("sl", SLICES, ids=str)
def test_constant_slice(rng, sl):
    xv = rng.normal(size=(5, 3))
    x = T.matrix("x")
    np.testing.assert_array_equal(run([x], x[sl], xv), xv[sl])
    np.testing.assert_array_equal(run([x], x[:, sl], xv), xv[:, sl])
    np.testing.assert_array_equal(run([x], x[sl, sl], xv), xv[sl, sl])
    # Constant bounds on a static shape give a static length.
    xs = T.tensor("float64", (5, 3), name="xs")
    assert xs[sl].type.shape == xv[sl].shape
    assert xs[sl, sl].type.shape == xv[sl, sl].shape
    assert x[sl].type.shape == (None, None)


def test_symbolic_slice_bounds_and_steps(rng):
    xv = rng.normal(size=(6, 2))
    x = T.matrix("x")
    start, stop, step = T.lscalar("start"), T.iscalar("stop"), T.lscalar("step")
    f = both_modes.function([x, start, stop, step], x[start:stop:step])
    g = both_modes.function([x, start, step], x[start::step])
    h = both_modes.function([x, stop], x[:stop, ::-1])
    for a in range(-8, 9, 2):
        for b in range(-8, 9, 3):
            for c in (-3, -1, 1, 2):
                np.testing.assert_array_equal(f(xv, a, b, c), xv[a:b:c])
            np.testing.assert_array_equal(g(xv, a, -1), xv[a::-1])
            np.testing.assert_array_equal(h(xv, b), xv[:b, ::-1])
    assert x[start:stop:step].type.shape == (None, None)
    xs = T.tensor("float64", (6, 2), name="xs")
    assert xs[start:].type.shape == (None, 2)
    assert xs[:, ::step].type.shape == (6, None)


def test_slice_mixing_constant_and_symbolic_bounds(rng):
    xv = rng.normal(size=(7,))
    x = T.vector("x")
    n = T.lscalar("n")
    f = both_modes.function([x, n], [x[1:n], x[n:-1], x[-n::2], x[n:0:-1], x[:n:-2]])
    for value in range(-7, 8):
        got = f(xv, value)
        want = [xv[1:value], xv[value:-1], xv[-value::2], xv[value:0:-1], xv[:value:-2]]
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def test_slice_step_zero():
    x = T.vector("x")
    with pytest.raises(ValueError):
        x[::0]
    step = T.lscalar("step")
    f = both_modes.function([x, step], x[::step])  # a ValueError in both modes
    with pytest.raises(ValueError):
        f(np.ones(3), 0)


# ---------------------------------------------------------------------------- None and Ellipsis
@pytest.mark.parametrize("index", [
    None, (None, None), (Ellipsis,), (Ellipsis, None), (None, Ellipsis), (None, Ellipsis, None),
    (0, Ellipsis), (Ellipsis, 0), (Ellipsis, 1, 2), (0, Ellipsis, 0), (slice(None), None, 1),
    (None, 0, None, slice(1, None), None), (Ellipsis, None, slice(None, None, -1)), (0, 1, 2, Ellipsis),
    (0, 1, None, 2), (None, None, None, 0, 1, 2),
], ids=str)
def test_none_and_ellipsis(rng, index):
    xv = rng.normal(size=(2, 3, 4))
    expected = xv[index]
    x = T.tensor3("x")
    out = x[index]
    np.testing.assert_array_equal(run([x], out, xv), expected)
    assert compatible(out.type.shape, expected.shape)
    xs = T.tensor("float64", (2, 3, 4), name="xs")
    assert xs[index].type.shape == expected.shape


# ---------------------------------------------------------------------------- integer arrays
@pytest.mark.parametrize("index", [
    np.array([0, 2, 1]), np.array([-1, 0, -3]), np.array([1, 1, 1, 1]), np.array([[0, 1], [2, 0]]),
    np.array([0, 2], dtype="int8"), np.array([0, 2], dtype="uint8"), np.array([2, 0], dtype="int32"),
    [0, 2], [[1], [2]], [-1], np.array(1), np.array([], dtype="int64"), [],
], ids=repr)
def test_constant_integer_array(rng, index):
    xv = rng.normal(size=(3, 4))
    expected = xv[index]
    x = T.matrix("x")
    out = x[index]
    np.testing.assert_array_equal(run([x], out, xv), expected)
    assert compatible(out.type.shape, expected.shape)
    xs = T.tensor("float64", (3, 4), name="xs")
    assert xs[index].type.shape == expected.shape


@pytest.mark.parametrize("make, value", [
    (T.ivector, np.array([0, 2, -1], dtype="int32")),
    (T.lvector, np.array([1, 1, 0, 2, 2], dtype="int64")),
    (T.imatrix, np.array([[0, 1], [2, -3]], dtype="int32")),
    (T.lmatrix, np.zeros((0, 2), dtype="int64")),
    (T.bvector, np.array([2, -1], dtype="int8")),
])
def test_symbolic_integer_array(rng, make, value):
    xv = rng.normal(size=(3, 4))
    x = T.matrix("x")
    idx = make("idx")
    f = both_modes.function([x, idx], [x[idx], x[:, idx], x[idx, 1:], x[1, idx], x[idx, idx]])
    got = f(xv, value)
    want = [xv[value], xv[:, value], xv[value, 1:], xv[1, value], xv[value, value]]
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    assert x[idx].ndim == value.ndim + 1
    assert T.tensor("float64", (3, 4))[:, idx].type.shape[0] == 3


@pytest.mark.parametrize("index", [
    # adjacent advanced indices: their dims stay in place
    (slice(None), [0, 2], [1, 3]),
    ([0, 1], [1, 2], slice(None)),
    (slice(1, None), [[0], [2]], [1, 3]),
    (0, [1, 2], slice(None)),
    (slice(None), 0, [1, 3]),
    (slice(None), [1, 2], 0),
    (None, [0, 1], [2, 0], slice(None)),
    # separated by a slice or None: numpy moves the advanced dims to the front
    ([0, 1], slice(None), [1, 3]),
    (0, slice(None), [1, 3]),
    ([0, 1], slice(None), 2),
    ([[0], [1]], slice(1, 3), [2, 3, 0]),
    (0, None, [1, 2]),
    ([1], None, 0, slice(None)),
    ([0, 1], None, [2, 0]),
    (slice(None, None, -1), [0, 1], None, [1, 2]),
    (Ellipsis, [0, 1], slice(None), [1, 2]),
    ([0, 1], Ellipsis, [1, 2]),
    (np.array(0), slice(None), [1, 2]),
    # an Ellipsis that stands for no axis still separates advanced indices in numpy
    (slice(None), [0, 1], Ellipsis, 0, 1),
    (None, [0, 1], Ellipsis, 0, 1, 2),
    ([0, 1], 2, Ellipsis, slice(None), 1),
    (Ellipsis, slice(None), [0, 1], 0, 1),
], ids=repr)
def test_mixed_basic_and_advanced(rng, index):
    xv = rng.normal(size=(2, 3, 4, 5))
    np_index = tuple(np.asarray(i) if isinstance(i, list) else i for i in index)
    expected = xv[np_index]
    x = T.tensor4("x")
    out = x[index]
    np.testing.assert_array_equal(run([x], out, xv), expected)
    assert compatible(out.type.shape, expected.shape)
    xs = T.tensor("float64", (2, 3, 4, 5), name="xs")
    assert xs[index].type.shape == expected.shape


def test_list_of_symbolic_scalars_is_an_integer_array(rng):
    xv = rng.normal(size=(3, 4))
    x = T.matrix("x")
    i, j = T.lscalar("i"), T.iscalar("j")
    f = both_modes.function([x, i, j], [x[[i, j]], x[[i, 1], [0, j]], T.inc_subtensor(x[[i, i, j]], 1.0)])
    rows, points, inc = f(xv, 2, -3)
    np.testing.assert_array_equal(rows, xv[[2, -3]])
    np.testing.assert_array_equal(points, xv[[2, 1], [0, -3]])
    np.testing.assert_array_equal(inc, np_inc(xv, [2, 2, -3], 1.0))
    assert x[[i, j]].type.shape == (2, None)


def test_mixed_with_symbolic_arrays(rng):
    xv = rng.normal(size=(3, 4, 5))
    x = T.tensor3("x")
    a, b = T.ivector("a"), T.lmatrix("b")
    av, bv = np.array([0, 2], dtype="int32"), np.array([[1], [3], [0]], dtype="int64")
    i = T.lscalar("i")
    cases = [
        ((a, slice(None), b), (av, slice(None), bv)),          # separated
        ((slice(None), b, a), (slice(None), bv, av)),          # adjacent
        ((i, slice(None), a), (1, slice(None), av)),           # int counts as advanced: separated
        ((slice(None), i, a), (slice(None), 1, av)),           # adjacent
        ((a, None, i), (av, None, 1)),
    ]
    for index, np_index in cases:
        expected = xv[np_index]
        out = x[index]
        assert compatible(out.type.shape, expected.shape), (index, out.type.shape, expected.shape)
        np.testing.assert_array_equal(run([x, a, b, i], out, xv, av, bv, 1), expected)


# ---------------------------------------------------------------------------- build-time errors
def test_too_many_indices():
    x = T.matrix("x")
    with pytest.raises(IndexError, match="too many"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="too many"):
        x[:, :, :]
    with pytest.raises(IndexError, match="too many"):
        x[0, ..., 0, 0]
    with pytest.raises(IndexError, match="too many"):
        T.scalar("s")[0]
    with pytest.raises(IndexError):
        x[..., ...]
    x[None, 0, None, 0, None]  # None does not consume an axis


@pytest.mark.parametrize("index", [3, -4, (0, 4), (slice(None), -5), (Ellipsis, 4), (np.int64(3),),
                                   ([0, 3],), ([-4],), (slice(None), [[0], [4]]), ([0], 7)], ids=repr)
def test_constant_index_out_of_static_bounds(index):
    x = T.tensor("float64", (3, 4), name="x")
    with pytest.raises(IndexError, match="out of bounds"):
        x[index]
    T.matrix("unknown")[index]  # no static length: nothing to check at build time


def test_index_too_large_for_int64_is_index_error():
    x = T.vector("x")
    for index in (2**70, -(2**70), slice(2**64, None), np.uint64(2**63)):
        with pytest.raises(IndexError):
            x[index]


def test_zero_length_axis_has_no_valid_int():
    with pytest.raises(IndexError):
        T.tensor("float64", (0, 3))[0]


@pytest.mark.parametrize("index", [1.0, np.float64(0), (0, 1.5), slice(0.0, 2), slice(None, None, 1.0),
                                   np.array([0.0, 1.0]), [0.0, 1.0]], ids=repr)
def test_float_index_is_type_error(index):
    with pytest.raises(TypeError):
        T.matrix("x")[index]


def test_symbolic_float_index_is_type_error():
    x = T.matrix("x")
    with pytest.raises(TypeError):
        x[T.scalar("f")]
    with pytest.raises(TypeError):
        x[T.fvector("fv")]
    with pytest.raises(TypeError):
        x[:T.scalar("f")]


@pytest.mark.parametrize("index", [True, np.bool_(False), np.array([True, False, True]), [True, False, True],
                                   (0, np.array([True, False, True, False]))], ids=repr)
def test_bool_index_is_type_error(index):
    with pytest.raises(TypeError, match="bool"):
        T.matrix("x")[index]


def test_symbolic_bool_mask_is_type_error():
    x = T.matrix("x")
    with pytest.raises(TypeError):
        x[x > 0]
    with pytest.raises(TypeError):
        x[T.tensor("bool", (None,), name="mask")]


def test_advanced_indices_that_cannot_broadcast():
    x = T.matrix("x")
    with pytest.raises(ValueError):
        x[np.array([0, 1]), np.array([0, 1, 2])]
    a, b = T.ivector("a"), T.ivector("b")
    f = both_modes.function([x, a, b], x[a, b])  # the same kind of error in both modes
    with pytest.raises((ValueError, IndexError)):
        f(np.ones((3, 3)), np.array([0, 1], dtype="int32"), np.array([0, 1, 2], dtype="int32"))


# ---------------------------------------------------------------------------- set_subtensor / inc_subtensor
SET_INC_CASES = [
    (1,), (-1,), (slice(1, None),), (slice(None, None, -2),), (slice(None), 2), (Ellipsis, -1),
    (None, 0), (None, slice(None), None, 1), ([0, 2],), ([2, 0, 2, 2],), (slice(None), [1, 1, 3]),
    ([0, 1], slice(None), [2, 2]) if False else ([0, 1], [2, 2]), ([[0, 1], [1, 1]], slice(1, 3)),
    ([0, 0], None, [1, 1]), (slice(None, None, -1), [3, 0, 3]), (0, [1, 1]),
]


def _np_index(index):
    return tuple(np.asarray(i) if isinstance(i, list) else i for i in index)


@pytest.mark.parametrize("index", SET_INC_CASES, ids=repr)
@pytest.mark.parametrize("mode", MODES)
def test_set_and_inc_constant_indices(rng, index, mode):
    xv = rng.normal(size=(3, 4))
    before = xv.copy()
    np_index = _np_index(index)
    target = xv[np_index].shape
    yv = rng.normal(size=target)
    x, y = T.matrix("x"), T.tensor("float64", (None,) * len(target), name="y")
    f = ss.function([x, y], [T.set_subtensor(x[index], y), T.inc_subtensor(x[index], y)], mode=mode)
    got_set, got_inc = f(xv, yv)
    np.testing.assert_array_equal(got_set, np_set(xv, np_index, yv))
    np.testing.assert_allclose(got_inc, np_inc(xv, np_index, yv), rtol=1e-12)
    np.testing.assert_array_equal(xv, before)


def test_inc_with_repeated_positions_accumulates(rng):
    x = T.vector("x")
    idx = T.lvector("idx")
    y = T.vector("y")
    xv = np.zeros(5)
    iv = np.array([1, 1, 3, 1, -1, 4])
    yv = rng.normal(size=6)
    out = run([x, idx, y], T.inc_subtensor(x[idx], y), xv, iv, yv)
    expected = xv.copy()
    np.add.at(expected, iv, yv)
    np.testing.assert_allclose(out, expected)
    # Plain fancy-index += would drop repeats; make sure this case really differs from it.
    naive = xv.copy()
    naive[iv] += yv
    assert not np.allclose(out, naive)
    # scalar increments accumulate too
    counts = run([x, idx], T.inc_subtensor(x[idx], 1.0), xv, iv)
    np.testing.assert_array_equal(counts, np.bincount(iv % 5, minlength=5).astype(float))


def test_inc_repeated_positions_in_matrix_rows_and_columns(rng):
    x = T.matrix("x")
    xv = rng.normal(size=(3, 4))
    rows = [0, 2, 0, 0]
    for index in ((rows,), (slice(None), rows), (rows, 1), (rows, [1, 1, 1, 3]), (rows, slice(1, 3))):
        np_index = _np_index(index)
        yv = rng.normal(size=xv[np_index].shape)
        got = run([x], T.inc_subtensor(x[index], yv), xv)
        np.testing.assert_allclose(got, np_inc(xv, np_index, yv), rtol=1e-12)


def test_set_with_repeated_positions_matches_numpy(rng):
    x = T.vector("x")
    xv = np.zeros(4)
    iv = np.array([2, 2, 0])
    yv = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(run([x], T.set_subtensor(x[iv], yv), xv), np_set(xv, iv, yv))


def test_set_and_inc_with_symbolic_indices(rng):
    xv = rng.normal(size=(5, 4))
    x = T.matrix("x")
    i, j, k = T.lscalar("i"), T.iscalar("j"), T.lscalar("k")
    idx = T.ivector("idx")
    y = T.scalar("y")
    outs = [
        T.set_subtensor(x[i], y), T.inc_subtensor(x[i, j], y), T.set_subtensor(x[i:j:k], y),
        T.inc_subtensor(x[::k, j], y), T.inc_subtensor(x[idx, j], y), T.set_subtensor(x[i:, idx], y),
        T.inc_subtensor(x[idx, :, None], y),
    ]
    f = both_modes.function([x, i, j, k, idx, y], outs)
    iv = np.array([0, 3, 3, -1], dtype="int32")
    for a, b, c in [(1, 3, 1), (-2, 0, -1), (0, -1, 2), (4, 1, -2)]:
        got = f(xv, a, b, c, iv, 2.5)
        want = [
            np_set(xv, a, 2.5), np_inc(xv, (a, b), 2.5), np_set(xv, slice(a, b, c), 2.5),
            np_inc(xv, (slice(None, None, c), b), 2.5), np_inc(xv, (iv, b), 2.5),
            np_set(xv, (slice(a, None), iv), 2.5), np_inc(xv, (iv, slice(None), None), 2.5),
        ]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)


@pytest.mark.parametrize("index, yshape", [
    ((slice(None),), ()), ((slice(None),), (4,)), ((slice(None),), (1, 4)), ((slice(None),), (3, 1)),
    ((0,), ()), ((0,), (1,)), ((slice(1, None), slice(None, 2)), (2,)), (([0, 2],), (4,)), (([0, 2],), (2, 1)),
    (([0, 0, 1],), (1, 4)), ((slice(None), [1, 1]), (2,)),
], ids=repr)
def test_set_and_inc_broadcast_the_value(rng, index, yshape):
    xv = rng.normal(size=(3, 4))
    np_index = _np_index(index)
    yv = rng.normal(size=yshape)
    x, y = T.matrix("x"), T.tensor("float64", (None,) * len(yshape), name="y")
    f = both_modes.function([x, y], [T.set_subtensor(x[index], y), T.inc_subtensor(x[index], y)])
    got_set, got_inc = f(xv, yv)
    np.testing.assert_array_equal(got_set, np_set(xv, np_index, yv))
    np.testing.assert_allclose(got_inc, np_inc(xv, np_index, yv), rtol=1e-12)


def test_set_and_inc_python_and_numpy_values(rng):
    xv = rng.normal(size=(3, 4)).astype("float32")
    x = T.fmatrix("x")
    for value in (2, 2.5, np.float32(1.5), np.array([1, 2, 3, 4], dtype="float32"), np.int8(3), True):
        out = T.set_subtensor(x[1], value)
        assert out.type == x.type
        got = run([x], out, xv)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, np_set(xv, 1, value))
        got = run([x], T.inc_subtensor(x[:, 0], value if np.ndim(value) == 0 else value[:3]), xv)
        np.testing.assert_allclose(got, np_inc(xv, (slice(None), 0), value if np.ndim(value) == 0 else value[:3]))


def test_set_and_inc_on_integer_tensor(rng):
    xv = rng.integers(-10, 10, size=(3, 4)).astype("int32")
    x = T.imatrix("x")
    got = run([x], T.inc_subtensor(x[[0, 0], 1], 7), xv)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np_inc(xv, ([0, 0], 1), 7))
    b = T.bvector("b")
    got = run([x, b], T.set_subtensor(x[2], b[:4]), xv, np.array([1, 2, 3, 4, 5], dtype="int8"))
    np.testing.assert_array_equal(got, np_set(xv, 2, np.array([1, 2, 3, 4])))


def test_set_and_inc_on_constant_and_result_is_new_value(rng):
    base = np.arange(6.0)
    c = T.constant(base)
    y = T.scalar("y")
    got = run([y], T.set_subtensor(c[2:4], y), 9.0)
    np.testing.assert_array_equal(got, np_set(base, slice(2, 4), 9.0))
    np.testing.assert_array_equal(base, np.arange(6.0))
    got = run([y], T.inc_subtensor(c[[1, 1]], y) * 2, 1.0)
    np.testing.assert_array_equal(got, np_inc(base, [1, 1], 1.0) * 2)


def test_set_then_index_and_chain(rng):
    xv = rng.normal(size=(4,))
    x = T.vector("x")
    out = T.set_subtensor(x[0], 5.0)
    out = T.inc_subtensor(out[1:], out[:-1])
    expected = xv.copy()
    expected[0] = 5.0
    expected[1:] += expected[:-1].copy()
    np.testing.assert_allclose(run([x], out, xv), expected)


def test_set_and_inc_do_not_mutate_inputs(rng):
    x, y = T.matrix("x"), T.vector("y")
    idx = T.lvector("idx")
    xv, yv, iv = rng.normal(size=(3, 4)), rng.normal(size=4), np.array([0, 0, 2])
    copies = (xv.copy(), yv.copy(), iv.copy())
    outs = [T.set_subtensor(x[idx], y), T.inc_subtensor(x[idx], y), T.set_subtensor(x[1], y),
            T.inc_subtensor(x[:, :], y), T.inc_subtensor(x[1:], y)]
    for mode in MODES:
        results = ss.function([x, y, idx], outs, mode=mode)(xv, yv, iv)
        for original, now in zip(copies, (xv, yv, iv)):
            np.testing.assert_array_equal(original, now)
        for r in results:
            assert not np.shares_memory(r, xv)


# ---------------------------------------------------------------------------- set/inc errors
def test_downcasting_value_is_type_error():
    x = T.fmatrix("x")
    for y in (T.dvector("y"), T.dscalar("y"), np.float64(1.5), np.ones(4)):
        for fn in (T.set_subtensor, T.inc_subtensor):
            with pytest.raises(TypeError) as err:
                fn(x[0], y)
            message = str(err.value)
            assert "float64" in message and "float32" in message
    ints = T.imatrix("ints")
    for y in (1.5, T.scalar("f"), T.lscalar("l")):
        with pytest.raises(TypeError):
            T.set_subtensor(ints[0], y)
    with pytest.raises(TypeError):
        T.inc_subtensor(T.bvector("b")[0], 1000)


def test_set_subtensor_needs_an_indexed_variable():
    x = T.matrix("x")
    for not_indexed in (x, x + 1, x.T, x.shape, T.constant(np.ones(3))):
        with pytest.raises(TypeError, match="indexed"):
            T.set_subtensor(not_indexed, 1.0)
        with pytest.raises(TypeError, match="indexed"):
            T.inc_subtensor(not_indexed, 1.0)
    with pytest.raises(TypeError):
        T.set_subtensor(np.ones(3), 1.0)


def test_value_shape_errors():
    x = T.tensor("float64", (3, 4), name="x")
    with pytest.raises(ValueError):
        T.set_subtensor(x[0], T.matrix("m"))  # more dims than x[0]
    with pytest.raises(ValueError):
        T.set_subtensor(x[0], T.tensor("float64", (5,)))  # 5 vs 4
    with pytest.raises(ValueError):
        T.inc_subtensor(x[:, 1:3], T.tensor("float64", (3, 3)))
    with pytest.raises(ValueError):
        T.set_subtensor(x[:, :1], T.tensor("float64", (3, 4)))  # length-1 axis cannot take 4
    with pytest.raises(ValueError):
        T.inc_subtensor(x[[0, 1]], T.tensor("float64", (3, 4)))
    T.set_subtensor(x[:, :1], T.tensor("float64", (3, 1)))
    T.set_subtensor(x[:, 1:], T.tensor("float64", (1, 3)))


def test_value_shape_error_at_run_time(rng):
    x, y = T.matrix("x"), T.vector("y")
    f = both_modes.function([x, y], T.set_subtensor(x[0], y))  # a ValueError in both modes
    with pytest.raises(ValueError):
        f(rng.normal(size=(3, 4)), rng.normal(size=3))
