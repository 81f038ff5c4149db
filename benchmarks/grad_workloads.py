"""The gradient benchmarks G3, G4, G5, G7, G10, K1 and H1: the W-workloads of the same number
(their graphs, values and forward numpy loops, imported from workloads.py; W10's, the LSTM's, are
in lstm.py), a scalar cost on their outputs, and its gradient w.r.t. weights and initial states;
K1 and H1 differentiate their log-likelihood itself. The reference every system is checked
against is a hand-written numpy BPTT: the forward loop of the workload, then one reverse loop.
Peers build the same gradients in benchmarks/grad_peers.py.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from functools import partial

import numpy as np

import symscan as ss
from benchmarks import filtering, lstm, workloads

SYSTEMS = ("fast", "numba", "default", "py", "jax-mode", "numpy", "pytensor", "jax")


class Skipped(ImportError):
    """A system not run for a workload at this size (the runner leaves it out, as a missing peer)."""


@dataclass
class GradWorkload:
    """A scalar ``cost`` of the forward workload ``forward`` and its gradient w.r.t. ``wrt``
    (positions in the forward inputs): the sum of the squares of its outputs, or with
    ``cost_is_output`` its one (scalar) output itself. ``outputs`` (the symscan gradient) is built on each
    access, so that every symscan mode times ``ss.grad`` and ``ss.function`` itself."""

    name: str
    description: str
    forward: workloads.Workload
    wrt: list[int]
    numpy_loop: Callable[..., list]  # the numpy BPTT: the forward values -> the gradients in wrt order
    skip: set = field(default_factory=set)  # systems too slow at this size
    scaled_atol: bool = True  # compare with atol relative to each gradient's largest entry
    timings: dict = field(default_factory=dict)  # system -> {"grad_s", "function_s"}
    cost_is_output: bool = False

    @property
    def inputs(self) -> list:
        return self.forward.inputs

    @property
    def values(self) -> list:
        return self.forward.values

    @property
    def cost(self):
        return self.forward.outputs[0] if self.cost_is_output else sum_of_squares(self.forward.outputs)

    @property
    def outputs(self) -> list:
        return ss.grad(self.cost, [self.forward.inputs[i] for i in self.wrt])


def sum_of_squares(outputs: list):
    cost = (outputs[0] ** 2).sum()
    for out in outputs[1:]:
        cost = cost + (out ** 2).sum()
    return cost


def make_system(system: str, work: GradWorkload) -> Callable:
    """The gradient function of ``work`` in ``system`` (symscan modes time grad and function apart;
    "default" is ``ss.function`` without a mode: fast, handing over to numba, see symscan.backends.tiered)."""
    if system in work.skip:
        raise Skipped(f"{system} skipped for {work.name} at this size")
    if system in ("fast", "numba", "default", "py", "jax-mode"):
        start = time.perf_counter()
        grads = work.outputs
        middle = time.perf_counter()
        mode = {"default": None, "jax-mode": "jax"}.get(system, system)
        fn = ss.function(work.inputs, grads, mode=mode)
        work.timings[system] = {"grad_s": middle - start, "function_s": time.perf_counter() - middle}
        return fn
    if system == "numpy":
        return work.numpy_loop
    from benchmarks import grad_peers

    params, squared = work.forward.params or {}, not work.cost_is_output
    if system == "pytensor":
        return grad_peers.pytensor_grad_function(work.forward.name, work.wrt, params, squared=squared)
    if system == "jax":
        return grad_peers.jax_grad_function(work.forward.name, work.wrt, params, squared=squared)
    raise ValueError(f"unknown system {system!r} for the gradient workloads; use one of {SYSTEMS}")


# ---------------------------------------------------------------------------- G3
def running_sum(n: int = 100_000, skip: set | None = None) -> GradWorkload:
    """G3: d/dx sum(cumsum(x)**2), the running sum being W3's scan."""
    return GradWorkload("G3", f"d/dx sum(running_sum(x)**2), n={n}", workloads.running_sum(n), [0],
                        running_sum_bptt, skip or set())


