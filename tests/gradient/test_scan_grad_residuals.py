"""The reverse loop reads products the forward step computes (recorded by the forward loop, as
JAX keeps residuals) instead of computing them again from the saved states: by the structure
of the gradient graph (before and after the rewrites) and by the numbers (mode py, a numpy
BPTT)."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from benchmarks.lstm import lstm_bptt, lstm_graph, lstm_values
from symscan.graph.traversal import ancestors, toposort
from symscan.scan import Scan
from symscan.scan.args import ScanArgs
from symscan.tensor.broadcast import SumToShape
from symscan.tensor.linalg import solve
from symscan.tensor.math import Dot
from symscan.tensor.shape import Shape


def _reverse_loop(grads) -> ScanArgs:
    (node,) = [n for n in toposort(grads) if isinstance(n.op, Scan) and "grad_of" in str(n.op)]
    return ScanArgs.from_node(node)


def _recomputed_products(reverse: ScanArgs) -> list:
    """Products in the reverse body that read no cotangent and whose values (not only their
    shapes, which the rewrites infer) are read: forward work done again."""
    cotangents = {v for e in reverse.recurrent for v in e.inner_in}
    cotangents |= {v for s in reverse.sequences if (s.label or "").startswith("d") for v in s.inner}
    nodes = toposort(reverse.inner_outputs(), stop_at=reverse.inner_inputs())
    values_read = set(reverse.inner_outputs())
    for n in reversed(nodes):
        if values_read & set(n.outputs) and not isinstance(n.op, Shape):
            values_read.update(n.inputs[:1] if isinstance(n.op, SumToShape) else n.inputs)
    return [n for n in nodes if isinstance(n.op, Dot) and n.outputs[0] in values_read
            and not cotangents & set(ancestors(n.outputs))]


def _loops(f) -> list:
    return [n for n in f.fgraph.toposort() if isinstance(n.op, Scan)]


def _compare(inputs, grads, values, modes=("fast",)) -> dict:
    expected = ss.function(inputs, grads, mode="py")(*values)
    compiled = {}
    for mode in modes:
        compiled[mode] = ss.function(inputs, grads, mode=mode)
        for got, want in zip(compiled[mode](*values), expected):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    return compiled


def _lstm(steps=6, batch=2, n_in=3, n_hidden=4):
    inputs, (hs,) = lstm_graph(n_hidden)
    grads = ss.grad((hs ** 2).sum(), inputs[1:])
    return inputs, grads, lstm_values(steps, batch, n_in, n_hidden)


def test_an_lstm_reverse_step_reads_the_recorded_gate_preactivation():
    """x W + h U + b is recorded once (the end of the chain that alone reads both products):
    the reverse step computes only products of cotangents."""
    inputs, grads, values = _lstm()
    assert _recomputed_products(_reverse_loop(grads)) == []
    recorded = [s for s in _reverse_loop(grads).sequences if "(recorded)" in (s.label or "")]
    assert len(recorded) == 1
    for mode, f in _compare(inputs, grads, values, modes=("fast", "numba")).items():
        for got, want in zip(f(*values), lstm_bptt(*values)):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
        forward = [ScanArgs.from_node(n) for n in _loops(f) if "grad_of" not in str(n.op)]
        assert len(forward) == 1, mode  # the recording loop merged into the forward one
        assert len(forward[0].recurrent) == 2 and len(forward[0].nit_sot) == 1, mode
        reverse = next(ScanArgs.from_node(n) for n in _loops(f) if "grad_of" in str(n.op))
        assert sum(isinstance(n.op, Dot) for n in toposort(reverse.inner_outputs())) == 1, mode


@pytest.mark.parametrize("truncate", [-1, 1, 3])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_recorded_rows_follow_truncation_and_direction(truncate, go_backwards):
    X, W, h0 = T.tensor3("X"), T.matrix("W"), T.matrix("h0")
    H, _ = ss.scan(lambda x, h, W: T.tanh(T.dot(x, W) * T.dot(h, W)), sequences=X, outputs_info=h0,
                   non_sequences=[W], truncate_gradient=truncate, go_backwards=go_backwards)
    grads = ss.grad((H ** 2).sum() + H[2].sum(), [X, W, h0])
    assert _recomputed_products(_reverse_loop(grads)) == []
    rng = np.random.default_rng(1)
    _compare([X, W, h0], grads, [rng.normal(size=(5, 2, 3)), rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(2, 3))])


def test_a_solve_in_the_step_is_recorded():
    A, b, h0 = T.matrix("A"), T.matrix("b"), T.vector("h0")
    H, _ = ss.scan(lambda bt, h, A: T.sin(solve(A, h + bt)), sequences=b, outputs_info=h0, non_sequences=[A])
    grads = ss.grad((H ** 2).sum(), [A, b, h0])
    assert any("(recorded)" in (s.label or "") for s in _reverse_loop(grads).sequences)
    rng = np.random.default_rng(2)
    _compare([A, b, h0], grads, [np.eye(3) * 2 + rng.normal(size=(3, 3)) * 0.3, rng.normal(size=(4, 3)),
                                 rng.normal(size=3)])


def test_an_until_loop_recomputes():
    """A recorder of a while loop would be a second loop that no rewrite merges into the first."""
    x0, W = T.vector("x0"), T.matrix("W")

    def step(h, W):
        new = T.tanh(T.dot(W, h)) + 0.5
        return new, ss.until(new.sum() > 100.0)

    H, _ = ss.scan(step, outputs_info=x0, non_sequences=[W], n_steps=6)
    grads = ss.grad((H ** 2).sum(), [x0, W])
    assert len(_recomputed_products(_reverse_loop(grads))) == 1
    rng = np.random.default_rng(3)
    for f in _compare([x0, W], grads, [rng.normal(size=3), rng.normal(size=(3, 3))]).values():
        assert sum("grad_of" not in str(n.op) for n in _loops(f)) == 1


def test_a_product_of_another_shape_at_each_step_is_computed_again():
    """dot(M[:k], h) has k rows at step k: one recording of rows could not hold it."""
    M, h0 = T.matrix("M"), T.vector("h0")
    H, _ = ss.scan(lambda k, h, M: h + T.tanh(T.dot(M[:k], h)).sum(), sequences=T.arange(1, 5), outputs_info=h0,
                   non_sequences=[M])
    grads = ss.grad((H ** 2).sum(), [M, h0])
    assert len(_recomputed_products(_reverse_loop(grads))) == 1
    rng = np.random.default_rng(4)
    _compare([M, h0], grads, [rng.normal(size=(4, 4)) * 0.3, rng.normal(size=4)])


def test_a_product_the_same_at_every_step_is_not_recorded():
    """W @ W reads only non-sequences: the rewrites hoist it out of the reverse loop (one
    matrix), where a recording would hold T copies."""
    X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")
    H, _ = ss.scan(lambda x, h, W: T.sin(T.dot(T.dot(W, W), h)) + x, sequences=X, outputs_info=h0,
                   non_sequences=[W])
    grads = ss.grad((H ** 2).sum(), [X, W, h0])
    recorded = [s for s in _reverse_loop(grads).sequences if "(recorded)" in (s.label or "")]
    assert [s.outer.ndim for s in recorded] == [2]  # dot(W @ W, h_(t-1)) per step, not W @ W
    rng = np.random.default_rng(5)
    _compare([X, W, h0], grads, [rng.normal(size=(5, 3)), rng.normal(size=(3, 3)) * 0.5, rng.normal(size=3)])


def test_a_loop_with_a_shared_state_recomputes():
    """Its recorder would be one more forward loop beside the one recording the shared values."""
    W, h0 = T.matrix("W"), T.vector("h0")
    counter = ss.shared(np.float64(0.0), name="counter")

    def step(h, W):
        return T.tanh(T.dot(W, h)) * counter, {counter: counter + 1.0}

    H, _ = ss.scan(step, outputs_info=h0, non_sequences=[W], n_steps=4)
    grads = ss.grad((H ** 2).sum(), [W, h0])
    assert len(_recomputed_products(_reverse_loop(grads))) == 1


def test_a_product_read_only_for_its_shape_is_not_recorded():
    """An Elman step's product feeds tanh, whose pullback reads tanh's output (the saved state):
    the product's chain is read for its shape only, so a recording would be dead weight."""
    X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")
    H, _ = ss.scan(lambda x, h, W: T.tanh(T.dot(W, h) + x), sequences=X, outputs_info=h0, non_sequences=[W])
    grads = ss.grad((H ** 2).sum(), [X, W, h0])
    assert not [s for s in _reverse_loop(grads).sequences if "(recorded)" in (s.label or "")]
