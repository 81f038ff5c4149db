"""What the rewriter buys, measured side by side in one run (issue: the rewriter).

- peak memory of A**k with n = k = 10000 when only result[-1] is read (save_mem);
- run time of the Elman RNN (push_out_seq moves x_t @ W_in out of the loop);
- run time of a running sum and a running max as two scans over one sequence (scan_merge).

"on" is mode "fast" (every rewrite), "off" is mode "py" (none); both evaluate with the
reference interpreter, so the difference is the rewrites'. Memory is measured in a fresh
subprocess per configuration (tracemalloc peak of one call, which sees numpy's buffers).

    python -m benchmarks.rewrites_effect [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import numpy as np

import symscan as ss
from benchmarks import workloads


def _peak_memory_child(mode: str, n: int, k: int) -> None:
    import tracemalloc

    work = workloads.power(n, k)
    f = ss.function(work.inputs, work.outputs, mode=mode)
    tracemalloc.start()
    out = f(*work.values)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(json.dumps({"peak_bytes": peak, "checksum": float(np.sum(out[0]))}))


def peak_memory(mode: str, n: int, k: int) -> int:
    code = f"from benchmarks.rewrites_effect import _peak_memory_child; _peak_memory_child({mode!r}, {n}, {k})"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])["peak_bytes"]


def timed(functions: dict, values: list, repeats: int) -> dict[str, float]:
    """Median seconds per call, the configurations interleaved so load affects them alike."""
    times: dict[str, list[float]] = {name: [] for name in functions}
    for f in functions.values():
        f(*values)  # warm-up
    for _ in range(repeats):
        for name, f in functions.items():
            start = time.perf_counter()
            f(*values)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def compare_times(work: workloads.Workload, repeats: int) -> dict:
    functions = {mode: ss.function(work.inputs, work.outputs, mode=mode) for mode in ("fast", "py")}
    expected = work.numpy_loop(*work.values)
    for mode, f in functions.items():
        for got, want in zip(f(*work.values), expected):
            np.testing.assert_allclose(got, want, rtol=1e-10, err_msg=f"{work.name} mode {mode}")
    fired = sorted({r.rule for r in functions["fast"].rewrite_report().fired})
    seconds = timed(functions, work.values, repeats)
    return {"workload": work.description, "rewrites_on_s": seconds["fast"], "rewrites_off_s": seconds["py"],
            "ratio_off_over_on": seconds["py"] / seconds["fast"], "fired": fired}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    args = parser.parse_args(argv)
    n = k = 1000 if args.quick else 10_000
    repeats = 3 if args.quick else 7
    rows = []
    on, off = peak_memory("fast", n, k), peak_memory("py", n, k)
    rows.append({"workload": f"A**k n={n} k={k}, result[-1]: peak memory", "rewrites_on_MB": on / 1e6,
                 "rewrites_off_MB": off / 1e6, "ratio_off_over_on": off / on})
    rnn = workloads.elman_rnn(steps=100 if args.quick else 1000)
    merge = workloads.running_sum_and_max(n=10_000 if args.quick else 100_000)
    rows += [compare_times(rnn, repeats), compare_times(merge, repeats)]
    for row in rows:
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
