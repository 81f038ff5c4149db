"""The backward of a model exports to ONNX: a training step (loss, gradients, updates) runs
in onnxruntime and agrees with mode "fast"."""

import numpy as np
import onnx
import onnxruntime as ort

import symscan as ss
import symscan.tensor as T


def _mlp_step():
    X, y = T.matrix("X"), T.vector("y")
    W1 = ss.shared(np.random.default_rng(1).normal(size=(3, 4)) * 0.5, name="W1")
    w2 = ss.shared(np.random.default_rng(2).normal(size=4) * 0.5, name="w2")
    p = T.sigmoid(T.dot(T.tanh(T.dot(X, W1)), w2))
    loss = -(y * T.log(p) + (1 - y) * T.log(1 - p)).mean()
    g1, g2 = ss.grad(loss, [W1, w2])
    return [X, y], loss, {W1: W1 - 0.1 * g1, w2: w2 - 0.1 * g2}, (W1, w2)


def test_a_training_step_exports_and_runs_in_onnxruntime(rng):
    inputs, loss, updates, shared = _mlp_step()
    f = ss.function(inputs, loss, updates=updates, mode="fast")
    model = ss.onnx.export(f)
    onnx.checker.check_model(model, full_check=True)
    Xv, yv = rng.normal(size=(8, 3)), (rng.uniform(size=8) > 0.5).astype(float)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"],
                                   disabled_optimizers=["NoopElimination"])
    feeds = {"X": Xv, "y": yv, "W1": shared[0].get_value(), "w2": shared[1].get_value()}
    loss_onnx, W1_onnx, w2_onnx = session.run(None, feeds)
    expected_loss = f(Xv, yv)
    np.testing.assert_allclose(loss_onnx, expected_loss, rtol=1e-12)
    np.testing.assert_allclose(W1_onnx, shared[0].get_value(), rtol=1e-12)
    np.testing.assert_allclose(w2_onnx, shared[1].get_value(), rtol=1e-12)


def test_training_in_onnxruntime_mode_lowers_the_loss(rng):
    inputs, loss, updates, _ = _mlp_step()
    train = ss.function(inputs, loss, updates=updates, mode="onnxruntime")
    Xv = rng.normal(size=(64, 3))
    yv = (Xv[:, 0] - Xv[:, 1] > 0).astype(float)
    losses = [float(train(Xv, yv)) for _ in range(150)]
    assert losses[-1] < 0.6 * losses[0]
