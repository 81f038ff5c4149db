"""``python -m benchmarks.cold_compile``: the time to the first result of an LSTM loss gradient
(G10's model, lstm.py) in fresh processes, side by side (issue 25: a notebook user waits for it).

Each measurement is its own Python process; its clock starts after the imports (symscan, JAX or
PyTensor, numpy and the benchmark modules are imported first in every process alike) and stops
when the gradient is there: building the model's graph, the gradient (``ss.grad``,
``pytensor.grad``, ``jax.grad``), the function (``ss.function``, ``pytensor.function``,
``jax.jit``), compiling and the first call. symscan "cold" has an empty kernel cache
(``SYMSCAN_CACHE_DIR`` a fresh temporary directory), "warm" the cache the cold run left; PyTensor
gets a fresh compile directory (its Numba cache lives there); JAX keeps no cache across processes.
"jax-mode" is symscan in mode jax (``ss.grad``, then ``ss.function(..., mode="jax")``: the
optimised gradient graph as one ``jax.jit`` function), run once, against the hand-written JAX
on the same device (peers.py's: the CPU unless ``JAX_PLATFORMS`` says otherwise).
Each result is checked against the numpy BPTT (lstm.py) after the clock stopped. The numba
evaluator's ``backend_report()`` says which loops each run compiled.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from benchmarks import sections

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
HEADING = "## Cold compile: LSTM gradient"
SIZES = {"T=50 batch=8 in=16 hidden=32 (the issue's)": (50, 8, 16, 32),
         "T=200 batch=32 in=64 hidden=256 (G10's)": (200, 32, 64, 256)}
QUICK_SIZES = {"T=5 batch=2 in=3 hidden=4 (quick)": (5, 2, 3, 4)}
PEERS = ("jax", "pytensor")
SYSTEMS = ("symscan", "jax-mode") + PEERS
WRT = [1, 2, 3, 4, 5]  # W, U, b, h0, c0


# ---------------------------------------------------------------------------- in the fresh process
def _builder(system: str, mode: str):
    """Import ``system`` (before the clock) and return a function of the hidden size that builds
    the gradient function: (function, its backend report or []). "jax-mode" is symscan in mode
    jax (``mode`` is then ignored)."""
    if system in ("symscan", "jax-mode"):
        import symscan as ss
        from benchmarks import grad_workloads, lstm

        if system == "jax-mode":
            from benchmarks import peers  # noqa: F401 - its JAX_PLATFORMS default: the JAX peer's device, for both

            mode = "jax"
            import jax  # noqa: F401 - JAX and symscan's lowering imported before the clock, as jax for its peer

            import symscan.backends.jax  # noqa: F401

        def build(n_hidden: int):
            inputs, outputs = lstm.lstm_graph(n_hidden)
            grads = ss.grad(grad_workloads.sum_of_squares(outputs), [inputs[i] for i in WRT])
            f = ss.function(inputs, grads, mode=None if mode == "default" else mode)
            return f, f.backend_report
        return build
    from benchmarks import grad_peers

    if system == "jax":
        import jax

        jax.config.update("jax_enable_x64", True)
        return lambda n_hidden: (grad_peers.jax_grad_function("W10", WRT, {"n_hidden": n_hidden}), list)
    if system == "pytensor":
        import pytensor  # noqa: F401
        import pytensor.tensor  # noqa: F401

        return lambda n_hidden: (grad_peers.pytensor_grad_function("W10", WRT, {"n_hidden": n_hidden}), list)
    raise ValueError(f"unknown system {system!r}; use one of {', '.join(SYSTEMS)}")


def child(system: str, size: list[int], mode: str) -> None:
    """The body of one fresh process: print the time to the first result as a JSON line."""
    import numpy as np

    from benchmarks import lstm

    values = lstm.lstm_values(*size)
    build = _builder(system, mode)
    start = time.perf_counter()
    fn, report = build(size[3])
    got = fn(*values)
    elapsed = time.perf_counter() - start
    errors = [float(np.max(np.abs(np.asarray(g) - e)) / np.max(np.abs(e))) for g, e in
              zip(got, lstm.lstm_bptt(*values))]
    print(json.dumps({"first_result_s": elapsed, "report": report(), "max_relative_error": max(errors)}))


# ---------------------------------------------------------------------------- the parent
def run_child(system: str, size: tuple, mode: str, cache: Path) -> dict:
    """One fresh process; ``cache`` holds symscan's kernel cache and PyTensor's compile directory."""
    flags = ",".join(f for f in (os.environ.get("PYTENSOR_FLAGS", ""), f"base_compiledir={cache / 'pytensor'}") if f)
    env = dict(os.environ, PYTHONPATH=str(ROOT), SYMSCAN_CACHE_DIR=str(cache / "symscan"), PYTENSOR_FLAGS=flags)
    code = f"from benchmarks.cold_compile import child; child({system!r}, {list(size)!r}, {mode!r})"
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines() or ["no error output"]
        raise RuntimeError(f"cold compile {system} {size}: the child process failed: {lines[-1]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def measure(sizes: dict, mode: str = "numba", systems: tuple = SYSTEMS) -> list[dict]:
    """One row per size and run: symscan cold then warm (sharing one cache), jax-mode, then each peer."""
    unknown = set(systems) - set(SYSTEMS)
    if unknown:
        raise ValueError(f"unknown systems {sorted(unknown)}; use {', '.join(SYSTEMS)}")
    needs = {"jax-mode": "jax"}  # the module a system needs
    systems = [s for s in systems if s == "symscan" or importlib.util.find_spec(needs.get(s, s)) is not None]
    rows = []
    for label, size in sizes.items():
        with tempfile.TemporaryDirectory() as cache:
            runs = [("symscan", "cold"), ("symscan", "warm")] if "symscan" in systems else []
            runs += [(s, "cold") for s in ("jax-mode",) + PEERS if s in systems]
            for system, state in runs:
                row = {"size": label, "dims": list(size), "system": system, "cache": state,
                       "mode": {"symscan": mode, "jax-mode": "jax"}.get(system)}
                row.update(run_child(system, size, mode, Path(cache)))
                print(json.dumps(row), file=sys.stderr, flush=True)
                rows.append(row)
    return rows


def wrong(row: dict) -> bool:
    return not row["max_relative_error"] <= 1e-8


ABOUT = f"""{HEADING}

