"""push_out_seq on indexing: maps of ``set_subtensor``/``inc_subtensor`` into a loop-invariant
base (the Theano guide's example, benchmark W9) become one batched advanced-index assignment,
and ``x_t[i_t]`` one gather (``rewrites.vectorize_subtensor``).

Each test compiles with ``push_out_seq`` alone (or the default rewrites where noted), checks
the structure left and the report, and compares the numbers with the reference interpreter
(mode "py") and with a numpy loop; errors must be the same kind both ways.
"""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.tensor.creation import Alloc
from symscan.tensor.subtensor import ARRAY, INT, IncSubtensor, Subtensor

RULE = ["push_out_seq"]


def _w9(set_instead_of_inc=True, values=None, go_backwards=False):
    """The guide's map: each step puts one value at (loc[0], loc[1]) of zeros shaped like ``model``."""
    loc, model = T.imatrix("loc"), T.matrix("model")
    values = T.vector("values") if values is None else values
    put = T.set_subtensor if set_instead_of_inc else T.inc_subtensor
    out, _ = ss.scan(lambda l, v, m: put(T.zeros_like(m)[l[0], l[1]], v), sequences=[loc, values],
                     non_sequences=model, go_backwards=go_backwards)
    return [loc, values, model], out


def _w9_loop(loc, values, model, set_instead_of_inc=True):
    """The numpy loop the map stands for (per step: a fresh zero array, one assignment)."""
    rows = []
    for (i, j), v in zip(loc, values):
        z = np.zeros_like(model)
        if set_instead_of_inc:
            z[i, j] = v
        else:
            z[i, j] += v
        rows.append(z)
    return np.stack(rows) if rows else np.zeros((0,) + model.shape)


def _locations(rng, n, shape=(3, 4)):
    """Locations in range, negative ones included (they wrap per step)."""
    return np.stack([rng.integers(-shape[0], shape[0], n), rng.integers(-shape[1], shape[1], n)], 1).astype("int32")


def _assignment(f) -> IncSubtensor:
    (node,) = [n for n in f.fgraph.apply_nodes if isinstance(n.op, IncSubtensor)]
    return node


# ---------------------------------------------------------------------------- W9
@pytest.mark.parametrize("set_instead_of_inc", [True, False])
def test_w9_map_is_one_assignment_into_zeros(scan_rw, rng, set_instead_of_inc):
    inputs, out = _w9(set_instead_of_inc)
    value_sets = [[_locations(rng, n), rng.normal(size=n), np.ones((3, 4))] for n in (0, 1, 2, 9)]
    f = scan_rw.check(inputs, out, RULE, *value_sets)
    assert scan_rw.scans(f) == []
    (record,) = scan_rw.records(f, "push_out_seq")
    assert "loop is gone" in record.detail
    node = _assignment(f)
    assert node.op.spec == (ARRAY, ARRAY, ARRAY) and node.op.set_instead_of_inc == set_instead_of_inc
    base = node.inputs[0].owner  # zeros of the whole batch: one Alloc of the constant 0, never a copy of model
    assert isinstance(base.op, Alloc) and base.inputs[0].data == 0 and base.inputs[0].ndim == 0
    for values in value_sets:
        np.testing.assert_array_equal(f(*values), _w9_loop(*values, set_instead_of_inc))


def test_w9_with_the_default_rewrites_has_no_loop(scan_rw, same_as_py, rng):
    """push_out_non_seq moves zeros_like(model) out first: the base is then a non-sequence."""
    inputs, out = _w9()
    f = ss.function(inputs, out, mode="fast")
    assert scan_rw.scans(f) == [] and scan_rw.records(f, "push_out_seq")
    assert isinstance(_assignment(f).inputs[0].owner.op, Alloc)
    for n in (0, 1, 7):
        values = [_locations(rng, n), rng.normal(size=n), np.ones((3, 4))]
        np.testing.assert_array_equal(same_as_py(f, *values), _w9_loop(*values))


def test_the_benchmark_workload_has_no_loop(scan_rw):
    from benchmarks.workloads import set_subtensor

    work = set_subtensor(40, (5, 6))
    f = ss.function(work.inputs, work.outputs[0], mode="fast")
    assert scan_rw.scans(f) == []
    np.testing.assert_array_equal(f(*work.values), work.numpy_loop(*work.values)[0])


