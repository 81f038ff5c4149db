"""``verify_grad``: Theano's check of a gradient against finite differences.

The output is projected to a scalar with random weights in [0.5, 1.5); the numeric gradient
is a one-sided difference with a step per dtype; the check fails when, at the worst element,
both the absolute and the relative error exceed the dtype's tolerance.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from symscan.gradient.grad import grad
from symscan.tensor.basic import constant, tensor
from symscan.tensor.math import sum as reduce_sum

EPS = {"float64": 1e-7, "float32": 3e-4, "float16": 1e-1}
TOLERANCE = {"float64": 1e-4, "float32": 1e-2, "float16": 5e-2}

_function_builder: Callable | None = None


def set_function_builder(builder: Callable) -> None:
    """Plug in ``function(inputs, outputs, mode=...)`` (``symscan.compile`` does, as for eval)."""
    global _function_builder
    _function_builder = builder


class GradientError(ValueError):
    """The symbolic gradient and the finite differences disagree (Theano's ``verify_grad.E_grad``)."""

    def __init__(self, arg: int, err_pos: int, shape: tuple, val1: float, val2: float, abs_err: float,
                 rel_err: float, abs_tol: float, rel_tol: float):
        self.arg, self.err_pos, self.shape = arg, err_pos, shape
        self.val1, self.val2, self.abs_err, self.rel_err = val1, val2, abs_err, rel_err
        self.abs_tol, self.rel_tol = abs_tol, rel_tol
        super().__init__(f"verify_grad: the gradient w.r.t. input {arg} (shape {shape}) differs from finite "
                         f"differences at flat position {err_pos}: symbolic {val1!r}, numeric {val2!r} (abs error "
                         f"{abs_err:.3g} > {abs_tol:.3g} and rel error {rel_err:.3g} > {rel_tol:.3g})")


def verify_grad(fun: Callable, pt, n_tests: int = 2, rng=None, eps: float | None = None, out_type=None,
                abs_tol: float | None = None, rel_tol: float | None = None, mode=None,
                cast_to_output_type: bool = False, no_debug_ref: bool = True) -> None:
    """Raise GradientError unless the gradient of ``fun`` at the point ``pt`` (a list of float
    arrays) agrees with finite differences (see the module docstring)."""
    if _function_builder is None:
        raise RuntimeError("verify_grad needs symscan.compile: `import symscan` first")
    pt = [np.array(p) for p in (pt if isinstance(pt, (list, tuple)) else [pt])]
    for i, p in enumerate(pt):
        if p.dtype.name not in EPS:
            raise TypeError(f"verify_grad: pt[{i}] is {p.dtype}; the point must be float16/32/64 arrays "
                            "(cast it with .astype('float64'))")
    rng = rng if rng is not None else np.random.default_rng()
    inputs = [tensor(p.dtype.name, tuple(1 if n == 1 else None for n in p.shape), name=f"input {i}")
              for i, p in enumerate(pt)]
    output = fun(*inputs)
    if isinstance(output, (list, tuple)):
        raise TypeError("verify_grad: fun must return one variable; project several outputs to one first")
    dtype = max((p.dtype for p in pt), key=lambda d: d.itemsize).name
    step = EPS[dtype] if eps is None else eps
    abs_tol = TOLERANCE[dtype] if abs_tol is None else abs_tol
    rel_tol = TOLERANCE[dtype] if rel_tol is None else rel_tol
    value_fn = _function_builder(inputs, output, mode=mode)
    out_shape = np.shape(value_fn(*pt))
    for _ in range(n_tests):
        projection = constant(rng.uniform(0.5, 1.5, size=out_shape).astype(output.dtype))
        cost = reduce_sum(projection * output)
        cost_fn = _function_builder(inputs, cost, mode=mode)
        grad_fn = _function_builder(inputs, grad(cost, inputs, disconnected_inputs="ignore"), mode=mode)
        analytic = [np.asarray(g) for g in grad_fn(*pt)]
        numeric = _one_sided(cost_fn, pt, step)
        for arg, (a, n) in enumerate(zip(analytic, numeric)):
            _compare(arg, a, n, abs_tol, rel_tol)


def _one_sided(cost_fn: Callable, pt: list, step: float) -> list[np.ndarray]:
    base = float(cost_fn(*pt))
    grads = []
    for i, p in enumerate(pt):
        g = np.zeros(p.shape)
        for k in range(p.size):
            shifted = p.copy()
            shifted.flat[k] += step
            g.flat[k] = (float(cost_fn(*pt[:i], shifted, *pt[i + 1:])) - base) / step
        grads.append(g)
    return grads


def _compare(arg: int, analytic: np.ndarray, numeric: np.ndarray, abs_tol: float, rel_tol: float) -> None:
    if analytic.shape != numeric.shape:
        raise GradientError(arg, -1, numeric.shape, np.nan, np.nan, np.inf, np.inf, abs_tol, rel_tol)
    if analytic.size == 0:
        return
    abs_err = np.abs(analytic - numeric)
    rel_err = abs_err / np.maximum(np.abs(analytic) + np.abs(numeric), 1e-8)
    both = np.minimum(abs_err / abs_tol, rel_err / rel_tol)
    worst = int(np.argmax(both))
    if both.flat[worst] > 1:
        raise GradientError(arg, worst, numeric.shape, float(analytic.flat[worst]), float(numeric.flat[worst]),
                            float(abs_err.flat[worst]), float(rel_err.flat[worst]), abs_tol, rel_tol)
