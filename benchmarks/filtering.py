"""K1 and H1, the recurrences of probabilistic models (issue 23): the Kalman filter's
log-likelihood and the HMM forward algorithm. For each: the symscan graph, input values
(simulated from the model, fixed seeds), the plain numpy loop (the forward reference), and a
hand-written numpy reverse loop (the gradient reference, as grad_workloads' BPTTs). Peers build
the same computations in peers.py; the step functions are written as a user would, with
``symscan.tensor.linalg`` for the Kalman filter and ``logsumexp``/``log_softmax`` for the HMM.
"""

from __future__ import annotations

import numpy as np

import symscan as ss
import symscan.tensor as T
from symscan.tensor import linalg
from symscan.tensor.math import logsumexp
from symscan.tensor.nnet import log_softmax

LOG_2PI = float(np.log(2 * np.pi))


# ---------------------------------------------------------------------------- K1
def kalman_graph(n_obs: int = 2) -> tuple[list, object]:
    """(inputs, log-likelihood): inputs y (steps x n_obs), T, Z, Hc, Qc, a0, P0; Q = Qc Qc', H = Hc Hc'."""
    y, Tm, Z, Hc, Qc = T.matrix("y"), T.matrix("T"), T.matrix("Z"), T.matrix("Hc"), T.matrix("Qc")
    a0, P0 = T.vector("a0"), T.matrix("P0")

    def step(y_t, a, P, ll, Tm, Z, Q, H):
        a, P = T.dot(Tm, a), T.dot(T.dot(Tm, P), Tm.T) + Q  # predict
        v, F = y_t - T.dot(Z, a), T.dot(T.dot(Z, P), Z.T) + H  # innovation
        _, log_det = linalg.slogdet(F)
        ll = ll - 0.5 * (n_obs * LOG_2PI + log_det + T.dot(v, linalg.solve(F, v)))
        K = T.dot(T.dot(P, Z.T), linalg.inv(F))  # update
        return a + T.dot(K, v), P - T.dot(T.dot(K, Z), P), ll

    (_, _, lls), _ = ss.scan(step, sequences=y, outputs_info=[a0, P0, T.constant(0.0)],
                             non_sequences=[Tm, Z, T.dot(Qc, Qc.T), T.dot(Hc, Hc.T)])
    return [y, Tm, Z, Hc, Qc, a0, P0], lls[-1]


def kalman_values(steps: int, n_state: int = 4, n_obs: int = 2) -> list:
    """A stable model's parameters and observations simulated from it (a0 = 0, P0 = I)."""
    r = np.random.default_rng(11)
    Tm = 0.9 * np.eye(n_state) + 0.05 * r.normal(size=(n_state, n_state))
    Z = 0.5 * r.normal(size=(n_obs, n_state))
    Hc = 0.5 * np.eye(n_obs) + 0.1 * np.tril(r.normal(size=(n_obs, n_obs)))
    Qc = 0.3 * np.eye(n_state) + 0.05 * np.tril(r.normal(size=(n_state, n_state)))
    state, y = np.zeros(n_state), np.empty((steps, n_obs))
    for t in range(steps):
        state = Tm @ state + Qc @ r.normal(size=n_state)
        y[t] = Z @ state + Hc @ r.normal(size=n_obs)
    return [y, Tm, Z, Hc, Qc, np.zeros(n_state), np.eye(n_state)]


def kalman_loop(y, Tm, Z, Hc, Qc, a0, P0):
    """The filter as a numpy loop: [log-likelihood]."""
    Q, H, a, P, ll = Qc @ Qc.T, Hc @ Hc.T, a0, P0, 0.0
    for t in range(len(y)):
        a, P = Tm @ a, Tm @ P @ Tm.T + Q
        v, F = y[t] - Z @ a, Z @ P @ Z.T + H
        ll = ll - 0.5 * (len(y[t]) * LOG_2PI + np.linalg.slogdet(F)[1] + v @ np.linalg.solve(F, v))
        K = P @ Z.T @ np.linalg.inv(F)
        a, P = a + K @ v, P - K @ Z @ P
    return [np.asarray(ll)]


