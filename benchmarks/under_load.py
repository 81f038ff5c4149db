"""``python -m benchmarks --under-load``: the same benchmarks while one competing busy process
runs (issue 25: BLAS threads that spin while their core is taken slowed symscan up to 15x where
JAX slowed 3x). The busy process is a fresh Python child started before the first workload and
killed after the last, also when the run fails or is interrupted. Its rows go to their own JSON-lines
file and README section, so a quiet run and a loaded run are both kept; the section compares each
system's loaded median with the quiet run's (from the quiet JSON-lines file, same sizes only).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HEADINGS = {False: "## Under load: forward benchmarks", True: "## Under load: gradient benchmarks"}
"""The README section of a forward (False) and a gradient (True) run under load."""

BUSY = "while True: pass"


@contextmanager
def competing_process() -> Iterator[subprocess.Popen]:
    """One busy Python process for the duration of the block (killed on any exit)."""
    busy = subprocess.Popen([sys.executable, "-c", BUSY], stdin=subprocess.DEVNULL)
    try:
        yield busy
    finally:
        busy.kill()
        busy.wait()


def jsonl_name(grad: bool, under_load: bool) -> str:
    """results.jsonl, grad_results.jsonl, and their ``_under_load`` counterparts."""
    return ("grad_results" if grad else "results") + ("_under_load" if under_load else "") + ".jsonl"


def read_rows(path: str | Path) -> list[dict]:
    """The rows of a JSON-lines results file ([] when there is none)."""
    path = Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def slowdowns(rows: list[dict], quiet: list[dict]) -> dict[tuple[str, str], float]:
    """(workload, system) -> loaded median / quiet median, where the quiet run has the same
    workload at the same size (its description names the sizes) and the same system."""
    by = {(r["workload"], r["system"]): r for r in quiet if not r.get("under_load")}
    found = {}
    for row in rows:
        base = by.get((row["workload"], row["system"]))
        if base and base["description"] == row["description"] and base["median_s"] > 0:
            found[(row["workload"], row["system"])] = row["median_s"] / base["median_s"]
    return found


ABOUT = """{heading}

`{command}` runs {what}
while one competing busy process (`python -c "{busy}"`, started before the first
workload, killed after the last) takes one of the machine's two cores, and rewrites only this
section. A system's slowdown is its median under load over its median in the quiet run kept in
`{quiet}` (the last run without `--under-load`, at the same sizes; "-" where it has no
such row). `numba/jax slowdown` is symscan numba's slowdown over JAX's: the issue's target is at
most 1 (symscan slows down no more than JAX does).
"""


def about(grad: bool, quiet_name: str) -> str:
    command = "python -m benchmarks --grad --under-load" if grad else "python -m benchmarks --under-load"
    what = "the gradient benchmarks" if grad else "the forward benchmarks (not memory nor compile times)"
    return ABOUT.format(heading=HEADINGS[grad], command=command, what=what, busy=BUSY, quiet=quiet_name)


def slowdown_table(rows: list[dict], quiet: list[dict], systems: list[str]) -> str:
    """Loaded over quiet median per workload and system, and numba's slowdown over JAX's."""
    ratios = slowdowns(rows, quiet)
    names = list(dict.fromkeys(r["workload"] for r in rows))

    def cell(name: str, system: str) -> str:
        return f"{ratios[(name, system)]:.2f}" if (name, system) in ratios else "-"

    lines = ["Slowdown under load (median under load / quiet median; 1 = no slowdown):", "",
             "| workload | " + " | ".join(systems) + " | numba/jax slowdown |", "|---" * (len(systems) + 2) + "|"]
    for name in names:
        numba, jax = ratios.get((name, "numba")), ratios.get((name, "jax"))
        relative = f"{numba / jax:.2f}" if numba and jax else "-"
        lines.append(f"| {name} | " + " | ".join(cell(name, s) for s in systems) + f" | {relative} |")
    return "\n".join(lines) + "\n"


def markdown(grad: bool, tables: str, rows: list[dict], quiet: list[dict], quiet_name: str,
             systems: list[str]) -> str:
    """The under-load section: what it is, the run's tables (as the quiet run's), the slowdowns."""
    shown = [s for s in systems if any(r["system"] == s for r in rows)]
    return about(grad, quiet_name) + "\n" + tables + "\n" + slowdown_table(rows, quiet, shown)