@pytest.mark.parametrize("go_backwards", [False, True])
def test_negative_locations_wrap_per_step_and_sequences_of_other_lengths(scan_rw, rng, go_backwards):
    inputs, out = _w9(go_backwards=go_backwards)
    loc = np.array([[-1, -4], [-3, 3], [2, -1], [0, 0]], "int32")
    value_sets = [[loc, rng.normal(size=4), np.ones((3, 4))], [loc, rng.normal(size=2), np.ones((3, 4))],
                  [loc[:3], rng.normal(size=6), np.zeros((3, 4))]]
    f = scan_rw.check(inputs, out, RULE, *value_sets)
    assert scan_rw.scans(f) == []
    v = value_sets[1][1]  # 2 steps: the first two locations, or backwards the last two reversed
    steps = (loc[2:][::-1], v[::-1]) if go_backwards else (loc[:2], v)
    np.testing.assert_array_equal(f(*value_sets[1]), _w9_loop(*steps, np.ones((3, 4))))


@pytest.mark.parametrize("set_instead_of_inc", [True, False])
@pytest.mark.parametrize("bad", [(3, 0), (0, -5), (-4, 1)])
def test_an_out_of_range_location_is_still_an_index_error(scan_rw, same_as_py, rng, set_instead_of_inc, bad):
    inputs, out = _w9(set_instead_of_inc)
    f = scan_rw.compile(inputs, out, RULE)
    assert scan_rw.scans(f) == []
    loc = _locations(rng, 5)
    loc[3] = bad
    error = same_as_py(f, loc, rng.normal(size=5), np.ones((3, 4)))
    assert isinstance(error, IndexError) and "out of bounds" in str(error)
    with pytest.raises(IndexError):
        ss.function(inputs, out, mode="py")(loc, rng.normal(size=5), np.ones((3, 4)))


def test_zero_steps_never_check_an_index_no_step_reads(scan_rw):
    """A loop of zero steps evaluates no index; the batched form reads none either (an int
    that is the same every step is a one-element array, checked only where a step reads it)."""
    values, model = T.vector("values"), T.matrix("model")
    out, _ = ss.scan(lambda v, m: T.set_subtensor(T.zeros_like(m)[7, 1], v), sequences=values, non_sequences=model)
    f = scan_rw.compile([values, model], out, RULE)
    assert scan_rw.scans(f) == []
    assert f(np.zeros(0), np.ones((3, 4))).size == 0
    assert ss.function([values, model], out, mode="py")(np.zeros(0), np.ones((3, 4))).size == 0
    for mode_f in (f, ss.function([values, model], out, mode="py")):
        with pytest.raises(IndexError):
            mode_f(np.ones(2), np.ones((3, 4)))


def test_float32_values_into_float64_zeros(scan_rw, rng):
    values = T.fvector("values")
    inputs, out = _w9(values=values)
    value_sets = [[_locations(rng, n), rng.normal(size=n).astype("float32"), np.ones((3, 4))] for n in (0, 5)]
    f = scan_rw.check(inputs, out, RULE, *value_sets)
    assert scan_rw.scans(f) == [] and out.dtype == "float64"
    got = f(*value_sets[1])
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, _w9_loop(*value_sets[1]))


def test_an_integer_base_with_integer_values(scan_rw, rng):
    loc, v, m = T.imatrix("loc"), T.ivector("v"), T.imatrix("m")
    out, _ = ss.scan(lambda l, v, m: T.inc_subtensor(T.zeros_like(m)[l[0], l[1]], v), sequences=[loc, v],
                     non_sequences=m)
    values = [_locations(rng, 6), np.arange(6, dtype="int32") - 3, np.ones((3, 4), "int32")]
    f = scan_rw.check([loc, v, m], out, RULE, values)
    assert scan_rw.scans(f) == [] and f(*values).dtype == np.int32


