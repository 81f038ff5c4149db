"""A run-time check for scans built without a loop (a constant n_steps of 1)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Apply, Op
from symscan.scan.parse import too_short_message
from symscan.tensor.basic import as_tensor_variable


@dataclass(frozen=True)
class CheckSequenceLength(Op):
    """Pass a sequence through, or raise scan's "too short" error naming it.

    The loop checks its sequences itself; an unrolled step reads them directly, so this
    node keeps the same error (which sequence, its length, its taps, the steps needed).
    """

    label: str
    taps: tuple
    steps: int

    @property
    def span(self) -> int:
        return max(max(self.taps), 0) - min(min(self.taps), 0)

    def make_node(self, x) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x], [x.type])

    def perform(self, node, inputs):
        length = np.shape(inputs[0])[0]
        if length < self.steps + self.span:
            raise ValueError(too_short_message(self.label, length, self.taps, self.steps, self.span))
        return [inputs[0]]

    def __str__(self) -> str:
        return f"CheckSequenceLength{{{self.label}}}"
