"""``until(condition)``: returned last by a scan's fn, it makes the loop a while loop."""

from __future__ import annotations

from symscan.graph.basic import describe
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.elemwise import cast


class until:  # noqa: N801  (Theano's name)
    """Stop the loop after the step at which ``condition`` (a scalar) is true."""

    def __init__(self, condition):
        cond = as_tensor_variable(condition)
        if cond.ndim != 0:
            raise TypeError(f"until: the condition must be a scalar, got {describe(cond)}; "
                            "reduce it first, e.g. with .all() or .any()")
        self.condition = cast(cond, "bool")

    def __repr__(self) -> str:
        return f"until({self.condition!r})"