def running_sum_bptt(x):
    (s,) = workloads.running_sum_loop(x)
    g, acc = np.empty_like(x), np.float64(0.0)
    for t in range(len(x) - 1, -1, -1):
        acc = acc + 2.0 * s[t]
        g[t] = acc
    return [g]


# ---------------------------------------------------------------------------- G4
def elman_rnn(steps: int = 1000, batch: int = 16, n_in: int = 64, n_hidden: int = 128) -> GradWorkload:
    """G4: W4's Elman RNN, d sum(h**2) / d(W_in, W_h, b, h0)."""
    return GradWorkload("G4", f"Elman RNN T={steps} batch={batch} in={n_in} hidden={n_hidden}, "
                        "d sum(h**2)/d(W_in, W_h, b, h0)", workloads.elman_rnn(steps, batch, n_in, n_hidden),
                        [1, 2, 3, 4], elman_bptt)


def elman_bptt(X, W_in, W_h, b, h0):
    """The textbook BPTT: one reverse loop accumulating every weight's gradient per step."""
    (hs,) = workloads.elman_loop(X, W_in, W_h, b, h0)
    g_W_in, g_W_h, g_b = np.zeros_like(W_in), np.zeros_like(W_h), np.zeros_like(b)
    g_h = np.zeros_like(h0)
    for t in range(len(X) - 1, -1, -1):
        g_h = g_h + 2.0 * hs[t]
        g_a = g_h * (1.0 - hs[t] * hs[t])
        h_prev = hs[t - 1] if t > 0 else h0
        g_W_in += X[t].T @ g_a
        g_W_h += h_prev.T @ g_a
        g_b += g_a.sum(axis=0)
        g_h = g_a @ W_h.T
    return [g_W_in, g_W_h, g_b, g_h]


# ---------------------------------------------------------------------------- G5
def taps_rnn(steps: int = 1000, size: int = 50) -> GradWorkload:
    """G5: W5's taps RNN, d(sum(x**2) + sum(y**2)) / d(x0, y0, W, W_in_1, W_in_2, W_feedback, W_out)."""
    return GradWorkload("G5", f"taps RNN (guide) T={steps} size={size}, d sum(x**2 + y**2)/d(x0, y0, 5 weights)",
                        workloads.taps_rnn(steps, size), [1, 2, 3, 4, 5, 6, 7], taps_rnn_bptt)


def taps_rnn_bptt(u, x0, y0, W, W_in_1, W_in_2, W_feedback, W_out):
    """Reverse loop over the full traces x_all = [x0; xs] and y_all = [y0; ys]: at step t
    (reading x_all[t], x_all[t+2], y_all[t], u[t], u[t+4]) every later step is already done,
    so the cotangents of x_t = x_all[t+3] and y_t = y_all[t+1] are complete."""
    xs, ys = workloads.taps_rnn_loop(u, x0, y0, W, W_in_1, W_in_2, W_feedback, W_out)
    x_all, y_all = np.concatenate([x0, xs]), np.concatenate([y0[None], ys])
    g_x, g_y = np.zeros_like(x_all), np.zeros_like(y_all)
    g_x[3:], g_y[1:] = 2.0 * xs, 2.0 * ys
    g_W, g_in_1, g_in_2, g_fb, g_out = (np.zeros_like(m) for m in (W, W_in_1, W_in_2, W_feedback, W_out))
    for t in range(len(xs) - 1, -1, -1):
        g_a = g_x[t + 3] * (1.0 - xs[t] * xs[t])
        g_W += np.outer(x_all[t + 2], g_a)
        g_in_1 += np.outer(u[t + 4], g_a)
        g_in_2 += np.outer(u[t], g_a)
        g_fb += np.outer(y_all[t], g_a)
        g_x[t + 2] += W @ g_a
        g_y[t] += W_feedback @ g_a
        g_out += np.outer(x_all[t], g_y[t + 1])
        g_x[t] += W_out @ g_y[t + 1]
    return [g_x[:3], g_y[0], g_W, g_in_1, g_in_2, g_fb, g_out]


