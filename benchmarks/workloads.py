"""The benchmark workloads W1-W9, K1 and H1 (the last two defined in filtering.py), and W10, the
LSTM of the gradient benchmark G10 (lstm.py; not in the forward suite): for each,
input values (fixed seeds), a plain numpy loop (the reference every system is checked against,
and the practical limit of a Python loop over numpy), and the symscan graph. Peers build the
same computations in benchmarks/peers.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import symscan as ss
import symscan.tensor as T
from benchmarks import filtering, lstm


@dataclass
class Workload:
    name: str
    description: str
    inputs: list
    outputs: list
    values: list
    numpy_loop: Callable[..., list]
    params: dict | None = None  # sizes the peers' builders need (e.g. a static step count)


# ---------------------------------------------------------------------------- W1
def power(n: int = 1000, k: int = 1000) -> Workload:
    """W1: A**k by repeated multiplication; only the last step is read."""
    A, steps = T.vector("A"), T.iscalar("k")
    result, _ = ss.scan(lambda prior, A: prior * A, outputs_info=T.ones_like(A), non_sequences=A, n_steps=steps)
    return Workload("W1", f"A**k, n={n}, k={k}, last step", [A, steps], [result[-1]], power_values(n, k), power_loop,
                    {"k": k})


def power_values(n: int, k: int) -> list:
    return [np.random.default_rng(1).uniform(0.5, 1.0, n), np.int32(k)]


def power_loop(a, k):
    out = np.ones_like(a)
    for _ in range(int(k)):
        out = out * a
    return [out]


# ---------------------------------------------------------------------------- W2
def polynomial(n: int = 100_000) -> Workload:
    """W2: sum of c_i * x**i as a map over the coefficients and an arange."""
    c, x = T.vector("coefficients"), T.scalar("x")
    comps, _ = ss.scan(lambda a, p, v: a * v ** p, sequences=[c, T.arange(n)], non_sequences=x)
    return Workload("W2", f"polynomial map over {n} coefficients, summed", [c, x], [comps.sum()],
                    polynomial_values(n), polynomial_loop, {"n": n})


def polynomial_values(n: int) -> list:
    return [np.random.default_rng(2).normal(size=n), np.float64(0.9999)]


def polynomial_loop(c, x):
    total = 0.0
    for i in range(len(c)):
        total = total + c[i] * x ** i
    return [np.asarray(total)]


# ---------------------------------------------------------------------------- W3
def running_sum(n: int = 100_000) -> Workload:
    """W3: the running sum of n scalars, every step kept."""
    x = T.vector("x")
    out, _ = ss.scan(lambda v, acc: acc + v, sequences=x, outputs_info=T.constant(0.0))
    return Workload("W3", f"running sum over {n} scalars", [x], [out], [np.random.default_rng(3).normal(size=n)],
                    running_sum_loop)


def running_sum_loop(x):
    out, acc = np.empty_like(x), np.float64(0.0)
    for i in range(len(x)):
        acc = acc + x[i]
        out[i] = acc
    return [out]


# ---------------------------------------------------------------------------- W4
def elman_rnn(steps: int = 1000, batch: int = 16, n_in: int = 64, n_hidden: int = 128) -> Workload:
    """W4: h_t = tanh(x_t W_in + h_{t-1} W_h + b)."""
    X, W_in, W_h, b, h0 = T.tensor3("X"), T.matrix("W_in"), T.matrix("W_h"), T.vector("b"), T.matrix("h0")

    def step(x_t, h, W_in, W_h, b):
        return T.tanh(T.dot(x_t, W_in) + T.dot(h, W_h) + b)

    hs, _ = ss.scan(step, sequences=X, outputs_info=h0, non_sequences=[W_in, W_h, b])
    return Workload("W4", f"Elman RNN T={steps} batch={batch} in={n_in} hidden={n_hidden}",
                    [X, W_in, W_h, b, h0], [hs], elman_values(steps, batch, n_in, n_hidden), elman_loop)


def elman_values(steps: int, batch: int, n_in: int, n_hidden: int) -> list:
    r = np.random.default_rng(4)
    return [r.normal(size=(steps, batch, n_in)), r.normal(size=(n_in, n_hidden)) / 8,
            r.normal(size=(n_hidden, n_hidden)) / 12, r.normal(size=n_hidden) / 4, np.zeros((batch, n_hidden))]


def elman_loop(X, W_in, W_h, b, h0):
    h, out = h0, np.empty((len(X),) + h0.shape)
    for t in range(len(X)):
        h = np.tanh(X[t] @ W_in + h @ W_h + b)
        out[t] = h
    return [out]


# ---------------------------------------------------------------------------- W5
def taps_rnn(steps: int = 1000, size: int = 50) -> Workload:
    """W5: the Theano guide's RNN: u taps [-4, 0], x taps [-3, -1], y tap -1."""

    def step(u_tm4, u_t, x_tm3, x_tm1, y_tm1, W, W_in_1, W_in_2, W_feedback, W_out):
        x_t = T.tanh(T.dot(x_tm1, W) + T.dot(u_t, W_in_1) + T.dot(u_tm4, W_in_2) + T.dot(y_tm1, W_feedback))
        return [x_t, T.dot(x_tm3, W_out)]

    Ws = [T.matrix(n) for n in ("W", "W_in_1", "W_in_2", "W_feedback", "W_out")]
    u, x0, y0 = T.matrix("u"), T.matrix("x0"), T.vector("y0")
    (xs, ys), _ = ss.scan(step, sequences=dict(input=u, taps=[-4, 0]),
                          outputs_info=[dict(initial=x0, taps=[-3, -1]), y0], non_sequences=Ws)
    return Workload("W5", f"taps RNN (guide) T={steps} size={size}", [u, x0, y0] + Ws, [xs, ys],
                    taps_rnn_values(steps, size), taps_rnn_loop)


