"""Turning per-step inner computation into one computation over all steps.

``vectorize`` rebuilds an inner variable in the outer graph where some inner variables
("stacked") are replaced by arrays with a leading time axis (row t is the value at step t)
and others ("invariant") by their outer values. It handles the ops whose batched form is
the same op with a leading axis: elementwise ops, casts, dot/matmul with the stacked operand
first, dimshuffles and reductions; and ``W @ x_t`` for a per-step vector ``x_t`` (as
``X @ W.T``). Indexing and set/inc_subtensor have the batched forms of
``rewrites.vectorize_subtensor``. Anything else raises ``NotVectorizable``.
"""

from __future__ import annotations

from rewrites.vectorize_subtensor import INDEXING, batched_indexing, indexing_unbatchable, with_time_axis
from symscan.graph.basic import Constant, Variable
from symscan.tensor.elemwise import Cast, Elemwise
from symscan.tensor.math import Dot, MatMul, Reduce
from symscan.tensor.random import RandomVariable
from symscan.tensor.shape import DimShuffle, dimshuffle


class NotVectorizable(Exception):
    """The variable's computation has an op without a known batched form."""


def vectorizable(op) -> bool:
    return isinstance(op, (Elemwise, Cast, Dot, MatMul, DimShuffle, Reduce) + INDEXING)


def rebuildable(op) -> bool:
    """Whether a node that is the same at every step may be computed once outside the loop
    (any op but a random draw, which must draw anew each step, or one with an inner graph)."""
    return not isinstance(op, RandomVariable) and not op.inner_graphs()


def batchable(op, inputs: list[Variable], is_stacked: list[bool], tile_bases: bool = False) -> bool:
    """Whether ``op`` on the per-step ``inputs`` has a batched form when the flagged ones
    vary per step (a product has one only for some operand ranks and positions; see
    ``vectorize`` for ``tile_bases``)."""
    if not any(is_stacked):
        return rebuildable(op)
    if not vectorizable(op):
        return False
    if isinstance(op, INDEXING):
        return indexing_unbatchable(op, inputs, is_stacked, tile_bases) is None
    if not isinstance(op, (Dot, MatMul)):
        return True
    (a, b), (a_stacked, b_stacked) = inputs, is_stacked
    if a_stacked:
        return not b_stacked and a.ndim > 0 and not (isinstance(op, MatMul) and b.ndim > 2)
    return b.ndim == 1 and a.ndim in (1, 2)  # W @ x_t is X @ W.T


def vectorize(var: Variable, stacked: dict[Variable, Variable], invariant: dict[Variable, Variable],
              memo: dict | None = None, tile_bases: bool = False) -> Variable:
    """``var`` computed for all steps at once (see the module docstring). ``tile_bases``: a
    set/inc_subtensor into a loop-invariant base may repeat the base for every step, which a
    caller allows only where the result has that size anyway (a map output)."""
    return _vectorize(var, stacked, invariant, {} if memo is None else memo, tile_bases)[0]


def vectorize_flagged(var: Variable, stacked: dict[Variable, Variable], invariant: dict[Variable, Variable],
                      memo: dict | None = None, tile_bases: bool = False) -> tuple[Variable, bool]:
    """``vectorize``, and whether the result has the time axis (False: the same every step)."""
    return _vectorize(var, stacked, invariant, {} if memo is None else memo, tile_bases)


def _vectorize(var: Variable, stacked: dict, invariant: dict, memo: dict, tile_bases: bool) -> tuple[Variable, bool]:
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
        if not rebuildable(node.op):
            raise NotVectorizable(f"{node.op} must run at every step")
        parts = [_vectorize(v, stacked, invariant, memo, tile_bases) for v in node.inputs]
        inputs, flags = [p[0] for p in parts], [p[1] for p in parts]
        if not any(flags):  # the same for every step: rebuild it as it is
            result = (node.op.make_node(*inputs).outputs[var.index], False)
        elif not vectorizable(node.op):
            raise NotVectorizable(f"{node.op} has no batched form")
        else:
            result = (_batched(node, inputs, flags, tile_bases), True)
    memo[var] = result
    return result


def _batched(node, inputs: list[Variable], is_stacked: list[bool], tile_bases: bool) -> Variable:
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
    if isinstance(op, INDEXING):
        why = indexing_unbatchable(op, node.inputs, is_stacked, tile_bases)
        if why:
            raise NotVectorizable(f"{op}: {why}")
        return batched_indexing(node, inputs, is_stacked)
    if isinstance(op, (Dot, MatMul)):
        if not batchable(op, node.inputs, is_stacked):
            raise NotVectorizable(f"{op} of per-step operands of these ranks and positions")
        if is_stacked[1]:  # W @ x_t for every t: X @ W.T
            w = inputs[0]
            return op(inputs[1], dimshuffle(w, [1, 0]) if w.ndim == 2 else w)
        return op(inputs[0], inputs[1])
    raise NotVectorizable(f"{op} has no batched form")