# ---------------------------------------------------------------------------- repeated positions
@pytest.mark.parametrize("set_instead_of_inc", [True, False])
def test_positions_repeated_within_a_step_accumulate_or_the_last_wins(scan_rw, set_instead_of_inc):
    """Per-step index arrays with repeats: inc adds them all (numpy.add.at), set keeps the last;
    across steps positions never collide."""
    idx, values, model = T.imatrix("idx"), T.matrix("values"), T.vector("model")
    put = T.set_subtensor if set_instead_of_inc else T.inc_subtensor
    out, _ = ss.scan(lambda i, v, m: put(T.zeros_like(m)[i], v), sequences=[idx, values], non_sequences=model)
    index = np.array([[1, 1, 2], [0, 0, 0], [-1, 3, -1]], "int32")
    vals = np.array([[1.0, 2.0, 4.0], [8.0, 16.0, 32.0], [64.0, 128.0, 256.0]])
    f = scan_rw.check([idx, values, model], out, RULE, [index, vals, np.ones(4)])
    assert scan_rw.scans(f) == []
    expected = np.zeros((3, 4))
    for t in range(3):
        if set_instead_of_inc:
            expected[t][index[t]] = vals[t]
        else:
            np.add.at(expected[t], index[t], vals[t])
    np.testing.assert_array_equal(f(index, vals, np.ones(4)), expected)
    assert expected[1, 0] == (32.0 if set_instead_of_inc else 56.0)  # the repeat was exercised


# ---------------------------------------------------------------------------- values and indices
def test_a_loop_invariant_value(scan_rw, rng):
    loc, model, c = T.imatrix("loc"), T.matrix("model"), T.scalar("c")
    out, _ = ss.scan(lambda l, m, c: T.inc_subtensor(T.zeros_like(m)[l[0], l[1]], c), sequences=loc,
                     non_sequences=[model, c])
    value_sets = [[_locations(rng, n), np.ones((3, 4)), 2.5] for n in (0, 6)]
    f = scan_rw.check([loc, model, c], out, RULE, *value_sets)
    assert scan_rw.scans(f) == []
    np.testing.assert_array_equal(f(*value_sets[1]), _w9_loop(value_sets[1][0], np.full(6, 2.5), np.ones((3, 4))))


def test_a_constant_location_with_per_step_values(scan_rw, rng):
    values, model = T.vector("values"), T.matrix("model")
    out, _ = ss.scan(lambda v, m: T.set_subtensor(T.zeros_like(m)[1, -1], v), sequences=values, non_sequences=model)
    f = scan_rw.check([values, model], out, RULE, [rng.normal(size=5), np.ones((3, 4))], [np.zeros(0), np.ones((3, 4))])
    assert scan_rw.scans(f) == []
    v = rng.normal(size=5)
    np.testing.assert_array_equal(f(v, np.ones((3, 4))), _w9_loop(np.tile([1, -1], (5, 1)), v, np.ones((3, 4))))


@pytest.mark.parametrize("index", ["row", "column", "rows 1:3"])
def test_basic_slices_in_the_index(scan_rw, rng, index):
    i, X, model = T.ivector("i"), T.matrix("X"), T.matrix("model")
    place = {"row": lambda z, i: z[i, :], "column": lambda z, i: z[:, i], "rows 1:3": lambda z, i: z[1:3]}[index]
    out, _ = ss.scan(lambda i, x, m: T.inc_subtensor(place(T.zeros_like(m), i), x), sequences=[i, X],
                     non_sequences=model)
    width = {"row": 4, "column": 3, "rows 1:3": 4}[index]
    value_sets = [[np.array([0, 2, -1, 1], "int32")[:n], rng.normal(size=(n, width)), np.ones((3, 4))] for n in (0, 4)]
    f = scan_rw.check([i, X, model], out, RULE, *value_sets)
    assert scan_rw.scans(f) == []
    i_values, x_values, m = value_sets[1]
    expected = np.zeros((4, 3, 4))
    for t in range(4):
        place(expected[t], i_values[t])[...] += x_values[t]
    np.testing.assert_array_equal(f(*value_sets[1]), expected)


def test_a_constant_index_array_after_a_slice_puts_a_full_slice_in_front(scan_rw, rng):
    """``zeros[:, [1, 1, 3]]``: arange(n) in front would move the advanced dims first; with the
    base's shape static, building the node checked the index, so ``out[:, :, [1, 1, 3]]`` is safe."""
    V = T.tensor3("V")
    out, _ = ss.scan(lambda v: T.inc_subtensor(T.zeros((3, 4, 5))[:, [1, 1, 3]], v), sequences=V)
    value_sets = [[rng.normal(size=(n, 3, 5))] for n in (0, 2)]  # each step's value broadcasts to (3, 3, 5)
    f = scan_rw.check([V], out, RULE, *value_sets)
    assert scan_rw.scans(f) == []
    assert _assignment(f).op.spec == (("slice", False, False, False), ("slice", False, False, False), ARRAY)
    v = value_sets[1][0]
    expected = np.zeros((2, 3, 4, 5))
    for t in range(2):
        np.add.at(expected[t], (slice(None), [1, 1, 3]), v[t])
    np.testing.assert_array_equal(f(v), expected)


