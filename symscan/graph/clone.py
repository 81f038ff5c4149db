"""Copying graphs, with or without substituting variables (and Theano's ``clone``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from symscan.graph.basic import Constant, SharedVariable, Variable, describe
from symscan.graph.traversal import graph_inputs, toposort
from symscan.graph.type import TensorType


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


def clone(output: Variable | Sequence[Variable], replace: Mapping | Sequence | None = None, strict: bool = True,
          share_inputs: bool = True) -> Variable | list[Variable]:
    """Theano's ``clone``: a copy of the graph computing ``output`` (a variable or a list of
    them, returned in the same form) with each key of ``replace`` substituted by its value.

    Every node is new, so renaming or tagging the copy leaves the original alone. ``strict``
    requires each replacement to have the type of what it replaces (dtype, number of
    dimensions, compatible static lengths); ``strict=False`` lets types change and re-infers
    those of the nodes above. ``share_inputs=False`` gives the copy fresh root variables too
    (shared variables are kept: they are state, not structure).
    """
    outputs = list(output) if isinstance(output, (list, tuple)) else [output]
    for position, out in enumerate(outputs):
        if not isinstance(out, Variable):
            raise TypeError(f"clone: output[{position}] must be a symbolic variable, got {type(out).__name__}")
    memo = _replacements(replace, strict)
    for root in graph_inputs(outputs, stop_at=memo.keys()):
        if root not in memo and not share_inputs and not isinstance(root, (Constant, SharedVariable)):
            memo[root] = root.clone()
    for node in toposort(outputs, stop_at=memo.keys()):
        new_node = node.clone_with_new_inputs([memo.get(v, v) for v in node.inputs])
        memo.update(zip(node.outputs, new_node.outputs))
    copies = [memo.get(o, o) for o in outputs]
    return copies if isinstance(output, (list, tuple)) else copies[0]


def _replacements(replace, strict: bool) -> dict[Variable, Variable]:
    """``replace`` (a dict or (old, new) pairs) checked: keys are variables, numeric values
    become constants of the key's dtype, and with ``strict`` types must be kept."""
    pairs = list(replace.items()) if isinstance(replace, Mapping) else list(replace or [])
    memo: dict[Variable, Variable] = {}
    for position, pair in enumerate(pairs):
        if len(pair) != 2 or not isinstance(pair[0], Variable):
            raise TypeError(f"clone: replace[{position}] must map a symbolic variable to its replacement, got {pair!r}")
        old, new = pair
        if not isinstance(new, Variable):
            new = _constant_like(old, new, position)
        if strict and _type_changes(old, new):
            raise TypeError(f"clone: replace[{position}] would replace {describe(old)} by {describe(new)}, which has "
                            "another type; cast the replacement (e.g. .astype(...)) or pass strict=False to let "
                            "the types of the graph follow it")
        memo[old] = new
    return memo


def _type_changes(old: Variable, new: Variable) -> bool:
    if isinstance(old.type, TensorType) and isinstance(new.type, TensorType):
        return old.type.conflicts_with(new.type)
    return old.type != new.type


def _constant_like(old: Variable, value, position: int) -> Variable:
    """A numeric replacement value as a constant of ``old``'s dtype (checked: no lossy cast)."""
    if not isinstance(old.type, TensorType):
        raise TypeError(f"clone: replace[{position}] replaces {describe(old)} by {value!r}; pass a variable")
    data = old.type.filter(value, what=f"clone: the replacement of {describe(old)}")
    return old.type.constant_class(old.type.clone(shape=data.shape), data)
