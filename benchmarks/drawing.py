"""How long ``ss.draw`` takes on a real graph of about 500 nodes (issue 24: under a second).

The graph is the compiled gradient of a stacked Elman RNN (four layers, each a loop) under a
four-layer MLP read-out, about 530 nodes: symscan ops only, forward and backward loops, and the
shape plumbing a gradient brings. Each stage is timed on its own, median of 5 after a warm-up:
building the view (what is drawn), the layout (graphviz dot), the SVG, and the interactive HTML
page (which lays out and renders every state of its loops), with the plumbing folded (the
default) and drawn.

    python -m benchmarks.drawing                              # the table
    python -m benchmarks.drawing --picture docs/rnn_gradient.svg   # the README's picture

``--picture`` writes the README's RNN gradient drawn with defaults (no timing).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from datetime import date
from pathlib import Path

import symscan as ss
import symscan.tensor as T
from symscan.drawing import Drawing
from symscan.drawing.html import render_page
from symscan.drawing.layout import lay_out
from symscan.drawing.svg import render_svg
from symscan.drawing.view import build_view

REPEATS = 5
PICTURE = Path(__file__).resolve().parents[1] / "docs" / "rnn_gradient.svg"


def readme_rnn_gradient():
    """The README's Elman RNN and its gradient, compiled (the issue's example, about 150 nodes)."""
    X, W_in, W_h, b, h0 = T.tensor3("X"), T.matrix("W_in"), T.matrix("W_h"), T.vector("b"), T.matrix("h0")
    hs, _ = ss.scan(lambda x_t, h, W_in, W_h, b: T.tanh(T.dot(x_t, W_in) + T.dot(h, W_h) + b),
                    sequences=X, outputs_info=h0, non_sequences=[W_in, W_h, b])
    return ss.function([X, W_in, W_h, b, h0], [hs[-1]] + ss.grad((hs ** 2).sum(), [W_in, W_h]))


def write_picture(path: str | Path = PICTURE) -> str:
    """The README's picture: the RNN gradient drawn with defaults, as SVG."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return ss.draw(readme_rnn_gradient(), str(path))


def stacked_rnn_gradient(layers: int = 4, readout: int = 4):
    """The gradient of a stacked Elman RNN under an MLP read-out, w.r.t. every weight, compiled."""
    X, y = T.tensor3("X"), T.matrix("y")
    weights, hs = [], X
    for layer in range(layers):
        W_in, W_h, b = T.matrix(f"W_in{layer}"), T.matrix(f"W_h{layer}"), T.vector(f"b{layer}")
        h0 = T.matrix(f"h0_{layer}")
        hs, _ = ss.scan(lambda x_t, h, W_in, W_h, b: T.tanh(T.dot(x_t, W_in) + T.dot(h, W_h) + b),
                        sequences=hs, outputs_info=h0, non_sequences=[W_in, W_h, b], name=f"layer{layer}")
        weights += [W_in, W_h, b, h0]
    out = hs[-1]
    for layer in range(readout):
        W, c = T.matrix(f"W_out{layer}"), T.vector(f"c{layer}")
        out = T.tanh(T.dot(out, W) + c)
        weights += [W, c]
    cost = ((out - y) ** 2).mean()
    return ss.function([X, y] + weights, [cost] + ss.grad(cost, weights))


def node_count(function) -> tuple[int, int]:
    """Apply nodes of the outer graph, and of every loop body (nested ones included)."""
    outer = list(function.fgraph.apply_nodes)
    inner, stack = 0, [n for n in outer if hasattr(n.op, "inner_graphs")]
    while stack:
        for graph in stack.pop().op.inner_graphs():
            nodes = list(graph.apply_nodes)
            inner += len(nodes)
            stack += [n for n in nodes if hasattr(n.op, "inner_graphs")]
    return len(outer), inner


def median_ms(run) -> float:
    run()  # warm-up (imports, caches)
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def stages(function, plumbing: bool) -> dict[str, float]:
    """Median ms of each stage of ``ss.draw(function, loops="open")`` (every node drawn)."""
    view = build_view(function, loops="open", plumbing=plumbing)
    layout = lay_out(view)
    drawing = Drawing(function, loops="open", plumbing=plumbing)
    row = {"items": len(view.items), "edges": len(view.edges), "loops": len(view.loops),
           "view": median_ms(lambda: build_view(function, loops="open", plumbing=plumbing)),
           "layout": median_ms(lambda: lay_out(view)),
           "svg": median_ms(lambda: render_svg(layout)),
           "draw+svg": median_ms(lambda: Drawing(function, loops="open", plumbing=plumbing).svg())}
    drawing.layout  # noqa: B018 (the page reuses the drawing's own layout; time the rest)
    row["html"] = median_ms(lambda: render_page(drawing))
    return row


def table(function) -> str:
    outer, inner = node_count(function)
    lines = [f"Run on {date.today().isoformat()}: {platform.platform()}, Python {platform.python_version()}, "
             f"load average {os.getloadavg()[0]:.2f}",
             f"Graph: the compiled gradient of a 4-layer stacked Elman RNN under a 4-layer MLP read-out: "
             f"{outer} outer + {inner} loop-body nodes = {outer + inner} nodes.", "",
             "Median of 5, ms; every loop drawn open (`loops=\"open\"`); `draw+svg` is `ss.draw(f).svg()` end to "
             "end (view, layout, SVG); `html` is the interactive page (every state of its loops laid out).", "",
             "| plumbing | items | edges | loops | view | layout | svg | draw+svg | html |", "|---" * 9 + "|"]
    for plumbing in (False, True):
        r = stages(function, plumbing)
        lines.append(f"| {'drawn' if plumbing else 'folded'} | {r['items']} | {r['edges']} | {r['loops']} | "
                     f"{r['view']:.0f} | {r['layout']:.0f} | {r['svg']:.0f} | {r['draw+svg']:.0f} | {r['html']:.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--picture", help="write the README's picture (the RNN gradient, defaults) there and stop")
    args = parser.parse_args(argv)
    if args.picture:
        print(write_picture(args.picture))
        return
    print(table(stacked_rnn_gradient()))


if __name__ == "__main__":
    main()