def taps_rnn_values(steps: int, size: int) -> list:
    r = np.random.default_rng(5)
    scale = 0.5 / np.sqrt(size)
    return ([r.normal(size=(steps + 4, size)), r.normal(size=(3, size)), r.normal(size=size)]
            + [r.normal(size=(size, size)) * scale for _ in range(5)])


def taps_rnn_loop(u, x0, y0, W, W_in_1, W_in_2, W_feedback, W_out):
    x, y = list(x0), y0
    xs, ys = np.empty((len(u) - 4, len(y0))), np.empty((len(u) - 4, len(y0)))
    for t in range(4, len(u)):
        x_t = np.tanh(x[-1] @ W + u[t] @ W_in_1 + u[t - 4] @ W_in_2 + y @ W_feedback)
        y = x[-3] @ W_out
        x = [x[-2], x[-1], x_t]
        xs[t - 4], ys[t - 4] = x_t, y
    return [xs, ys]


# ---------------------------------------------------------------------------- W6
W6_THRESHOLD = 2 * 1.0001 ** 5000 - 1


def while_loop(max_steps: int = 100_000) -> Workload:
    """W6: x <- 1.0001 x + 1e-4 until x > threshold (about 5000 steps)."""
    x0, limit = T.scalar("x0"), T.scalar("threshold")
    out, _ = ss.scan(lambda x, lim: (1.0001 * x + 1e-4, ss.until(1.0001 * x + 1e-4 > lim)),
                     outputs_info=x0, non_sequences=limit, n_steps=max_steps)
    return Workload("W6", f"while loop, about 5000 steps (n_steps {max_steps})", [x0, limit], [out],
                    [np.float64(1.0), np.float64(W6_THRESHOLD)], while_loop_loop, {"max_steps": max_steps})


def while_loop_loop(x0, limit):
    x, out = x0, []
    while True:
        x = 1.0001 * x + 1e-4
        out.append(x)
        if x > limit:
            break
    return [np.array(out)]


# ---------------------------------------------------------------------------- W7
def mit_sot(n: int = 10_000) -> Workload:
    """W7: x_t = 0.5 x_{t-1} + 0.5 x_{t-2} + 1."""
    init = T.vector("init")
    out, _ = ss.scan(lambda a2, a1: 0.5 * a1 + 0.5 * a2 + 1.0, outputs_info=dict(initial=init, taps=[-2, -1]),
                     n_steps=n)
    return Workload("W7", f"mit-sot x_t = 0.5 x_(t-1) + 0.5 x_(t-2) + 1, {n} steps", [init], [out],
                    [np.array([0.0, 1.0])], lambda init: mit_sot_loop(init, n), {"n": n})


def mit_sot_loop(init, n):
    out = np.empty(n)
    a2, a1 = init[0], init[1]
    for t in range(n):
        a2, a1 = a1, 0.5 * a1 + 0.5 * a2 + 1.0
        out[t] = a1
    return [out]


