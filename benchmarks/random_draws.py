"""A Gibbs sampler's loop: 10,000 steps, two binomial draws each (an RBM's hidden and visible
units, one probability per unit), in modes fast and numba, with the draws made in place (the
``inplace`` rewrite) and from a copy of their generator each (the mode without "inplace").
Run alone: ``python -m benchmarks.random_draws``.

Copying a numpy Generator takes ~80 us, a small draw ~3 us (this one ~22 us: numpy's
binomial with an array of probabilities). Measured on the shared 2-core machine, 2026-11-27,
median ms: fast 2600-3150 copying, 820-880 in place; numba's kernel draws in place either way
(one copy of each generator per call), 40-75.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import symscan as ss
import symscan.tensor as T
from symscan.backends.tiered import numba_installed
from symscan.compile.modes import get_mode


def gibbs_function(steps: int, mode: str, in_place: bool, n_visible: int = 20, n_hidden: int = 10):
    """``steps`` alternating draws h ~ B(sigmoid(v W + b_h)), v ~ B(sigmoid(h W^T + b_v))."""
    r = np.random.default_rng(0)
    W = ss.shared(r.normal(scale=0.5, size=(n_visible, n_hidden)), name="W")
    b_h, b_v = ss.shared(np.zeros(n_hidden), name="b_h"), ss.shared(np.zeros(n_visible), name="b_v")
    stream = ss.RandomStream(1)

    def step(v):
        h = stream.binomial(size=(n_hidden,), p=T.sigmoid(T.dot(v, W) + b_h), dtype="float64")
        return stream.binomial(size=(n_visible,), p=T.sigmoid(T.dot(h, W.T) + b_v), dtype="float64")

    v0 = T.dvector("v0")
    chain, updates = ss.scan(step, outputs_info=v0, n_steps=steps)
    chosen = get_mode(mode) if in_place else get_mode(mode).without("inplace")
    return ss.function([v0], chain[-1], updates=updates, mode=chosen)


def median_ms(f, repeats: int) -> float:
    v0 = np.ones(20)
    f(v0)  # warm-up (and numba's compile)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f(v0)
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=7)
    options = parser.parse_args()
    modes = ["fast"] + (["numba"] if numba_installed() else [])
    print(f"Gibbs loop, {options.steps} steps, 2 binomial draws a step; median of {options.repeats} calls, ms")
    print("| mode | draws from a copy | draws in place | speed-up |\n|---|---|---|---|")
    for mode in modes:
        copying = median_ms(gibbs_function(options.steps, mode, in_place=False), options.repeats)
        in_place = median_ms(gibbs_function(options.steps, mode, in_place=True), options.repeats)
        print(f"| {mode} | {copying:.1f} | {in_place:.1f} | {copying / in_place:.1f}x |")


if __name__ == "__main__":
    main()
