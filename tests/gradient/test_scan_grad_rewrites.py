"""Rewrites on backward loops: by the structure they leave (loops gone, work hoisted, traces
kept whole) and by the numbers (mode fast against mode py and a numpy BPTT)."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.graph.traversal import toposort
from symscan.scan import Scan
from symscan.scan.args import ScanArgs
from symscan.tensor.broadcast import SumToShape
from symscan.tensor.math import Dot
from symscan.tensor.shape import DimShuffle, Shape


def scans(f) -> list:
    return [n for n in f.fgraph.apply_nodes if isinstance(n.op, Scan)]


def compile_and_compare(inputs, outputs, *values):
    """Mode fast, checked against mode py (no rewrites) on ``values``."""
    fast, py = ss.function(inputs, outputs, mode="fast"), ss.function(inputs, outputs, mode="py")
    for got, want in zip(fast(*values), py(*values)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    return fast


def test_backward_of_a_running_sum_has_no_loop():
    """d sum(cumsum-scan(x)**2)/dx: the reverse loop is a running sum too (G3)."""
    x = T.dvector("x")
    s, _ = ss.scan(lambda xt, h: h + xt, sequences=[x], outputs_info=[T.constant(0.0)])
    values = np.random.default_rng(0).normal(size=50)
    f = compile_and_compare([x], [ss.grad((s ** 2).sum(), x)], values)
    assert scans(f) == []
    np.testing.assert_allclose(f(values)[0], np.cumsum((2 * np.cumsum(values))[::-1])[::-1], rtol=1e-12)


def test_backward_of_an_affine_recurrence_has_no_loop():
    """x_t = a x_(t-1) + b_t: the carried cotangent is affine too; d/db and d/da without a loop."""
    b, a = T.dvector("b"), T.dscalar("a")
    x, _ = ss.scan(lambda bt, h, a: a * h + bt, sequences=[b], outputs_info=[T.constant(0.0)], non_sequences=[a])
    f = compile_and_compare([b, a], ss.grad((x ** 2).sum(), [b, a]), np.linspace(-1, 1, 9), 0.7)
    assert scans(f) == []


def test_backward_of_a_linear_mit_sot_is_a_linear_recurrence():
    """G7: the taps send back 0.5 z each, so the reverse loop is a mit-sot recurrence in z (not a
    carried window) that the linear-recurrence rewrite replaces; d/d(initial window) exact."""
    init = T.dvector("init")
    x, _ = ss.scan(lambda a, b: 0.5 * a + 0.5 * b + 1.0, outputs_info=[dict(initial=init, taps=[-2, -1])],
                   n_steps=30)
    grads = ss.grad((x ** 2).sum(), init)
    reverse = next(n for n in toposort([grads]) if isinstance(n.op, Scan) and "grad_of" in str(n.op))
    assert [r.taps for r in ScanArgs.from_node(reverse).mit_sot] == [(-2, -1)]
    f = compile_and_compare([init], [grads], np.array([0.3, -0.2]))
    assert scans(f) == []
    xs = [0.3, -0.2]
    for _ in range(30):
        xs.append(0.5 * xs[-2] + 0.5 * xs[-1] + 1.0)
    z = np.zeros(32)  # numpy BPTT over the whole buffer
    for t in range(31, 1, -1):
        z[t] += 2 * xs[t]
        z[t - 1] += 0.5 * z[t]
        z[t - 2] += 0.5 * z[t]
    np.testing.assert_allclose(f(np.array([0.3, -0.2]))[0], z[:2], rtol=1e-12)


def _elman():
    X, W, U, b, h0 = T.dmatrix("X"), T.dmatrix("W"), T.dmatrix("U"), T.dvector("b"), T.dvector("h0")
    h, _ = ss.scan(lambda x, h, W, U, b: T.tanh(T.dot(W, h) + T.dot(U, x) + b), sequences=[X], outputs_info=[h0],
                   non_sequences=[W, U, b])
    inputs = [X, W, U, b, h0]
    rng = np.random.default_rng(1)
    values = [rng.normal(size=(6, 2)), rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(3, 2)), rng.normal(size=3),
              rng.normal(size=3)]
    return inputs, ss.grad((h ** 2).sum(), inputs), values


def test_save_mem_keeps_the_trace_the_backward_reads():
    """The forward loop's trace is read by the reverse loop at every step: never ringed; the
    reverse loop's carried sums (read at [-1]) keep one row."""
    inputs, grads, values = _elman()
    f = compile_and_compare(inputs, grads, *values)
    forward = [n for n in scans(f) if "grad_of" not in str(n.op)]
    backward = [n for n in scans(f) if "grad_of" in str(n.op)]
    assert forward and all(not n.op.info.rings for n in forward)
    carried_rings = [ring for n in backward for ring in n.op.info.rings[:len(ScanArgs.from_node(n).sit_sot)]]
    assert backward and carried_rings and all(ring == 1 for ring in carried_rings)


def test_reverse_loop_hoists_transposes_and_computes_no_product_for_its_shape():
    """Transposed weights are computed once before the reverse loop, and no forward product is
    recomputed only to learn the shape sum_to needs."""
    inputs, grads, values = _elman()
    f = compile_and_compare(inputs, grads, *values)
    for node in scans(f):
        if "grad_of" not in str(node.op):
            continue
        args = ScanArgs.from_node(node)
        invariant = {n.inner for n in args.non_seqs}
        inner = toposort(node.op.inner.outputs)
        assert not [n for n in inner if isinstance(n.op, DimShuffle) and n.inputs[0] in invariant]
    for graph_nodes in [f.fgraph.apply_nodes] + [toposort(n.op.inner.outputs) for n in scans(f)]:
        for node in graph_nodes:
            if isinstance(node.op, Dot):
                readers = [r for r in graph_nodes if node.outputs[0] in r.inputs]
                assert not readers or not all(isinstance(r.op, (SumToShape, Shape)) for r in readers)


@pytest.mark.parametrize("mode", ["fast", "onnxruntime"])
def test_gradient_of_the_elman_rnn_after_every_rewrite(mode):
    """Mode fast (and its ONNX export) against mode py for all five gradients."""
    inputs, grads, values = _elman()
    got = ss.function(inputs, grads, mode=mode)(*values)
    want = ss.function(inputs, grads, mode="py")(*values)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
