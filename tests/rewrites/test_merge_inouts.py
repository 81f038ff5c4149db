"""merge_inouts alone: repeated inputs and outputs of one scan become one."""

import numpy as np

import symscan as ss
import symscan.tensor as T
from symscan.scan.args import NonSeqEntry, ScanArgs, SequenceEntry


def _compile(inputs, outputs, rewrites=("merge_inouts",)):
    return ss.function(inputs, outputs, mode="fast", rewrites=list(rewrites))


def _args(f, scan_nodes) -> ScanArgs:
    (node,) = scan_nodes(f)
    return ScanArgs.from_node(node)


def _records(f):
    return [r for r in f.rewrite_report() if r.rule == "merge_inouts"]


def test_the_same_sequence_twice_becomes_one(scan_nodes, same_as_py, rng):
    xs, w = T.vector("xs"), T.scalar("w")
    outs, _ = ss.scan(lambda a, b, w: (a * w + b, a - b * w), sequences=[xs, xs], non_sequences=w)
    assert len(_args(ss.function([xs, w], outs, mode="py"), scan_nodes).sequences) == 2
    f = _compile([xs, w], outs)
    args = _args(f, scan_nodes)
    assert len(args.sequences) == 1 and args.sequences[0].outer is f.fgraph.inputs[0]
    assert len(args.nit_sot) == 2
    (record,) = _records(f)
    assert record.fired and "1 repeated inner input" in record.detail
    for n in (1, 2, 6):
        values = rng.standard_normal(n)
        a, b = same_as_py(f, values, 0.5)
        np.testing.assert_allclose(a, values * 1.5)
        np.testing.assert_allclose(b, values * 0.5)
    assert [v.shape for v in same_as_py(f, np.zeros(0), 0.5)] == [(0,), (0,)]


def test_the_same_sequence_with_different_taps_is_kept_apart(scan_nodes, same_as_py, rng):
    xs = T.vector("xs")
    out, _ = ss.scan(lambda a, b: a + 2.0 * b, sequences=[xs, dict(input=xs, taps=[1])])
    f = _compile([xs], out)
    args = _args(f, scan_nodes)
    assert [s.taps for s in args.sequences] == [(0,), (1,)]
    assert _records(f) == []
    values = rng.standard_normal(5)
    np.testing.assert_allclose(same_as_py(f, values), values[:-1] + 2.0 * values[1:])


def test_the_same_taps_repeated_in_a_dict_become_one(scan_nodes, same_as_py, rng):
    xs = T.vector("xs")
    out, _ = ss.scan(lambda a1, a0, b1, b0: a1 * b0 - a0 * b1 + a1,
                     sequences=[dict(input=xs, taps=[-1, 0]), dict(input=xs, taps=[-1, 0])])
    f = _compile([xs], out)
    assert [s.taps for s in _args(f, scan_nodes).sequences] == [(-1, 0)]
    values = rng.standard_normal(6)
    np.testing.assert_allclose(same_as_py(f, values), values[:-1])


def _scan_with_repeated_non_sequence(xs, w):
    """A node whose non-sequences list ``w`` twice (scan() itself lists each variable once;
    scan_merge can produce this, here it is built directly with ScanArgs)."""
    mapped, _ = ss.scan(lambda x, w1: x * w1 + 1.0, sequences=xs, non_sequences=w)
    args = ScanArgs.from_node(mapped.owner)
    (first,) = args.non_seqs
    second = NonSeqEntry(w, w.type.make_variable(name="w_again"), "w again")
    args.non_seqs.append(second)
    (entry,) = args.nit_sot
    entry.inner_out = entry.inner_out + second.inner * 2.0
    return args.to_node().outputs[0]


def test_the_same_non_sequence_twice_becomes_one(scan_nodes, same_as_py, rng):
    xs, w = T.vector("xs"), T.vector("w")
    out = _scan_with_repeated_non_sequence(xs, w)
    assert len(_args(ss.function([xs, w], out, mode="py"), scan_nodes).non_seqs) == 2
    f = _compile([xs, w], out)
    args = _args(f, scan_nodes)
    assert len(args.non_seqs) == 1 and args.non_seqs[0].outer is f.fgraph.inputs[1]
    (record,) = _records(f)
    assert record.fired
    for n in (0, 1, 4):
        values, weights = rng.standard_normal(n), rng.standard_normal(3)
        got = same_as_py(f, values, weights)
        np.testing.assert_allclose(got, values[:, None] * weights + 1.0 + 2.0 * weights)


def test_the_same_non_sequence_from_two_merged_scans(scan_nodes, same_as_py, rng):
    xs, w = T.vector("xs"), T.scalar("w")
    a, _ = ss.scan(lambda x, h, w: h * w + x, sequences=xs, outputs_info=T.constant(0.0), non_sequences=w)
    b, _ = ss.scan(lambda x, w: x * w, sequences=xs, non_sequences=w)
    f = _compile([xs, w], [a, b], rewrites=["scan_merge", "merge_inouts"])
    args = _args(f, scan_nodes)
    assert (len(args.sequences), len(args.non_seqs)) == (1, 1)
    same_as_py(f, rng.standard_normal(5), 0.7)


