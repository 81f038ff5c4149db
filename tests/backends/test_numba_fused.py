"""Elementwise chains in numba kernels run as loops over the elements (backends/numba/fused.py):
bit for bit mode fast's results (where no product sums in another order), numpy's broadcasting
errors, and the reverse loops of an LSTM and of a batch-summed bias compiled (they used to stay
in mode fast)."""

from __future__ import annotations

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T

pytest.importorskip("numba")


def kernel_sources(monkeypatch) -> list[str]:
    import symscan.backends.numba.evaluator as evaluator

    sources, load = [], evaluator.load_kernel
    monkeypatch.setattr(evaluator, "load_kernel", lambda source, *a: sources.append(source) or load(source, *a))
    return sources


def lstm_gradient(mode: str, hidden: int = 3):
    X, W, U, b = T.tensor3("X"), T.matrix("W"), T.matrix("U"), T.vector("b")
    h0, c0 = T.matrix("h0"), T.matrix("c0")
    H = hidden

    def step(x, h, c, W, U, b):
        z = T.dot(x, W) + T.dot(h, U) + b
        i, f = T.nnet.sigmoid(z[:, :H]), T.nnet.sigmoid(z[:, H:2 * H])
        o, g = T.nnet.sigmoid(z[:, 2 * H:3 * H]), T.tanh(z[:, 3 * H:])
        c_next = f * c + i * g
        return o * T.tanh(c_next), c_next

    (hs, _), _ = ss.scan(step, sequences=X, outputs_info=[h0, c0], non_sequences=[W, U, b])
    grads = ss.grad((hs ** 2).sum(), [W, U, b, h0, c0])
    return ss.function([X, W, U, b, h0, c0], grads, mode=mode)


def lstm_values(steps=5, batch=2, n_in=4, hidden=3):
    rng = np.random.default_rng(0)
    return [rng.standard_normal((steps, batch, n_in)), rng.standard_normal((n_in, 4 * hidden)),
            rng.standard_normal((hidden, 4 * hidden)), rng.standard_normal(4 * hidden),
            rng.standard_normal((batch, hidden)), rng.standard_normal((batch, hidden))]


def test_lstm_gradient_loops_compile_and_agree(monkeypatch):
    sources = kernel_sources(monkeypatch)
    f = lstm_gradient("numba")
    assert f.backend_report() == ["scan: numba", "grad_of_scan: numba"]
    values = lstm_values()
    for got, want in zip(f(*values), lstm_gradient("fast")(*values)):  # small products sum in their own order
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-15)
    kernel_bodies = [s[s.index("def kernel("):] for s in sources]
    assert all("np.where" not in body for body in kernel_bodies)  # sigmoids are loops, not array expressions
    assert all("_fgroup_" in s for s in sources)


def test_a_chain_is_one_loop_function(monkeypatch):
    sources = kernel_sources(monkeypatch)
    x, a = T.tensor3("x"), T.matrix("a")

    def step(row, acc):
        return acc * (1.0 - acc) + T.tanh(row * 2.0) * 0.5

    out, _ = ss.scan(step, sequences=x, outputs_info=a)
    f = ss.function([x, a], out, mode="numba")
    values = [np.random.default_rng(1).standard_normal((6, 3, 4)), np.full((3, 4), 0.3)]
    np.testing.assert_array_equal(f(*values), ss.function([x, a], out, mode="fast")(*values))
    (source,) = sources
    groups = source.count("def _fgroup_")
    assert 1 <= groups <= 2  # (the tanh's argument, the rest) or one loop: never one per op
    assert source.count("for i0 in range(out.shape[0]):") >= 1


@pytest.mark.parametrize("bias", [np.ones(4), np.ones(1), np.ones((1, 4))])
def test_broadcast_inputs_in_a_fused_chain(bias):
    x, b = T.matrix("x"), T.tensor(dtype="float64", shape=(None,) * bias.ndim, name="b")
    initial = T.zeros((4,) if bias.ndim < 2 else (1, 4))
    out, _ = ss.scan(lambda row, acc, b: T.tanh(acc + row + b) * 2.0 - b, sequences=x, outputs_info=initial,
                     non_sequences=b)
    values = [np.random.default_rng(2).standard_normal((5, 4)), bias]
    got = ss.function([x, b], out, mode="numba")(*values)
    np.testing.assert_array_equal(got, ss.function([x, b], out, mode="fast")(*values))


def test_a_shape_mismatch_in_a_chain_raises_mode_fast_error():
    x, b = T.matrix("x"), T.vector("b")
    out, _ = ss.scan(lambda row, b: T.exp(row * 2.0) + b, sequences=x, non_sequences=b)
    values = [np.ones((3, 4)), np.ones(5)]
    with pytest.raises(ValueError) as fast_error:
        ss.function([x, b], out, mode="fast")(*values)
    with pytest.raises(ValueError) as numba_error:
        ss.function([x, b], out, mode="numba")(*values)
    assert str(numba_error.value) == str(fast_error.value)


def test_bias_gradient_sums_the_batch_in_the_kernel():
    X, W, b, h0 = T.tensor3("X"), T.matrix("W"), T.vector("b"), T.matrix("h0")
    hs, _ = ss.scan(lambda x, h, W, b: T.tanh(T.dot(x, W) + h + b), sequences=X, outputs_info=h0,
                    non_sequences=[W, b])
    grads = ss.grad((hs ** 2).sum(), [W, b])
    f = ss.function([X, W, b, h0], grads, mode="numba")
    assert "grad_of_scan: numba" in f.backend_report()
    rng = np.random.default_rng(3)
    values = [rng.standard_normal((4, 3, 2)), rng.standard_normal((2, 5)), rng.standard_normal(5),
              rng.standard_normal((3, 5))]
    for got, want in zip(f(*values), ss.function([X, W, b, h0], grads, mode="py")(*values)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
