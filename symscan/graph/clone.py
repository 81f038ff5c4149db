"""Copying graphs, with or without substituting variables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from symscan.graph.basic import Variable
from symscan.graph.traversal import toposort


def clone_graph(inputs: Sequence[Variable], outputs: Sequence[Variable],
                copy_inputs: bool = True) -> dict[Variable, Variable]:
    """Copy every node between ``inputs`` and ``outputs``; return the old-to-new map.

    Inputs become fresh variables unless ``copy_inputs`` is false. Other roots (constants,
    shared variables, free variables) are kept as they are: they are values, not structure.
    """
    memo: dict[Variable, Variable] = {i: (i.clone() if copy_inputs else i) for i in inputs}
    for node in toposort(outputs, stop_at=inputs):
        new_inputs = [memo.setdefault(v, v) for v in node.inputs]
        new_node = node.clone_with_new_inputs(new_inputs)
        memo.update(zip(node.outputs, new_node.outputs))
    for out in outputs:
        memo.setdefault(out, out)
    return memo


def clone_replace(outputs: Sequence[Variable], replace: Mapping[Variable, Variable]) -> list[Variable]:
    """``outputs`` rebuilt with each key of ``replace`` substituted by its value.

    Only nodes that depend on a replaced variable are rebuilt (with re-inferred types);
    untouched sub-graphs are shared with the original, which is safe because graphs outside
    a FunctionGraph are never mutated.
    """
    memo: dict[Variable, Variable] = dict(replace)
    for node in toposort(outputs, stop_at=replace.keys()):
        new_inputs = [memo.get(v, v) for v in node.inputs]
        if any(n is not o for n, o in zip(new_inputs, node.inputs)):
            memo.update(zip(node.outputs, node.clone_with_new_inputs(new_inputs).outputs))
    return [memo.get(o, o) for o in outputs]
