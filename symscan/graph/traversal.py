"""Walking graphs: topological order, ancestors, root inputs, dependency tests."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from symscan.graph.basic import Apply, Variable


def toposort(outputs: Iterable[Variable], stop_at: Collection[Variable] = ()) -> list[Apply]:
    """Apply nodes needed for ``outputs``, each after the nodes producing its inputs.

    The walk does not go above variables in ``stop_at``. Iterative, so deep graphs (long
    unrolled chains) do not hit the recursion limit; the order is deterministic.
    """
    stop = set(stop_at)
    order: list[Apply] = []
    done: set[Apply] = set()
    for out in outputs:
        if out.owner is None or out in stop or out.owner in done:
            continue
        stack = [(out.owner, False)]
        while stack:
            node, expanded = stack.pop()
            if node in done:
                continue
            if expanded:
                done.add(node)
                order.append(node)
                continue
            stack.append((node, True))
            for var in reversed(node.inputs):
                if var.owner is not None and var not in stop and var.owner not in done:
                    stack.append((var.owner, False))
    return order


def ancestors(outputs: Iterable[Variable], stop_at: Collection[Variable] = ()) -> list[Variable]:
    """Every variable ``outputs`` depend on (themselves included), not above ``stop_at``."""
    outputs = list(outputs)
    seen: dict[Variable, None] = {}
    for node in toposort(outputs, stop_at):
        for var in node.inputs:
            seen.setdefault(var)
        for var in node.outputs:
            seen.setdefault(var)
    for out in outputs:
        seen.setdefault(out)
    return list(seen)


def graph_inputs(outputs: Iterable[Variable], stop_at: Collection[Variable] = ()) -> list[Variable]:
    """The root variables (no owner, or in ``stop_at``) that ``outputs`` depend on, in order."""
    stop = set(stop_at)
    return [v for v in ancestors(outputs, stop) if v.owner is None or v in stop]


def depends_on(outputs: Iterable[Variable], targets: Collection[Variable]) -> bool:
    """Whether any of ``outputs`` is, or is computed from, one of ``targets``."""
    targets = set(targets)
    return any(v in targets for v in ancestors(outputs))
