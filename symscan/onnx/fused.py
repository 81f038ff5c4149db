"""ONNX lowering of a fused elementwise chain (``Composite``): the chain as it was, one
lowering per inner node over the node's (broadcasting) inputs; ONNX runtimes fuse what they can."""

from __future__ import annotations

from symscan.graph.clone import clone_replace
from symscan.graph.traversal import graph_inputs, toposort
from symscan.onnx.context import Lowering, lowers
from symscan.tensor.composite import Composite


@lowers(Composite)
def lower_composite(ctx: Lowering, node, ins: list[str]) -> list[str]:
    inner = node.op.inner
    chain = clone_replace(inner.outputs, dict(zip(inner.inputs, node.inputs)))
    for chain_node in toposort(chain, stop_at=node.inputs):
        ctx.node(chain_node)
    names = []
    for out in chain:
        name = ctx.name_of(out)
        read = set(graph_inputs([out], stop_at=node.inputs))
        for var, var_name in zip(node.inputs, ins):  # an output that reads only some inputs: broadcast it
            if var.ndim > 0 and var not in read:
                name = ctx.op1("Expand", [name, ctx.op1("Shape", [var_name])])
        names.append(name)
    return names
