"""The lazy conditional: ``ifelse(condition, then_branch, else_branch)`` (Theano's
``theano.ifelse.ifelse``) computes only the branch the condition picks.

Like Scan, the op holds inner graphs: one FunctionGraph per branch, both over the same list
of *captured* outer values (the node's inputs after the condition). Building pulls into a
branch the work that computes its outputs, back to values that are computed whatever the
condition says: the condition's own ancestry, graph inputs, shared variables, random draws
(their generator's update needs them) and loops that carry shared state. Work a branch pulled
in that the rest of the graph computes anyway, or that both branches compute, is lifted out
again by rewrites once the whole graph is known (``rewrites/ifelse.py``).

Backends run the chosen branch's graph; ``perform`` is theirs, as for Scan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from symscan.graph.basic import Apply, Constant, Op, SharedVariable, Variable, describe
from symscan.graph.clone import clone_graph
from symscan.graph.fg import FunctionGraph
from symscan.graph.signature import StructuralEquality
from symscan.graph.traversal import ancestors, toposort
from symscan.graph.type import TensorType
from symscan.tensor.basic import _cast_exactly, as_tensor_variable, constant
from symscan.tensor.random import RandomVariable


@dataclass(frozen=True, eq=False)
class IfElse(StructuralEquality, Op):
    """``then_graph``'s outputs if the condition (a 0-d value) is non-zero, else ``else_graph``'s.

    Outer inputs: the condition, then the captured values; input ``i`` of each branch graph is
    captured value ``i``. Output ``i`` has the type both branches' output ``i`` agree on.
    """

    then_graph: FunctionGraph
    else_graph: FunctionGraph
    name: str | None = None
    _signature: tuple | None = field(default=None, repr=False, compare=False)
    _hash: int | None = field(default=None, repr=False, compare=False)

    def structure_params(self) -> tuple:
        return (self.name,)

    def make_node(self, condition, *captured) -> Apply:
        condition = check_condition(condition)
        n = len(self.then_graph.inputs)
        if len(self.else_graph.inputs) != n or len(captured) != n:
            raise TypeError(f"{self} takes a condition and {n} captured value(s), got {len(captured)}")
        if len(self.then_graph.outputs) != len(self.else_graph.outputs):
            raise TypeError(f"{self}: the branches have {len(self.then_graph.outputs)} and "
                            f"{len(self.else_graph.outputs)} outputs")
        for i, outer in enumerate(captured):
            for graph in self.inner_graphs():
                if not graph.inputs[i].type.is_super(outer.type):
                    raise TypeError(f"{self}: captured value {i} {describe(outer)} does not fit the branch "
                                    f"input of type {graph.inputs[i].type}")
        types = [joined_type(a, b, i) for i, (a, b) in
                 enumerate(zip(self.then_graph.outputs, self.else_graph.outputs))]
        return Apply(self, [condition, *captured], types)

    def perform(self, node: Apply, inputs: list) -> list:
        raise NotImplementedError("IfElse runs in the backends (they evaluate the chosen branch's graph)")

    def inner_graphs(self) -> tuple:
        return (self.then_graph, self.else_graph)

    def with_inner_graphs(self, graphs) -> IfElse:
        then_graph, else_graph = graphs
        return IfElse(then_graph, else_graph, self.name)

    # ------------------------------------------------------------------ printing
    inner_titles = ("then", "else")

    def inner_input_labels(self) -> list[str]:
        return [f"captured {i}" for i in range(len(self.then_graph.inputs))]

    def __str__(self) -> str:
        return f"IfElse{{{self.name}}}" if self.name else "IfElse"


def check_condition(condition) -> Variable:
    """The condition as a 0-d tensor (any numeric dtype: zero is false)."""
    condition = as_tensor_variable(condition)
    if condition.type.ndim != 0:
        raise TypeError(f"ifelse: the condition must be a 0-d value (zero is false), got {describe(condition)}; "
                        "reduce it first (e.g. T.any(c) or c[0]), or use T.switch for an elementwise choice")
    return condition


def joined_type(then_out: Variable, else_out: Variable, position: int) -> TensorType:
    """The type of output ``position``: the branches' dtype and rank, lengths where they agree."""
    a, b = then_out.type, else_out.type
    if not (isinstance(a, TensorType) and isinstance(b, TensorType)):
        raise TypeError(f"ifelse: branch output {position} must be tensors, got {a} and {b}")
    if a.dtype != b.dtype or a.ndim != b.ndim:
        raise TypeError(f"ifelse: output {position} is {describe(then_out)} in the then branch but "
                        f"{describe(else_out)} in the else branch; both branches must have the same dtype and "
                        "number of dimensions (cast one with .astype(), or add axes with dimshuffle)")
    return TensorType(a.dtype, tuple(s if s == t else None for s, t in zip(a.shape, b.shape)))


