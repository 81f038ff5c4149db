"""The pullback of IfElse: another IfElse on the same condition.

Its then branch is the then graph's pullback, its else branch the else graph's, both over the
captured values and the cotangents arriving on the outputs; a captured value one branch does
not read gets zeros from that branch. So the backward pass is as lazy as the forward one: the
branch not taken is not differentiated at run time (and a gradient that would fail there is
never computed). The chosen branch's forward work is recomputed inside its pullback, as a
Scan's body is; the condition gets no gradient (zero, as in Theano: it only chooses).
"""

from __future__ import annotations

from symscan.gradient.grad import float_dtype, grad
from symscan.gradient.registry import connected_inputs, connections, pullback
from symscan.gradient.types import is_null
from symscan.graph.basic import Constant, Variable
from symscan.graph.fg import FunctionGraph
from symscan.graph.type import TensorType
from symscan.scan.ifelse import IfElse, branch_graph
from symscan.tensor.creation import zeros_like
from symscan.tensor.elemwise import add


@connections(IfElse)
def ifelse_connections(node) -> list[list[bool]]:
    """The condition decides every output; captured value i reaches output j where either
    branch's output j depends on its input i (through connected op inputs)."""
    graphs = node.op.inner_graphs()
    reached = [connected_inputs(g.inputs, g.outputs) for g in graphs]
    rows = [[True] * len(node.outputs)]
    for i in range(len(node.inputs) - 1):
        rows.append([any(g.inputs[i] in found.get(g.outputs[j], ()) for g, found in zip(graphs, reached))
                     for j in range(len(node.outputs))])
    return rows


@pullback(IfElse)
def ifelse_pullback(node, cotangents: list) -> list:
    flowing = [j for j, (out, g) in enumerate(zip(node.outputs, cotangents))
               if g is not None and _is_float(out)]
    captured = node.inputs[1:]
    if not flowing:
        return [None] * len(node.inputs)
    # a constant cotangent (the cost itself is the output: 1) goes into the branches as it is
    placeholders = [g if isinstance(g, Constant) else g.type.make_variable(name=f"d_out{j}")
                    for j, g in ((j, cotangents[j]) for j in flowing)]
    outer_cotangents = [cotangents[j] for j in flowing if not isinstance(cotangents[j], Constant)]
    pulled = [_branch_pullback(g, flowing, placeholders) for g in node.op.inner_graphs()]
    needed, results = [], [None] * len(captured)
    for i, (then_g, else_g) in enumerate(zip(*pulled)):
        null = next((g for g in (then_g, else_g) if is_null(g)), None)
        if null is not None:
            results[i] = null  # undefined in a branch: undefined (grad reports it, or returns it)
        elif then_g is not None or else_g is not None:
            needed.append(i)
    if not needed:
        return [None] + results
    graphs = []
    for graph, grads in zip(node.op.inner_graphs(), pulled):
        outputs = [grads[i] if grads[i] is not None else _zeros_for(graph.inputs[i]) for i in needed]
        inputs = list(graph.inputs) + [u for u in placeholders if not isinstance(u, Constant)]
        graphs.append(branch_graph(inputs, outputs))
    name = f"{node.op.name}_grad" if node.op.name else None
    gradient = IfElse(*graphs, name).make_node(node.inputs[0], *captured, *outer_cotangents)
    for i, out in zip(needed, gradient.outputs):
        results[i] = out
    return [None] + results


def _branch_pullback(graph: FunctionGraph, flowing: list[int], placeholders: list[Variable]) -> list:
    """Per branch input: its gradient (built on the branch's variables and the placeholders),
    None where the branch's flowing outputs do not reach it, or an undefined gradient."""
    known: dict[Variable, Variable] = {}
    for j, u in zip(flowing, placeholders):
        out = graph.outputs[j]
        if not isinstance(out, Constant):
            known[out] = add(known[out], u) if out in known else u
    wrt = [v for v in graph.inputs if isinstance(v.type, TensorType)]
    if not known or not wrt:
        return [None] * len(graph.inputs)
    grads = dict(zip(wrt, grad(None, wrt, known_grads=known, disconnected_inputs="ignore",
                               return_disconnected="None", null_gradients="return")))
    return [grads.get(v) for v in graph.inputs]


def _zeros_for(var: Variable) -> Variable:
    """A branch's gradient for a captured value it does not read: zeros of its shape."""
    return zeros_like(var, dtype=float_dtype(var))


def _is_float(var: Variable) -> bool:
    return getattr(var.type, "dtype", "int8")[0] in "fc"
