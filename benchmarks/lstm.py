"""W10/G10, an LSTM (issue 25): the symscan graph, input values (fixed seed, weights at about 0.1
scale so that no gate saturates), the plain numpy forward loop and the hand-written numpy BPTT
(the gradient reference). One fused gate matrix: W (in, 4H), U (H, 4H), b (4H,), the gates
i, f, o (sigmoid) and g (tanh) in the slices [:H], [H:2H], [2H:3H], [3H:];
c_t = f c_(t-1) + i g, h_t = o tanh(c_t). Peers build the same LSTM in peers.py.
"""

from __future__ import annotations

import numpy as np

import symscan as ss
import symscan.tensor as T


def lstm_graph(n_hidden: int) -> tuple[list, list]:
    """(inputs [X, W, U, b, h0, c0], outputs [hs]): every step's h, shape (steps, batch, hidden)."""
    X, W, U, b = T.tensor3("X"), T.matrix("W"), T.matrix("U"), T.vector("b")
    h0, c0, H = T.matrix("h0"), T.matrix("c0"), n_hidden

    def step(x_t, h, c, W, U, b):
        z = T.dot(x_t, W) + T.dot(h, U) + b
        i, f, o = T.sigmoid(z[:, :H]), T.sigmoid(z[:, H:2 * H]), T.sigmoid(z[:, 2 * H:3 * H])
        c = f * c + i * T.tanh(z[:, 3 * H:])
        return o * T.tanh(c), c

    (hs, _), _ = ss.scan(step, sequences=X, outputs_info=[h0, c0], non_sequences=[W, U, b])
    return [X, W, U, b, h0, c0], [hs]


def lstm_values(steps: int, batch: int, n_in: int, n_hidden: int) -> list:
    """X ~ N(0, 1); W, U, b, h0, c0 ~ N(0, 0.1^2): the gates' pre-activations stay within about +-2."""
    r = np.random.default_rng(10)
    return [r.normal(size=(steps, batch, n_in))] + [
        r.normal(size=shape) * 0.1 for shape in ((n_in, 4 * n_hidden), (n_hidden, 4 * n_hidden), (4 * n_hidden,),
                                                 (batch, n_hidden), (batch, n_hidden))]


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def lstm_trace(X, W, U, b, h0, c0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The forward loop, keeping what BPTT reads: h_t, c_t and the activated gates [i f o g] per step."""
    H = h0.shape[1]
    hs, cs = np.empty((len(X),) + h0.shape), np.empty((len(X),) + c0.shape)
    gates = np.empty((len(X), h0.shape[0], 4 * H))
    h, c = h0, c0
    for t in range(len(X)):
        z = X[t] @ W + h @ U + b
        a = gates[t]
        a[:, :3 * H], a[:, 3 * H:] = sigmoid(z[:, :3 * H]), np.tanh(z[:, 3 * H:])
        c = a[:, H:2 * H] * c + a[:, :H] * a[:, 3 * H:]
        h = a[:, 2 * H:3 * H] * np.tanh(c)
        hs[t], cs[t] = h, c
    return hs, cs, gates


def lstm_loop(X, W, U, b, h0, c0) -> list:
    """The numpy forward loop: [hs]."""
    return [lstm_trace(X, W, U, b, h0, c0)[0]]


def lstm_bptt(X, W, U, b, h0, c0) -> list:
    """The textbook BPTT of sum(h_t**2 over every step): one reverse loop accumulating every
    weight's gradient per step. Returns the gradients w.r.t. W, U, b, h0, c0."""
    hs, cs, gates = lstm_trace(X, W, U, b, h0, c0)
    H = h0.shape[1]
    g_W, g_U, g_b = np.zeros_like(W), np.zeros_like(U), np.zeros_like(b)
    g_h, g_c = np.zeros_like(h0), np.zeros_like(c0)
    for t in range(len(X) - 1, -1, -1):
        i, f, o, g = (gates[t][:, k * H:(k + 1) * H] for k in range(4))
        c_prev, h_prev = (cs[t - 1], hs[t - 1]) if t > 0 else (c0, h0)
        g_h = g_h + 2.0 * hs[t]
        tanh_c = np.tanh(cs[t])
        g_c = g_c + g_h * o * (1.0 - tanh_c * tanh_c)
        g_z = np.concatenate([g_c * g * i * (1.0 - i), g_c * c_prev * f * (1.0 - f),
                              g_h * tanh_c * o * (1.0 - o), g_c * i * (1.0 - g * g)], axis=1)
        g_W += X[t].T @ g_z
        g_U += h_prev.T @ g_z
        g_b += g_z.sum(axis=0)
        g_h, g_c = g_z @ U.T, g_c * f
    return [g_W, g_U, g_b, g_h, g_c]
