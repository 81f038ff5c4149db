"""The benchmark workloads: each builds a symscan graph, its input values and a plain numpy
loop computing the same thing (every system's result is checked against that loop)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import symscan as ss
import symscan.tensor as T


@dataclass
class Workload:
    name: str
    description: str
    inputs: list
    outputs: list
    values: list
    numpy_loop: Callable[..., list]


def power(n: int = 1000, k: int = 1000) -> Workload:
    """W1: A**k by repeated multiplication; only the last step is read."""
    A, steps = T.vector("A"), T.iscalar("k")
    result, _ = ss.scan(lambda prior, A: prior * A, outputs_info=T.ones_like(A), non_sequences=A, n_steps=steps)
    values = [np.random.default_rng(1).uniform(0.5, 1.0, n), np.int32(k)]

    def loop(a, k):
        out = np.ones_like(a)
        for _ in range(k):
            out = out * a
        return [out]

    return Workload("W1", f"A**k, n={n}, k={k}, last step", [A, steps], [result[-1]], values, loop)


def elman_rnn(steps: int = 1000, batch: int = 16, n_in: int = 64, n_hidden: int = 128) -> Workload:
    """W4: h_t = tanh(x_t W_in + h_{t-1} W_h + b)."""
    X, W_in, W_h, b, h0 = T.tensor3("X"), T.matrix("W_in"), T.matrix("W_h"), T.vector("b"), T.matrix("h0")

    def step(x_t, h, W_in, W_h, b):
        return T.tanh(T.dot(x_t, W_in) + T.dot(h, W_h) + b)

    hs, _ = ss.scan(step, sequences=X, outputs_info=h0, non_sequences=[W_in, W_h, b])
    r = np.random.default_rng(4)
    values = [r.normal(size=(steps, batch, n_in)), r.normal(size=(n_in, n_hidden)) / 8,
              r.normal(size=(n_hidden, n_hidden)) / 12, r.normal(size=n_hidden) / 4, np.zeros((batch, n_hidden))]

    def loop(X, W_in, W_h, b, h0):
        h, out = h0, np.empty((len(X),) + h0.shape)
        for t in range(len(X)):
            h = np.tanh(X[t] @ W_in + h @ W_h + b)
            out[t] = h
        return [out]

    return Workload("W4", f"Elman RNN T={steps} batch={batch} in={n_in} hidden={n_hidden}",
                    [X, W_in, W_h, b, h0], [hs], values, loop)


def running_sum_and_max(n: int = 100_000) -> Workload:
    """W8: a running sum and a running max as two scans over one sequence."""
    x = T.vector("x")
    total, _ = ss.scan(lambda v, acc: acc + v, sequences=x, outputs_info=T.constant(0.0))
    peak, _ = ss.scan(lambda v, m: T.maximum(m, v), sequences=x, outputs_info=T.constant(-np.inf))
    values = [np.random.default_rng(8).normal(size=n)]

    def loop(x):
        s, m = np.empty_like(x), np.empty_like(x)
        acc, best = 0.0, -np.inf
        for i, v in enumerate(x):
            acc += v
            best = max(best, v)
            s[i], m[i] = acc, best
        return [s, m]

    return Workload("W8", f"running sum + running max, two scans, n={n}", [x], [total, peak], values, loop)
