"""``python -m benchmarks.node_counts``: how many apply nodes the compiled (optimised) graphs of
gradients have, symscan against PyTensor (issue 25: every elementwise op is its own node and
its own pass over memory; PyTensor fuses chains into Composite ops).

Counted: the nodes of the function's optimised outer graph, and apart from them the nodes of
its loop bodies (each Scan's inner graph, nested ones included). A fused elementwise op counts
as one node in both. symscan: ``len(f.fgraph.apply_nodes)``; PyTensor:
``len(f.maker.fgraph.apply_nodes)`` in its default mode (Numba; the count is taken before the
first call, so nothing is compiled), its Scan bodies as the rewrites left them (``op.fgraph``).
"""

from __future__ import annotations

import argparse
import platform
import sys
from datetime import date
from pathlib import Path

import symscan as ss
import symscan.tensor as T
from benchmarks import grad_workloads, peers, sections
from symscan.scan.op import Scan

HERE = Path(__file__).resolve().parent
HEADING = "## Node counts of compiled gradients"
MODES = ("fast", "numba")
GRADIENT_WORKLOADS = ("G3", "G4", "G5", "G7", "G10", "K1")


# ---------------------------------------------------------------------------- the two small models
def logistic_regression_symscan() -> tuple[list, list]:
    """Mean binary cross-entropy of sigmoid(X @ w + b) against y; gradient w.r.t. w, b."""
    X, y, w, b = T.matrix("X"), T.vector("y"), T.vector("w"), T.scalar("b")
    p = T.sigmoid(T.dot(X, w) + b)
    cost = -(y * T.log(p) + (1 - y) * T.log(1 - p)).mean()
    return [X, y, w, b], ss.grad(cost, [w, b])


def logistic_regression_pytensor(pt, pytensor) -> tuple[list, list]:
    X, y = pt.matrix("X", dtype="float64"), pt.vector("y", dtype="float64")
    w, b = pt.vector("w", dtype="float64"), pt.scalar("b", dtype="float64")
    p = pt.sigmoid(pt.dot(X, w) + b)
    cost = -(y * pt.log(p) + (1 - y) * pt.log(1 - p)).mean()
    return [X, y, w, b], pytensor.grad(cost, [w, b])


def softmax_cross_entropy_symscan() -> tuple[list, list]:
    """Mean of -log softmax(X @ W + b)[i, y_i]; gradient w.r.t. W, b."""
    X, y, W, b = T.matrix("X"), T.ivector("y"), T.matrix("W"), T.vector("b")
    p = T.softmax(T.dot(X, W) + b)
    cost = -T.log(p[T.arange(y.shape[0]), y]).mean()
    return [X, y, W, b], ss.grad(cost, [W, b])


def softmax_cross_entropy_pytensor(pt, pytensor) -> tuple[list, list]:
    from pytensor.tensor.special import softmax

    X, y = pt.matrix("X", dtype="float64"), pt.ivector("y")
    W, b = pt.matrix("W", dtype="float64"), pt.vector("b", dtype="float64")
    p = softmax(pt.dot(X, W) + b, axis=-1)
    cost = -pt.log(p[pt.arange(y.shape[0]), y]).mean()
    return [X, y, W, b], pytensor.grad(cost, [W, b])


MODELS = {"logistic regression, d mean BCE/d(w, b)": (logistic_regression_symscan, logistic_regression_pytensor),
          "softmax cross-entropy, d mean NLL/d(W, b)": (softmax_cross_entropy_symscan, softmax_cross_entropy_pytensor)}


# ---------------------------------------------------------------------------- counting
def symscan_count(function) -> tuple[int, int]:
    """(outer nodes, loop-body nodes) of a compiled symscan function."""
    outer = list(function.fgraph.apply_nodes)
    inner, stack = 0, [n for n in outer if isinstance(n.op, Scan)]
    while stack:
        for graph in stack.pop().op.inner_graphs():
            inner += len(graph.apply_nodes)
            stack += [n for n in graph.apply_nodes if isinstance(n.op, Scan)]
    return len(outer), inner