def test_two_nit_sot_outputs_computing_the_same_thing_become_one(scan_nodes, same_as_py, rng):
    xs = T.vector("xs")
    outs, _ = ss.scan(lambda x: (T.exp(x) * 2.0, T.exp(x) * 2.0, T.exp(x) * 3.0), sequences=xs)
    f = _compile([xs], outs)
    args = _args(f, scan_nodes)
    assert len(args.nit_sot) == 2
    (record,) = _records(f)
    assert "1 repeated output" in record.detail
    values = rng.standard_normal(4)
    first, second, third = same_as_py(f, values)
    np.testing.assert_allclose(first, np.exp(values) * 2.0)
    np.testing.assert_allclose(second, np.exp(values) * 2.0)
    np.testing.assert_allclose(third, np.exp(values) * 3.0)
    assert not np.shares_memory(first, second)  # the caller gets two arrays


def test_outputs_equal_only_after_merging_inputs(scan_nodes, same_as_py, rng):
    xs = T.vector("xs")
    outs, _ = ss.scan(lambda a, b: (a * 2.0, b * 2.0), sequences=[xs, xs])
    f = _compile([xs], outs)
    args = _args(f, scan_nodes)
    assert (len(args.sequences), len(args.nit_sot)) == (1, 1)
    assert "1 repeated inner input(s) and 1 repeated output(s)" in _records(f)[0].detail
    same_as_py(f, rng.standard_normal(3))


def test_two_identical_sit_sot_recurrences_become_one(scan_nodes, same_as_py):
    x0, k = T.scalar("x0"), T.lscalar("k")
    outs, _ = ss.scan(lambda h, g: (h * 0.5 + 1.0, g * 0.5 + 1.0), outputs_info=[x0, x0], n_steps=k)
    f = _compile([x0, k], outs)
    args = _args(f, scan_nodes)
    assert len(args.sit_sot) == 1
    assert "1 repeated output" in _records(f)[0].detail
    for steps in (0, 1, 2, 9):
        h, g = same_as_py(f, 3.0, steps)
        np.testing.assert_array_equal(h, g)
        assert h.shape == (steps,)


def test_a_merged_state_read_by_another_output(scan_nodes, same_as_py):
    """The dropped state's past value feeds a third output: it must read the kept one."""
    x0, k = T.scalar("x0"), T.lscalar("k")
    outs, _ = ss.scan(lambda h, g, s: (h * 0.5 + 1.0, g * 0.5 + 1.0, s + g), outputs_info=[x0, x0, T.constant(0.0)],
                      n_steps=k)
    f = _compile([x0, k], outs)
    assert len(_args(f, scan_nodes).sit_sot) == 2
    for steps in (0, 1, 4):
        same_as_py(f, 2.0, steps)


def test_identical_mit_sot_recurrences_become_one(scan_nodes, same_as_py, rng):
    x0, k = T.vector("x0"), T.lscalar("k")
    taps = [-2, -1]
    outs, _ = ss.scan(lambda a2, a1, b2, b1: (a2 - a1 * 0.5, b2 - b1 * 0.5),
                      outputs_info=[dict(initial=x0, taps=taps), dict(initial=x0, taps=taps)], n_steps=k)
    f = _compile([x0, k], outs)
    assert len(_args(f, scan_nodes).mit_sot) == 1
    for steps in (0, 1, 5):
        a, b = same_as_py(f, rng.standard_normal(2), steps)
        np.testing.assert_array_equal(a, b)


def test_different_initial_values_or_taps_are_kept_apart(scan_nodes, same_as_py, rng):
    x0, k = T.vector("x0"), T.lscalar("k")
    cases = {
        "initial values": ([x0[-1], x0[-1] + 1.0], lambda h, g: (h * 0.5 + 1.0, g * 0.5 + 1.0)),
        "taps": ([dict(initial=x0, taps=[-2, -1]), dict(initial=x0, taps=[-2])],
                 lambda a2, a1, b2: (a2 + a1, b2 + b2 * 0.0)),
        "bodies": ([x0[-1], x0[-1]], lambda h, g: (h * 0.5 + 1.0, g * 0.5 + 2.0)),
    }
    for name, (outputs_info, fn) in cases.items():
        outs, _ = ss.scan(fn, outputs_info=outputs_info, n_steps=k)
        f = _compile([x0, k], outs)
        args = _args(f, scan_nodes)
        assert len(args.recurrent) == 2, name
        assert _records(f) == [], name
        for steps in (0, 1, 3):
            same_as_py(f, rng.standard_normal(2), steps)