def test_a_loop_invariant_base_that_is_not_a_fill_is_tiled(scan_rw, rng):
    loc, values, M = T.imatrix("loc"), T.vector("values"), T.matrix("M")
    out, _ = ss.scan(lambda l, v, M: T.set_subtensor(M[l[0], l[1]], v), sequences=[loc, values], non_sequences=M)
    value_sets = [[_locations(rng, n), rng.normal(size=n), rng.normal(size=(3, 4))] for n in (0, 1, 6)]
    f = scan_rw.check([loc, values, M], out, RULE, *value_sets)
    assert scan_rw.scans(f) == []
    base = _assignment(f).inputs[0].owner
    assert isinstance(base.op, Alloc) and base.inputs[0].ndim == 2  # M broadcast along the steps
    loc_values, v, m = value_sets[2]
    expected = np.stack([m] * 6)
    expected[np.arange(6), loc_values[:, 0], loc_values[:, 1]] = v
    np.testing.assert_array_equal(f(*value_sets[2]), expected)


def test_a_per_step_base(scan_rw, rng):
    X, i = T.matrix("X"), T.ivector("i")
    out, _ = ss.scan(lambda x, i: T.inc_subtensor(x[i], 5.0), sequences=[X, i])
    f = scan_rw.check([X, i], out, RULE, [rng.normal(size=(4, 3)), np.array([0, -1, 2, 1], "int32")],
                      [rng.normal(size=(0, 3)), np.zeros(0, "int32")])
    assert scan_rw.scans(f) == [] and scan_rw.nodes(f, Alloc) == []
    x = rng.normal(size=(4, 3))
    expected = x.copy()
    expected[np.arange(4), [0, -1, 2, 1]] += 5.0
    np.testing.assert_array_equal(f(x, np.array([0, -1, 2, 1], "int32")), expected)


# ---------------------------------------------------------------------------- gathers
def test_a_gather_of_rows_is_one_indexing(scan_rw, rng):
    i, W = T.ivector("i"), T.matrix("W")
    out, _ = ss.scan(lambda i, W: W[i] * 2.0, sequences=i, non_sequences=W)
    value_sets = [[np.array([0, 2, -1], "int32"), rng.normal(size=(3, 4))], [np.zeros(0, "int32"), np.ones((3, 4))]]
    f = scan_rw.check([i, W], out, RULE, *value_sets)
    assert scan_rw.scans(f) == []
    W_input = f.fgraph.inputs[1]
    assert [n.op.spec for n in scan_rw.nodes(f, Subtensor) if n.inputs[0] is W_input] == [(ARRAY,)]
    w = value_sets[0][1]
    np.testing.assert_array_equal(f(*value_sets[0]), np.stack([w[0], w[2], w[-1]]) * 2.0)
    for mode_f in (f, ss.function([i, W], out, mode="py")):
        with pytest.raises(IndexError, match="out of bounds"):
            mode_f(np.array([0, 3], "int32"), w)


def test_slices_and_checked_constants_of_a_sequence_element_are_views(scan_rw, rng):
    """``x_t[1:]`` and ``x_t[0]`` with x's row length static: ``X[:, 1:]`` and ``X[:, 0]``
    (nothing there can fail at run time, so no gather is needed)."""
    X = T.tensor("float64", shape=(None, 3), name="X")
    out, _ = ss.scan(lambda x: x[1:] * 2.0 + x[0], sequences=X)
    value_sets = [[rng.normal(size=(n, 3))] for n in (0, 1, 5)]
    f = scan_rw.check([X], out, RULE, *value_sets)
    assert scan_rw.scans(f) == []
    specs = {n.op.spec for n in scan_rw.nodes(f, Subtensor)}
    every_step = ("slice", False, False, False)
    assert {(every_step, ("slice", True, False, False)), (every_step, INT)} <= specs
    assert not any(ARRAY in spec for spec in specs)
    x = value_sets[2][0]
    np.testing.assert_array_equal(f(x), x[:, 1:] * 2.0 + x[:, :1])


