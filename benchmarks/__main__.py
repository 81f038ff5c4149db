"""``python -m benchmarks``: W1-W9, K1 and H1 in every available system, side by side in one run.

Systems: symscan "fast", "numba" (loops compiled by numba), "default" (the default mode once
its numba version has taken over, see symscan/backends/tiered.py), "py", "onnxruntime" (the
optimised graph exported to ONNX) and "jax-mode" (mode jax: the optimised graph as one
``jax.jit`` function), the hand-written numpy loop, and (with the ``bench`` extra)
PyTensor's default mode (Numba) and C backend (``mode="CVM"``) and JAX (jit). Fresh-process
build and compile times (numba's kernel cache cold and warm) come last (compile_times.py).
Every system's result is checked against the numpy loop before it is timed; run times are
medians of interleaved repeats after a warm-up call; "first" is the time from building the
function to its first result (compilation included; JAX's one-time start, its LAPACK kernels'
import of scipy among it, is done before any timing, else the first JAX system timed pays for
both); peak memory is that of one W1 call at
n = k = 10000 in a fresh process. Results go to a JSON-lines file and a markdown table.
``--grad`` runs the gradient benchmarks G3, G4, G5, G7, G10, K1, H1 instead (grad_workloads.py,
grad_peers.py); ``--under-load`` runs either with one competing busy process (under_load.py).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import nullcontext
from datetime import date
from pathlib import Path

import numpy as np

import symscan as ss
from benchmarks import compile_times, grad_workloads, peers, sections, under_load, workloads
from symscan.backends.jax.graph import NotLowerable
from symscan.onnx import ExportError

SYSTEMS = ("fast", "numba", "default", "py", "onnxruntime", "jax-mode", "numpy", "pytensor", "pytensor-c", "jax")
HERE = Path(__file__).resolve().parent
PEERS = ("pytensor", "pytensor-c", "jax")


def make_system(system: str, work: workloads.Workload) -> Callable:
    """A callable of the workload's values for ``system`` (compiling it if needed)."""
    if isinstance(work, grad_workloads.GradWorkload):
        return grad_workloads.make_system(system, work)
    params = work.params or {}
    if system in ("fast", "numba", "py", "onnxruntime"):
        return ss.function(work.inputs, work.outputs, mode=system)
    if system == "default":  # mode fast, handing over to numba in the background (symscan.backends.tiered)
        return ss.function(work.inputs, work.outputs)
    if system == "jax-mode":  # symscan's optimised graph as one jax.jit function
        return ss.function(work.inputs, work.outputs, mode="jax")
    if system == "numpy":
        return work.numpy_loop
    if system == "pytensor":
        return peers.pytensor_function(work.name, params, None)
    if system == "pytensor-c":
        return peers.pytensor_function(work.name, params, "CVM")
    if system == "jax":
        return peers.jax_function(work.name, params)
    raise ValueError(f"unknown system {system!r}; use one of {SYSTEMS}")


def as_list(result) -> list:
    return list(result) if isinstance(result, (list, tuple)) else [result]


def check(system: str, work: workloads.Workload, got, expected: list) -> None:
    got = as_list(got)
    if len(got) != len(expected):
        raise AssertionError(f"{work.name} {system}: {len(got)} outputs, expected {len(expected)}")
    for g, e in zip(got, expected):
        g = np.asarray(g)
        # a gradient sums many terms: its tiny entries carry rounding errors of its largest ones
        scale = float(np.max(np.abs(e), initial=1.0)) if getattr(work, "scaled_atol", False) else 1.0
        if g.shape != np.shape(e) or not np.allclose(g, e, rtol=1e-8, atol=1e-12 * scale):
            raise AssertionError(f"{work.name} {system}: result differs from the numpy loop")


def run_workload(work: workloads.Workload, systems: list[str], repeats: int, budget: float) -> list[dict]:
    expected = work.numpy_loop(*work.values)
    functions, rows = {}, {}
    for system in systems:
        start = time.perf_counter()
        try:
            fn = make_system(system, work)
            built = time.perf_counter() - start
            result = fn(*work.values)
        except ImportError:
            continue
        except (ss.NullTypeGradError, ExportError, NotLowerable) as error:  # a gradient symscan cannot take, an
            print(f"{work.name} {system}: skipped: {error}", file=sys.stderr)  # op ONNX or JAX lacks: no column
            continue
        first = time.perf_counter() - start
        try:
            check(system, work, result, expected)
        except AssertionError as error:  # a peer's wrong result is reported and left out; symscan's fails the run
            if system not in PEERS:
                raise
            print(f"{work.name} {system}: left out: {error}", file=sys.stderr)
            continue
        if system == "default":
            settle(fn, work.values)
        functions[system] = fn
        rows[system] = {"workload": work.name, "description": work.description, "system": system,
                        "build_s": built, "first_result_s": first, "times": []}
        rows[system].update(getattr(work, "timings", {}).get(system, {}))
    deadline = time.perf_counter() + budget
    for i in range(repeats):  # interleaved, so load on the machine affects every system alike
        for system, fn in functions.items():
            if i >= 3 and time.perf_counter() > deadline:
                continue
            start = time.perf_counter()
            fn(*work.values)
            rows[system]["times"].append(time.perf_counter() - start)
    for row in rows.values():
        row["median_s"] = statistics.median(row.pop("times"))
    return list(rows.values())


