"""Imported ONNX loops: W3-W8 written as ONNX models (benchmarks/onnx_models.py), run side by side.

    .venv/bin/python -m benchmarks.onnx_import [--quick] [--only "W3 Scan, every step",W4] [--systems ...]

Systems, in one process: the W-workload's numpy loop ("numpy", the reference); onnxruntime on
the model as written ("onnxruntime", a default session); onnxruntime on ``ss.onnx.optimize``'s
model ("onnxruntime opt", the session symscan's exported models need: symscan.onnx.runtime);
``ss.onnx.import_function`` in modes "fast" and "numba". Every system's first result is checked
against the numpy loop (benchmarks.__main__.check) before anything is timed; run times are
medians of interleaved repeats after a warm-up call (benchmarks.rewrites_effect.timed). "first"
is the time from the model to the first result (session, or import and compile, and the first
call; numba's kernels are compiled into an empty cache unless --warm-cache or --quick, though a
kernel an earlier model of the run compiled is served from memory); "optimize" is
``ss.onnx.optimize``.
Results go to benchmarks/onnx_import.md (not with --quick unless --markdown is given).

BLAS runs on one thread (``--blas-threads``, set through ``OPENBLAS_NUM_THREADS`` before numpy
loads, by running this module again): numpy and numba's kernels call two OpenBLAS libraries
(numpy's and scipy's), and on a 2-core machine each one's spinning threads slowed the call of
the other that came next in the interleaved repeats by up to 10x (W4 T=50: 1.3 ms or 14 ms,
depending on the order). onnxruntime keeps its own thread pool (its default).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

import numpy as np

import symscan as ss
from benchmarks import onnx_models
from benchmarks.__main__ import check
from benchmarks.rewrites_effect import timed

SYSTEMS = ("numpy", "onnxruntime", "onnxruntime opt", "fast", "numba")
HERE = Path(__file__).resolve().parent


def ort_function(model) -> Callable:
    """A callable of the model's input values running it in onnxruntime (a default session)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return _runner(session, model)


def _runner(session, model) -> Callable:
    defaults = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in defaults]

    def run(*values):
        return session.run(None, {name: np.asarray(v) for name, v in zip(names, values)})

    return run


def make_system(system: str, work: onnx_models.OnnxWorkload, row: dict) -> Callable:
    """A callable of the model's values for ``system``; ``row`` gets the optimize time and report."""
    if system == "numpy":
        return work.numpy_loop
    if system == "onnxruntime":
        return ort_function(work.model)
    if system == "onnxruntime opt":
        from symscan.onnx.runtime import _session

        start = time.perf_counter()
        optimized, report = ss.onnx.optimize(work.model, with_report=True)
        row["optimize_s"] = time.perf_counter() - start
        row["report"] = report
        return _runner(_session(optimized), optimized)
    if system in ("fast", "numba"):
        return ss.onnx.import_function(work.model, mode=system)
    raise ValueError(f"unknown system {system!r}; use some of {SYSTEMS}")


def prepare(work: onnx_models.OnnxWorkload, systems: list[str]) -> tuple[dict, dict]:
    """Each system built and its first result checked against the numpy loop: ({system: callable},
    {system: row}); the row holds the time to the first result (and, for "onnxruntime opt",
    the optimize time and report)."""
    expected = work.numpy_loop(*work.values)
    functions, rows = {}, {}
    for system in systems:
        row = {"model": work.name, "system": system}
        start = time.perf_counter()
        fn = make_system(system, work, row)
        result = fn(*work.values)
        row["first_result_s"] = time.perf_counter() - start
        check(system, work, result, expected)
        functions[system], rows[system] = fn, row
    return functions, rows


def run_model(work: onnx_models.OnnxWorkload, systems: list[str], repeats: int) -> list[dict]:
    functions, rows = prepare(work, systems)
    for system, seconds in timed(functions, work.values, repeats).items():
        rows[system]["median_s"] = seconds
    return list(rows.values())


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3g}"


