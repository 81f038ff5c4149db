"""Fixtures for the gradient tests: ``grad_check(fun, *points)`` checks the gradient of
``sum(u * fun(*inputs))`` (``u`` fixed random weights) against central finite differences in
float64, with ``ss.verify_grad`` too, and the same gradient in modes py, fast and onnxruntime."""

import numpy as np
import pytest
from gradient_checks import central_differences

import symscan as ss
import symscan.tensor as T

GRAD_MODES = ("py", "fast", "onnxruntime")


def symbolic_inputs(points: list, static: bool = False) -> list:
    """Variables for ``points``: their dtype, shapes unknown (``static``: the exact shape)."""
    return [T.tensor(p.dtype.name, p.shape if static else (None,) * p.ndim, name=f"x{i}") for i, p in enumerate(points)]


class GradCheck:
    def __call__(self, fun, *points, modes=GRAD_MODES, rtol: float = 1e-6, atol: float = 1e-7, verify: bool = True,
                 static: bool = False, wrt=None, seed: int = 0):
        """Check the gradient of ``fun`` at ``points`` (float64 arrays); returns mode "py"'s
        gradients. ``wrt``: positions of the points to differentiate (default: all)."""
        points = [np.asarray(p) for p in points]
        wrt = list(range(len(points))) if wrt is None else list(wrt)
        inputs = symbolic_inputs(points, static)
        out = fun(*inputs)
        shape = np.shape(ss.function(inputs, out, mode="py")(*points))
        weights = np.random.default_rng(seed).uniform(0.5, 1.5, size=shape)
        cost = (T.constant(weights) * out).sum()
        value = ss.function(inputs, cost, mode="py")
        grads = ss.grad(cost, [inputs[i] for i in wrt])
        results = {}
        for mode in modes:
            results[mode] = [np.asarray(g) for g in ss.function(inputs, grads, mode=mode)(*points)]
        expected = central_differences(lambda *ps: float(value(*ps)), points, wrt=wrt)
        for mode, got in results.items():
            for i, g in zip(wrt, got):
                assert g.shape == points[i].shape, f"{mode}: gradient shape {g.shape} for input shape {points[i].shape}"
                assert g.dtype.kind == "f", f"{mode}: gradient dtype {g.dtype}"
                if expected[i] is not None:  # (no finite differences of an integer input)
                    np.testing.assert_allclose(g, expected[i], rtol=rtol, atol=atol,
                                               err_msg=f"mode {mode}, input {i}: against central differences")
                np.testing.assert_allclose(g, results["py"][wrt.index(i)] if "py" in results else g, rtol=1e-9,
                                           atol=1e-12, err_msg=f"mode {mode}, input {i}: against mode py")
        if verify and all(p.dtype.kind == "f" for p in points) and len(wrt) == len(points):
            ss.verify_grad(fun, points, rng=np.random.default_rng(seed), mode="py")
        return results.get("py")


@pytest.fixture
def grad_check():
    """``grad_check(fun, *points, ...)``: see ``GradCheck.__call__``."""
    return GradCheck()
