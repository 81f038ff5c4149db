"""push_out_dot_sum: acc + dot(a_t, b_t) read only at its end becomes one product after the loop."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.scan.args import ScanArgs
from symscan.scan.checks import CheckStepShape
from symscan.tensor.math import Dot

RULE = ["push_out_dot_sum"]


def _weight_sum(n_steps=None):
    """sum_t x_t^T (x_t W): a gradient-like accumulation of outer products (x_t a row block)."""
    X, W, acc0 = T.tensor3("X"), T.matrix("W"), T.matrix("acc0")
    acc, _ = ss.scan(lambda x, acc, W: acc + T.dot(x.T, T.tanh(T.dot(x, W))), sequences=X, outputs_info=acc0,
                     non_sequences=W, n_steps=n_steps)
    return [X, W, acc0], acc


def _values(rng, steps):
    return [rng.normal(size=(steps, 4, 3)), rng.normal(size=(3, 2)), rng.normal(size=(3, 2))]


def test_a_sum_of_products_read_at_its_end_leaves_the_loop(scan_rw, rng):
    """The accumulator goes; the loop emits the two factors; one Dot after the loop."""
    inputs, acc = _weight_sum()
    f = scan_rw.check(inputs, acc[-1], RULE, *[_values(rng, k) for k in (1, 5, 7)])
    node, args = scan_rw.only_scan(f)
    assert args.sit_sot == [] and len(args.nit_sot) == 2
    assert [r for r in scan_rw.records(f, "push_out_dot_sum")]
    outer_dots = [n for n in f.fgraph.apply_nodes if isinstance(n.op, Dot)]
    assert len(outer_dots) == 1 and outer_dots[0].outputs[0].ndim == 2


def test_zero_steps(scan_rw, rng):
    """No step: the raw buffer's last row is acc0 (a gradient's carried sum reads it so), while
    scan()'s output[-1] stays an IndexError; the factors' row shapes are unknown then."""
    n = T.lscalar("n")
    inputs, acc = _weight_sum(n_steps=n)
    buffer = acc.owner.inputs[0]  # scan() slices the initial row off the loop's buffer
    f = scan_rw.compile(inputs + [n], [buffer[-1]], RULE)
    assert scan_rw.records(f, "push_out_dot_sum")
    values = _values(rng, 3)
    np.testing.assert_allclose(f(*values, 0)[0], values[2])
    np.testing.assert_allclose(f(*values, 3)[0], ss.function(inputs + [n], acc[-1], mode="py")(*values, 3))
    g = scan_rw.compile(inputs + [n], acc[-1], RULE)
    assert scan_rw.records(g, "push_out_dot_sum")
    with pytest.raises(IndexError):
        g(*values, 0)


def test_declines_when_every_step_is_read(scan_rw, rng):
    """acc's history is an output: the loop keeps it."""
    inputs, acc = _weight_sum()
    f = scan_rw.check(inputs, [acc[-1], acc.sum()], RULE, _values(rng, 4))
    _, args = scan_rw.only_scan(f)
    assert len(args.sit_sot) == 1


def test_declines_when_the_body_reads_the_sum(scan_rw, rng):
    """A factor reading acc is not a sum of independent products."""
    X, acc0 = T.tensor3("X"), T.matrix("acc0")
    acc, _ = ss.scan(lambda x, acc: acc + T.dot(x.T, T.dot(x, acc)), sequences=X, outputs_info=acc0)
    f = scan_rw.check([X, acc0], acc[-1], RULE, [rng.normal(size=(3, 4, 3)), rng.normal(size=(3, 3))], rtol=1e-10)
    _, args = scan_rw.only_scan(f)
    assert len(args.sit_sot) == 1


def test_mismatched_factors_still_raise(scan_rw, rng):
    """A product that cannot be computed is an error with the rule too (at the end, not step 0)."""
    inputs, acc = _weight_sum()
    f = scan_rw.compile(inputs, acc[-1], RULE)
    bad = [rng.normal(size=(2, 4, 3)), rng.normal(size=(5, 2)), rng.normal(size=(3, 2))]
    for g in (f, ss.function(inputs, acc[-1], mode="py")):
        try:
            g(*bad)
        except ValueError:
            continue
        raise AssertionError("expected a ValueError")
    assert ScanArgs  # (imported for readers of this file: the entries are ScanArgs')


