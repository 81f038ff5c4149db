"""Merge keys: when two nodes or constants compute the same value and may become one."""

from __future__ import annotations

from collections.abc import Callable

from symscan.graph.basic import Apply, Constant, Variable


def constant_key(const: Constant) -> tuple:
    """Equal keys: same type and same bytes (so 0.0 and -0.0 stay apart, NaNs merge)."""
    return const.signature()


def node_key(node: Apply, canonical: Callable[[Variable], Variable] = lambda v: v) -> tuple:
    """Equal keys: the same op (by props) applied to the same inputs after canonicalising them."""
    return (node.op, tuple(id(canonical(v)) for v in node.inputs))


class _Key(tuple):
    """A structural key that hashes once: keys of a graph share their sub-keys, and hashing a
    nested tuple again at every level would cost as much as the graph unrolled into a tree."""

    def __hash__(self) -> int:
        cached = self.__dict__.get("hash")
        if cached is None:
            cached = self.__dict__["hash"] = tuple.__hash__(self)
        return cached


def expression_key(var: Variable, leaves: dict[Variable, object] | None = None, memo: dict | None = None) -> tuple:
    """A structural key of ``var``'s computation: equal keys compute the same value.

    ``leaves`` names root variables (for instance, two loop states that are known to be
    the same); other roots are identified by identity, constants by value.
    """
    leaves = leaves or {}
    memo = {} if memo is None else memo
    stack, result = [var], None
    while stack:
        current = stack[-1]
        if current in memo:
            stack.pop()
            continue
        if current in leaves:
            memo[current] = ("leaf", leaves[current])
        elif isinstance(current, Constant):
            memo[current] = ("const", constant_key(current))
        elif current.owner is None:
            memo[current] = ("root", id(current))
        else:
            missing = [v for v in current.owner.inputs if v not in memo]
            if missing:
                stack.extend(missing)
                continue
            node = current.owner
            memo[current] = _Key((node.op, current.index, tuple(memo[v] for v in node.inputs)))
        stack.pop()
    result = memo[var]
    return result