def test_a_sequence_and_its_repeat_under_different_outer_variables_are_kept_apart(scan_nodes, same_as_py, rng):
    xs, ys = T.vector("xs"), T.vector("ys")
    out, _ = ss.scan(lambda a, b: a - b, sequences=[xs, ys])
    f = _compile([xs, ys], out)
    assert len(_args(f, scan_nodes).sequences) == 2
    values = rng.standard_normal(3)
    np.testing.assert_allclose(same_as_py(f, values, values + 1.0), -np.ones(3))


def test_direct_args_with_three_copies_of_a_sequence(scan_nodes, same_as_py, rng):
    """ScanArgs built by hand: the same sequence three times, one output reading all copies."""
    xs = T.vector("xs")
    base, _ = ss.map(lambda x: x * 1.0, xs)
    args = ScanArgs.from_node(base.owner)
    (seq,) = args.sequences
    copies = [SequenceEntry(xs, [v.type.make_variable(name=f"copy{i}") for v in seq.inner], seq.taps, "")
              for i in range(2)]
    args.sequences += copies
    (entry,) = args.nit_sot
    entry.inner_out = entry.inner_out + copies[0].inner[0] * 2.0 + copies[1].inner[0] * 3.0
    out = args.to_node().outputs[0]
    f = _compile([xs], out)
    assert len(_args(f, scan_nodes).sequences) == 1
    values = rng.standard_normal(4)
    np.testing.assert_allclose(same_as_py(f, values), values * 6.0)


def test_a_per_step_output_equal_to_a_state_is_the_states_steps(scan_nodes, same_as_py, rng):
    """An ONNX Scan returning its state every step (an RNN's h) writes it as a state and a scan
    output: one buffer serves both, so save_mem and export see one output."""
    xs, h0, w = T.vector("xs"), T.scalar("h0"), T.scalar("w")

    def step(x, h, w):
        new = T.tanh(h * w + x)
        return new, new * 1.0

    (hs, copies), _ = ss.scan(step, sequences=xs, outputs_info=[h0, None], non_sequences=w)
    f = _compile([xs, h0, w], [hs, copies], rewrites=("canonicalize", "merge_inouts"))
    args = _args(f, scan_nodes)
    assert (len(args.sit_sot), len(args.nit_sot)) == (1, 0)
    (record,) = _records(f)
    assert "1 repeated output" in record.detail
    for n in (0, 1, 5):
        values = rng.standard_normal(n)
        got_hs, got_copies = same_as_py(f, values, 0.3, 0.9)
        np.testing.assert_array_equal(got_hs, got_copies)
    other = ss.scan(lambda x, h, w: (T.tanh(h * w + x), T.tanh(h * w - x)), sequences=xs, outputs_info=[h0, None],
                    non_sequences=w)[0]
    g = _compile([xs, h0, w], other)
    assert (len(_args(g, scan_nodes).sit_sot), len(_args(g, scan_nodes).nit_sot)) == (1, 1)


def _coupled(second_c_body):
    """Two coupled pairs (h, c) and (h2, c2) in one loop, each state reading its partner's past
    value: (h2, c2) repeats (h, c) when ``second_c_body`` is c's body."""
    x0, k = T.scalar("x0"), T.lscalar("k")

    def step(h, c, h2, c2):
        return h * 0.5 + c, c * 0.9 - h * 0.1, h2 * 0.5 + c2, second_c_body(h2, c2)

    outs, _ = ss.scan(step, outputs_info=[x0, x0 + 1.0, x0, x0 + 1.0], n_steps=k)
    return [x0, k], outs


def test_coupled_states_repeated_together_become_one_pair(scan_nodes, same_as_py):
    """h2 equals h only if c2 equals c and the other way round: the twins are found together
    (the loop recording a gradient's residuals repeats an LSTM's h and c so)."""
    inputs, outs = _coupled(lambda h2, c2: c2 * 0.9 - h2 * 0.1)
    f = _compile(inputs, outs)
    assert len(_args(f, scan_nodes).sit_sot) == 2
    assert "2 repeated output" in _records(f)[0].detail
    for steps in (0, 1, 6):
        h, c, h2, c2 = same_as_py(f, 0.3, steps)
        np.testing.assert_array_equal(h, h2)
        np.testing.assert_array_equal(c, c2)


def test_coupled_states_differing_in_one_body_are_all_kept(scan_nodes, same_as_py):
    """h2's body is h's, but it reads c2, whose body differs from c's: neither pair merges."""
    inputs, outs = _coupled(lambda h2, c2: c2 * 0.9 - h2 * 0.2)
    f = _compile(inputs, outs)
    assert len(_args(f, scan_nodes).sit_sot) == 4
    assert _records(f) == []
    for steps in (0, 1, 6):
        h, _, h2, _ = same_as_py(f, 0.3, steps)
        if steps > 2:
            assert not np.array_equal(h, h2)
