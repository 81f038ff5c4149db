"""The pullback (vector-Jacobian product) of each op, in a table keyed by op class, as the
backends keep theirs.

A pullback is ``fn(node, cotangents) -> input gradients``: ``cotangents[j]`` is the gradient
of the cost w.r.t. ``node.outputs[j]`` (None when no gradient reaches that output), and the
result has one entry per input: a variable, None for an input the outputs do not depend on
(disconnected, e.g. a shape argument), or ``grad_undefined(...)``. A connection pattern
(``@connections``) says which inputs each output depends on; by default every input reaches
every output (a pullback's None for an input the pattern connects counts as zero).

Pullbacks are asked through integer outputs too (their cotangent is a float, zeros where
only zeros arrived), as in Theano: ``grad`` takes what they return there as zero unless it
is undefined, which is how a discrete random draw's undefined gradient is found.
"""

from __future__ import annotations

from collections.abc import Callable

from symscan.graph.basic import Apply
from symscan.graph.traversal import toposort

PULLBACKS: dict[type, Callable] = {}
CONNECTIONS: dict[type, Callable] = {}


def pullback(*op_classes: type) -> Callable:
    """Register ``fn(node, cotangents)`` as the pullback of nodes of these op classes."""

    def register(fn: Callable) -> Callable:
        for cls in op_classes:
            PULLBACKS[cls] = fn
        return fn

    return register


def connections(*op_classes: type) -> Callable:
    """Register ``fn(node) -> [[input i reaches output j]]`` for nodes of these op classes."""

    def register(fn: Callable) -> Callable:
        for cls in op_classes:
            CONNECTIONS[cls] = fn
        return fn

    return register


def connection_pattern(node: Apply) -> list[list[bool]]:
    """For each input, for each output: whether the output depends on that input
    (differentiably or not: an integer output still depends on its inputs)."""
    fn = CONNECTIONS.get(type(node.op))
    if fn is not None:
        return fn(node)
    return [[True] * len(node.outputs) for _ in node.inputs]


def pullback_of(node: Apply) -> Callable:
    fn = PULLBACKS.get(type(node.op))
    if fn is None:
        raise NotImplementedError(f"{node.op} has no gradient in symscan yet (no pullback registered for "
                                  f"{type(node.op).__name__}); differentiate a graph without it, or wrap it in "
                                  "ss.disconnected_grad if its gradient is not needed")
    return fn


def connected_inputs(inputs: list, outputs: list) -> dict:
    """For each variable between ``inputs`` and ``outputs``, the inputs it depends on through
    connected op inputs (``disconnected_grad`` cuts, as in ``grad``)."""
    found = {v: frozenset([v]) for v in inputs}
    for node in toposort(outputs, stop_at=inputs):
        pattern = connection_pattern(node)
        for j, out in enumerate(node.outputs):
            found[out] = frozenset().union(*(found.get(v, frozenset()) for v, row in zip(node.inputs, pattern)
                                             if row[j]))
    return found