`python -m benchmarks.cold_compile` (`--quick` for a smoke test, `--mode fast`, `--systems
symscan,jax`) rewrites only this section: the time from building the LSTM loss gradient to its
first result (s), each in a fresh process with the clock started after the imports: symscan in
mode {{mode}} with an empty kernel cache (cold) and with the cache the cold run left (warm), JAX's
`jax.jit(jax.grad(cost))` over `lax.scan`, PyTensor's `pytensor.grad` in its default mode (Numba)
with an empty compile directory. The model is G10's LSTM (`lstm.py`, cost: the sum of squares of
every step's h; gradient w.r.t. W, U, b, h0, c0); every result is checked against the numpy BPTT.
"loops" is symscan's `backend_report()` in the cold run. The issue's target: cold at most 2x JAX.
{{jax_mode}}"""

JAX_MODE = """"jax-mode" is symscan in mode jax (`ss.grad`, then `ss.function(..., mode="jax")`, the
optimised graph as one `jax.jit` function; JAX and symscan's lowering imported before the clock)
on JAX's device (the CPU unless `JAX_PLATFORMS` says otherwise; `--systems jax-mode,jax` runs
just the two); the issue's target for it: within 2x of JAX's first result.
"""


def markdown(rows: list[dict], mode: str) -> str:
    """The README section for ``rows`` (one run of ``measure``)."""
    by = {(r["size"], r["system"], r["cache"]): r for r in rows}
    columns = [("symscan", "cold"), ("symscan", "warm"), ("jax", "cold"), ("pytensor", "cold")]
    jax_mode = any(r["system"] == "jax-mode" for r in rows)  # its two columns only when it ran
    if jax_mode:
        columns.insert(2, ("jax-mode", "cold"))

    def cell(size: str, key: tuple) -> str:
        row = by.get((size,) + key)
        return "-" if row is None else f"{row['first_result_s']:.3g}" + (" (wrong)" if wrong(row) else "")

    def ratio(size: str, system: str = "symscan") -> str:
        cold, jax = by.get((size, system, "cold")), by.get((size, "jax", "cold"))
        return f"{cold['first_result_s'] / jax['first_result_s']:.2f}" if cold and jax else "-"

    headers = [f"symscan {mode} cold", f"symscan {mode} warm"] + ["jax-mode"] * jax_mode
    headers += ["JAX", "PyTensor", "cold/JAX"] + ["jax-mode/JAX"] * jax_mode + ["loops (cold run)"]
    lines = [ABOUT.format(mode=mode, jax_mode=JAX_MODE if jax_mode else ""),
             f"Run on {date.today().isoformat()}: {platform.platform()}, Python {platform.python_version()}", "",
             "| model | " + " | ".join(headers) + " |", "|---" * (len(headers) + 1) + "|"]
    for size in dict.fromkeys(r["size"] for r in rows):
        cold = by.get((size, "symscan", "cold"))
        loops = (", ".join(cold["report"]) or ("no loop left" if mode == "numba" else "-")) if cold else "-"
        ratios = [ratio(size)] + [ratio(size, "jax-mode")] * jax_mode
        lines.append(f"| LSTM {size} | " + " | ".join(cell(size, key) for key in columns)
                     + " | " + " | ".join(ratios) + f" | {loops} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cold_compile", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one tiny LSTM (a smoke test)")
    parser.add_argument("--mode", default="numba", help="symscan's mode (numba, fast or default)")
    parser.add_argument("--systems", default=",".join(SYSTEMS),
                        help=f"comma-separated: {', '.join(SYSTEMS)} (jax-mode: symscan in mode jax)")
    parser.add_argument("--markdown", default=str(HERE / "README.md"), help="the README whose section is rewritten")
    parser.add_argument("--jsonl", default=str(HERE / "cold_compile.jsonl"), help="where the rows go")
    args = parser.parse_args(argv)
    rows = measure(QUICK_SIZES if args.quick else SIZES, args.mode, tuple(args.systems.split(",")))
    for row in rows:
        if wrong(row):
            if row["system"] in ("symscan", "jax-mode"):
                raise AssertionError(f"cold compile: symscan's LSTM gradient differs from the numpy BPTT: {row}")
            print(f"cold compile: {row['system']}'s LSTM gradient differs from the numpy BPTT: {row}", file=sys.stderr)
    Path(args.jsonl).write_text("".join(json.dumps(r) + "\n" for r in rows))
    section = markdown(rows, args.mode)
    sections.write_section(args.markdown, section, HEADING)
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
