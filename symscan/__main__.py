"""``python -m symscan demo``: build a small graph, print it, run it in each mode."""

from __future__ import annotations

import argparse
import sys

import numpy as np


def demo() -> int:
    import symscan as ss
    import symscan.tensor as T

    x, W, b = T.vector("x"), T.matrix("W"), T.vector("b")
    y = T.tanh(T.dot(x, W) + b)
    total = y.sum()
    print("graph of tanh(x @ W + b) and its sum:")
    ss.dprint([y, total])
    rng = np.random.default_rng(0)
    values = [rng.normal(size=3), rng.normal(size=(3, 2)), rng.normal(size=2)]
    expected = np.tanh(values[0] @ values[1] + values[2])
    for mode in ("py", "fast"):
        f = ss.function([x, W, b], [y, total], mode=mode)
        out, s = f(*values)
        ok = np.allclose(out, expected) and np.isclose(s, expected.sum())
        print(f"mode={mode!r}: y={np.round(out, 4)} sum={float(s):.4f} matches numpy: {ok}")
        if not ok:
            return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m symscan")
    parser.add_argument("command", choices=["demo"], help="demo: build, print and run a small graph")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo()
    return 2


if __name__ == "__main__":
    sys.exit(main())