# ---------------------------------------------------------------------------- ONNX
@pytest.mark.parametrize("set_instead_of_inc", [True, False])
def test_the_batched_assignment_exports_without_a_loop(scan_rw, export_check, rng, set_instead_of_inc):
    inputs, out = _w9(set_instead_of_inc)
    f = scan_rw.compile(inputs, out, RULE)
    loc = _locations(rng, 6)
    loc[2] = loc[4]  # a position repeated in other steps: no collision across steps
    model = export_check(f, [loc, rng.normal(size=6), np.ones((3, 4))],
                         [_locations(rng, 1), rng.normal(size=1), np.ones((3, 4))],
                         [_locations(rng, 0), rng.normal(size=0), np.ones((3, 4))])
    assert export_check.loop_kinds(model.graph) == []


# ---------------------------------------------------------------------------- what stays a loop
def test_a_base_that_is_the_state_stays_in_the_loop(scan_rw, rng):
    loc, values, h0 = T.imatrix("loc"), T.vector("values"), T.matrix("h0")
    out, _ = ss.scan(lambda l, v, h: T.set_subtensor(h[l[0], l[1]], v), sequences=[loc, values], outputs_info=h0)
    value_sets = [[_locations(rng, n), rng.normal(size=n), rng.normal(size=(3, 4))] for n in (1, 5)]
    f = scan_rw.check([loc, values, h0], out, RULE, *value_sets)
    node, _ = scan_rw.only_scan(f)
    assert len(scan_rw.nodes(node, IncSubtensor)) == 1
    loc_values, v, h = value_sets[1]
    expected = []
    for (a, b), x in zip(loc_values, v):
        h = h.copy()
        h[a, b] = x
        expected.append(h)
    np.testing.assert_array_equal(f(*value_sets[1]), np.stack(expected))


def test_an_assignment_read_inside_a_recurrence_is_not_tiled(scan_rw, rng):
    """Moved out, it would become a sequence holding one base-sized array per step (where the
    loop holds one): push_out_seq declines, and with the default rewrites no rule tiles it."""
    loc, values, s0, model = T.imatrix("loc"), T.vector("values"), T.matrix("s0"), T.matrix("model")
    out, _ = ss.scan(lambda l, v, s, m: s + T.set_subtensor(T.zeros_like(m)[l[0], l[1]], v),
                     sequences=[loc, values], outputs_info=s0, non_sequences=model)
    value_sets = [[_locations(rng, n), rng.normal(size=n), rng.normal(size=(3, 4)), np.ones((3, 4))] for n in (1, 6)]
    f = scan_rw.check([loc, values, s0, model], out, RULE, *value_sets)
    node, _ = scan_rw.only_scan(f)
    assert len(scan_rw.nodes(node, IncSubtensor)) == 1
    (record,) = scan_rw.records(f, "push_out_seq", fired=False)
    assert "only as a map output" in record.detail
    last = ss.function([loc, values, s0, model], out[-1], mode="fast")
    assert scan_rw.nodes(last, Alloc) == []  # no rule built the per-step copies
    loc_values, v, s, m = value_sets[1]
    np.testing.assert_allclose(last(*value_sets[1]), s + _w9_loop(loc_values, v, m).sum(axis=0), rtol=1e-12)


@pytest.mark.parametrize("why, step", [
    ("advanced indices after a slice", lambda i, m: T.inc_subtensor(T.zeros_like(m)[:, i], 1.0)),
    ("a slice bound changes", lambda i, m: T.inc_subtensor(T.zeros_like(m)[i[0]:i[0] + 2], 1.0)),
])
def test_indexing_without_a_batched_form_stays_and_says_why(scan_rw, rng, why, step):
    idx, model = T.imatrix("idx"), T.tensor3("model")
    out, _ = ss.scan(step, sequences=idx, non_sequences=model)
    values = [np.array([[1, 1], [0, 2], [-1, 0]], "int32"), np.ones((3, 4, 5))]
    f = scan_rw.check([idx, model], out, RULE, values)
    node, _ = scan_rw.only_scan(f)
    assert len(scan_rw.nodes(node, IncSubtensor)) == 1
    assert any(why in r.detail for r in scan_rw.records(f, "push_out_seq", fired=False))