# ---------------------------------------------------------------------------- W8
def running_sum_and_max(n: int = 100_000) -> Workload:
    """W8: a running sum and a running max as two scans over one sequence."""
    x = T.vector("x")
    total, _ = ss.scan(lambda v, acc: acc + v, sequences=x, outputs_info=T.constant(0.0))
    peak, _ = ss.scan(lambda v, m: T.maximum(m, v), sequences=x, outputs_info=T.constant(-np.inf))
    return Workload("W8", f"running sum + running max, two scans, n={n}", [x], [total, peak],
                    [np.random.default_rng(8).normal(size=n)], running_sum_and_max_loop)


def running_sum_and_max_loop(x):
    s, m = np.empty_like(x), np.empty_like(x)
    acc, best = np.float64(0.0), np.float64(-np.inf)
    for i in range(len(x)):
        v = x[i]
        acc = acc + v
        best = max(best, v)
        s[i], m[i] = acc, best
    return [s, m]


# ---------------------------------------------------------------------------- W9
def set_subtensor(n: int = 1000, shape: tuple = (100, 100)) -> Workload:
    """W9: the guide's set_subtensor example: one value placed in a zero matrix per step."""
    location, values, model = T.imatrix("location"), T.vector("values"), T.matrix("output_model")

    def set_value_at_position(a_location, a_value, output_model):
        zeros = T.zeros_like(output_model)
        return T.set_subtensor(zeros[a_location[0], a_location[1]], a_value)

    result, _ = ss.scan(set_value_at_position, sequences=[location, values], non_sequences=model)
    return Workload("W9", f"set_subtensor map, {n} locations into {shape}", [location, values, model], [result],
                    set_subtensor_values(n, shape), set_subtensor_loop)


def set_subtensor_values(n: int, shape: tuple) -> list:
    r = np.random.default_rng(9)
    locations = np.stack([r.integers(0, shape[0], n), r.integers(0, shape[1], n)], axis=1).astype("int32")
    return [locations, r.normal(size=n), np.zeros(shape)]


def set_subtensor_loop(location, values, model):
    out = np.empty((len(values),) + model.shape)
    for i in range(len(values)):
        z = np.zeros_like(model)
        z[location[i, 0], location[i, 1]] = values[i]
        out[i] = z
    return [out]


# ---------------------------------------------------------------------------- K1, H1
def kalman(steps: int = 1000, n_state: int = 4, n_obs: int = 2) -> Workload:
    """K1: the Kalman filter's log-likelihood (benchmarks/filtering.py)."""
    inputs, ll = filtering.kalman_graph(n_obs)
    return Workload("K1", f"Kalman filter log-likelihood, state {n_state}, observations {n_obs}, T={steps}",
                    inputs, [ll], filtering.kalman_values(steps, n_state, n_obs), filtering.kalman_loop,
                    {"n_obs": n_obs})


def hmm(steps: int = 1000, n_states: int = 16, n_symbols: int = 32) -> Workload:
    """H1: the HMM forward algorithm's log-likelihood (benchmarks/filtering.py)."""
    inputs, ll = filtering.hmm_graph()
    return Workload("H1", f"HMM forward algorithm, {n_states} states, {n_symbols} symbols, T={steps}",
                    inputs, [ll], filtering.hmm_values(steps, n_states, n_symbols), filtering.hmm_loop)


# ---------------------------------------------------------------------------- W10
def lstm_rnn(steps: int = 200, batch: int = 32, n_in: int = 64, n_hidden: int = 256) -> Workload:
    """W10: an LSTM, every step's h kept (benchmarks/lstm.py); G10 differentiates it."""
    inputs, outputs = lstm.lstm_graph(n_hidden)
    return Workload("W10", f"LSTM T={steps} batch={batch} in={n_in} hidden={n_hidden}", inputs, outputs,
                    lstm.lstm_values(steps, batch, n_in, n_hidden), lstm.lstm_loop, {"n_hidden": n_hidden})


def all_workloads(quick: bool = False) -> list[Workload]:
    """W1-W9, K1 and H1 at the issue's sizes (smaller with ``quick``)."""
    if quick:
        return [power(200, 200), polynomial(10_000), running_sum(10_000), elman_rnn(100), taps_rnn(100),
                while_loop(), mit_sot(1000), running_sum_and_max(10_000), set_subtensor(100), kalman(50),
                hmm(50)]
    return [power(), polynomial(), running_sum(), elman_rnn(), taps_rnn(), while_loop(), mit_sot(),
            running_sum_and_max(), set_subtensor(), kalman(), hmm()]