def pytensor_count(function) -> tuple[int, int]:
    """(outer nodes, Scan-body nodes) of a compiled PyTensor function."""
    from pytensor.scan.op import Scan as PyTensorScan

    outer = list(function.maker.fgraph.apply_nodes)
    inner, stack = 0, [n for n in outer if isinstance(n.op, PyTensorScan)]
    while stack:
        nodes = list(stack.pop().op.fgraph.apply_nodes)
        inner += len(nodes)
        stack += [n for n in nodes if isinstance(n.op, PyTensorScan)]
    return len(outer), inner


def counts_of_model(symscan_builder, pytensor_builder, with_pytensor: bool) -> dict:
    counts = {}
    for mode in MODES:
        inputs, grads = symscan_builder()
        counts[mode] = symscan_count(ss.function(inputs, grads, mode=mode))
    if with_pytensor:
        import pytensor
        import pytensor.tensor as pt

        inputs, grads = pytensor_builder(pt, pytensor)
        counts["pytensor"] = pytensor_count(pytensor.function(inputs, grads))
    return counts


def counts_of_workload(work: grad_workloads.GradWorkload, with_pytensor: bool) -> dict:
    """The gradient functions the benchmarks time (grad_workloads.make_system), counted."""
    counts = {mode: symscan_count(grad_workloads.make_system(mode, work)) for mode in MODES}
    if with_pytensor:
        counts["pytensor"] = pytensor_count(grad_workloads.make_system("pytensor", work))
    return counts


def measure(quick: bool = False, with_pytensor: bool | None = None, workloads: tuple = GRADIENT_WORKLOADS) -> list:
    """[(description, {system: (outer, inner)})]: the two models, then the G-workloads (quick sizes
    with ``quick``; the graphs' structure does not depend on the sizes, except where a rewrite
    keys on a static length)."""
    if with_pytensor is None:
        with_pytensor = peers.available()["pytensor"]
    rows = [(name, counts_of_model(*builders, with_pytensor)) for name, builders in MODELS.items()]
    for work in grad_workloads.all_workloads(quick):
        if work.name in workloads:
            rows.append((f"{work.name} {work.description}", counts_of_workload(work, with_pytensor)))
    return rows


# ---------------------------------------------------------------------------- the README section
ABOUT = f"""{HEADING}

`python -m benchmarks.node_counts` (`--quick`: the G-workloads at their quick sizes; `--no-pytensor`)
rewrites only this section: the number of apply nodes in the compiled (optimised) graph of each
gradient function, symscan in modes fast and numba and PyTensor in its default mode, as
"outer + loop bodies" (the function's graph, then the nodes of every Scan's inner graph). The
logistic regression and softmax cross-entropy gradients have no loop; the G-workloads are the
gradient functions the gradient benchmarks time (`grad_workloads.py`, `grad_peers.py`). The
issue's target: symscan at or below PyTensor.
"""


def cell(count: tuple[int, int] | None) -> str:
    if count is None:
        return "-"
    outer, inner = count
    return f"{outer} + {inner}" if inner else f"{outer}"


def markdown(rows: list, quick: bool) -> str:
    lines = [ABOUT, f"Run on {date.today().isoformat()}: Python {platform.python_version()}"
             + (" (quick sizes)" if quick else ""), "",
             "| gradient | symscan fast | symscan numba | PyTensor |", "|---|---|---|---|"]
    for name, counts in rows:
        lines.append(f"| {name} | " + " | ".join(cell(counts.get(s)) for s in MODES + ("pytensor",)) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.node_counts", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the G-workloads at their quick sizes")
    parser.add_argument("--no-pytensor", action="store_true", help="symscan only")
    parser.add_argument("--markdown", default=str(HERE / "README.md"), help="the README whose section is rewritten")
    args = parser.parse_args(argv)
    rows = measure(args.quick, False if args.no_pytensor else None)
    section = markdown(rows, args.quick)
    sections.write_section(args.markdown, section, HEADING)
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
