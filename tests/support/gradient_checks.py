"""Central differences for the gradient tests, in one place (conftest and the scan gradient
files use them)."""

import numpy as np


def central_difference(f, points: list, i: int, step: float = 1e-6) -> np.ndarray:
    """d f / d points[i], entry by entry: (f(p + h) - f(p - h)) / 2h, with points[i] as floats."""
    p = np.asarray(points[i], dtype=float)
    g = np.zeros(p.shape)
    for k in range(p.size):
        plus, minus = p.copy(), p.copy()
        plus.flat[k] += step
        minus.flat[k] -= step
        g.flat[k] = (f(*points[:i], plus, *points[i + 1:]) - f(*points[:i], minus, *points[i + 1:])) / (2 * step)
    return g


def central_differences(f, points: list, step: float = 1e-6, wrt=None) -> list:
    """d f / d point for the float points at positions ``wrt`` (default: every float point);
    None for the others."""
    return [central_difference(f, points, i, step)
            if np.asarray(p).dtype.kind == "f" and (wrt is None or i in wrt) else None
            for i, p in enumerate(points)]
