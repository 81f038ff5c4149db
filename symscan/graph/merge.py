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