def kalman_reverse(y, Tm, Z, Hc, Qc, a0, P0):
    """d ll / d(T, Z, Hc, Qc): the forward loop keeping each step's (a, P) before the predict,
    then one reverse loop through predict, innovation, likelihood and update."""
    Q, H, a, P = Qc @ Qc.T, Hc @ Hc.T, a0, P0
    states = []
    for t in range(len(y)):
        states.append((a, P))
        a1, P1 = Tm @ a, Tm @ P @ Tm.T + Q
        F_inv = np.linalg.inv(Z @ P1 @ Z.T + H)
        K = P1 @ Z.T @ F_inv
        a, P = a1 + K @ (y[t] - Z @ a1), P1 - K @ Z @ P1
    g_T, g_Z, g_Q, g_H = (np.zeros_like(m) for m in (Tm, Z, Q, H))
    g_a, g_P = np.zeros_like(a0), np.zeros_like(P0)
    for t in range(len(y) - 1, -1, -1):
        a, P = states[t]
        a1, P1 = Tm @ a, Tm @ P @ Tm.T + Q
        v, F_inv = y[t] - Z @ a1, np.linalg.inv(Z @ P1 @ Z.T + H)
        M = P1 @ Z.T
        K = M @ F_inv
        g_P1, g_a1 = g_P.copy(), g_a.copy()  # P2 = P1 - K Z P1 and a2 = a1 + K v
        g_K = -g_P @ P1.T @ Z.T + np.outer(g_a, v)
        g_Z += -K.T @ g_P @ P1.T
        g_P1 -= Z.T @ K.T @ g_P
        g_v = K.T @ g_a - F_inv @ v  # and the likelihood's -0.5 v' F^-1 v
        g_M, g_F_inv = g_K @ F_inv.T, M.T @ g_K - 0.5 * np.outer(v, v)
        g_P1 += g_M @ Z
        g_Z += g_M.T @ P1
        g_F = -F_inv.T @ g_F_inv @ F_inv.T - 0.5 * F_inv.T  # inv, and -0.5 log det F
        g_Z += g_F @ Z @ P1.T + g_F.T @ Z @ P1
        g_P1 += Z.T @ g_F @ Z
        g_H += g_F
        g_Z -= np.outer(g_v, a1)
        g_a1 -= Z.T @ g_v
        g_T += g_P1 @ Tm @ P.T + g_P1.T @ Tm @ P + np.outer(g_a1, a)
        g_Q += g_P1
        g_P, g_a = Tm.T @ g_P1 @ Tm, Tm.T @ g_a1
    return [g_T, g_Z, (g_H + g_H.T) @ Hc, (g_Q + g_Q.T) @ Qc]


# ---------------------------------------------------------------------------- H1
def hmm_graph() -> tuple[list, object]:
    """(inputs, log-likelihood): inputs y (symbols), A_logits (from-state rows), B_logits
    (state x symbol), log_alpha0; transitions and emissions are the logits' row-wise log_softmax."""
    y, A, B, log_alpha0 = T.ivector("y"), T.matrix("A_logits"), T.matrix("B_logits"), T.vector("log_alpha0")

    def step(y_t, log_alpha, log_A, log_B):
        return logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, y_t]

    log_alphas, _ = ss.scan(step, sequences=y, outputs_info=log_alpha0,
                            non_sequences=[log_softmax(A, axis=-1), log_softmax(B, axis=-1)])
    return [y, A, B, log_alpha0], logsumexp(log_alphas[-1])


def hmm_values(steps: int, n_states: int = 16, n_symbols: int = 32) -> list:
    r = np.random.default_rng(12)
    return [r.integers(0, n_symbols, steps).astype("int32"), r.normal(size=(n_states, n_states)),
            r.normal(size=(n_states, n_symbols)), np.full(n_states, -np.log(n_states))]


def _logsumexp(x: np.ndarray, axis=None) -> np.ndarray:
    peak = np.max(x, axis=axis, keepdims=True)
    peak = np.where(np.isinf(peak), 0.0, peak)  # an all -inf slice: -inf, not nan
    return np.squeeze(np.log(np.sum(np.exp(x - peak), axis=axis, keepdims=True)) + peak, axis=axis)


def _log_softmax_rows(x: np.ndarray) -> np.ndarray:
    return x - _logsumexp(x, axis=1)[:, None]


def hmm_loop(y, A, B, log_alpha0):
    """The forward algorithm as a numpy loop: [log-likelihood]."""
    log_A, log_B, log_alpha = _log_softmax_rows(A), _log_softmax_rows(B), log_alpha0
    for t in range(len(y)):
        log_alpha = _logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, y[t]]
    return [np.asarray(_logsumexp(log_alpha))]


def hmm_reverse(y, A, B, log_alpha0):
    """d ll / d(A_logits, B_logits): the forward loop keeping every alpha, then one reverse loop;
    a step's weights are the softmax over the previous state of log_alpha[:, None] + log_A."""
    log_A, log_B = _log_softmax_rows(A), _log_softmax_rows(B)
    alphas = [log_alpha0]
    for t in range(len(y)):
        alphas.append(_logsumexp(alphas[-1][:, None] + log_A, axis=0) + log_B[:, y[t]])
    g_alpha = np.exp(alphas[-1] - _logsumexp(alphas[-1]))
    g_log_A, g_log_B = np.zeros_like(A), np.zeros_like(B)
    for t in range(len(y) - 1, -1, -1):
        m = alphas[t][:, None] + log_A
        weights = np.exp(m - _logsumexp(m, axis=0)[None, :])
        g_log_B[:, y[t]] += g_alpha
        g_log_A += weights * g_alpha[None, :]
        g_alpha = weights @ g_alpha
    return [g - np.exp(log_p) * g.sum(axis=1, keepdims=True)
            for g, log_p in ((g_log_A, log_A), (g_log_B, log_B))]