def ifelse(condition, then_branch, else_branch, name: str | None = None):
    """``then_branch`` if ``condition`` (a 0-d value) is non-zero, else ``else_branch``; only the
    chosen branch is computed, in every mode and inside loop bodies.

    The branches are variables, or lists/tuples of variables of matching types (the result is
    then a list/tuple). A number or array in a branch becomes a constant of the other branch's
    dtype when it fits exactly. Work the rest of the graph needs anyway is computed eagerly, as
    are random draws (their generator's update is unconditional). ``T.switch`` is the
    elementwise, eager choice.
    """
    condition = check_condition(condition)
    kind = type(then_branch) if isinstance(then_branch, (list, tuple)) else None
    thens = list(then_branch) if kind else [then_branch]
    elses = list(else_branch) if isinstance(else_branch, (list, tuple)) else [else_branch]
    if len(thens) != len(elses):
        raise ValueError(f"ifelse: the then branch has {len(thens)} value(s) and the else branch {len(elses)}; "
                         "give both branches the same number of values")
    if not thens:
        raise ValueError("ifelse: the branches are empty; give each at least one value")
    pairs = [_as_branch_pair(a, b, i) for i, (a, b) in enumerate(zip(thens, elses))]
    thens, elses = [a for a, _ in pairs], [b for _, b in pairs]
    eager = _eager_variables(condition, thens + elses)
    captured = _captured(thens, eager) + _captured(elses, eager)
    captured = list(dict.fromkeys(captured))
    op = IfElse(branch_graph(captured, thens), branch_graph(captured, elses), name)
    outputs = op.make_node(condition, *captured).outputs
    if name is not None and len(outputs) == 1:
        outputs[0].name = name
    if kind is None:
        return outputs[0]
    return kind(outputs)


def _as_branch_pair(a, b, position: int) -> tuple[Variable, Variable]:
    """Both values as tensor variables; a plain value takes the other branch's dtype if it fits."""
    a_symbolic, b_symbolic = isinstance(a, Variable), isinstance(b, Variable)
    if a_symbolic and not b_symbolic:
        b = _constant_like(b, a, "else", position)
    elif b_symbolic and not a_symbolic:
        a = _constant_like(a, b, "then", position)
    return as_tensor_variable(a), as_tensor_variable(b)


def _constant_like(value, other: Variable, branch: str, position: int) -> Variable:
    if not isinstance(other.type, TensorType):
        return as_tensor_variable(value)
    try:
        return constant(_cast_exactly(value, other.type.dtype))
    except (ValueError, TypeError):
        data = np.asarray(value)
        raise TypeError(f"ifelse: the {branch} branch's value {position} ({value!r}, {data.dtype}) does not fit "
                        f"the other branch's dtype {other.type.dtype}; cast one branch so both agree") from None


def _eager_variables(condition: Variable, outputs: Sequence[Variable]) -> set[Variable]:
    """Values computed whatever the condition says: the condition's ancestry, and every stateful
    node's outputs and ancestry (a draw, a loop with shared state: their updates need them)."""
    eager = set(ancestors([condition]))
    stateful = [node for node in toposort(outputs) if _is_stateful(node)]
    eager.update(ancestors([out for node in stateful for out in node.outputs]))
    return eager


def _is_stateful(node: Apply) -> bool:
    if isinstance(node.op, RandomVariable):
        return True
    info = getattr(node.op, "info", None)  # a Scan carrying shared variables or generators
    return getattr(info, "n_shared", 0) > 0


def _captured(outputs: Sequence[Variable], eager: set[Variable]) -> list[Variable]:
    """The outer values a branch reads: eager values and roots it reaches (constants stay inside)."""
    found = []
    for var in outputs:
        if var in eager or var.owner is None:
            found.append(var)
    for node in toposort(outputs, stop_at=eager):
        found += [v for v in node.inputs if v in eager or (v.owner is None and not isinstance(v, Constant))]
    return [v for v in found if not isinstance(v, Constant) or isinstance(v, SharedVariable)]


def branch_graph(captured: list[Variable], outputs: list[Variable]) -> FunctionGraph:
    """A branch's graph: fresh inputs standing for the captured values, its own copy of the work."""
    memo = clone_graph(captured, outputs)
    inputs = [memo[v] for v in captured]
    for inner, outer in zip(inputs, captured):
        inner.name = outer.name
    return FunctionGraph(inputs, [memo[o] for o in outputs], clone=False)
