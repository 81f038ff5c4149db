"""ONNX lowerings of numpy indexing (Subtensor) and of set_subtensor / inc_subtensor: each graph
is compiled in mode "py", exported, fully checked, run in onnxruntime and in onnx's reference
evaluator, and compared with mode "py" (``onnx_agree`` in tests/conftest.py). Random index tuples
come from hypothesis (as in tests/tensor/test_subtensor.py, which checks mode "py" against numpy);
explicit cases cover each kind of index: ints (negative, symbolic), slices (constant, symbolic and
negative bounds and steps), None, Ellipsis and integer arrays (one, several adjacent, several
separated), and set/inc on those, repeated positions included."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symscan.tensor as T

DTYPES = ["float64", "float32", "int64", "int32", "int8", "uint8", "bool"]
pytestmark = pytest.mark.usefixtures("quiet_numpy")


def values_of(dtype, shape, rng):
    """Random values of ``dtype`` (ints over the whole range, so inc_subtensor wraps)."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype[0] == "f":
        return rng.normal(size=shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)


def np_inc(a, index, y):
    """numpy's ``a[index] += y`` accumulating repeated positions (numpy.add.at), in a's dtype."""
    out = a.copy()
    np.add.at(out, index, np.asarray(y).astype(a.dtype))
    return out


# ---------------------------------------------------------------------------- random index tuples
class IndexCase:
    """An index over a random array: the symbolic items and the symbolic inputs with their values."""

    def __init__(self, shape, static):
        self.shape, self.static = shape, static
        self.items, self.np_items, self.inputs, self.values = [], [], [], []

    def __repr__(self) -> str:
        return f"IndexCase(shape={self.shape}, static={self.static}, index={self.np_items}, symbolic={self.inputs})"

    def symbolic(self, var, value):
        self.inputs.append(var)
        self.values.append(value)
        return var


def _scalar(draw, case, value):
    """``value`` as a Python int, a numpy integer, or a symbolic integer scalar of some dtype."""
    kind = draw(st.sampled_from(["py", "np32", "int32", "int64", "int8"]))
    if kind == "py":
        return value
    if kind == "np32":
        return np.int32(value)
    return case.symbolic(T.tensor(kind, (), name=f"s{len(case.inputs)}"), np.array(value, dtype=kind))


def _array(draw, case, length, adv_shape, repeats):
    """An integer array that broadcasts to ``adv_shape`` (constant, list or symbolic)."""
    keep = draw(st.integers(0, len(adv_shape)))
    shape = tuple(n if draw(st.booleans()) else 1 for n in adv_shape[len(adv_shape) - keep:])
    dtype = draw(st.sampled_from(["int64", "int32", "int8", "uint8"]))
    low = 0 if dtype == "uint8" else -length
    size = int(np.prod(shape))
    elements = st.integers(low, length - 1)
    picked = draw(st.lists(elements, min_size=size, max_size=size, unique=not repeats and size <= length - low))
    value = np.array(picked, dtype=dtype).reshape(shape)
    kind = draw(st.sampled_from(["const", "list", "sym"]))
    if kind == "const" or (kind == "list" and value.ndim == 0):
        return value, value
    if kind == "list":
        return value.tolist(), value
    var = T.tensor(dtype, (None,) * value.ndim, name=f"a{len(case.inputs)}")
    return case.symbolic(var, value), value


def _slice(draw, case, length):
    parts, np_parts = [], []
    for which in ("start", "stop", "step"):
        if draw(st.booleans()):
            parts.append(None)
            np_parts.append(None)
            continue
        value = draw(st.sampled_from([-3, -2, -1, 1, 2, 3]) if which == "step" else st.integers(-length - 2,
                                                                                                 length + 2))
        parts.append(_scalar(draw, case, value))
        np_parts.append(value)
    return slice(*parts), slice(*np_parts)


