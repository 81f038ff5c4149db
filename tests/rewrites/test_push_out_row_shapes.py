"""push_out_row_shapes: a sequence element's shape, read in the body, comes from the sequence's
shape before the loop (with push_out_non_seq, what is computed from it leaves the loop too)."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from benchmarks import grad_workloads
from symscan.tensor.shape import Shape

RULES = ["push_out_row_shapes", "push_out_non_seq"]


def _shape_reads(scan_rw, node) -> list:
    return scan_rw.nodes(node, Shape)


def _row_sums():
    """Each step sums its element into a vector of the element's row count (x_t.shape[0]),
    reads a taps' window and reshapes a flat sequence to the element's whole shape."""
    X, Y, acc0 = T.tensor3("X"), T.matrix("Y"), T.vector("acc0")

    def step(x_prev, x, y, acc):
        rows = T.zeros((x.shape[0],)) + x.sum(axis=-1) + x_prev[:, -1]
        return acc + rows[: acc.shape[0]] + T.reshape(y, x.shape).sum(axis=1)[: acc.shape[0]]

    acc, _ = ss.scan(step, sequences=[dict(input=X, taps=[-1, 0]), Y], outputs_info=acc0)
    return [X, Y, acc0], acc


def _values(rng, steps, rows=3, cols=2):
    return [rng.normal(size=(steps + 1, rows, cols)), rng.normal(size=(steps, rows * cols)), rng.normal(size=rows)]


@pytest.mark.parametrize("steps", [0, 1, 4])
def test_element_shapes_leave_the_body(scan_rw, rng, steps):
    inputs, acc = _row_sums()
    buffer_last = acc.owner.inputs[0][-1]  # no step: the initial value
    f = scan_rw.check(inputs, buffer_last, RULES, _values(rng, steps))
    node, _ = scan_rw.only_scan(f)
    assert _shape_reads(scan_rw, node) == []
    assert scan_rw.records(f, "push_out_row_shapes")
    unrewritten = ss.function(inputs, buffer_last, mode="fast", rewrites=["push_out_non_seq"])
    assert _shape_reads(scan_rw, scan_rw.only_scan(unrewritten)[0])


def test_a_shape_mismatch_still_raises(scan_rw, rng):
    """A flat element of the wrong length cannot be reshaped: an error with the rule too."""
    inputs, acc = _row_sums()
    f = scan_rw.compile(inputs, acc[-1], RULES)
    bad = _values(rng, 3)
    bad[1] = rng.normal(size=(3, 5))
    for g in (f, ss.function(inputs, acc[-1], mode="py")):
        with pytest.raises(ValueError):
            g(*bad)


def test_a_gradient_body_reads_no_shapes(rng):
    """G4's backward loop (d sum(h**2) of an Elman RNN) reads no Shape in its body: the sum_to
    targets of its broadcasts are computed before the loop; the numbers are mode "py"'s."""
    work = grad_workloads.elman_rnn(3, 2, 3, 4)
    f = ss.function(work.inputs, work.outputs, mode="fast")
    scans = [n for n in f.fgraph.apply_nodes if type(n.op).__name__ == "Scan"]
    assert any("push_out_row_shapes" == r.rule and r.fired for r in f.rewrite_report())
    assert not [n for s in scans for n in s.op.inner.apply_nodes if isinstance(n.op, Shape)]
    reference = ss.function(work.inputs, work.outputs, mode="py")
    for got, expected in zip(f(*work.values), reference(*work.values)):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("steps", [0, 1, 3])
def test_a_mit_sot_state_shape_is_its_initial_rows(scan_rw, rng, steps):
    """y[t-2].shape[0] is the initial rows' shape without their leading axis."""
    Y0, n = T.matrix("Y0"), T.lscalar("n")
    ys, _ = ss.scan(lambda a, b: a + b * T.cast(b.shape[0], "float64"), outputs_info=dict(initial=Y0, taps=[-2, -1]),
                    n_steps=n)
    buffer_last = ys.owner.inputs[0][-1]
    f = scan_rw.check([Y0, n], buffer_last, RULES, [rng.normal(size=(2, 3)), steps])
    assert _shape_reads(scan_rw, scan_rw.only_scan(f)[0]) == []


def test_a_body_with_a_random_draw(scan_rw):
    """A node without inputs in the body (a draw from a shared random state) is no shape read."""
    srng = ss.RandomStream(seed=3)
    out, updates = ss.scan(lambda acc: acc + srng.choice(np.arange(4.0), size=()), outputs_info=T.constant(0.0),
                           n_steps=5)
    f = ss.function([], out, updates=updates, mode="fast", rewrites=RULES)
    assert f().shape == (5,)
