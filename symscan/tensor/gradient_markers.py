"""Identity ops that change only the gradient flowing through them (Theano's ``zero_grad``,
``disconnected_grad``, ``undefined_grad``, ``grad_clip``, ``grad_scale``).

Their forward value is their first input; ``symscan.gradient`` reads ``kind`` to pull the
gradient back. Once a function is compiled they are plain identities (canonicalize removes
them), so they cost nothing at run time.
"""

from __future__ import annotations

from dataclasses import dataclass

from symscan.graph.basic import Apply, Op
from symscan.tensor.basic import as_tensor_variable

KINDS = ("zero", "disconnected", "undefined", "clip", "scale")


@dataclass(frozen=True)
class GradientMarker(Op):
    """``x`` unchanged; ``kind`` says what happens to its gradient. Inputs: x, then the
    parameters of the kind (``clip``: lower, upper; ``scale``: the factor)."""

    kind: str

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"GradientMarker: unknown kind {self.kind!r}; use one of {KINDS}")

    def make_node(self, x, *params) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x] + [as_tensor_variable(p) for p in params], [x.type])

    def perform(self, node, inputs):
        return [inputs[0]]

    def __str__(self) -> str:
        return f"{self.kind.capitalize()}Grad" if self.kind in ("zero", "disconnected", "undefined") \
            else f"Grad{self.kind.capitalize()}"