@st.composite
def index_cases(draw, repeats=True):
    """Random index tuples: ints, slices, integer arrays (broadcasting), an Ellipsis, Nones."""
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
            item, value = _array(draw, case, length, adv_shape, repeats)
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


SETTINGS = settings(max_examples=60, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


@SETTINGS
@given(case=index_cases(), seed=st.integers(0, 2 ** 16), dtype=st.sampled_from(DTYPES))
def test_random_index(onnx_agree, case, seed, dtype):
    rng = np.random.default_rng(seed)
    x = T.tensor(dtype, case.static, name="x")
    xv = values_of(dtype, case.shape, rng)
    out = x[_index(case.items)]
    assert onnx_agree([x] + case.inputs, out, xv, *case.values) is not None
    np.testing.assert_array_equal(ss_py([x] + case.inputs, out, xv, *case.values), xv[_index(case.np_items)])


def ss_py(inputs, outputs, *values):
    import symscan as ss

    return ss.function(inputs, outputs, mode="py")(*values)


@SETTINGS
@given(case=index_cases(), seed=st.integers(0, 2 ** 16), dtype=st.sampled_from(DTYPES), trailing=st.integers(0, 3),
       ones=st.booleans())
def test_random_set_and_inc(onnx_agree, case, seed, dtype, trailing, ones):
    """set_subtensor and inc_subtensor on random indices, the value broadcast from a trailing part
    of the target shape; repeated positions accumulate for inc (numpy.add.at)."""
    rng = np.random.default_rng(seed)
    x = T.tensor(dtype, case.static, name="x")
    xv = values_of(dtype, case.shape, rng)
    np_index = _index(case.np_items)
    target = xv[np_index].shape
    yshape = target[len(target) - min(trailing, len(target)):] if trailing < 3 else target
    if ones and yshape:
        yshape = (1,) + yshape[1:]
    y = T.tensor(dtype, (None,) * len(yshape), name="y")
    yv = values_of(dtype, yshape, rng)
    view = x[_index(case.items)]
    outputs = [T.set_subtensor(view, y), T.inc_subtensor(view, y)]
    onnx_agree([x, y] + case.inputs, outputs, xv, yv, *case.values)
    inc = ss_py([x, y] + case.inputs, outputs[1], xv, yv, *case.values)
    np.testing.assert_array_equal(inc, np_inc(xv, np_index, yv))


@SETTINGS
@given(case=index_cases(repeats=False), seed=st.integers(0, 2 ** 16))
def test_random_set_without_repeats(onnx_agree, case, seed):
    """Without repeated positions set_subtensor is numpy's assignment exactly."""
    rng = np.random.default_rng(seed)
    x = T.tensor("float64", case.static, name="x")
    xv = rng.normal(size=case.shape)
    yv = rng.normal(size=xv[_index(case.np_items)].shape)
    y = T.tensor("float64", (None,) * yv.ndim, name="y")
    onnx_agree([x, y] + case.inputs, T.set_subtensor(x[_index(case.items)], y), xv, yv, *case.values)


# ---------------------------------------------------------------------------- ints
@pytest.mark.parametrize("dtype", DTYPES)
def test_int_indices(onnx_agree, rng, dtype):
    """Constant ints (negative too) and symbolic ints of several dtypes."""
    x = T.tensor(dtype, (None, None, None), name="x")
    i, j, k, u = T.iscalar("i"), T.lscalar("j"), T.tensor("int8", (), name="k"), T.tensor("uint16", (), name="u")
    outputs = [x[0], x[-1], x[1, -2], x[-2, 0, -1], x[i], x[i, j], x[:, j, k], x[i, :, j - 1], x[-3, u], x[k, u, i],
               x[x.shape[0] - 1], x[0][1][2]]
    value_sets = [[values_of(dtype, (3, 4, 5), rng), np.int32(a), np.int64(b), np.int8(c), np.uint16(d)]
                  for a, b, c, d in [(0, 0, 0, 0), (2, 3, 2, 1), (-3, -4, -3, 3), (-1, 2, -2, 2)]]
    onnx_agree([x, i, j, k, u], outputs, value_sets=value_sets)


def test_int_index_of_a_vector_gives_a_scalar(onnx_agree):
    v, i = T.lvector("v"), T.lscalar("i")
    model = onnx_agree([v, i], [v[i], v[-1], v[i] * v[0]], np.array([5, 6, 7]), np.int64(-2))
    assert all(len(o.type.tensor_type.shape.dim) == 0 for o in model.graph.output)


# ---------------------------------------------------------------------------- slices
SLICES = [
    slice(None), slice(1, None), slice(None, 2), slice(1, 3), slice(-2, None), slice(None, -1),
    slice(None, None, 2), slice(None, None, -1), slice(None, None, -2), slice(3, 0, -1), slice(-1, -4, -1),
    slice(-10, 10), slice(10, None), slice(None, -10), slice(0, 0), slice(2, 1), slice(5, None, -2),
    slice(1, -1, 3), slice(-1, None, -3), slice(None, 0, -1), slice(-7, None, -1), slice(-6, -9, -1),
    slice(9, -9, -2), slice(-9, 9, 2),
]


@pytest.mark.parametrize("dtype", ["float64", "int8", "bool"])
def test_constant_slices(onnx_agree, rng, dtype):
    """Constant bounds and steps, negative and out of range ones (numpy clamps them)."""
    x = T.tensor(dtype, (None, None), name="x")
    xs = T.tensor(dtype, (5, 3), name="xs")
    outputs = [out for sl in SLICES for out in (x[sl], x[:, sl], x[sl, sl], xs[sl], xs[::-1, sl])]
    onnx_agree([x, xs], outputs, values_of(dtype, (5, 3), rng), values_of(dtype, (5, 3), rng))


def test_symbolic_slice_bounds_and_steps(onnx_agree, rng):
    """Symbolic start, stop and step of every sign, out of range included (one export, many calls)."""
    x = T.matrix("x")
    start, stop, step = T.lscalar("start"), T.iscalar("stop"), T.lscalar("step")
    outputs = [x[start:stop:step], x[start::step], x[:stop, ::-1], x[::step, start:stop], x[:stop:step]]
    xv = rng.normal(size=(6, 2))
    value_sets = [[xv, np.int64(a), np.int32(b), np.int64(c)]
                  for a in range(-8, 9, 2) for b in range(-8, 9, 3) for c in (-3, -1, 1, 2)]
    onnx_agree([x, start, stop, step], outputs, value_sets=value_sets)


def test_slice_mixing_constant_and_symbolic_bounds(onnx_agree, rng):
    x = T.vector("x")
    n = T.lscalar("n")
    outputs = [x[1:n], x[n:-1], x[-n::2], x[n:0:-1], x[:n:-2], x[n::-1], x[-n::-1], x[n - 10::-2]]
    xv = rng.normal(size=7)
    onnx_agree([x, n], outputs, value_sets=[[xv, np.int64(value)] for value in range(-9, 10)])


def test_symbolic_step_with_default_bounds(onnx_agree):
    """Without bounds, their defaults depend on the step's sign, known only at run time."""
    x, step = T.lvector("x"), T.tensor("int8", (), name="step")
    onnx_agree([x, step], [x[::step], x[1::step], x[:1:step]],
               value_sets=[[np.arange(6), np.int8(s)] for s in (-4, -2, -1, 1, 3, 7)])


# ---------------------------------------------------------------------------- None and Ellipsis
NONE_AND_ELLIPSIS = [
    None, (None, None), (Ellipsis,), (Ellipsis, None), (None, Ellipsis), (None, Ellipsis, None),
    (0, Ellipsis), (Ellipsis, 0), (Ellipsis, 1, 2), (0, Ellipsis, 0), (slice(None), None, 1),
    (None, 0, None, slice(1, None), None), (Ellipsis, None, slice(None, None, -1)), (0, 1, 2, Ellipsis),
    (0, 1, None, 2), (None, None, None, 0, 1, 2), (Ellipsis, -1, None),
]


def test_none_and_ellipsis(onnx_agree, rng):
    x = T.tensor3("x")
    xs = T.tensor("int32", (2, 3, 4), name="xs")
    outputs = [out for index in NONE_AND_ELLIPSIS for out in (x[index], xs[index])]
    onnx_agree([x, xs], outputs, rng.normal(size=(2, 3, 4)), values_of("int32", (2, 3, 4), rng))


# ---------------------------------------------------------------------------- integer arrays
CONSTANT_ARRAYS = [
    np.array([0, 2, 1]), np.array([-1, 0, -3]), np.array([1, 1, 1, 1]), np.array([[0, 1], [2, 0]]),
    np.array([0, 2], dtype="int8"), np.array([0, 2], dtype="uint8"), np.array([2, 0], dtype="int32"),
    [0, 2], [[1], [2]], [-1], np.array(1), np.array([], dtype="int64"), [],
]


def test_one_constant_integer_array(onnx_agree, rng):
    x = T.matrix("x")
    outputs = [out for index in CONSTANT_ARRAYS for out in (x[index], x[:, index], x[index, 1:], x[1, index])]
    onnx_agree([x], outputs, rng.normal(size=(3, 4)))


@pytest.mark.parametrize("make, value", [
    (T.ivector, np.array([0, 2, -1], dtype="int32")),
    (T.lvector, np.array([1, 1, 0, 2, 2], dtype="int64")),
    (T.imatrix, np.array([[0, 1], [2, -3]], dtype="int32")),
    (T.lmatrix, np.zeros((0, 2), dtype="int64")),
    (T.bvector, np.array([2, -1], dtype="int8")),
    (lambda name: T.tensor("uint8", (None,), name=name), np.array([2, 0, 1], dtype="uint8")),
], ids=["int32", "int64", "int32-matrix", "empty", "int8", "uint8"])
def test_one_symbolic_integer_array(onnx_agree, rng, make, value):
    x, idx = T.matrix("x"), make("idx")
    outputs = [x[idx], x[:, idx], x[idx, 1:], x[1, idx], x[idx, idx], x[None, idx], x[idx, None], x[::-1, idx]]
    onnx_agree([x, idx], outputs, rng.normal(size=(3, 4)), value)


ADVANCED = [
    # adjacent advanced indices: their dims stay in place
    (slice(None), [0, 2], [1, 3]), ([0, 1], [1, 2], slice(None)), (slice(1, None), [[0], [2]], [1, 3]),
    (0, [1, 2], slice(None)), (slice(None), 0, [1, 3]), (slice(None), [1, 2], 0), (None, [0, 1], [2, 0], slice(None)),
    ([0, -1], [-2, 1], [3, 3]), (slice(None, None, -1), [[1, 2]], [[0], [3]]),
    # separated by a slice, None or Ellipsis: numpy moves the advanced dims to the front
    ([0, 1], slice(None), [1, 3]), (0, slice(None), [1, 3]), ([0, 1], slice(None), 2),
    ([[0], [1]], slice(1, 3), [2, 3, 0]), (0, None, [1, 2]), ([1], None, 0, slice(None)), ([0, 1], None, [2, 0]),
    (slice(None, None, -1), [0, 1], None, [1, 2]), (Ellipsis, [0, 1], slice(None), [1, 2]), ([0, 1], Ellipsis, [1, 2]),
    (np.array(0), slice(None), [1, 2]),
    # an Ellipsis that stands for no axis still separates advanced indices in numpy
    (slice(None), [0, 1], Ellipsis, 0, 1), ([0, 1], 2, Ellipsis, slice(None), 1),
]


def test_several_integer_arrays_adjacent_and_separated(onnx_agree, rng):
    """numpy keeps the broadcast index dims where adjacent advanced indices are, and moves them
    first when a slice, None or Ellipsis separates them."""
    x = T.tensor4("x")
    xs = T.tensor("int8", (2, 3, 4, 5), name="xs")
    outputs = [out for index in ADVANCED for out in (x[index], xs[index])]
    onnx_agree([x, xs], outputs, rng.normal(size=(2, 3, 4, 5)), values_of("int8", (2, 3, 4, 5), rng))


def test_symbolic_integer_arrays_mixed_with_symbolic_ints_and_slices(onnx_agree, rng):
    x = T.tensor3("x")
    i, j = T.lvector("i"), T.tensor("int8", (None, None), name="j")
    n, step = T.iscalar("n"), T.lscalar("step")
    outputs = [x[i, n], x[i, ::step, j], x[n, j, i[:1]], x[j, :n, n], x[[n, 0], i], x[i, None, j],
               x[..., i[0], j], x[n:, j][i[:1]]]
    onnx_agree([x, i, j, n, step], outputs, value_sets=[
        [rng.normal(size=(3, 4, 5)), np.array([0, -1]), np.array([[1, 2], [-1, 0]], dtype="int8"), np.int32(a),
         np.int64(b)] for a, b in ((0, 1), (-1, -1), (2, 2))])


# ---------------------------------------------------------------------------- set_subtensor / inc_subtensor
SET_INC = [
    (1,), (-1,), (slice(1, None),), (slice(None, None, -2),), (slice(None), 2), (Ellipsis, -1),
    (None, 0), (None, slice(None), None, 1), ([0, 2],), ([2, 0, 2, 2],), (slice(None), [1, 1, 3]),
    ([0, 1], [2, 2]), ([[0, 1], [1, 1]], slice(1, 3)), ([0, 0], None, [1, 1]), (slice(None, None, -1), [3, 0, 3]),
    (0, [1, 1]), ([0, 1], slice(None), None), (slice(-10, 10, 3), [-1, -4]), (slice(-7, None, -1),),
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_set_and_inc_on_constant_indices(onnx_agree, rng, dtype):
    """Every kind of index, repeated positions included (inc accumulates them, in the dtype of x:
    narrow ints wrap)."""
    x = T.tensor(dtype, (None, None), name="x")
    inputs, outputs, values = [x], [], [values_of(dtype, (3, 4), rng)]
    for k, index in enumerate(SET_INC):
        np_index = tuple(np.asarray(i) if isinstance(i, list) else i for i in index)
        target = values[0][np_index].shape
        y = T.tensor(dtype, (None,) * len(target), name=f"y{k}")
        inputs.append(y)
        values.append(values_of(dtype, target, rng))
        outputs += [T.set_subtensor(x[index], y), T.inc_subtensor(x[index], y)]
    onnx_agree(inputs, outputs, *values)


def test_inc_with_repeated_positions_accumulates(onnx_agree, rng):
    x, idx, y = T.vector("x"), T.lvector("idx"), T.vector("y")
    m = T.matrix("m")
    rows = [0, 2, 0, 0]
    outputs = [T.inc_subtensor(x[idx], y), T.inc_subtensor(x[idx], 1.0), T.inc_subtensor(x[idx][::-1], y),
               T.inc_subtensor(x[idx[:3]], y[0])]
    outputs += [T.inc_subtensor(m[index], 2.5) for index in
                ((rows,), (slice(None), rows), (rows, 1), (rows, [1, 1, 1, 3]), (rows, slice(1, 3)))]
    iv = np.array([1, 1, 3, 1, -1, 4])
    onnx_agree([x, idx, y, m], outputs, np.zeros(5), iv, rng.normal(size=6), rng.normal(size=(3, 4)))
    got = ss_py([x, idx, y], outputs[1], np.zeros(5), iv, np.zeros(6))
    np.testing.assert_array_equal(got, np.bincount(iv % 5, minlength=5).astype(float))


def test_set_with_repeated_positions_keeps_the_last_value(onnx_agree):
    x, idx = T.vector("x"), T.lvector("idx")
    y = T.vector("y")
    onnx_agree([x, idx, y], [T.set_subtensor(x[idx], y)], np.zeros(4), np.array([2, 2, 0, -2]),
               np.array([1.0, 2.0, 3.0, 4.0]))


def test_set_and_inc_with_symbolic_indices(onnx_agree, rng):
    x = T.matrix("x")
    i, j, k = T.lscalar("i"), T.iscalar("j"), T.lscalar("k")
    idx, y = T.ivector("idx"), T.scalar("y")
    outputs = [
        T.set_subtensor(x[i], y), T.inc_subtensor(x[i, j], y), T.set_subtensor(x[i:j:k], y),
        T.inc_subtensor(x[::k, j], y), T.inc_subtensor(x[idx, j], y), T.set_subtensor(x[i:, idx], y),
        T.inc_subtensor(x[idx, :, None], y), T.inc_subtensor(x[i::k], x[0]), T.set_subtensor(x[..., j], x[:, 0]),
    ]
    xv, iv = rng.normal(size=(5, 4)), np.array([0, 3, 3, -1], dtype="int32")
    onnx_agree([x, i, j, k, idx, y], outputs, value_sets=[
        [xv, np.int64(a), np.int32(b), np.int64(c), iv, np.float64(2.5)]
        for a, b, c in [(1, 3, 1), (-2, 0, -1), (0, -1, 2), (4, 1, -2), (-5, -4, 3)]])


@pytest.mark.parametrize("index, yshape", [
    ((slice(None),), ()), ((slice(None),), (4,)), ((slice(None),), (1, 4)), ((slice(None),), (3, 1)),
    ((0,), ()), ((0,), (1,)), ((slice(1, None), slice(None, 2)), (2,)), (([0, 2],), (4,)), (([0, 2],), (2, 1)),
    (([0, 0, 1],), (1, 4)), ((slice(None), [1, 1]), (2,)),
], ids=repr)
def test_set_and_inc_broadcast_the_value(onnx_agree, rng, index, yshape):
    x, y = T.matrix("x"), T.tensor("float64", (None,) * len(yshape), name="y")
    onnx_agree([x, y], [T.set_subtensor(x[index], y), T.inc_subtensor(x[index], y)], rng.normal(size=(3, 4)),
               rng.normal(size=yshape))


def test_set_and_inc_values_of_other_dtypes(onnx_agree, rng):
    """The value is cast to x's dtype (like numpy's assignment); inc wraps in x's dtype."""
    x, b, i = T.fmatrix("x"), T.tensor("int8", (None,), name="b"), T.imatrix("i")
    outputs = [T.set_subtensor(x[1], 2), T.set_subtensor(x[1], np.float32(1.5)), T.inc_subtensor(x[:, 0], True),
               T.inc_subtensor(x[:, 0], b[:3]), T.set_subtensor(x[2], b[:4]), T.inc_subtensor(i[[0, 0], 1], 7),
               T.set_subtensor(i[2], b[:4]), T.inc_subtensor(b[[0, 0, 0]], np.int8(100))]
    onnx_agree([x, b, i], outputs, rng.normal(size=(3, 4)).astype("float32"),
               np.array([1, 2, 3, 4, 127], dtype="int8"), values_of("int32", (3, 4), rng))


def test_set_and_inc_on_constants_and_chained(onnx_agree, rng):
    y, x = T.scalar("y"), T.vector("x")
    c = T.constant(np.arange(6.0))
    chained = T.set_subtensor(x[0], 5.0)
    chained = T.inc_subtensor(chained[1:], chained[:-1])
    outputs = [T.set_subtensor(c[2:4], y), T.inc_subtensor(c[[1, 1]], y) * 2, chained,
               T.set_subtensor(x[x.shape[0] - 1:], y)]
    onnx_agree([y, x], outputs, np.float64(9.0), rng.normal(size=4))
