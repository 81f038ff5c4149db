"""``python -m benchmarks.accelerator``: symscan's mode jax against hand-written JAX on JAX's
default device (a GPU or TPU where there is one): what a machine with an accelerator runs.

Workloads: W4 (the Elman RNN), G4 (its gradient) and K1 (the Kalman filter's log-likelihood,
forward and its gradient), at the sizes of ``python -m benchmarks`` and ``--grad`` (smaller with
``--quick``). Systems: "jax-mode" (``ss.function(..., mode="jax")``, the optimised graph as one
``jax.jit`` function; for the gradients ``ss.grad`` first) and "jax" (``peers.py``,
``grad_peers.py``: ``jax.jit`` over ``lax.scan``, ``jax.jit(jax.grad(cost))``). Both are run by
the forward benchmarks' runner (``benchmarks.__main__.run_workload``): each result is checked
against the numpy loop (or BPTT) first, times are medians of interleaved repeats after the first
call, and both copy their results back to the host (as numpy arrays) in every call.

peers.py keeps JAX on the CPU unless ``JAX_PLATFORMS`` says otherwise (the CPU benchmarks compare
with numba and PyTensor there); here ``JAX_PLATFORMS`` unset means JAX's own choice, so this
module sets it to "" (JAX's automatic choice) before anything imports peers.py or JAX. Setting
``JAX_PLATFORMS`` (``cpu``, ``cuda``, ``tpu``) picks the device.
"""

from __future__ import annotations

import os

os.environ.setdefault("JAX_PLATFORMS", "")  # before peers.py's default ("cpu") and JAX's import

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
from datetime import date  # noqa: E402
from pathlib import Path  # noqa: E402

from benchmarks import grad_workloads, sections, workloads  # noqa: E402
from benchmarks.__main__ import run_workload  # noqa: E402

HERE = Path(__file__).resolve().parent
HEADING = "## Accelerator: mode jax against JAX"
SYSTEMS = ["jax-mode", "jax"]
NAMES = ("W4", "G4", "K1", "K1 grad")
"""The rows: forward W4 and K1 (workloads.py), gradients G4 and K1's (grad_workloads.py)."""


def selected(quick: bool, only: set[str] | None = None) -> list[tuple[str, object]]:
    """(row name, workload) for each of NAMES (those in ``only``, when given), at the sizes of the
    forward and gradient suites (their ``--quick`` sizes with ``quick``)."""
    forward = {w.name: w for w in workloads.all_workloads(quick)}
    grads = {w.name: w for w in grad_workloads.all_workloads(quick)}
    works = {"W4": forward["W4"], "G4": grads["G4"], "K1": forward["K1"], "K1 grad": grads["K1"]}
    return [(name, works[name]) for name in NAMES if not only or name in only]


def device_info() -> dict:
    """JAX's default device: the one both systems run on."""
    try:
        import jax
    except ImportError as err:
        raise SystemExit(f"benchmarks.accelerator needs jax: pip install -e '.[bench]' ({err})") from err
    device = jax.devices()[0]
    return {"device": str(device), "platform": device.platform, "device_kind": device.device_kind,
            "jax": jax.__version__}


def measure(quick: bool, repeats: int, only: set[str] | None = None) -> list[dict]:
    """One row per workload and system (printed as JSON lines as they come)."""
    from benchmarks import peers

    peers.warm_up_jax()  # JAX's one-time start, paid by neither system's first result
    rows = []
    for name, work in selected(quick, only):
        for row in run_workload(work, SYSTEMS, repeats, 2.0 if quick else 20.0):
            row["name"] = name
            print(json.dumps(row), file=sys.stderr, flush=True)
            rows.append(row)
    return rows


ABOUT = f"""{HEADING}

`python -m benchmarks.accelerator` (`--quick` for a smoke test, `--repeats N`, `--only W4,G4`) is
what a machine with a GPU (or TPU) runs, and rewrites only this section: W4 (the Elman RNN), G4
(its gradient) and K1 (the Kalman filter's log-likelihood, forward and gradient) at the sizes of
the tables above, in symscan's mode jax (`ss.function(..., mode="jax")`, after `ss.grad` for a
gradient) and in the hand-written JAX of `peers.py` and `grad_peers.py`, both on JAX's default
device (the other benchmarks keep JAX on the CPU; `JAX_PLATFORMS` picks another). The runner is
`python -m benchmarks`'s: every result is checked against the numpy loop (or BPTT) before it is
timed; times are medians of interleaved repeats, each call copying its results back to the host.
JAX's one-time start (its runtime; its LAPACK kernels import scipy) runs before any timing, so
neither system's first result pays it. Everything is float64 (consumer GPUs run it far slower
than float32).
"""


def markdown(rows: list[dict], device: dict, quick: bool) -> str:
    """This section of benchmarks/README.md for one run."""
    by = {(r["name"], r["system"]): r for r in rows}

    def cell(name: str, system: str, key: str, scale: float) -> str:
        row = by.get((name, system))
        return "-" if row is None else f"{row[key] * scale:.3g}"

    def ratio(name: str) -> str:
        a, b = by.get((name, "jax-mode")), by.get((name, "jax"))
        return f"{a['median_s'] / b['median_s']:.2f}" if a and b else "-"

    lines = [ABOUT, f"Run on {date.today().isoformat()}: device {device['device']} (platform {device['platform']}, "
             f"kind {device['device_kind']}), JAX {device['jax']}, {platform.platform()}, "
             f"Python {platform.python_version()}" + (" (quick sizes)" if quick else ""), "",
             "Median run time in ms and time to first result in s (building, compiling, first call):", "",
             "| workload | jax-mode ms | JAX ms | jax-mode/JAX | jax-mode first s | JAX first s |",
             "|---|---|---|---|---|---|"]
    for name in dict.fromkeys(r["name"] for r in rows):
        description = next(r["description"] for r in rows if r["name"] == name)
        label = name.split()[0]
        lines.append(f"| {label} {description} | {cell(name, 'jax-mode', 'median_s', 1e3)} | "
                     f"{cell(name, 'jax', 'median_s', 1e3)} | {ratio(name)} | "
                     f"{cell(name, 'jax-mode', 'first_result_s', 1)} | {cell(name, 'jax', 'first_result_s', 1)} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.accelerator", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the suites' small sizes and 3 repeats (a smoke test)")
    parser.add_argument("--repeats", type=int, default=None, help="timed calls per system (default 15; 3 with --quick)")
    parser.add_argument("--only", default="", help=f"comma-separated rows of {', '.join(NAMES)}")
    parser.add_argument("--markdown", default=str(HERE / "README.md"), help="the README whose section is rewritten")
    parser.add_argument("--jsonl", default=str(HERE / "accelerator.jsonl"), help="where the rows go")
    args = parser.parse_args(argv)
    only = {name.strip() for name in args.only.split(",") if name.strip()}
    if only - set(NAMES):
        parser.error(f"--only: unknown {sorted(only - set(NAMES))}; use {', '.join(NAMES)}")
    device = device_info()
    print(f"device: {device['device']} (platform {device['platform']}, kind {device['device_kind']}), "
          f"JAX {device['jax']}", flush=True)
    repeats = args.repeats if args.repeats is not None else (3 if args.quick else 15)
    rows = measure(args.quick, repeats, only)
    Path(args.jsonl).write_text("".join(json.dumps(dict(r, **device)) + "\n" for r in rows))
    section = markdown(rows, device, args.quick)
    sections.write_section(args.markdown, section, HEADING)
    print(section[len(ABOUT):].lstrip("\n"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
