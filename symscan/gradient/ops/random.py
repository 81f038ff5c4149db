"""The pullback of a random draw: undefined w.r.t. its distribution's parameters (a sample
is not a differentiable function of them); the generator and the size are disconnected."""

from __future__ import annotations

from symscan.gradient.registry import connections, pullback
from symscan.gradient.types import grad_undefined
from symscan.tensor.random import RandomVariable


@connections(RandomVariable)
def random_connections(node):
    """Outputs: the advanced generator, the draw. Only the parameters reach the draw."""
    return [[False, i >= 2] for i in range(len(node.inputs))]


@pullback(RandomVariable)
def random_pullback(node, cotangents):
    rng, size, *params = node.inputs
    return [None, None] + [grad_undefined(node.op, 2 + i, p, "no gradient is defined through a random draw")
                           for i, p in enumerate(params)]