def test_a_sum_that_changes_the_state_shape_still_raises(scan_rw, rng):
    """The loop raises when a step's value has not the initial state's shape; the sum after the
    loop keeps that error (step products of (4, 2) added to a (1, 1) state)."""
    inputs, acc = _weight_sum()
    values = _values(rng, 3)
    values[2] = rng.normal(size=(1, 1))
    f = scan_rw.check(inputs, acc[-1], RULE, values)
    assert scan_rw.records(f, "push_out_dot_sum")
    with pytest.raises(ValueError, match="has shape \\(1, 1\\) per step but step 0 produced shape \\(3, 2\\)"):
        f(*values)


def test_products_that_broadcast_to_the_state(scan_rw, rng):
    """Step products of one row broadcast to every row of the state, as in the loop."""
    X, W, acc0 = T.tensor3("X"), T.matrix("W"), T.matrix("acc0")
    acc, _ = ss.scan(lambda x, acc, W: acc + T.dot(x[:1], W), sequences=X, outputs_info=acc0, non_sequences=W)
    f = scan_rw.check([X, W, acc0], acc[-1], RULE,
                      *[[rng.normal(size=(k, 2, 3)), rng.normal(size=(3, 2)), rng.normal(size=(4, 2))] for k in (1, 3)])
    assert scan_rw.records(f, "push_out_dot_sum")


def _zeros_init_sum(n):
    """A gradient's weight sum: the accumulator starts at zeros like W (``second(W, 0)``)."""
    X, W = T.tensor3("X"), T.matrix("W")
    acc, _ = ss.scan(lambda x, acc, W: acc + T.dot(x.T, T.tanh(T.dot(x, W))), sequences=X,
                     outputs_info=T.zeros_like(W), non_sequences=W, n_steps=n)
    return [X, W, n], acc


@pytest.mark.parametrize("steps", [0, 1, 4])
def test_zeros_init_is_read_only_by_the_sum(scan_rw, rng, steps):
    """The shape check reads W, not the zeros, so the zeros fold into the sum (one node fewer);
    zero, one and several steps give mode "py"'s numbers (the raw buffer's last row: W's zeros
    with no step), and a mismatched W still raises."""
    n = T.lscalar("n")
    inputs, acc = _zeros_init_sum(n)
    last = acc.owner.inputs[0][-1]
    values = [rng.normal(size=(4, 4, 3)), rng.normal(size=(3, 2)), steps]
    f = ss.function(inputs, last, mode="fast")
    assert scan_rw.records(f, "push_out_dot_sum")
    np.testing.assert_allclose(f(*values), ss.function(inputs, last, mode="py")(*values), rtol=1e-12, atol=1e-13)
    checks = [node for node in f.fgraph.apply_nodes if isinstance(node.op, CheckStepShape)]
    assert len(checks) == 1 and checks[0].inputs[1] is f.fgraph.inputs[1]
    seconds = [node for node in f.fgraph.apply_nodes if str(node.op) == "Elemwise{second}"]
    assert not seconds, seconds
    bad = [values[0], rng.normal(size=(4, 2)), steps]
    if steps:
        for g in (f, ss.function(inputs, last, mode="py")):
            with pytest.raises(ValueError):
                g(*bad)


@pytest.mark.parametrize("steps", [0, 1, 5])
def test_outer_products_use_the_step_count_and_static_lengths(scan_rw, rng, steps):
    """sum_t x_t y_t^T (a taps RNN's weight gradient): the inner length of the product is the
    loop's step count times a static 1, so no shape read or product computes it."""
    X, Y, acc0 = T.matrix("X"), T.matrix("Y"), T.matrix("acc0")
    acc, _ = ss.scan(lambda x, y, acc: acc + T.dot(x[:, None], y[None, :]), sequences=[X, Y], outputs_info=acc0)
    buffer_last = acc.owner.inputs[0][-1]
    values = [rng.normal(size=(steps, 3)), rng.normal(size=(steps, 2)), rng.normal(size=(3, 2))]
    f = scan_rw.check([X, Y, acc0], buffer_last, RULE + ["canonicalize"], values)
    assert scan_rw.records(f, "push_out_dot_sum")
    assert not [n for n in f.fgraph.apply_nodes if str(n.op) == "Elemwise{mul}"]
    short = [rng.normal(size=(steps + 1, 3)), rng.normal(size=(steps, 2)), rng.normal(size=(3, 2))]
    scan_rw.same_as_py(f, [X, Y, acc0], buffer_last, short)
