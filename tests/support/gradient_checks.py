"""Central differences for the gradient tests, in one place (conftest and the scan gradient
files use them)."""

import numpy as np

from modes_tested import NUMBA


def central_difference(f, points: list, i: int, step: float = 1e-6) -> np.ndarray:
    """d f / d points[i], entry by entry: (f(p + h) - f(p - h)) / 2h, with points[i] as floats."""
    p = np.asarray(points[i], dtype=float)
    g = np.zeros(p.shape)
    for k in range(p.size):
        plus, minus = p.copy(), p.copy()
        plus.flat[k] += step
        minus.flat[k] -= step
        g.flat[k] = (f(*points[:i], plus, *points[i + 1:]) - f(*points[:i], minus, *points[i + 1:])) / (2 * step)
    return g


def central_differences(f, points: list, step: float = 1e-6, wrt=None) -> list:
    """d f / d point for the float points at positions ``wrt`` (default: every float point);
    None for the others."""
    return [central_difference(f, points, i, step)
            if np.asarray(p).dtype.kind == "f" and (wrt is None or i in wrt) else None
            for i, p in enumerate(points)]


# ---------------------------------------------------------------------------- an Elman RNN in numpy
def numpy_rnn(W, U, b, h0, xs):
    """h_t = tanh(W h_(t-1) + U x_t + b), every step."""
    hs, h = [], h0
    for x in xs:
        h = np.tanh(W @ h + U @ x + b)
        hs.append(h)
    return np.array(hs)


def numpy_bptt(W, U, b, h0, xs, V, last=None):
    """Gradients of sum_t V[t].h_t w.r.t. W, U, b, h0, xs; ``last``: only the last ``last``
    steps run backwards (Theano's truncate_gradient)."""
    hs = numpy_rnn(W, U, b, h0, xs)
    prev = [h0] + list(hs[:-1])
    gW, gU, gb, gxs, carry = np.zeros_like(W), np.zeros_like(U), np.zeros_like(b), np.zeros_like(xs), np.zeros_like(h0)
    first = 0 if last is None else max(len(xs) - last, 0)
    for t in reversed(range(first, len(xs))):
        da = (V[t] + carry) * (1 - hs[t] ** 2)
        gW += np.outer(da, prev[t])
        gU += np.outer(da, xs[t])
        gb += da
        gxs[t] = U.T @ da
        carry = W.T @ da
    return [gW, gU, gb, carry if first == 0 else np.zeros_like(h0), gxs]


MODES = ("py", "fast", "onnxruntime") + (("numba",) if NUMBA else ())


def grads_in_modes(inputs, cost, wrt, points, modes=MODES):
    """The gradients in each mode (the first is the reference), checked equal, and the first's."""
    import symscan as ss

    grads = ss.grad(cost, wrt)
    results = [[np.asarray(g) for g in ss.function(inputs, grads, mode=mode)(*points)] for mode in modes]
    for mode, got in zip(modes[1:], results[1:]):
        for x, y in zip(results[0], got):
            np.testing.assert_allclose(y, x, rtol=1e-12, err_msg=f"mode {mode}")
    return results[0]
