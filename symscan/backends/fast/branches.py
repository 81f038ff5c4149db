"""The IfElse emitter: a Python ``if``/``else`` whose arms compute the branches' graphs inline,
so only the chosen branch's lines run (nested conditionals and loops nest)."""

from __future__ import annotations

from symscan.backends.fast.codegen import Codegen, emits
from symscan.scan.ifelse import IfElse


@emits(IfElse)
def emit_ifelse(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    write_branches(gen, node, ins, outs)


def write_branches(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    """``if cond:`` then-graph ``else:`` else-graph, each arm ending by naming the outputs."""
    condition, captured = ins[0], ins[1:]
    for header, graph in zip((f"if {condition}:", "else:"), node.op.inner_graphs()):
        gen.line(header)
        gen.indent += 1
        results = gen.graph(graph, dict(zip(graph.inputs, captured)))
        for out, result in zip(outs, results):
            gen.line(f"{out} = {result}")
        gen.indent -= 1