def markdown(rows: list[dict], systems: list[str], quick: bool) -> str:
    by = {(r["model"], r["system"]): r for r in rows}
    names = list(dict.fromkeys(r["model"] for r in rows))
    models = {w.name: w for w in onnx_models.all_models(quick)}
    lines = ["# Imported ONNX loops", "",
             "`python -m benchmarks.onnx_import` (`--quick`: small sizes) runs W3-W8 written as ONNX models "
             "(`onnx_models.py`: with onnxscript, returning the loop's final values, and with `onnx.helper` as "
             "Scan or Loop with scan outputs, returning every step) side by side in one process: the numpy loop, "
             "onnxruntime on the model, onnxruntime on `ss.onnx.optimize(model)`, and "
             "`ss.onnx.import_function(model)` in modes fast and numba. Every result is checked against the "
             "numpy loop first. The machine is shared and noisy: compare columns within a run.", "",
             f"Run on {date.today().isoformat()}: {platform.platform()}, Python {platform.python_version()}, "
             f"numpy {np.__version__}" + (" (quick sizes)" if quick else ""), "",
             "Median run time in ms (lower is better); `numba first s` is import, compile and first call; "
             "`optimize s` is `ss.onnx.optimize`; nodes and loops (Loop + Scan, bodies included) before and after it. "
             f"BLAS threads: {os.environ.get('OPENBLAS_NUM_THREADS', 'default')}; onnxruntime: its default "
             "threads; onnxruntime on the model as written: a default session, on the optimized model: "
             "the session symscan's exported models need (two optimizers off).",
             "", "| model | " + " | ".join(systems) + " | numba first s | optimize s | nodes | loops |",
             "|---" * (len(systems) + 5) + "|"]
    for name in names:
        cells = [_ms(by[(name, s)].get("median_s")) if (name, s) in by else "-" for s in systems]
        numba = by.get((name, "numba"))
        opt = by.get((name, "onnxruntime opt"))
        first = f"{numba['first_result_s']:.3g}" if numba else "-"
        nodes = loops = optimize = "-"
        if opt:
            report = opt["report"]
            nodes = f"{sum(report.before.values())} -> {sum(report.after.values())}"
            loops = f"{report.loops(report.before)} -> {report.loops(report.after)}"
            optimize = f"{opt['optimize_s']:.3g}"
        description = models[name].description if name in models else ""
        lines.append(f"| {name} ({description}) | " + " | ".join(cells) + f" | {first} | {optimize} | {nodes} | "
                     f"{loops} |")
    reports = [(name, by[(name, "onnxruntime opt")]["report"]) for name in names if (name, "onnxruntime opt") in by]
    if reports:
        lines += ["", "What `ss.onnx.optimize` did:", ""]
        lines += [f"- {name}: {report.summary()}" for name, report in reports]
    lines += ["", "Time to the first result in s (session or import and compile, first call):", "",
              "| model | " + " | ".join(systems) + " |", "|---" * (len(systems) + 1) + "|"]
    for name in names:
        cells = [f"{by[(name, s)]['first_result_s']:.3g}" if (name, s) in by else "-" for s in systems]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def with_blas_threads(threads: int, argv: list[str] | None) -> None:
    """Run this module again with ``threads`` BLAS threads, unless they are set already."""
    if threads <= 0 or os.environ.get("OPENBLAS_NUM_THREADS") == str(threads):
        return
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               PYTHONPATH=os.pathsep.join(filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")])))
    args = [sys.executable, "-m", "benchmarks.onnx_import", *(sys.argv[1:] if argv is None else argv)]
    sys.stdout.flush()
    os.execve(sys.executable, args, env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.onnx_import", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few repeats (a smoke test)")
    parser.add_argument("--only", default="", help="comma-separated models or workloads, e.g. W3,W4 Scan, every step")
    parser.add_argument("--systems", default=None, help="comma-separated, of: " + ", ".join(SYSTEMS) + " (default: "
                        "all; with --quick all but numba, whose kernels take about 0.4 s each to load even cached)")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--warm-cache", action="store_true", help="numba kernels from the usual cache (default "
                        "without --quick: an empty one, so that 'numba first s' includes compiling)")
    parser.add_argument("--blas-threads", type=int, default=1, help="BLAS threads (default 1; 0: the libraries' "
                        "default)")
    parser.add_argument("--markdown", default=None, help="where the table goes (default: benchmarks/onnx_import.md; "
                        "with --quick: nowhere)")
    args = parser.parse_args(argv)
    with_blas_threads(args.blas_threads, argv)
    default = [s for s in SYSTEMS if s != "numba"] if args.quick else list(SYSTEMS)
    systems = [s for s in args.systems.split(",") if s] if args.systems else default
    unknown = set(systems) - set(SYSTEMS)
    if unknown:
        parser.error(f"unknown systems {sorted(unknown)}; use some of {', '.join(SYSTEMS)}")
    only = {w.strip() for w in args.only.split(",") if w.strip()}
    cache = None if args.warm_cache or args.quick else tempfile.TemporaryDirectory()
    if cache is not None:
        os.environ["SYMSCAN_CACHE_DIR"] = cache.name
    rows = []
    for work in onnx_models.all_models(args.quick):
        if only and work.name not in only and work.workload not in only:
            continue
        model_rows = run_model(work, systems, 3 if args.quick else args.repeats)
        for row in model_rows:
            print(json.dumps({k: v for k, v in row.items() if k != "report"}), flush=True)
        report = next((r["report"] for r in model_rows if "report" in r), None)
        if report is not None:
            print(f"{work.name}: {report}", flush=True)
        rows += model_rows
    text = markdown(rows, systems, args.quick)
    print(text)
    target = args.markdown or (None if args.quick else str(HERE / "onnx_import.md"))
    if target:
        Path(target).write_text(text)
    if cache is not None:
        cache.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
