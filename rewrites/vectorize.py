"""Turning per-step inner computation into one computation over all steps.

``vectorize`` rebuilds an inner variable in the outer graph where some inner variables
("stacked") are replaced by arrays with a leading time axis (row t is the value at step t)
and others ("invariant") by their outer values. It handles the ops whose batched form is
the same op with a leading axis: elementwise ops, casts, dot/matmul with the stacked operand
first, dimshuffles and reductions; and ``W @ x_t`` for a per-step vector ``x_t`` (as
``X @ W.T``). Anything else raises ``NotVectorizable``.
"""

from __future__ import annotations

from symscan.graph.basic import Constant, Variable
from symscan.tensor.elemwise import Cast, Elemwise
from symscan.tensor.math import Dot, MatMul, Reduce
from symscan.tensor.shape import DimShuffle, dimshuffle


class NotVectorizable(Exception):
    """The variable's computation has an op without a known batched form."""


def vectorizable(op) -> bool:
    return isinstance(op, (Elemwise, Cast, Dot, MatMul, DimShuffle, Reduce))


def batchable(op, inputs: list[Variable], is_stacked: list[bool]) -> bool:
    """Whether ``op`` on the per-step ``inputs`` has a batched form when the flagged ones
    vary per step (a product has one only for some operand ranks and positions)."""
    if not vectorizable(op):
        return False
    if not isinstance(op, (Dot, MatMul)) or not any(is_stacked):
        return True
    (a, b), (a_stacked, b_stacked) = inputs, is_stacked
    if a_stacked:
        return not b_stacked and a.ndim > 0 and not (isinstance(op, MatMul) and b.ndim > 2)
    return b.ndim == 1 and a.ndim in (1, 2)  # W @ x_t is X @ W.T


def with_time_axis(var: Variable, ndim: int) -> Variable:
    """A stacked operand with length-1 axes after time so that it has ``ndim + 1`` dims (so that
    it broadcasts, row by row, against per-step values of ``ndim`` dimensions)."""
    missing = ndim - (var.ndim - 1)
    if missing <= 0:
        return var
    return dimshuffle(var, [0] + ["x"] * missing + list(range(1, var.ndim)))


def vectorize(var: Variable, stacked: dict[Variable, Variable], invariant: dict[Variable, Variable],
              memo: dict | None = None) -> Variable:
    """``var`` computed for all steps at once (see the module docstring)."""
    return _vectorize(var, stacked, invariant, {} if memo is None else memo)[0]


def vectorize_flagged(var: Variable, stacked: dict[Variable, Variable], invariant: dict[Variable, Variable],
                      memo: dict | None = None) -> tuple[Variable, bool]:
    """``vectorize``, and whether the result has the time axis (False: the same every step)."""
    return _vectorize(var, stacked, invariant, {} if memo is None else memo)


def _vectorize(var: Variable, stacked: dict, invariant: dict, memo: dict) -> tuple[Variable, bool]:
    """(outer variable, whether it has the time axis), memoised per inner variable."""
    if var in memo:
        return memo[var]
    if var in stacked:
        result = (stacked[var], True)
    elif var in invariant:
        result = (invariant[var], False)
    elif isinstance(var, Constant):
        result = (var, False)
    else:
        node = var.owner
        if node is None:
            raise NotVectorizable(f"it reads {var!r}, which is neither stacked nor invariant")
        if not vectorizable(node.op):
            raise NotVectorizable(f"{node.op} has no batched form")
        parts = [_vectorize(v, stacked, invariant, memo) for v in node.inputs]
        inputs, flags = [p[0] for p in parts], [p[1] for p in parts]
        if not any(flags):  # the same for every step: rebuild it as it is
            result = (node.op.make_node(*inputs).outputs[var.index], False)
        else:
            result = (_batched(node, inputs, flags), True)
    memo[var] = result
    return result


def _batched(node, inputs: list[Variable], is_stacked: list[bool]) -> Variable:
    op, out = node.op, node.outputs[0]
    if isinstance(op, Elemwise):
        aligned = [with_time_axis(v, out.ndim) if s else v for v, s in zip(inputs, is_stacked)]
        return op(*aligned)
    if isinstance(op, Cast):
        return op(inputs[0])
    if isinstance(op, DimShuffle):
        order = [0] + ["x" if a == "x" else a + 1 for a in op.new_order]
        return dimshuffle(inputs[0], order)
    if isinstance(op, Reduce):
        axes = tuple(range(1, inputs[0].ndim)) if op.axis is None else tuple(a + 1 for a in op.axis)
        return Reduce(op.kind, axes, op.keepdims)(inputs[0])
    if isinstance(op, (Dot, MatMul)):
        if not batchable(op, node.inputs, is_stacked):
            raise NotVectorizable(f"{op} of per-step operands of these ranks and positions")
        if is_stacked[1]:  # W @ x_t for every t: X @ W.T
            w = inputs[0]
            return op(inputs[1], dimshuffle(w, [1, 0]) if w.ndim == 2 else w)
        return op(inputs[0], inputs[1])
    raise NotVectorizable(f"{op} has no batched form")