# ---------------------------------------------------------------------------- G7
def mit_sot(n: int = 10_000, skip: set | None = None) -> GradWorkload:
    """G7: W7's mit-sot, d sum(x**2) / d init (the two initial values)."""
    return GradWorkload("G7", f"mit-sot x_t = 0.5 x_(t-1) + 0.5 x_(t-2) + 1, {n} steps, d sum(x**2)/d init",
                        workloads.mit_sot(n), [0], partial(mit_sot_bptt, n=n), skip or set())


def mit_sot_bptt(init, n):
    """p1, p2: the cotangents accumulated so far for x_t and x_(t-1) while walking t down."""
    (xs,) = workloads.mit_sot_loop(init, n)
    p1, p2 = np.float64(0.0), np.float64(0.0)
    for t in range(len(xs) - 1, -1, -1):
        g = p1 + 2.0 * xs[t]
        p1, p2 = p2 + 0.5 * g, 0.5 * g
    return [np.array([p2, p1])]


# ---------------------------------------------------------------------------- G10
def lstm_rnn(steps: int = 200, batch: int = 32, n_in: int = 64, n_hidden: int = 256,
             skip: set | None = None) -> GradWorkload:
    """G10: W10's LSTM, d sum(h**2 over every step) / d(W, U, b, h0, c0)."""
    return GradWorkload("G10", f"LSTM T={steps} batch={batch} in={n_in} hidden={n_hidden}, "
                        "d sum(h**2)/d(W, U, b, h0, c0)", workloads.lstm_rnn(steps, batch, n_in, n_hidden),
                        [1, 2, 3, 4, 5], lstm.lstm_bptt, skip or set())


# ---------------------------------------------------------------------------- K1, H1
def kalman(steps: int = 1000) -> GradWorkload:
    """K1's log-likelihood, d ll / d(T, Z, Hc, Qc)."""
    return GradWorkload("K1", f"Kalman filter T={steps}, d ll/d(T, Z, Hc, Qc)", workloads.kalman(steps), [1, 2, 3, 4],
                        filtering.kalman_reverse, cost_is_output=True)


def hmm(steps: int = 1000) -> GradWorkload:
    """H1's log-likelihood, d ll / d(A_logits, B_logits)."""
    return GradWorkload("H1", f"HMM forward algorithm T={steps}, d ll/d(A_logits, B_logits)", workloads.hmm(steps),
                        [1, 2], filtering.hmm_reverse, cost_is_output=True)


def all_workloads(quick: bool = False) -> list[GradWorkload]:
    """G3, G4, G5, G7, G10, K1, H1 at the issue's sizes (smaller with ``quick``). Mode "py" (the
    reference interpreter, about 10 us per op per step) is skipped where one call would take seconds."""
    if quick:
        return [running_sum(1000), elman_rnn(20, 4, 8, 16), taps_rnn(20, 8), mit_sot(200), lstm_rnn(10, 4, 8, 16),
                kalman(50), hmm(50)]
    return [running_sum(skip={"py"}), elman_rnn(), taps_rnn(), mit_sot(), lstm_rnn(skip={"py"}), kalman(), hmm()]


# ---------------------------------------------------------------------------- the README section
HEADING = "## Gradient benchmarks"
"""The start of the section's heading (which lists the workloads): how a README's section is found."""

