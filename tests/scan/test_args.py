"""ScanArgs (the one place that knows a Scan node's layout) and the Scan op it builds:
from_node / to_node round trips for every kind of input and output, editing entries, op
equality and hashing, and the static shapes of the outer outputs."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.graph.traversal import toposort
from symscan.scan import Scan, ScanArgs


def scan_node(outputs):
    """The only Scan node computing ``outputs`` (a variable or a list)."""
    outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    nodes = [n for n in toposort(outputs) if isinstance(n.op, Scan)]
    assert len(nodes) == 1, nodes
    return nodes[0]


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


# ---------------------------------------------------------------------------- a scan with every kind
def every_kind_scan():
    """Sequences with taps, mit-sot, sit-sot, nit-sot, a shared update, non-sequences (one of them
    unused), until and go_backwards, all in one loop."""
    u, x, W = T.vector("u"), T.matrix("x"), T.matrix("W")
    a0, b0 = T.matrix("a0"), T.vector("b0")
    limit, unused = T.scalar("limit"), T.scalar("unused")
    count = ss.shared(np.int64(0), name="count")

    def step(u_m2, u_t, u_p1, x_t, a_m3, a_m1, b_m1, W_, limit_, unused_):
        a = T.tanh(T.dot(a_m1, W_) + u_t + a_m3 * u_m2)
        b = b_m1 + x_t.sum() + u_p1
        c = (a * b).sum()
        return [a, b, c], {count: count + 1}, ss.until(c > limit_)

    outs, updates = ss.scan(step, sequences=[dict(input=u, taps=[-2, 0, 1]), x],
                            outputs_info=[dict(initial=a0, taps=[-3, -1]), b0, None],
                            non_sequences=[W, limit, unused], go_backwards=True, name="every_kind")
    return [u, x, a0, b0, W, limit, unused], outs, updates, count


def every_kind_numpy(u, x, a0, b0, W, limit):
    """Buffers of the every-kind scan, computed with a Python loop (go_backwards: from the end)."""
    usable = min(len(u) - 3, len(x))
    a_hist, b_hist, cs = list(a0[:3]), [b0], []
    for step in range(usable):
        base = len(u) - 3 - 1 - step  # index of tap -2 (offset 0) at this step
        xi = len(x) - 1 - step
        a = np.tanh(a_hist[-1] @ W + u[base + 2] + a_hist[-3] * u[base])
        b = b_hist[-1] + x[xi].sum() + u[base + 3]
        c = (a * b).sum()
        a_hist.append(a)
        b_hist.append(b)
        cs.append(c)
        if c > limit:
            break
    return [np.array(a_hist), np.array(b_hist), np.array(cs), np.int64(len(cs))]


def every_kind_values(limit=1.5):
    """Values for which the until condition stops the loop at step 4 of 6."""
    rng = np.random.default_rng(20261121)
    return [rng.normal(size=9), rng.normal(size=(6, 2)), rng.normal(size=(3, 2)), rng.normal(size=2),
            rng.normal(size=(2, 2)) * 0.5, limit, 7.0]


def test_every_kind_round_trip_gives_an_equal_node():
    _, outs, _, _ = every_kind_scan()
    node = scan_node(outs)
    args = ScanArgs.from_node(node)
    assert [len(args.sequences), len(args.mit_sot), len(args.sit_sot), len(args.nit_sot), len(args.shared),
            len(args.non_seqs)] == [2, 1, 1, 1, 1, 3]
    assert args.sequences[0].taps == (-2, 0, 1) and args.mit_sot[0].taps == (-3, -1)
    assert args.until is not None and args.go_backwards and args.name == "every_kind"
    rebuilt = args.to_node()
    assert rebuilt is not node
    assert rebuilt.op == node.op and hash(rebuilt.op) == hash(node.op)
    assert rebuilt.op.inner is not node.op.inner  # to_node copies the inner graph
    assert len(rebuilt.inputs) == len(node.inputs) == 9
    assert all(new is old for new, old in zip(rebuilt.inputs, node.inputs))
    assert [o.type for o in rebuilt.outputs] == [o.type for o in node.outputs]
    assert len(rebuilt.outputs) == 4
    again = ScanArgs.from_node(rebuilt)
    assert again.info() == args.info()
    assert again.outer_outputs() == rebuilt.outputs


def test_every_kind_round_trip_computes_the_same_numbers():
    inputs, outs, _, _ = every_kind_scan()
    node = scan_node(outs)
    rebuilt = ScanArgs.from_node(node).to_node()
    values = every_kind_values()
    expected = every_kind_numpy(*values[:6])
    assert expected[-1] == 4, "the until condition should stop the loop part way"
    assert len(every_kind_numpy(*every_kind_values(limit=np.inf)[:6])[2]) == 6
    for outputs in (node.outputs, rebuilt.outputs):
        got = ss.function(inputs, outputs, mode="py")(*values)
        assert len(got) == 4
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-12)


def test_every_kind_user_outputs_and_update_match_numpy(mode):
    inputs, outs, updates, count = every_kind_scan()
    values = every_kind_values()
    a_buf, b_buf, cs, steps = every_kind_numpy(*values[:6])
    count.set_value(np.int64(0))
    f = ss.function(inputs, outs, updates=updates, mode=mode)
    a, b, c = f(*values)
    np.testing.assert_allclose(a, a_buf[3:], rtol=1e-12)
    np.testing.assert_allclose(b, b_buf[1:], rtol=1e-12)
    np.testing.assert_allclose(c, cs, rtol=1e-12)
    assert count.get_value() == steps


def test_removing_an_unused_non_sequence_gives_a_working_node():
    inputs, outs, _, _ = every_kind_scan()
    unused = inputs[-1]
    node = scan_node(outs)
    args = ScanArgs.from_node(node)
    entry = next(e for e in args.non_seqs if e.outer is unused)
    assert entry.inner not in ss.graph.traversal.ancestors(args.inner_outputs())
    args.non_seqs.remove(entry)
    smaller = args.to_node()
    assert len(smaller.inputs) == len(node.inputs) - 1 and unused not in smaller.inputs
    assert smaller.op != node.op and smaller.op.info.n_non_seqs == 2
    assert len(smaller.op.inner.inputs) == len(node.op.inner.inputs) - 1
    values = every_kind_values()
    got = ss.function(inputs[:-1], smaller.outputs, mode="py")(*values[:-1])
    for g, e in zip(got, every_kind_numpy(*values[:6])):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_removing_a_used_non_sequence_is_an_error_naming_it():
    _, outs, _, _ = every_kind_scan()
    args = ScanArgs.from_node(scan_node(outs))
    args.non_seqs = [e for e in args.non_seqs if e.label != "W"]
    with pytest.raises(ss.MissingInputError, match="'W'"):
        args.to_node()


def test_names_and_labels_do_not_change_the_op():
    _, outs, _, _ = every_kind_scan()
    node = scan_node(outs)
    args = ScanArgs.from_node(node)
    args.name = "renamed"
    for entry in args.sequences + args.buffered + args.shared + args.non_seqs:
        entry.label = "relabelled"
    rebuilt = args.to_node()
    assert rebuilt.op == node.op and hash(rebuilt.op) == hash(node.op)
    assert str(rebuilt.op) == "Scan{renamed, while, backwards}"
    assert "relabelled" in rebuilt.op.inner_input_labels()[0]


def test_changing_the_direction_changes_the_op():
    _, outs, _, _ = every_kind_scan()
    node = scan_node(outs)
    args = ScanArgs.from_node(node)
    args.go_backwards = False
    assert args.to_node().op != node.op


# ---------------------------------------------------------------------------- one kind at a time
def _map_scan():
    x = T.matrix("x")
    out, upd = ss.scan(lambda row: T.exp(row).sum(), sequences=x)
    return [x], [out], upd, [np.arange(6.0).reshape(3, 2) / 4]


def _sit_sot_scan():
    h0, W = T.vector("h0"), T.matrix("W")
    out, upd = ss.scan(lambda h, w: T.tanh(T.dot(h, w)), outputs_info=h0, non_sequences=W, n_steps=4)
    return [h0, W], [out], upd, [np.ones(2), np.array([[0.5, -0.2], [0.1, 0.3]])]


def _mit_sot_scan():
    init = T.vector("init")
    out, upd = ss.scan(lambda a, b, c: a - 0.5 * b + c, outputs_info=dict(initial=init, taps=[-4, -2, -1]),
                       n_steps=5)
    return [init], [out], upd, [np.array([1.0, 2.0, -1.0, 0.5])]


def _sequence_taps_backwards():
    u = T.vector("u")
    out, upd = ss.scan(lambda p, q, r: p * 100 + q * 10 + r, sequences=dict(input=u, taps=[-4, 0, 2]),
                       go_backwards=True)
    return [u], [out], upd, [np.arange(10.0)]


def _shared_update_only():
    a = ss.shared(np.int64(1), name="a")
    _, upd = ss.scan(lambda: {a: a + 1}, n_steps=10)
    return [], [upd[a]], upd, []


def _random_draws():
    stream = ss.RandomStream(11)
    out, upd = ss.scan(lambda: stream.normal(size=(2,)), n_steps=3)
    return [], [out], upd, []


def _until():
    x0 = T.scalar("x0")
    out, upd = ss.scan(lambda x: (x * 2, ss.until(x * 2 > 50)), outputs_info=x0, n_steps=100)
    return [x0], [out], upd, [3.0]


def _nested():
    m = T.matrix("m")

    def row(r):
        inner, _ = ss.scan(lambda e, s: s + e, sequences=r, outputs_info=T.constant(0.0))
        return inner

    out, upd = ss.scan(row, sequences=m)
    return [m], [out], upd, [np.arange(6.0).reshape(2, 3)]


KINDS = {"nit-sot": _map_scan, "sit-sot": _sit_sot_scan, "mit-sot": _mit_sot_scan,
         "sequence taps backwards": _sequence_taps_backwards, "shared update": _shared_update_only,
         "random draws": _random_draws, "until": _until, "nested": _nested}


@pytest.mark.parametrize("kind", list(KINDS))
def test_round_trip_of_each_kind(kind):
    inputs, outputs, _, values = KINDS[kind]()
    node = scan_node(outputs)
    rebuilt = ScanArgs.from_node(node).to_node()
    assert rebuilt.op == node.op and hash(rebuilt.op) == hash(node.op)
    assert len(rebuilt.inputs) == len(node.inputs) and len(rebuilt.outputs) == len(node.outputs)
    assert [v.type for v in rebuilt.inputs] == [v.type for v in node.inputs]
    assert [v.type for v in rebuilt.outputs] == [v.type for v in node.outputs]
    expected, expected_states = _evaluate(inputs, node, values)
    got, states = _evaluate(inputs, rebuilt, values)
    assert len(got) == len(expected) and len(states) == len(expected_states)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
    assert states == expected_states


def _evaluate(inputs, node, values):
    """The node's tensor outputs, and the states its generator outputs would give (read through
    updates of the generators, which function() returns only as shared values)."""
    tensors = [o for o in node.outputs if isinstance(o.type, ss.TensorType)]
    args = ScanArgs.from_node(node)
    generators = [(e.outer, e.outer_out) for e in args.shared if not isinstance(e.outer.type, ss.TensorType)]
    saved = [g.get_value() for g, _ in generators]
    results = ss.function(inputs, tensors, updates=generators, mode="py")(*values)
    states = [g.get_value().bit_generator.state for g, _ in generators]
    for (g, _), value in zip(generators, saved):
        g.set_value(value)
    return results, states


def test_round_trip_numbers_against_numpy():
    """A few of the kinds above, checked against plain loops (not only against themselves)."""
    inputs, outputs, _, values = _mit_sot_scan()
    hist = list(values[0])
    for _ in range(5):
        hist.append(hist[-4] - 0.5 * hist[-2] + hist[-1])
    rebuilt = ScanArgs.from_node(scan_node(outputs)).to_node()
    np.testing.assert_allclose(ss.function(inputs, rebuilt.outputs[0], mode="py")(*values), hist)

    inputs, outputs, _, values = _sequence_taps_backwards()
    u = values[0]
    expected = [u[i - 4] * 100 + u[i] * 10 + u[i + 2] for i in range(7, 3, -1)]
    rebuilt = ScanArgs.from_node(scan_node(outputs)).to_node()
    np.testing.assert_array_equal(ss.function(inputs, rebuilt.outputs[0], mode="py")(*values), expected)

    inputs, outputs, _, values = _until()
    x, expected = 3.0, [3.0]
    while True:
        x *= 2
        expected.append(x)
        if x > 50:
            break
    rebuilt = ScanArgs.from_node(scan_node(outputs)).to_node()
    np.testing.assert_array_equal(ss.function(inputs, rebuilt.outputs[0], mode="py")(*values), expected)


# ---------------------------------------------------------------------------- op equality and hashing
def _rnn_op(taps=(-3, -1), name=None, scale=2.0, init_name="a"):
    init, W = T.matrix(init_name), T.matrix("W")
    out, _ = ss.scan(lambda *a: T.dot(a[0] + a[-2], a[-1]) * scale, outputs_info=dict(initial=init, taps=list(taps)),
                     non_sequences=W, n_steps=4, name=name)
    return scan_node(out).op


def test_scans_built_from_identical_code_are_equal():
    first, second = _rnn_op(), _rnn_op()
    assert first is not second and first.inner is not second.inner
    assert first == second and hash(first) == hash(second)
    assert len({first, second}) == 1


def test_names_do_not_count_in_equality():
    first, second = _rnn_op(name="one", init_name="a"), _rnn_op(name="two", init_name="zz")
    assert first == second and hash(first) == hash(second)


@pytest.mark.parametrize("change", [dict(taps=(-2, -1)), dict(taps=(-3, -2, -1)), dict(scale=3.0)],
                         ids=["other taps", "more taps", "other constant"])
def test_different_scans_are_not_equal(change):
    base, other = _rnn_op(), _rnn_op(**change)
    assert base != other
    assert len({base, other}) == 2


def test_a_scan_is_not_equal_to_other_ops():
    op = _rnn_op()
    assert op != "Scan" and op != T.exp(T.scalar()).owner.op


# ---------------------------------------------------------------------------- outer output static shapes
def test_buffer_lengths_with_a_constant_n_steps():
    a0 = T.tensor("float64", shape=(3, 2), name="a0")
    b0 = T.tensor("float64", shape=(2,), name="b0")
    total = ss.shared(np.float64(0), name="total")
    outs, _ = ss.scan(lambda am3, am1, b: [am3 + am1, b * 2, b.sum(), {total: total + b.sum()}],
                      outputs_info=[dict(initial=a0, taps=[-3, -1]), b0, None], n_steps=5)
    node = scan_node(outs)
    assert [o.type.shape for o in node.outputs] == [(3 + 5, 2), (1 + 5, 2), (5,), ()]
    assert node.outputs[3].type == total.type
    assert [o.type.shape for o in outs] == [(5, 2), (5, 2), (5,)]


def test_buffer_lengths_are_unknown_with_until():
    a0 = T.tensor("float64", shape=(3, 2), name="a0")
    b0 = T.tensor("float64", shape=(2,), name="b0")
    outs, _ = ss.scan(lambda am3, am1, b: [am3 + am1, b * 2, b.sum(), ss.until(b.sum() > 3)],
                      outputs_info=[dict(initial=a0, taps=[-3, -1]), b0, None], n_steps=5)
    assert [o.type.shape for o in scan_node(outs).outputs] == [(None, 2), (None, 2), (None,)]


def test_buffer_lengths_with_steps_from_a_static_sequence():
    x7 = T.tensor("float64", shape=(7,), name="x7")
    b0 = T.tensor("float64", shape=(2,), name="b0")
    out, _ = ss.scan(lambda p, q, b: b + p - q, sequences=dict(input=x7, taps=[-2, 0]), outputs_info=b0)
    assert scan_node(out).outputs[0].type.shape == (1 + 5, 2)
    assert out.type.shape == (5, 2)


def test_buffer_lengths_with_a_symbolic_or_negative_n_steps():
    b0 = T.tensor("float64", shape=(2,), name="b0")
    n = T.iscalar("n")
    out, _ = ss.scan(lambda b: b * 2, outputs_info=b0, n_steps=n)
    assert scan_node(out).outputs[0].type.shape == (None, 2)
    out, _ = ss.scan(lambda b: b * 2, outputs_info=b0, n_steps=-4)
    node = scan_node(out)
    assert node.op.info.go_backwards and node.outputs[0].type.shape == (1 + 4, 2)


def test_zero_steps_keep_only_the_initial_rows():
    init = T.tensor("float64", shape=(3,), name="init")
    out, _ = ss.scan(lambda a, b: a + b, outputs_info=dict(initial=init, taps=[-3, -1]), n_steps=0)
    node = scan_node(out)
    assert node.outputs[0].type.shape == (3,) and out.type.shape == (0,)
    buffer, user = ss.function([init], [node.outputs[0], out], mode="py")(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(buffer, [1.0, 2.0, 3.0])
    assert user.shape == (0,)


def test_run_time_shapes_agree_with_the_static_ones():
    a0 = T.tensor("float64", shape=(3, 2), name="a0")
    outs, _ = ss.scan(lambda am3, am1: [am3 - am1, am1.sum()], outputs_info=[dict(initial=a0, taps=[-3, -1]), None],
                      n_steps=4)
    node = scan_node(outs)
    values = ss.function([a0], node.outputs, mode="py")(np.arange(6.0).reshape(3, 2))
    assert [v.shape for v in values] == [o.type.shape for o in node.outputs] == [(7, 2), (4,)]
