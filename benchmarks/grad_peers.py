"""The gradient workloads in PyTensor and JAX: the forward graphs of benchmarks/peers.py (imported,
not copied), the same cost (the sum of the squares of every output, or the one output itself for a
log-likelihood), and PyTensor's ``grad``
(default mode) or ``jax.jit(jax.grad(...))`` (the forward being a ``lax.scan``)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from benchmarks import peers


def pytensor_grad_function(name: str, wrt: list[int], params: dict, mode: str | None = None,
                           squared: bool = True) -> Callable:
    """PyTensor's gradient of workload ``name``'s cost w.r.t. its inputs at positions ``wrt``
    (mode None: PyTensor's default; ``squared`` False: the cost is the one output itself)."""
    import pytensor
    import pytensor.tensor as pt

    inputs, outputs = peers._PYTENSOR[name](pt, pytensor, params)
    outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    cost = sum((out ** 2).sum() for out in outputs) if squared else outputs[0]
    grads = pytensor.grad(cost, [inputs[i] for i in wrt])
    kwargs = {} if mode is None else {"mode": mode}
    return pytensor.function(inputs, grads, **kwargs)


def jax_grad_function(name: str, wrt: list[int], params: dict, squared: bool = True) -> Callable:
    """``jax.jit(jax.grad(cost, argnums=wrt))`` for workload ``name`` (float64 enabled)."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    forward = peers._JAX[name](params)
    if isinstance(forward, tuple):
        raise ValueError(f"{name}: no JAX gradient for a workload whose result is post-processed outside jit")

    def cost(*args):
        out = forward(*args)
        if not squared:
            return out
        return sum(jnp.sum(o ** 2) for o in (out if isinstance(out, (list, tuple)) else [out]))

    jitted = jax.jit(jax.grad(cost, argnums=tuple(wrt)))

    def run(*args):
        return [np.asarray(g) for g in jitted(*args)]

    return run
