"""A cost of the last step only (``states[-1]``): the reverse loop starts its carried
cotangent at that step's cotangent instead of reading a sequence of cotangents, zero but
for one row, as long as the trace. Checked for structure (the reverse loop's sequences) and
numbers: the same gradient as the equivalent cost ``sum(states * mask)`` with the mask given
at run time (which takes the dense path), in modes py and fast, and against a numpy loop."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.graph.traversal import toposort
from symscan.scan.args import ScanArgs
from symscan.scan.op import Scan

MODES = ("py", "fast")


def reverse_loop_sequences(grads) -> list[str]:
    """The sequence labels of the gradient's reverse loop."""
    (loop,) = [n for n in toposort(grads if isinstance(grads, list) else [grads])
               if isinstance(n.op, Scan) and (n.op.info.name or "").startswith("grad_of")]
    return [s.label for s in ScanArgs.from_node(loop).sequences]


def rnn(W, h0, xs, **kwargs):
    """h_t = tanh(W h_{t-1} + x_t)."""
    states, _ = ss.scan(lambda x, h: T.tanh(T.dot(W, h) + x), sequences=xs, outputs_info=h0, name="rnn", **kwargs)
    return states


def numpy_last_step_grads(W, h0, xs, backwards=False):
    """d sum(h_T) / d(W, h0, xs), by hand."""
    order = list(range(len(xs)))[::-1] if backwards else list(range(len(xs)))
    hs, h = [h0], h0
    for t in order:
        h = np.tanh(W @ h + xs[t])
        hs.append(h)
    dW, dxs, dh = np.zeros_like(W), np.zeros_like(xs), np.ones_like(h0)
    for step in range(len(order) - 1, -1, -1):
        da = dh * (1 - hs[step + 1] ** 2)
        dW += np.outer(da, hs[step])
        dxs[order[step]] = da
        dh = W.T @ da
    return dW, dh, dxs


def values(steps=5, size=3, seed=0):
    r = np.random.default_rng(seed)
    return r.normal(size=(size, size)) * 0.5, r.normal(size=size), r.normal(size=(steps, size))


@pytest.mark.parametrize("backwards", [False, True])
def test_last_step_cost_reads_no_cotangent_sequence_and_matches_numpy(backwards):
    W, h0, xs = T.matrix("W"), T.vector("h0"), T.matrix("xs")
    states = rnn(W, h0, xs, go_backwards=backwards)
    grads = ss.grad(states[-1].sum(), [W, h0, xs])
    assert not any(label.startswith("d") for label in reverse_loop_sequences(grads))
    dense = ss.grad(states.sum(), [W, h0, xs])
    assert any(label.startswith("d") for label in reverse_loop_sequences(dense))  # every step's cotangent
    point = values()
    want = numpy_last_step_grads(*point, backwards=backwards)
    for mode in MODES:
        got = ss.function([W, h0, xs], grads, mode=mode)(*point)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14, err_msg=mode)


@pytest.mark.parametrize("steps", [1, 2, 7])
@pytest.mark.parametrize("truncate", [-1, 1, 3])
def test_last_step_cost_equals_the_masked_dense_cost(steps, truncate):
    """``states[-1]`` against ``sum(states * mask)``, mask one at the last row: the same math,
    one path starting the carry, the other reading the cotangent rows (with truncation too)."""
    W, h0, xs, mask = T.matrix("W"), T.vector("h0"), T.matrix("xs"), T.matrix("mask")
    states = rnn(W, h0, xs, truncate_gradient=truncate)
    weights = np.linspace(0.5, 1.5, 3)
    last = ss.grad((states[-1] * weights).sum(), [W, h0, xs])
    masked = ss.grad((states * mask).sum(), [W, h0, xs])
    point = values(steps)
    one_hot = np.zeros((steps, 3))
    one_hot[-1] = weights
    for mode in MODES:
        got = ss.function([W, h0, xs], last, mode=mode)(*point)
        want = ss.function([W, h0, xs, mask], masked, mode=mode)(*point, one_hot)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15, err_msg=mode)


def test_a_matrix_state_and_a_second_output():
    """The carry starts at a matrix; another output's cotangents still arrive as a sequence."""
    A, X0 = T.matrix("A"), T.matrix("X0")
    (states, traces), _ = ss.scan(lambda X, A: [T.tanh(T.dot(X, A)), T.tanh(T.dot(X, A)).sum()],
                                  outputs_info=[X0, None], non_sequences=A, n_steps=4)
    cost = states[-1].sum() + traces.sum()
    grads = ss.grad(cost, [A, X0])
    mask = T.matrix("mask")
    masked = ss.grad((states * mask.dimshuffle(0, "x", 1)).sum() + traces.sum(), [A, X0])
    r = np.random.default_rng(1)
    point = [r.normal(size=(2, 2)) * 0.5, r.normal(size=(3, 2))]
    one_hot = np.zeros((4, 2))
    one_hot[-1] = 1
    for mode in MODES:
        got = ss.function([A, X0], grads, mode=mode)(*point)
        want = ss.function([A, X0, mask], masked, mode=mode)(*point, one_hot)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15, err_msg=mode)


@pytest.mark.parametrize("mode", MODES)
def test_no_steps_still_raises(mode):
    """With no step there is no last step: the cost's index raised before, and still does,
    also when the last step's cotangent does not read the state (a weighted sum)."""
    A, h0, k, c = T.vector("A"), T.vector("h0"), T.lscalar("k"), T.vector("c")
    states, _ = ss.scan(lambda h, A: h * A, outputs_info=h0, non_sequences=A, n_steps=k)
    f = ss.function([A, h0, k, c], ss.grad(T.dot(states[-1], c), [A, h0]), mode=mode)
    np.testing.assert_allclose(f(np.full(2, 2.0), np.ones(2), 3, np.ones(2)), [[12.0, 12.0], [8.0, 8.0]])
    with pytest.raises((IndexError, ValueError), match="out of bounds"):
        f(np.full(2, 2.0), np.ones(2), 0, np.ones(2))
