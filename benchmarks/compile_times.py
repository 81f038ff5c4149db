"""Time to first result in a fresh process: mode numba with an empty kernel cache (cold) and
with the cache the cold run left (warm), the default mode, and the build time of
``ss.function`` alone (the first build in the process: imports of what the rewrites need
included, the import of symscan itself excluded).

Each measurement is its own Python process, so nothing a previous one imported or compiled is
in memory; the kernel cache is a temporary directory (``SYMSCAN_CACHE_DIR``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, sys, time
import symscan as ss
from benchmarks import workloads
work = {{w.name: w for w in workloads.all_workloads({quick})}}[{name!r}]
start = time.perf_counter()
f = ss.function(work.inputs, work.outputs, mode={mode!r})
built = time.perf_counter() - start
f(*work.values)
print(json.dumps({{"build_s": built, "first_result_s": time.perf_counter() - start,
                  "report": f.backend_report()}}))
"""


def child(name: str, mode: str | None, cache: str, quick: bool) -> dict:
    env = dict(os.environ, SYMSCAN_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
    code = CHILD.format(quick=quick, name=name, mode=mode)
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        raise RuntimeError(f"{name} {mode}: {result.stderr.strip().splitlines()[-1]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def measure(names: list[str], quick: bool = False) -> list[dict]:
    """One row per workload: fresh-process build and first-result times (s)."""
    rows = []
    for name in names:
        with tempfile.TemporaryDirectory() as cache:
            cold = child(name, "numba", cache, quick)
            warm = child(name, "numba", cache, quick)
            default = child(name, None, cache, quick)
        rows.append({"workload": name, "build_s": default["build_s"], "default_first_s": default["first_result_s"],
                     "numba_cold_s": cold["first_result_s"], "numba_warm_s": warm["first_result_s"],
                     "numba_loops": cold["report"]})
    return rows


def markdown(rows: list[dict]) -> str:
    lines = ["", "Fresh processes: `ss.function` build time of the default mode (ms), and time to the first "
             "result (s) in the default mode and in mode numba with an empty kernel cache (cold) and with "
             "the cache the cold run left (warm):", "",
             "| workload | build ms | default first s | numba cold s | numba warm s | numba loops |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        loops = ", ".join(r["numba_loops"]) or "no loop left"
        lines.append(f"| {r['workload']} | {r['build_s'] * 1e3:.1f} | {r['default_first_s']:.3g} | "
                     f"{r['numba_cold_s']:.3g} | {r['numba_warm_s']:.3g} | {loops} |")
    return "\n".join(lines) + "\n"
