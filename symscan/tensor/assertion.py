"""``Assert``: a value passed through once run-time conditions hold (Theano's ``Assert``).

Imported ONNX models carry checks this way: symscan's own exported guards (an ``If`` whose
failing branch names the error) come back as ``Assert`` nodes with the same message, and
export writes them as guards again. Rewrites keep the node (constant folding only folds it
when the conditions hold; canonicalize drops conditions that are constant True).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Apply, Op, Variable, describe
from symscan.tensor.basic import as_tensor_variable


@dataclass(frozen=True)
class Assert(Op):
    """``value`` once every condition (a bool scalar) is true; else ``error(message)``
    (``ValueError``, or the error the check stands for: ``IndexError`` for ``x[-1]`` of an
    empty ``x`` whose gradient no longer indexes it)."""

    message: str
    error: type = ValueError

    def make_node(self, value, *conditions) -> Apply:
        value = as_tensor_variable(value)
        conditions = [as_tensor_variable(c) for c in conditions]
        for position, cond in enumerate(conditions):
            if cond.ndim != 0 or cond.dtype != "bool":
                raise TypeError(f"assert_that: condition {position} must be a bool scalar, got {describe(cond)}; "
                                "compare or reduce it to one (e.g. T.all(x > 0))")
        return Apply(self, [value, *conditions], [value.type.clone()])

    def perform(self, node, inputs):
        check_conditions(self.message, inputs[1:], self.error)
        return [inputs[0]]

    def __str__(self) -> str:
        return "Assert"


def check_conditions(message: str, conditions, error: type = ValueError) -> None:
    """The run-time check (the backends call it too, for one message)."""
    if not all(bool(np.asarray(c)) for c in conditions):
        raise error(message)


def assert_that(value, *conditions, message: str, error: type = ValueError) -> Variable:
    """``value``, checked at run time: an ``error(message)`` unless every condition holds."""
    if not conditions:
        return as_tensor_variable(value)
    return Assert(message, error)(value, *conditions)
