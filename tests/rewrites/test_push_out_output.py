"""push_out_output: a map output computed from other outputs' values is computed once,
after the loop, from their stacked values (``Y = H @ W_out`` instead of ``y_t = h_t @ W_out``).

Each test compiles with ``rewrites=["push_out_output"]`` alone, checks that the nit-sot left
the Scan and what computes it after the loop, the report, and the numbers against mode "py".
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symscan as ss
import symscan.tensor as T
from symscan.graph.traversal import ancestors
from symscan.scan import Scan
from symscan.tensor.elemwise import Elemwise
from symscan.tensor.math import Dot

RULE = ["push_out_output"]


def _after_loop(scan_rw, f, op_class):
    """Nodes of ``op_class`` outside the loop that read one of its outputs."""
    (node,) = scan_rw.scans(f)
    return [n for n in scan_rw.nodes(f, op_class)
            if any(v.owner is node for v in ancestors(n.inputs) if v.owner is not None)]


def _rnn(go_backwards=False, readout=lambda h, W_out: T.dot(h, W_out)):
    X, W, W_out, h0 = T.matrix("X"), T.matrix("W"), T.matrix("W_out"), T.vector("h0")

    def step(x, h, W, W_out):
        new = T.tanh(T.dot(x, W) + h)
        return new, readout(new, W_out)

    (H, Y), _ = ss.scan(step, sequences=X, outputs_info=[h0, None], non_sequences=[W, W_out],
                        go_backwards=go_backwards)
    return [X, W, W_out, h0], H, Y


def _rnn_values(rng, n):
    return [rng.normal(size=(n, 3)), rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(3, 2)), rng.normal(size=3)]


@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("outputs", ["H and Y", "Y only"])
def test_readout_product_is_one_dot_after_the_loop(scan_rw, rng, go_backwards, outputs):
    inputs, H, Y = _rnn(go_backwards)
    wanted = [H, Y] if outputs == "H and Y" else [Y]
    f = scan_rw.check(inputs, wanted, RULE, *[_rnn_values(rng, n) for n in (0, 1, 2, 6)])
    node, args = scan_rw.only_scan(f)
    assert args.nit_sot == [] and len(args.sit_sot) == 1
    assert len(scan_rw.nodes(node, Dot)) == 1  # x_t @ W stays in the loop
    (after,) = _after_loop(scan_rw, f, Dot)
    assert after.inputs[1] is f.fgraph.inputs[2]  # ... @ W_out
    assert after.outputs[0] is f.fgraph.outputs[-1]
    (record,) = scan_rw.records(f, "push_out_output")
    assert "output 1 (Dot)" in record.detail


@pytest.mark.parametrize("readout", [
    lambda h, W_out: T.tanh(h),
    lambda h, W_out: T.tanh(h) * 2 + h.sum(),
    lambda h, W_out: T.dot(W_out.T, h),  # the state second: W_out.T @ h_t is H @ W_out
    lambda h, W_out: (h.dimshuffle(0, "x") * W_out).max(axis=0),
])
def test_elementwise_reductions_and_products_of_the_state(scan_rw, rng, readout):
    inputs, H, Y = _rnn(readout=readout)
    f = scan_rw.check(inputs, [H, Y], RULE, *[_rnn_values(rng, n) for n in (0, 3)])
    node, args = scan_rw.only_scan(f)
    assert args.nit_sot == [] and scan_rw.records(f, "push_out_output")
    assert _after_loop(scan_rw, f, Elemwise) or _after_loop(scan_rw, f, Dot)


def test_until_loop_output_is_computed_from_the_rows_it_ran(scan_rw, rng):
    X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")

    def step(x, h, W):
        new = T.tanh(T.dot(x, W) + h)
        y = T.exp(new)
        return [new, y], ss.until(y.sum() > 4.0)  # the condition reads the pushed output too

    (H, Y), _ = ss.scan(step, sequences=X, outputs_info=[h0, None], non_sequences=W)
    values = [[rng.normal(size=(10, 3)), rng.normal(size=(3, 3)), rng.normal(size=3) - 1.5] for _ in range(4)]
    f = scan_rw.check([X, W, h0], [H, Y], RULE, *values)
    node, args = scan_rw.only_scan(f)
    assert args.until is not None and args.nit_sot == []
    assert [n.op.name for n in _after_loop(scan_rw, f, Elemwise)] == ["exp"]
    assert any(len(f(*v)[1]) < 10 for v in values)


@pytest.mark.parametrize("n_steps", [0, 2, 5, -4])
def test_mit_sot_source(scan_rw, rng, n_steps):
    s0, W_out, k = T.matrix("s0"), T.matrix("W_out"), T.lscalar("k")

    def step(a, b, W_out):
        new = a * 0.5 + b * 0.3 + 0.1
        return new, T.dot(new, W_out)

    (F, Y), _ = ss.scan(step, outputs_info=[dict(initial=s0, taps=[-2, -1]), None], non_sequences=W_out, n_steps=k)
    f = scan_rw.check([s0, W_out, k], [F, Y], RULE, [rng.normal(size=(2, 3)), rng.normal(size=(3, 2)), n_steps])
    node, args = scan_rw.only_scan(f)
    assert args.nit_sot == [] and len(args.mit_sot) == 1
    assert len(_after_loop(scan_rw, f, Dot)) == 1 and scan_rw.nodes(node, Dot) == []


def test_an_output_of_two_recurrent_outputs(scan_rw, rng):
    X, h0 = T.matrix("X"), T.vector("h0")

    def step(x, h, c):
        new_h = T.tanh(x + h)
        new_c = c * 0.9 + new_h
        return new_h, new_c, new_h * new_c

    (H, C, Y), _ = ss.scan(step, sequences=X, outputs_info=[h0, h0, None])
    f = scan_rw.check([X, h0], Y, RULE, [rng.normal(size=(5, 3)), rng.normal(size=3)])
    node, args = scan_rw.only_scan(f)
    assert args.nit_sot == [] and len(args.sit_sot) == 2
    assert [n.op.name for n in _after_loop(scan_rw, f, Elemwise)] == ["mul"]


def test_chained_map_outputs_both_leave(scan_rw, rng):
    X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")

    def step(x, h, W):
        new = T.tanh(T.dot(x, W) + h)
        y = T.tanh(new)
        return new, y, y * 2

    (H, Y, Z), _ = ss.scan(step, sequences=X, outputs_info=[h0, None, None], non_sequences=W)
    values = [rng.normal(size=(4, 3)), rng.normal(size=(3, 3)), rng.normal(size=3)]
    f = scan_rw.check([X, W, h0], [H, Y, Z], RULE, values)
    node, args = scan_rw.only_scan(f)
    assert args.nit_sot == [] and len(scan_rw.records(f, "push_out_output")) == 2


# ---------------------------------------------------------------------------- where it must not fire
@pytest.mark.parametrize("readout, reads", [
    (lambda x, h, new: new * x, "X[t]"),  # a sequence element
    (lambda x, h, new: new - h, "h0[t-1]"),  # the previous state
    (lambda x, h, new: T.dot(x, new.dimshuffle(0, "x")), "X[t]"),
])
def test_an_output_reading_a_sequence_or_a_past_value_stays(scan_rw, rng, readout, reads):
    X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")

    def step(x, h, W):
        new = T.tanh(T.dot(x, W) + h)
        return new, readout(x, h, new)

    (H, Y), _ = ss.scan(step, sequences=X, outputs_info=[h0, None], non_sequences=W)
    f = scan_rw.check([X, W, h0], [H, Y], RULE, [rng.normal(size=(5, 3)), rng.normal(size=(3, 3)), rng.normal(size=3)])
    node, args = scan_rw.only_scan(f)
    assert len(args.nit_sot) == 1 and not scan_rw.records(f, "push_out_output")
    (record,) = scan_rw.records(f, "push_out_output", fired=False)
    assert reads in record.detail


def test_an_output_reading_a_mit_sot_past_tap_stays(scan_rw, rng):
    s0 = T.matrix("s0")
    (F, Y), _ = ss.scan(lambda a, b: (a + b, (a + b) * a), outputs_info=[dict(initial=s0, taps=[-2, -1]), None],
                        n_steps=5)
    f = scan_rw.check([s0], [F, Y], RULE, [rng.normal(size=(2, 3))])
    node, args = scan_rw.only_scan(f)
    assert len(args.nit_sot) == 1 and not scan_rw.records(f, "push_out_output")


def test_an_output_nobody_reads_is_left_to_remove_unused(scan_rw, rng):
    inputs, H, Y = _rnn()
    f = scan_rw.check(inputs, H, RULE, _rnn_values(rng, 4))
    node, args = scan_rw.only_scan(f)
    assert len(args.nit_sot) == 1 and not scan_rw.records(f, "push_out_output")


def test_a_map_without_recurrent_outputs_is_not_touched(scan_rw, rng):
    X = T.matrix("X")
    (Y, Z), _ = ss.scan(lambda x: [T.exp(x), T.exp(x) * 2], sequences=X)
    f = scan_rw.check([X], [Y, Z], RULE, [rng.normal(size=(3, 2))])
    assert not scan_rw.records(f, "push_out_output")
    assert len(scan_rw.only_scan(f)[1].nit_sot) == 2


def test_nested_scan_inner_readout_moves_out_of_the_inner_loop(scan_rw, rng):
    A, W, h0 = T.tensor3("A"), T.matrix("W"), T.vector("h0")

    def inner_step(x, hh, W):
        new = T.tanh(x + hh)
        return new, T.dot(new, W)

    def outer_step(X_t, h, W):
        (H, Y), _ = ss.scan(inner_step, sequences=X_t, outputs_info=[h, None], non_sequences=W)
        return H[-1] + Y.sum()

    out, _ = ss.scan(outer_step, sequences=A, outputs_info=h0, non_sequences=W)
    f = scan_rw.check([A, W, h0], out, RULE, [rng.normal(size=(3, 4, 3)), rng.normal(size=(3, 3)), rng.normal(size=3)])
    node, _ = scan_rw.only_scan(f)
    (inner,) = [n for n in node.op.inner.apply_nodes if isinstance(n.op, Scan)]
    assert scan_rw.nodes(inner, Dot) == [] and len(scan_rw.nodes(node, Dot)) == 1
    (record,) = scan_rw.records(f, "push_out_output")
    assert record.node.startswith("scan > ")


# ---------------------------------------------------------------------------- property
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(taps=st.lists(st.integers(-3, -1), min_size=1, max_size=3, unique=True), n_steps=st.integers(-4, 5),
       seed=st.integers(0, 2 ** 16))
def test_property_readout_of_a_mit_sot(scan_rw, taps, n_steps, seed):
    rng = np.random.default_rng(seed)
    taps = sorted(taps)
    s0, W_out, k = T.matrix("s0"), T.matrix("W_out"), T.lscalar("k")

    def step(*args):
        *past, W_out = args
        new = sum(p * (0.3 + 0.1 * i) for i, p in enumerate(past))
        return new, T.tanh(T.dot(new, W_out))

    (F, Y), _ = ss.scan(step, outputs_info=[dict(initial=s0, taps=taps), None], non_sequences=W_out, n_steps=k)
    f = scan_rw.check([s0, W_out, k], [F, Y], RULE, [rng.normal(size=(-taps[0], 2)), rng.normal(size=(2, 2)), n_steps])
    assert scan_rw.only_scan(f)[1].nit_sot == [] and scan_rw.records(f, "push_out_output")