def settle(fn, values: list, limit: float = 60.0) -> None:
    """Call a default-mode function until its tier has decided (numba took over, or not)."""
    evaluator, deadline = fn._evaluate, time.perf_counter() + limit
    while getattr(evaluator, "state", "done") == "fast" and time.perf_counter() < deadline:
        fn(*values)
    if hasattr(evaluator, "wait"):
        evaluator.wait(limit)


def peak_memory(system: str, n: int, k: int) -> float | None:
    """Extra resident memory (MB) of one W1 call, sampled every millisecond in a fresh process."""
    code = (f"from benchmarks.__main__ import _memory_child; _memory_child({system!r}, {n}, {k})")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if result.returncode != 0:
        return None
    return json.loads(result.stdout.strip().splitlines()[-1])["peak_mb"]


def _memory_child(system: str, n: int, k: int) -> None:
    import threading

    import psutil

    work = workloads.power(n, k)
    fn = make_system(system, work)
    fn(*workloads.power_values(2, 2)[:1], np.int32(2)) if system not in ("numpy",) else None
    process, peak, running = psutil.Process(), [0], [True]
    base = process.memory_info().rss

    def sample() -> None:
        while running[0]:
            peak[0] = max(peak[0], process.memory_info().rss)
            time.sleep(0.001)

    thread = threading.Thread(target=sample)
    thread.start()
    fn(*work.values)
    running[0] = False
    thread.join()
    print(json.dumps({"peak_mb": max(peak[0] - base, 0) / 1e6}))


INTRO = """# Benchmarks

`python -m benchmarks` (after `pip install -e ".[dev,bench]"` for the peers) runs W1-W9, K1 and H1
in every available system side by side and rewrites this file; `--quick` is a smoke test, `--only W1,W4`
and `--systems fast,numpy` narrow it; `--grad` runs the gradient benchmarks instead (their own section);
`--under-load` runs either with one competing busy process (the "Under load" sections).
Workloads (float64, fixed seeds) are defined in `workloads.py` (K1, the Kalman filter, and H1, the
HMM forward algorithm, in `filtering.py`), the peers' versions in `peers.py`.
Every system's result is checked against the hand-written numpy loop before it is timed.
"numpy" is that loop: the practical limit of a Python loop over numpy; PyTensor runs in its
default mode (Numba) and with its C backend (`mode="CVM"`), JAX under `jax.jit`. symscan's
"numba" is mode numba (each loop a numba kernel), "default" the default mode after its numba
version took over in the background. The machine is shared and noisy: compare columns within
a run, not across runs.

"""


RATIOS = (("fast", "numpy"), ("numba", "jax"), ("numba", "pytensor"), ("jax-mode", "jax"))
"""The ratio columns of the table: (system, over system)."""


def ratio(by: dict, name: str, system: str, other: str) -> str:
    """Median time of ``system`` over ``other``'s for workload ``name`` ("-" if either is missing)."""
    a, b = by.get((name, system)), by.get((name, other))
    return f"{a['median_s'] / b['median_s']:.2f}" if a and b else "-"


