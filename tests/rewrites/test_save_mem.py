"""save_mem alone: an output read only near its end gets a ring buffer of the needed length.

Each test compiles with ``rewrites=["save_mem"]`` only, checks the ring lengths on the Scan
node (``node.op.info.rings``, one entry per buffered output, None for a full buffer), the
report, and the numbers against mode "py" for n_steps 0, 1, 2 and many.
"""

import tracemalloc

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.scan.args import ScanArgs

STEPS = [0, 1, 2, 3, 7]


def _compile(inputs, outputs, rewrites=("save_mem",)):
    return ss.function(inputs, outputs, mode="fast", rewrites=list(rewrites))


def _rings(f, scan_nodes):
    (node,) = scan_nodes(f)
    return node.op.info.rings


def _save_mem_records(f):
    return [r for r in f.rewrite_report() if r.rule == "save_mem"]


def _power(n_steps):
    """The guide's A**k: result[i] is A**(i + 1)."""
    A = T.vector("A")
    result, updates = ss.scan(lambda prior, A: prior * A, outputs_info=T.ones_like(A), non_sequences=A,
                              n_steps=n_steps)
    assert not updates
    return A, result


# ---------------------------------------------------------------------------- A**k
def test_power_last_value_keeps_one_row(scan_nodes, same_as_py, rng):
    k = T.iscalar("k")
    A, result = _power(k)
    f = _compile([A, k], result[-1])
    assert _rings(f, scan_nodes) == (1,)
    (record,) = _save_mem_records(f)
    assert record.fired and "keeps its last 1 step" in record.detail
    a = rng.uniform(0.5, 1.5, size=6)
    for steps in STEPS[1:]:
        np.testing.assert_allclose(same_as_py(f, a, steps), a ** steps)
    assert isinstance(same_as_py(f, a, 0), IndexError)  # no step: result[-1] fails as in mode "py"


def test_without_save_mem_the_buffer_holds_every_step(scan_nodes):
    k = T.iscalar("k")
    A, result = _power(k)
    assert _rings(ss.function([A, k], result[-1], rewrites=["-save_mem", "-vectorize"]), scan_nodes) == ()
    assert _rings(ss.function([A, k], result[-1], mode="py"), scan_nodes) == ()
    # on by default in "fast" (where the vectorize rules would then remove the loop)
    assert _rings(ss.function([A, k], result[-1], rewrites=["-vectorize"]), scan_nodes) == (1,)


@pytest.mark.parametrize("last", [1, 2, 4])
def test_power_last_k_values_keep_k_rows(last, scan_nodes, same_as_py, rng):
    k = T.iscalar("k")
    A, result = _power(k)
    f = _compile([A, k], result[-last:])
    assert _rings(f, scan_nodes) == (last,)
    a = rng.uniform(0.5, 1.5, size=3)
    for steps in STEPS:
        got = same_as_py(f, a, steps)
        expected = np.array([a ** i for i in range(1, steps + 1)]).reshape(steps, 3)[-last:]
        np.testing.assert_allclose(got, expected)


def test_index_n_steps_minus_one_is_the_last_row_via_sympy(scan_nodes, same_as_py, rng):
    k = T.iscalar("k")
    A, result = _power(k)
    for index in (k - 1, (k + 2) - 3, 2 * k - k - 1, T.cast(k, "int64") - 1):
        f = _compile([A, k], result[index])
        assert _rings(f, scan_nodes) == (1,)
        a = rng.uniform(0.5, 1.5, size=4)
        for steps in STEPS[1:]:
            np.testing.assert_allclose(same_as_py(f, a, steps), a ** steps)
        assert isinstance(same_as_py(f, a, 0), IndexError)


def test_negative_symbolic_n_steps_keeps_the_out_of_range_error(scan_nodes, same_as_py, rng):
    """n_steps=-3 runs 3 steps, so result[k - 1] is result[-4]: out of range in mode "py";
    the ring must not turn it into the last row."""
    k = T.iscalar("k")
    A, result = _power(k)
    f = _compile([A, k], result[k - 1])
    assert _rings(f, scan_nodes) == (1,)
    a = rng.uniform(0.5, 1.5, size=4)
    for steps in (-1, -3):
        assert isinstance(same_as_py(f, a, steps), IndexError)
    g = _compile([A, k], result[-1])  # a negative constant index still counts from the end
    np.testing.assert_allclose(same_as_py(g, a, -3), a ** 3)


@pytest.mark.parametrize("dtype", ["uint32", "int8", "int64"])
def test_index_n_steps_minus_one_in_other_integer_dtypes(dtype, scan_nodes, same_as_py, rng):
    k = T.tensor(dtype, shape=(), name="k")
    A, result = _power(k)
    f = _compile([A, k], result[k - 1])
    assert _rings(f, scan_nodes) == (1,)
    a = rng.uniform(0.5, 1.5, size=2)
    for steps in (1, 2, 5):
        np.testing.assert_allclose(same_as_py(f, a, steps), a ** steps)
    assert isinstance(same_as_py(f, a, 0), IndexError)
    if dtype[0] == "i":
        assert isinstance(same_as_py(f, a, -2), IndexError)


