"""IfElse lowering: ONNX ``If``, one subgraph per branch, so only the chosen branch runs.

ONNX ``If`` branches take no inputs: they read enclosing values by name, as loop bodies read
non-sequences, so each captured value is its outer name inside both branches. The condition
is any 0-d number (zero is false, as numpy's truthiness); ``If`` needs a bool, so it is cast
(ONNX's Cast: non-zero, NaN included, is true). Each branch declares its own output shapes:
ONNX lets them differ where the branches do.
"""

from __future__ import annotations

from onnx import helper

from symscan.onnx.context import Lowering, lowers, value_info
from symscan.onnx.loops import body_outputs
from symscan.scan.ifelse import IfElse


@lowers(IfElse)
def lower_ifelse(ctx: Lowering, node, ins: list[str]) -> list[str]:
    condition = ctx.cast(ins[0], node.inputs[0].dtype, "bool")
    captured = ins[1:]
    branches = {f"{key}_branch": _branch(ctx, graph, captured, f"{node.op.name or 'ifelse'}_{key}")
                for key, graph in zip(("then", "else"), node.op.inner_graphs())}
    return ctx.op("If", [condition], len(node.outputs), hint=node.op.name or "ifelse", **branches)


def _branch(ctx: Lowering, graph, captured: list[str], hint: str):
    """A branch's subgraph: its graph's nodes in a child context where input ``i`` is captured
    value ``i``'s outer name; outputs named by the branch (an outer value is copied)."""
    body = Lowering(ctx.opset, ctx)
    body.names.update(zip(graph.inputs, captured))
    for inner_node in graph.toposort():
        body.node(inner_node)
    outputs = body_outputs(body, [body.name_of(out) for out in graph.outputs])
    return helper.make_graph(body.nodes, ctx.fresh(hint), [],
                             [value_info(name, out) for name, out in zip(outputs, graph.outputs)])
