"""delayed_state_to_taps: a state that is another's previous value (ONNX's shift register for
a recurrence on two past values) becomes a tap of that state."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.scan.args import ScanArgs

RULE = ["delayed_state_to_taps"]


def shift_register(n_steps, length: int = 2):
    """a_t = 0.5 a_(t-1) + 0.3 b_(t-1) + 1, b_t = a_(t-1) (ONNX's way to write taps [-2, -1]),
    states of a static length (as an imported model's often are)."""
    a0, b0 = T.tensor("float64", shape=(length,), name="a0"), T.tensor("float64", shape=(length,), name="b0")
    (As, Bs), _ = ss.scan(lambda a, b: (0.5 * a + 0.3 * b + 1.0, a), outputs_info=[a0, b0], n_steps=n_steps)
    return [a0, b0], [As, Bs]


def numpy_register(a, b, steps):
    As, Bs = [], []
    for _ in range(steps):
        a, b = 0.5 * a + 0.3 * b + 1.0, a
        As.append(a)
        Bs.append(b)
    return [np.array(As).reshape((steps,) + a.shape), np.array(Bs).reshape((steps,) + a.shape)]


@pytest.mark.parametrize("steps", [0, 1, 2, 7])
def test_the_late_state_becomes_tap_minus_2(scan_rw, same_as_py, steps):
    k = T.lscalar("k")
    inputs, outputs = shift_register(k)
    f = ss.function(inputs + [k], outputs, mode="fast", rewrites=RULE)
    (node,) = scan_rw.scans(f)
    args = ScanArgs.from_node(node)
    assert ([e.taps for e in args.mit_sot], args.sit_sot) == ([(-2, -1)], [])
    (record,) = scan_rw.records(f, "delayed_state_to_taps")
    assert "one step late: a tap -2" in record.detail
    a0, b0 = np.array([1.0, -2.0]), np.array([0.5, 3.0])
    got = same_as_py(f, a0, b0, steps)
    for g, e in zip(got, numpy_register(a0, b0, steps)):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_with_every_rewrite_the_loop_is_a_linear_recurrence(scan_rw, same_as_py):
    inputs, outputs = shift_register(30, length=1)
    f = ss.function(inputs, [outputs[0][-1], outputs[1]], mode="fast")
    assert scan_rw.scans(f) == []
    a0, b0 = np.array([1.0]), np.array([2.0])
    last, bs = same_as_py(f, a0, b0)
    expected = numpy_register(a0, b0, 30)
    np.testing.assert_allclose(last, expected[0][-1], rtol=1e-9)
    np.testing.assert_allclose(bs, expected[1], rtol=1e-9)


def test_a_chain_of_late_states_becomes_three_taps(scan_rw, same_as_py):
    """c_t = b_(t-1) = a_(t-2): taps [-3, -2, -1] after two firings."""
    a0, b0, c0 = T.scalar("a0"), T.scalar("b0"), T.scalar("c0")
    outs, _ = ss.scan(lambda a, b, c: (a - 0.25 * c + 0.1 * b, a, b), outputs_info=[a0, b0, c0], n_steps=9)
    f = ss.function([a0, b0, c0], outs, mode="fast", rewrites=RULE)
    (node,) = scan_rw.scans(f)
    assert [e.taps for e in ScanArgs.from_node(node).mit_sot] == [(-3, -2, -1)]
    a, b, c, rows = 1.0, -1.0, 2.0, []
    for _ in range(9):
        a, b, c = a - 0.25 * c + 0.1 * b, a, b
        rows.append((a, b, c))
    for got, expected in zip(same_as_py(f, 1.0, -1.0, 2.0), np.array(rows).T):
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_states_of_unknown_shapes_are_left_alone(scan_rw, same_as_py):
    """With no step, b_0 and a_0 need not have one shape (the loop would not stack them)."""
    a0, b0, k = T.vector("a0"), T.vector("b0"), T.lscalar("k")
    (As, Bs), _ = ss.scan(lambda a, b: (a * 0.5, a), outputs_info=[a0, b0], n_steps=k)
    f = ss.function([a0, b0, k], [As, Bs], mode="fast", rewrites=RULE)
    (record,) = scan_rw.records(f, "delayed_state_to_taps", fired=False)
    assert "not known to have one shape" in record.detail
    result = same_as_py(f, np.ones(2), np.ones(3), 0)
    assert [r.shape for r in result] == [(0, 2), (0, 3)]


def test_a_state_copied_unchanged_is_not_late(scan_rw):
    """b_t = b_(t-1) copies itself, not another state: nothing to do."""
    a0, b0 = T.scalar("a0"), T.scalar("b0")
    outs, _ = ss.scan(lambda a, b: (a + b, b), outputs_info=[a0, b0], n_steps=4)
    f = ss.function([a0, b0], outs, mode="fast", rewrites=RULE)
    assert not scan_rw.records(f, "delayed_state_to_taps")