@pytest.mark.parametrize("index", ["k - 2", "i", "k - 1 with until"])
def test_indices_that_are_not_the_last_row_decline_with_a_reason(index, scan_nodes, same_as_py):
    k, i = T.iscalar("k"), T.iscalar("i")
    if index == "k - 1 with until":  # the number of rows is only known at run time
        result, _ = ss.scan(lambda h: (h * 2.0, ss.until(h > 10.0)), outputs_info=T.constant(1.0), n_steps=k)
        f = _compile([k], result[k - 1])
        args = [(steps,) for steps in (1, 3, 10)]
    else:
        A, result = _power(k)
        f = _compile([A, k, i], result[k - 2 if index == "k - 2" else i])
        args = [(np.arange(3.0), steps, 0) for steps in (2, 3, 5)]
    assert _rings(f, scan_nodes) == ()
    (record,) = _save_mem_records(f)
    assert not record.fired and "not a fixed distance from the end" in record.detail
    for values in args:
        same_as_py(f, *values)


def test_constant_n_steps_resolves_non_negative_indices(scan_nodes, same_as_py):
    result, _ = ss.scan(lambda h: h * 1.5 + 1.0, outputs_info=T.constant(1.0), n_steps=6)
    for out, ring in [(result[-1], (1,)), (result[5], (1,)), (result[2], (4,)), (result[-5:], (5,)),
                      (result[-5:-2], (5,))]:
        f = _compile([], out)
        assert _rings(f, scan_nodes) == ring
        same_as_py(f)


def test_constant_n_steps_declines_when_every_step_is_read(scan_nodes, same_as_py):
    result, _ = ss.scan(lambda h: h * 1.5 + 1.0, outputs_info=T.constant(1.0), n_steps=6)
    for out in (result[-6:], result[0]):
        f = _compile([], out)
        assert _rings(f, scan_nodes) == ()
        (record,) = _save_mem_records(f)
        assert not record.fired and "every step is read" in record.detail
        same_as_py(f)


def test_constant_n_steps_of_one_builds_no_loop(scan_nodes, same_as_py, rng):
    A, result = _power(1)
    f = _compile([A], result[-1])
    assert scan_nodes(f) == [] and _save_mem_records(f) == []
    a = rng.standard_normal(3)
    np.testing.assert_allclose(same_as_py(f, a), a)


# ---------------------------------------------------------------------------- static shapes
def test_outer_output_static_shapes(scan_nodes):
    x0 = T.tensor("float64", shape=(3, 2), name="x0")
    out, _ = ss.scan(lambda a, b: a + 0.5 * b, outputs_info=dict(initial=x0, taps=[-3, -1]), n_steps=6)
    assert out.type.shape == (6, 2)
    for read, ring, rows in [(out[-1], 1, 1), (out[-2:], 2, 2), (out[3], 3, 3)]:
        f = _compile([x0], read)
        (node,) = scan_nodes(f)
        assert node.op.info.rings == (ring,)
        assert node.outputs[0].type.shape == (rows, 2)  # the last steps, without the initial taps
        assert f.fgraph.outputs[0].type == read.type
    k = T.lscalar("k")
    sym, _ = ss.scan(lambda a, b: a + 0.5 * b, outputs_info=dict(initial=x0, taps=[-3, -1]), n_steps=k)
    f = _compile([x0, k], sym[-2:])
    assert scan_nodes(f)[0].outputs[0].type.shape == (None, 2)
    assert f.fgraph.outputs[0].type.shape == (None, 2)


def test_ring_output_types_follow_scan_args(scan_nodes):
    xs = T.tensor("float64", shape=(5, 4), name="xs")
    mapped, _ = ss.map(lambda x: x * 2.0, xs)
    f = _compile([xs], [mapped[-1], mapped[1]])
    (node,) = scan_nodes(f)
    assert node.op.info.rings == (4,)
    args = ScanArgs.from_node(node)
    assert [o.type for o in node.outputs] == args.outer_output_types()
    assert node.outputs[0].type.shape == (4, 4)
    assert [o.type.shape for o in f.fgraph.outputs] == [(4,), (4,)]