ABOUT = f"""{HEADING} G3, G4, G5, G7, G10, K1, H1

`python -m benchmarks --grad` runs them (`--quick`, `--only G4`, `--systems fast,numpy` work as
above) and rewrites only this section; the default run neither runs them nor touches this
section, because they add minutes to it (more when PyTensor's Numba cache is cold).
Definitions are in `grad_workloads.py` (the forward workloads' graphs, values and numpy loops,
imported from `workloads.py`, `filtering.py` and `lstm.py`), the peers' in `grad_peers.py`. The
cost of a G-workload is the sum of the squares of every output of the W-workload of the same
number; that of K1 and H1 is their log-likelihood; the gradient is taken w.r.t. the listed
inputs. G10 is an LSTM (one fused gate matrix W (in, 4H), U (H, 4H), b; gates i, f, o sigmoid,
g tanh) whose cost reads every step's h.
"numpy" is a hand-written BPTT: the forward loop, then one reverse loop accumulating every
gradient per step (the textbook form: no product hoisted out of the loop); every system is checked
against it (rtol 1e-8, atol 1e-12 times the gradient's largest entry) before it is timed; a peer
that fails the check is left out ("-"; the run says why), as PyTensor's H1 gradient is at T=1000
(NaN in this run; it agrees at T=50).
PyTensor is `pytensor.grad` in its default mode (Numba), JAX `jax.jit(jax.grad(cost))` over
`lax.scan`. symscan "numba" is mode numba, "default" the default mode (`ss.function` without a
mode) timed after its numba version took over in the background (where it did; its first result
is mode fast's). symscan "py" is skipped for G3 and G10 (one call takes seconds). Building
symscan's gradient function is `ss.grad` then `ss.function` (the target is ss.function <= 50 ms),
each timed once per workload in one process (in mode fast). Time to first result includes both,
and for symscan numba and PyTensor Numba's compilation (much shorter with a warm on-disk cache).
"""

RATIOS = (("fast", "numpy"), ("numba", "numpy"), ("numba", "jax"), ("default", "jax"), ("numba", "pytensor"),
          ("jax-mode", "jax"))
"""The ratio columns: (system, over system)."""


def markdown(rows: list[dict], quick: bool) -> str:
    """This section of benchmarks/README.md for ``rows`` (one run of ``--grad``)."""
    return ABOUT + "\n" + tables(rows, quick)


def tables(rows: list[dict], quick: bool) -> str:
    """The section's tables without its heading and text (the under-load section has them too)."""
    systems = [s for s in SYSTEMS if s == "fast" or any(r["system"] == s for r in rows)]
    by = {(r["workload"], r["system"]): r for r in rows}
    names = list(dict.fromkeys(r["workload"] for r in rows))
    descriptions = {r["workload"]: r["description"] for r in rows}

    def ratio(name: str, system: str, other: str) -> str:
        a, b = by.get((name, system)), by.get((name, other))
        return f"{a['median_s'] / b['median_s']:.2f}" if a and b else "-"

    def ms(name: str, key: str) -> str:
        row = by.get((name, "fast"))
        return f"{row[key] * 1e3:.1f}" if row and key in row else "-"

    lines = ["Run on " + date.today().isoformat() + f": {platform.platform()}, "
             f"Python {platform.python_version()}, numpy {np.__version__}" + (" (quick sizes)" if quick else ""),
             "", "Median run time in ms (lower is better); a ratio is the first system's time over the second's.",
             "", "| workload | " + " | ".join(systems) + " | " + " | ".join(f"{a}/{b}" for a, b in RATIOS)
             + " | ss.grad ms | ss.function ms |", "|---" * (len(systems) + len(RATIOS) + 3) + "|"]
    for name in names:
        cells = [f"{by[(name, s)]['median_s'] * 1e3:.3g}" if (name, s) in by else "-" for s in systems]
        cells += [ratio(name, a, b) for a, b in RATIOS] + [ms(name, "grad_s"), ms(name, "function_s")]
        lines.append(f"| {name} {descriptions[name]} | " + " | ".join(cells) + " |")
    lines += ["", "Time to first result in s (building the gradient function, compiling, first call):", "",
              "| workload | " + " | ".join(systems) + " |", "|---" * (len(systems) + 1) + "|"]
    for name in names:
        cells = [f"{by[(name, s)]['first_result_s']:.3g}" if (name, s) in by else "-" for s in systems]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
