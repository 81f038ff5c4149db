"""scan_merge alone (and with merge_inouts): independent scans with the same steps become one."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.scan.args import ScanArgs


def _compile(inputs, outputs, rewrites=("scan_merge",)):
    return ss.function(inputs, outputs, mode="fast", rewrites=list(rewrites))


def _records(f, rule="scan_merge"):
    return [r for r in f.rewrite_report() if r.rule == rule]


def _running_sum_and_max(xs, **kwargs):
    total, _ = ss.scan(lambda x, a: a + x, sequences=xs, outputs_info=T.constant(0.0), **kwargs)
    peak, _ = ss.scan(lambda x, m: T.maximum(m, x), sequences=xs, outputs_info=T.constant(-np.inf), **kwargs)
    return total, peak


def test_two_scans_over_the_same_sequence_become_one(scan_nodes, same_as_py, rng):
    xs = T.vector("xs")
    total, peak = _running_sum_and_max(xs)
    before = ss.function([xs], [total, peak], mode="py")
    assert len(scan_nodes(before)) == 2
    f = _compile([xs], [total, peak])
    (node,) = scan_nodes(f)
    args = ScanArgs.from_node(node)
    assert len(args.sit_sot) == 2 and len(args.sequences) == 2  # the sequence twice: merge_inouts' job
    assert all(s.outer is f.fgraph.inputs[0] for s in args.sequences)
    (record,) = _records(f)
    assert record.fired and "one loop" in record.detail
    for n in (1, 2, 7):
        values = rng.standard_normal(n)
        got_total, got_peak = same_as_py(f, values)
        np.testing.assert_allclose(got_total, np.cumsum(values))
        np.testing.assert_allclose(got_peak, np.maximum.accumulate(values))
    empty = same_as_py(f, np.zeros(0))
    assert [e.shape for e in empty] == [(0,), (0,)]


def test_with_merge_inouts_the_merged_scan_reads_the_sequence_once(scan_nodes, same_as_py, rng):
    xs = T.vector("xs")
    total, peak = _running_sum_and_max(xs)
    f = _compile([xs], [total, peak], rewrites=["scan_merge", "merge_inouts"])
    (node,) = scan_nodes(f)
    args = ScanArgs.from_node(node)
    assert len(args.sequences) == 1 and len(args.sit_sot) == 2
    assert sum(1 for v in node.inputs if v is f.fgraph.inputs[0]) == 1
    assert [r.rule for r in f.rewrite_report().fired] == ["scan_merge", "merge_inouts"]
    for n in (1, 5):
        same_as_py(f, rng.standard_normal(n))


def test_scans_with_the_same_symbolic_n_steps_and_non_sequences(scan_nodes, same_as_py, rng):
    k, w = T.lscalar("k"), T.vector("w")
    a, _ = ss.scan(lambda h, w: h * w, outputs_info=T.ones_like(w), non_sequences=w, n_steps=k)
    b, _ = ss.scan(lambda h, w: h + w, outputs_info=T.zeros_like(w), non_sequences=w, n_steps=k)
    c, _ = ss.scan(lambda w: w * 2.0, non_sequences=w, n_steps=k)
    f = _compile([w, k], [a, b, c])
    (node,) = scan_nodes(f)
    args = ScanArgs.from_node(node)
    assert (len(args.sit_sot), len(args.nit_sot), len(args.non_seqs)) == (2, 1, 3)
    assert len(_records(f)) == 2 and all(r.fired for r in _records(f))  # three scans: two merges
    values = rng.uniform(0.5, 1.5, size=3)
    for steps in (0, 1, 2, 6):
        same_as_py(f, values, steps)
    g = _compile([w, k], [a, b, c], rewrites=["scan_merge", "merge_inouts"])
    assert len(ScanArgs.from_node(scan_nodes(g)[0]).non_seqs) == 1
    same_as_py(g, values, 4)


def test_three_scans_become_one(scan_nodes, same_as_py, rng):
    xs = T.matrix("xs")
    total, _ = ss.scan(lambda x, a: a + x, sequences=xs, outputs_info=T.zeros_like(xs[0]))
    peak, _ = ss.scan(lambda x, m: T.maximum(m, x), sequences=xs, outputs_info=T.zeros_like(xs[0]) - np.inf)
    norms, _ = ss.map(lambda x: T.sqrt((x * x).sum()), xs)
    f = _compile([xs], [total, norms, peak])
    (node,) = scan_nodes(f)
    args = ScanArgs.from_node(node)
    assert (len(args.sequences), len(args.sit_sot), len(args.nit_sot)) == (3, 2, 1)
    for n in (1, 4):
        got = same_as_py(f, rng.standard_normal((n, 3)))
        assert [g.shape for g in got] == [(n, 3), (n,), (n, 3)]


def test_constant_n_steps_equal_as_numbers_merge(scan_nodes, same_as_py):
    a, _ = ss.scan(lambda h: h * 2.0, outputs_info=T.constant(1.0), n_steps=5)
    b, _ = ss.scan(lambda h: h + 3.0, outputs_info=T.constant(0.0), n_steps=np.int32(5))
    c, _ = ss.scan(lambda h: h - 1.0, outputs_info=T.constant(0.0), n_steps=T.constant(np.int8(5)))
    assert len({id(s.owner.inputs[0].owner.inputs[0]) for s in (a, b, c)}) == 3  # three n_steps constants
    f = _compile([], [a, b, c])
    assert len(scan_nodes(f)) == 1
    np.testing.assert_allclose(same_as_py(f)[0], [2, 4, 8, 16, 32])


def test_different_constant_n_steps_are_not_merged(scan_nodes, same_as_py):
    a, _ = ss.scan(lambda h: h * 2.0, outputs_info=T.constant(1.0), n_steps=5)
    b, _ = ss.scan(lambda h: h + 3.0, outputs_info=T.constant(0.0), n_steps=4)
    f = _compile([], [a, b])
    assert len(scan_nodes(f)) == 2
    records = _records(f)
    assert records and not any(r.fired for r in records)
    assert all("different n_steps" in r.detail for r in records)
    same_as_py(f)


def test_different_symbolic_n_steps_are_not_merged(scan_nodes, same_as_py, rng):
    k, j, w = T.lscalar("k"), T.lscalar("j"), T.vector("w")
    a, _ = ss.scan(lambda h, w: h * w, outputs_info=T.ones_like(w), non_sequences=w, n_steps=k)
    b, _ = ss.scan(lambda h, w: h + w, outputs_info=T.zeros_like(w), non_sequences=w, n_steps=j)
    f = _compile([w, k, j], [a, b])
    assert len(scan_nodes(f)) == 2
    assert all(not r.fired and "different n_steps" in r.detail for r in _records(f))
    same_as_py(f, rng.standard_normal(2), 3, 2)


def test_sequences_of_different_lengths_are_not_merged(scan_nodes, same_as_py, rng):
    xs, ys = T.vector("xs"), T.vector("ys")
    a, _ = ss.scan(lambda x, h: h + x, sequences=xs, outputs_info=T.constant(0.0))
    b, _ = ss.scan(lambda y, h: h * y, sequences=ys, outputs_info=T.constant(1.0))
    f = _compile([xs, ys], [a, b])
    assert len(scan_nodes(f)) == 2
    got = same_as_py(f, rng.standard_normal(3), rng.standard_normal(5))
    assert [g.shape for g in got] == [(3,), (5,)]


def test_different_directions_are_not_merged(scan_nodes, same_as_py, rng):
    xs = T.vector("xs")
    forward, _ = ss.scan(lambda x, a: a * 0.5 + x, sequences=xs, outputs_info=T.constant(0.0))
    backward, _ = ss.scan(lambda x, a: a * 0.5 + x, sequences=xs, outputs_info=T.constant(0.0), go_backwards=True)
    f = _compile([xs], [forward, backward], rewrites=["scan_merge"])
    assert len(scan_nodes(f)) == 2
    records = _records(f)
    assert records and all(not r.fired and "different directions" in r.detail for r in records)
    same_as_py(f, rng.standard_normal(4))
    both_backwards = _running_sum_and_max(xs, go_backwards=True)
    g = _compile([xs], list(both_backwards))
    assert len(scan_nodes(g)) == 1 and scan_nodes(g)[0].op.info.go_backwards
    values = rng.standard_normal(5)
    got_total, got_peak = same_as_py(g, values)
    np.testing.assert_allclose(got_total, np.cumsum(values[::-1]))


def test_a_scan_reading_the_other_ones_output_is_not_merged(scan_nodes, same_as_py, rng):
    xs, k = T.vector("xs"), T.lscalar("k")
    total, _ = ss.scan(lambda x, a: a + x, sequences=xs, outputs_info=T.constant(0.0), n_steps=k)
    # the same n_steps, but each reads total: as a sequence, or its last value as a non-sequence
    scaled, _ = ss.scan(lambda x, t, a: a + x * t, sequences=[xs, total], outputs_info=T.constant(0.0), n_steps=k)
    last_total = total[-1]
    shifted, _ = ss.scan(lambda x, a: a + x + last_total, sequences=xs, outputs_info=T.constant(0.0), n_steps=k)
    for other in (scaled, shifted):
        f = _compile([xs, k], [total, other])
        assert len(scan_nodes(f)) == 2
        records = _records(f)
        assert records and all("reads the other's outputs" in r.detail for r in records)
        for steps in (1, 3):
            same_as_py(f, rng.standard_normal(4), steps)


def test_until_loops_are_not_merged(scan_nodes, same_as_py):
    k = T.lscalar("k")
    a, _ = ss.scan(lambda h: (h * 2.0, ss.until(h > 10.0)), outputs_info=T.constant(1.0), n_steps=k)
    b, _ = ss.scan(lambda h: h + 1.0, outputs_info=T.constant(0.0), n_steps=k)
    f = _compile([k], [a, b])
    assert len(scan_nodes(f)) == 2
    assert all("until" in r.detail for r in _records(f))
    for steps in (0, 3, 10):
        same_as_py(f, steps)


def test_scans_updating_the_same_shared_variable_are_not_merged(scan_nodes):
    s = ss.shared(np.float64(1.0), name="s")
    k = T.lscalar("k")
    a, ua = ss.scan(lambda: (s * 2.0, {s: s + 1.0}), n_steps=k)
    b, ub = ss.scan(lambda: (s * 3.0, {s: s * 2.0}), n_steps=k)
    f = _compile([k], [a, b, ua[s], ub[s]])
    assert len(scan_nodes(f)) == 2
    assert any("same shared variable" in r.detail for r in _records(f))
    py = ss.function([k], [a, b, ua[s], ub[s]], mode="py")
    for got, expected in zip(f(3), py(3)):
        np.testing.assert_allclose(got, expected)


def test_merged_scan_with_taps_and_shared_updates(scan_nodes, rng):
    xs, x0 = T.vector("xs"), T.vector("x0")
    s = ss.shared(np.float64(0.0), name="s")
    fib, _ = ss.scan(lambda x, a, b: a + b + x, sequences=xs, outputs_info=dict(initial=x0, taps=[-2, -1]))
    lagged, upd = ss.scan(lambda x1, x0_, h: (h + x1 - x0_, {s: s + x1}),
                          sequences=dict(input=xs, taps=[1, 0]), outputs_info=T.constant(0.0),
                          n_steps=xs.shape[0] - 1)
    tail = fib[1:]  # fib runs one step more: not mergeable with lagged
    f_two = _compile([xs, x0], [tail, lagged], rewrites=["scan_merge"])
    assert len(scan_nodes(f_two)) == 2
    fib2, _ = ss.scan(lambda x1, x0_, a, b: a + b + x1 * x0_, sequences=dict(input=xs, taps=[1, 0]),
                      outputs_info=dict(initial=x0, taps=[-2, -1]), n_steps=xs.shape[0] - 1)
    outs = [fib2, lagged]
    f = ss.function([xs, x0], outs, updates=upd, mode="fast", rewrites=["scan_merge"])
    py = ss.function([xs, x0], outs, updates=upd, mode="py")
    (node,) = scan_nodes(f)
    args = ScanArgs.from_node(node)
    assert (len(args.mit_sot), len(args.sit_sot), len(args.shared)) == (1, 1, 1)
    values, init = rng.standard_normal(5), rng.standard_normal(2)
    s.set_value(np.float64(0.0))
    expected = py(values, init)
    after_py = s.get_value()
    s.set_value(np.float64(0.0))
    got = f(values, init)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e)
    np.testing.assert_allclose(s.get_value(), after_py)
    np.testing.assert_allclose(after_py, values[1:].sum())


@pytest.mark.parametrize("order", ["sum first", "max first"])
def test_merged_outputs_keep_their_order_and_labels(order, scan_nodes, same_as_py, rng):
    xs = T.vector("xs")
    total, peak = _running_sum_and_max(xs)
    outs = [total, peak] if order == "sum first" else [peak, total]
    f = _compile([xs], outs)
    (node,) = scan_nodes(f)
    assert len(node.op.info.labels.outputs) == 2
    values = rng.standard_normal(6)
    got = same_as_py(f, values)
    expected = [np.cumsum(values), np.maximum.accumulate(values)]
    for g, e in zip(got, expected if order == "sum first" else expected[::-1]):
        np.testing.assert_allclose(g, e)