# ---------------------------------------------------------------------------- kinds of outputs
def test_reduce_and_folds_keep_one_row(scan_nodes, same_as_py, rng):
    xs = T.vector("xs")
    for view in (ss.reduce, ss.foldl, ss.foldr):
        out, _ = view(lambda x, acc: acc * 0.5 + x, xs, T.constant(0.0))
        f = _compile([xs], out)
        assert _rings(f, scan_nodes) == (1,)
        for n in (1, 2, 6):
            values = rng.standard_normal(n)
            seq = values[::-1] if view is ss.foldr else values
            expected = 0.0
            for v in seq:
                expected = expected * 0.5 + v
            np.testing.assert_allclose(same_as_py(f, values), expected)
        assert isinstance(same_as_py(f, np.zeros(0)), IndexError)


def _mit_sot_numpy(x0, steps):
    rows = list(x0)
    for _ in range(steps):
        rows.append(rows[-3] - 0.5 * rows[-1])
    return np.array(rows[3:]).reshape((steps,) + x0.shape[1:])


@pytest.mark.parametrize("last", [1, 2, 3, 5])
def test_mit_sot_ring_shorter_than_its_taps_still_reads_them(last, scan_nodes, same_as_py, rng):
    x0, k = T.matrix("x0"), T.lscalar("k")
    out, _ = ss.scan(lambda a, b: a - 0.5 * b, outputs_info=dict(initial=x0, taps=[-3, -1]), n_steps=k)
    f = _compile([x0, k], out[-last:])
    assert _rings(f, scan_nodes) == (last,)
    init = rng.standard_normal((3, 2))
    for steps in STEPS + [10]:
        np.testing.assert_allclose(same_as_py(f, init, steps), _mit_sot_numpy(init, steps)[-last:])
    last_only = _compile([x0, k], out[-1])
    for steps in (1, 2, 3, 4, 9):
        np.testing.assert_allclose(same_as_py(last_only, init, steps), _mit_sot_numpy(init, steps)[-1])


def test_nit_sot_rings(scan_nodes, same_as_py, rng):
    xs = T.matrix("xs")
    squares, _ = ss.map(lambda x: (x ** 2).sum(), xs)
    for read, ring in [(squares[-1], 1), (squares[-3:], 3), (squares[-2], 2)]:
        f = _compile([xs], read)
        assert _rings(f, scan_nodes) == (ring,)
        (record,) = _save_mem_records(f)
        assert record.fired and "output 0" in record.detail
        for n in (1, 2, 3, 8):
            same_as_py(f, rng.standard_normal((n, 2)))
        assert isinstance(same_as_py(f, np.zeros((0, 2))), IndexError) or ring == 3


def test_until_with_the_last_value(scan_nodes, same_as_py):
    k = T.lscalar("k")
    out, _ = ss.scan(lambda h: (h * 2.0, ss.until(h * 2.0 > 50.0)), outputs_info=T.constant(1.0), n_steps=k)
    for read, ring in [(out[-1], 1), (out[-3:], 3)]:
        f = _compile([k], read)
        (node,) = scan_nodes(f)
        assert node.op.info.rings == (ring,) and node.op.info.as_while
        assert node.outputs[0].type.shape == (None,)
        for steps in (1, 2, 3, 5, 6, 100):  # stops after 6 steps (64 > 50)
            same_as_py(f, steps)
        if ring == 1:
            assert same_as_py(f, 100) == 64.0
            assert isinstance(same_as_py(f, 0), IndexError)
        else:
            np.testing.assert_array_equal(same_as_py(f, 100), [16.0, 32.0, 64.0])
            assert same_as_py(f, 0).shape == (0,)


def test_go_backwards(scan_nodes, same_as_py, rng):
    xs = T.vector("xs")
    out, _ = ss.scan(lambda x, acc: acc * 0.5 + x, sequences=xs, outputs_info=T.constant(0.0), go_backwards=True)
    f = _compile([xs], [out[-1], out[-2:]])
    (node,) = scan_nodes(f)
    assert node.op.info.go_backwards and node.op.info.rings == (2,)
    for n in (2, 3, 7):
        values = rng.standard_normal(n)
        acc, history = 0.0, []
        for v in values[::-1]:
            acc = acc * 0.5 + v
            history.append(acc)
        last, last_two = same_as_py(f, values)
        np.testing.assert_allclose(last, history[-1])
        np.testing.assert_allclose(last_two, history[-2:])
    last, last_two = same_as_py(f, values[:1])  # one step: out[-2:] has one row
    assert last == values[0] and last_two.shape == (1,)
    assert isinstance(same_as_py(f, values[:0]), IndexError)


