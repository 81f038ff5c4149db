"""Peak memory of a gradient through a long loop: plain scan vs scan_checkpoints.

The loop is W1's: h_t = h_(t-1) * A (A a vector of n floats), k steps, cost = sum(h_k); the
function is the gradient w.r.t. A, compiled in each mode asked for ("fast" and "numba" by
default). A plain scan's backward pass reads the whole forward trace (k states, k n 8 bytes);
its peak should stay within twice the trace (the trace plus one array its size, as JAX keeps
the trace plus one cotangent). scan_checkpoints keeps one state per block of
``save_every_N`` steps and recomputes each block's states when the backward pass reaches it.

Each configuration runs in a fresh subprocess: build, compile, one warm-up call, then the
tracemalloc peak (which sees numpy's buffers) of one call, minus what was allocated before
it. The gradients of the two are checked to be equal.

    python -m benchmarks.checkpoint_memory [--n 1000] [--k 10000] [--every 100] [--modes fast,numba]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

TARGET_RATIO = 0.1  # checkpointed peak < 1/10 of the plain scan's
TRACE_TARGET = 2.0  # plain scan's peak <= twice the forward trace


def values(n: int, k: int) -> list:
    """A near 1, so that A**k neither underflows nor overflows and every entry of the gradient counts."""
    spread = 1.0 / k
    return [np.random.default_rng(3).uniform(1 - spread, 1 + spread, n), np.int64(k)]


def gradient_function(kind: str, every: int, mode: str):
    import symscan as ss
    import symscan.tensor as T

    A, k = T.vector("A"), T.lscalar("k")
    args = dict(outputs_info=T.ones_like(A), non_sequences=A, n_steps=k)
    if kind == "plain":
        states, _ = ss.scan(lambda h, A: h * A, **args)
    else:
        states, _ = ss.scan_checkpoints(lambda h, A: h * A, save_every_N=every, **args)
    return ss.function([A, k], ss.grad(states[-1].sum(), A), mode=mode)


def _child(kind: str, n: int, k: int, every: int, mode: str, save_to: str) -> None:
    import tracemalloc

    f = gradient_function(kind, every, mode)
    inputs = values(n, k)
    f(*inputs)  # warm-up: first-call work (code generation, caches) is not the loop's memory
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    grad = f(*inputs)
    peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    np.save(save_to, np.asarray(grad))
    print(json.dumps({"peak_bytes": peak}))


def measure(kind: str, n: int, k: int, every: int, mode: str, folder: Path) -> tuple[int, np.ndarray]:
    """Peak extra bytes of one call of the gradient, and the gradient, from a fresh process."""
    target = folder / f"{kind}.npy"
    code = (f"from benchmarks.checkpoint_memory import _child; "
            f"_child({kind!r}, {n}, {k}, {every}, {mode!r}, {str(target)!r})")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"the {kind} configuration failed:\n{result.stderr}")
    peak = json.loads(result.stdout.strip().splitlines()[-1])["peak_bytes"]
    return peak, np.load(target)


def run(n: int, k: int, every: int, mode: str) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        plain, g_plain = measure("plain", n, k, every, mode, Path(folder))
        checked, g_checked = measure("checkpoints", n, k, every, mode, Path(folder))
    np.testing.assert_allclose(g_checked, g_plain, rtol=1e-9, err_msg="the two gradients differ")
    a = values(n, k)[0]
    np.testing.assert_allclose(g_plain, k * a ** (k - 1), rtol=1e-9, err_msg="the gradient is not k A**(k-1)")
    trace = n * k * 8
    return {"plain_bytes": plain, "checkpoints_bytes": checked, "ratio": checked / plain if plain else float("nan"),
            "trace_bytes": trace, "trace_ratio": plain / trace}


def report(result: dict, mode: str, every: int) -> bool:
    """Print one mode's peaks; whether both targets are met."""
    mb = 1 / 2**20
    labels = ["plain scan", f"scan_checkpoints(save_every_N={every})"]
    print(f"  mode {mode!r}:")
    for label, key in zip(labels, ["plain_bytes", "checkpoints_bytes"]):
        print(f"    {label + ':':<36} peak {result[key] * mb:8.2f} MB")
    small = result["ratio"] < TARGET_RATIO
    within = result["trace_ratio"] <= TRACE_TARGET
    print(f"    plain peak / forward trace: {result['trace_ratio']:.3f} "
          f"(target <= {TRACE_TARGET}: {'met' if within else 'NOT met'})")
    print(f"    ratio checkpoints/plain: {result['ratio']:.4f} "
          f"(target < {TARGET_RATIO}: {'met' if small else 'NOT met'})")
    return small and within


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="length of A")
    parser.add_argument("--k", type=int, default=10_000, help="number of steps")
    parser.add_argument("--every", type=int, default=100, help="save_every_N")
    parser.add_argument("--modes", default="fast,numba", help="comma-separated modes, each measured apart")
    parser.add_argument("--mode", help="one mode only (the same as --modes MODE)")
    args = parser.parse_args(argv)
    modes = [args.mode] if args.mode else [m.strip() for m in args.modes.split(",") if m.strip()]
    print(f"gradient of sum(A**k) w.r.t. A, n={args.n}, k={args.k} (the full forward trace is "
          f"{args.n * args.k * 8 / 2**20:.1f} MB); each mode's two gradients are checked equal to k A**(k-1)")
    met = [report(run(args.n, args.k, args.every, mode), mode, args.every) for mode in modes]
    return 0 if all(met) else 1


if __name__ == "__main__":
    sys.exit(main())