def markdown(rows: list[dict], memory: dict, quick: bool) -> str:
    systems = [s for s in SYSTEMS if any(r["system"] == s for r in rows)]
    by = {(r["workload"], r["system"]): r for r in rows}
    names = list(dict.fromkeys(r["workload"] for r in rows))
    lines = [f"Run on {date.today().isoformat()}: {platform.platform()}, {platform.processor() or 'cpu'}, "
             f"Python {platform.python_version()}, numpy {np.__version__}" + (" (quick sizes)" if quick else ""),
             "", "Median run time in ms (lower is better); `fast/numpy` is symscan fast over the hand loop, "
             "`numba/jax` and `numba/pytensor` symscan numba over JAX and PyTensor's default mode; "
             "`default` is the default mode after its numba version took over (where it did).", "",
             "| workload | " + " | ".join(systems) + " | " + " | ".join(f"{a}/{b}" for a, b in RATIOS)
             + " | symscan build ms |", "|---" * (len(systems) + len(RATIOS) + 2) + "|"]
    for name in names:
        cells = [f"{by[(name, s)]['median_s'] * 1e3:.3g}" if (name, s) in by else "-" for s in systems]
        cells += [ratio(by, name, a, b) for a, b in RATIOS]
        fast = by.get((name, "fast"))
        build = f"{fast['build_s'] * 1e3:.1f}" if fast else "-"
        description = next(r["description"] for r in rows if r["workload"] == name)  # (any system's)
        lines.append(f"| {name} {description} | " + " | ".join(cells) + f" | {build} |")
    lines += ["", "Time to first result in s (building the function, compiling, first call; JAX's one-time "
              "start runs before any timing):", "",
              "| workload | " + " | ".join(systems) + " |", "|---" * (len(systems) + 1) + "|"]
    for name in names:
        cells = [f"{by[(name, s)]['first_result_s']:.3g}" if (name, s) in by else "-" for s in systems]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    if memory:
        lines += ["", "Peak extra memory of one W1 call (A**k, n = k = 10000, only the last step read), MB:", "",
                  "| " + " | ".join(memory) + " |", "|---" * len(memory) + "|",
                  "| " + " | ".join("-" if v is None else f"{v:.1f}" for v in memory.values()) + " |"]
    return "\n".join(lines) + "\n"


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few repeats (a smoke test)")
    parser.add_argument("--only", default="", help="comma-separated workloads, e.g. W1,W4")
    parser.add_argument("--systems", default=None, help="comma-separated systems (default: all)")
    parser.add_argument("--grad", action="store_true",
                        help="run only the gradient benchmarks G3, G4, G5, G7, G10, K1, H1")
    parser.add_argument("--under-load", action="store_true",
                        help="with one competing busy process; rows and README section of their own")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--jsonl", default=None, help="default: results.jsonl (grad_results.jsonl with --grad; "
                        "with --under-load, results_under_load.jsonl or grad_results_under_load.jsonl)")
    parser.add_argument("--quiet-jsonl", default=None, help="with --under-load: the quiet run's rows to compare "
                        "with (default: results.jsonl or grad_results.jsonl)")
    parser.add_argument("--markdown", default=str(HERE / "README.md"), help="where the table goes")
    parser.add_argument("--no-memory", action="store_true", help="skip the W1 memory measurement")
    parser.add_argument("--no-compile-times", action="store_true",
                        help="skip the fresh-process build and compile times (cold and warm cache)")
    return parser.parse_args(argv)


def run_all(args: argparse.Namespace, systems: list[str]) -> list[dict]:
    """Every selected workload's rows (printed as they come), under load if asked."""
    only, rows = {w for w in args.only.split(",") if w}, []
    with under_load.competing_process() if args.under_load else nullcontext():
        for work in (grad_workloads if args.grad else workloads).all_workloads(args.quick):
            if only and work.name not in only:
                continue
            work_rows = run_workload(work, systems, 3 if args.quick else args.repeats, 2.0 if args.quick else 20.0)
            for row in work_rows:
                if args.under_load:
                    row["under_load"] = True
                print(json.dumps(row), flush=True)
            rows += work_rows
    return rows


def readme_text(args: argparse.Namespace, old: str, rows: list[dict], memory: dict, compile_rows: list[dict],
                systems: list[str]) -> str:
    """The README with this run's part replaced and every other part kept."""
    if args.under_load:
        quiet_path = args.quiet_jsonl or str(HERE / under_load.jsonl_name(args.grad, False))
        tables = grad_workloads.tables(rows, args.quick) if args.grad else markdown(rows, {}, args.quick)
        section = under_load.markdown(args.grad, tables, rows, under_load.read_rows(quiet_path),
                                      Path(quiet_path).name, systems)
        return sections.replace_section(old or INTRO, section, under_load.HEADINGS[args.grad])
    if args.grad:  # replace the G section, keep the forward tables and the other sections
        return sections.replace_section(old or INTRO, grad_workloads.markdown(rows, args.quick),
                                        grad_workloads.HEADING)
    # replace the forward tables, keep the sections after them (gradients, under load, drawing, ...)
    compiled = compile_times.markdown(compile_rows) if compile_rows else ""
    return INTRO + markdown(rows, memory, args.quick) + compiled + sections.sections_after_tables(old)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    systems = [s for s in (args.systems or ",".join(grad_workloads.SYSTEMS if args.grad else SYSTEMS)).split(",")
               if s]
    available = peers.available()
    systems = [s for s in systems if not s.startswith("pytensor") or available["pytensor"]]
    systems = [s for s in systems if s != "jax" or available["jax"]]
    if available["jax"] and {"jax", "jax-mode"} & set(systems):
        peers.warm_up_jax()
    rows = run_all(args, systems)
    only = {w for w in args.only.split(",") if w}
    forward_extras = not args.grad and not args.under_load  # fresh-process measurements: quiet forward runs only
    memory = {}
    if forward_extras and not args.no_memory and (not only or "W1" in only):
        n = 1000 if args.quick else 10_000
        memory = {s: peak_memory(s, n, n) for s in systems}
    compile_rows = []
    if forward_extras and not args.no_compile_times:
        compile_rows = compile_times.measure([r["workload"] for r in rows if r["system"] == systems[0]], args.quick)
        for row in compile_rows:
            print(json.dumps(row), flush=True)
    jsonl = args.jsonl or str(HERE / under_load.jsonl_name(args.grad, args.under_load))
    Path(jsonl).write_text("".join(json.dumps(r) + "\n" for r in rows))
    old = Path(args.markdown).read_text() if Path(args.markdown).exists() else ""
    Path(args.markdown).write_text(readme_text(args, old, rows, memory, compile_rows, systems))
    print(Path(args.markdown).read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
