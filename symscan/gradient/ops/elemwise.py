"""Pullbacks of the elementwise ops and Cast. Each gradient is summed back to its input's
shape (``sum_to``: numpy broadcasting, transposed)."""

from __future__ import annotations

from symscan.gradient.registry import pullback
from symscan.tensor.broadcast import sum_to
from symscan.tensor.elemwise import Elemwise, neg

ELEMWISE_PULLBACKS = {
    "add": lambda node, g: [g, g],
    "sub": lambda node, g: [g, neg(g)],
    "mul": lambda node, g: [g * node.inputs[1], g * node.inputs[0]],
}
"""name -> fn(node, g): the gradient w.r.t. each input before summing to its shape."""


@pullback(Elemwise)
def elemwise_pullback(node, cotangents):
    (g,) = cotangents
    rule = ELEMWISE_PULLBACKS.get(node.op.name)
    if rule is None:
        raise NotImplementedError(f"{node.op} has no gradient in symscan yet")
    return [None if d is None else sum_to(d, x) for d, x in zip(rule(node, g), node.inputs)]