def test_several_outputs_with_different_needs(scan_nodes, same_as_py, rng):
    xs, x0 = T.vector("xs"), T.vector("x0")

    def step(x, a2, a1, b, c):
        return a2 + x, b * 0.9 + x, c + a1

    (fib, decay, total), _ = ss.scan(step, sequences=xs,
                                     outputs_info=[dict(initial=x0, taps=[-2, -1]), T.constant(0.0),
                                                   T.constant(0.0)])
    squares, _ = ss.map(lambda x: x * x, xs)  # a second scan: whole output read
    f = _compile([xs, x0], [fib[-1], decay[-3:], total, squares])
    rings = sorted(node.op.info.rings for node in scan_nodes(f))
    assert rings == [(), (1, 3, None)]
    records = _save_mem_records(f)
    assert any(r.fired and "keeps its last 1 step" in r.detail and "keeps its last 3 step" in r.detail
               for r in records)
    declined = [r.detail for r in records if not r.fired]
    assert any("outputs_info[2]" in d and "whole output" in d for d in declined)
    assert any("output 0" in d and "whole output" in d for d in declined)
    for n in (2, 3, 6):
        same_as_py(f, rng.standard_normal(n), rng.standard_normal(2))


def test_outputs_read_whole_decline_with_a_reason(scan_nodes, same_as_py, rng):
    xs = T.vector("xs")
    acc, _ = ss.scan(lambda x, a: a + x, sequences=xs, outputs_info=T.constant(0.0))
    cases = {
        "whole": (acc, "the whole output is used"),
        "whole and last": ([acc, acc[-1]], "the whole output is used"),
        "from the start": (acc[1:], "a slice that does not count from the end"),
        "strided": (acc[-3::2], "does not count from the end"),
        "all but last": (acc[:-1], "does not count from the end"),
        "into another op": (acc.sum(), "the whole output is used"),
    }
    for name, (out, reason) in cases.items():
        f = _compile([xs], out)
        assert _rings(f, scan_nodes) == (), name
        (record,) = _save_mem_records(f)
        assert not record.fired and record.rule == "save_mem", name
        assert reason in record.detail and "outputs_info[0]" in record.detail, (name, record.detail)
        assert "declined" in str(f.rewrite_report())
        for n in (1, 4):
            same_as_py(f, rng.standard_normal(n))


def test_a_whole_buffer_read_declines(scan_nodes, same_as_py):
    """The raw buffer (initial taps included) is only reachable from the node itself."""
    xs = T.vector("xs")
    acc, _ = ss.scan(lambda x, a: a + x, sequences=xs, outputs_info=T.constant(0.0))
    buffer = acc.owner.inputs[0]
    f = _compile([xs], [buffer, acc[-1]])
    assert _rings(f, scan_nodes) == ()
    (record,) = _save_mem_records(f)
    assert "the whole buffer is used" in record.detail
    np.testing.assert_allclose(same_as_py(f, np.array([1.0, 2.0]))[0], [0.0, 1.0, 3.0])


def test_steps_n_zero_one_two_many_with_symbolic_and_constant_n_steps(scan_nodes, same_as_py, rng):
    x0 = T.vector("x0")
    k = T.lscalar("k")
    for n_steps in (k, 2, 5):
        out, _ = ss.scan(lambda h: T.tanh(h) + 0.1, outputs_info=x0, n_steps=n_steps)
        f = _compile([x0, k], [out[-1], out[-2:]]) if n_steps is k else _compile([x0], [out[-1], out[-2:]])
        expected_ring = () if n_steps == 2 else (2,)  # 2 rows of 2 steps: nothing to save
        assert _rings(f, scan_nodes) == expected_ring
        init = rng.standard_normal(3)
        for steps in ([0, 1, 2, 3, 50] if n_steps is k else [n_steps]):
            args = (init, steps) if n_steps is k else (init,)
            result = same_as_py(f, *args)
            if steps == 0:
                assert isinstance(result, IndexError)
                continue
            h, rows = init, []
            for _ in range(steps):
                h = np.tanh(h) + 0.1
                rows.append(h)
            np.testing.assert_allclose(result[0], rows[-1])
            np.testing.assert_allclose(result[1], np.array(rows[-2:]))


def test_a_ring_is_not_shrunk_again(scan_nodes):
    k = T.iscalar("k")
    A, result = _power(k)
    f = _compile([A, k], result[-1])
    assert len([r for r in _save_mem_records(f) if r.fired]) == 1
    assert _rings(f, scan_nodes) == (1,)


# ---------------------------------------------------------------------------- memory
def _peak_bytes(f, *args) -> int:
    tracemalloc.start()
    try:
        f(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_ring_buffer_does_not_hold_every_step(same_as_py):
    """1000 steps of a 10000-vector: 80 MB if every step were kept; the ring keeps one."""
    steps, length = 1000, 10_000
    full = steps * length * 8
    k = T.lscalar("k")
    A, result = _power(k)
    a = np.full(length, 1.0001)
    with_ring = _compile([A, k], result[-1])
    without = ss.function([A, k], result[-1], mode="fast", rewrites=["-save_mem"])
    np.testing.assert_allclose(with_ring(a, steps), a ** steps)
    same_as_py(with_ring, a[:5], 7)
    assert _peak_bytes(with_ring, a, steps) < full / 50
    assert _peak_bytes(without, a, steps) > full
