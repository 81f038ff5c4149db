"""``ifelse`` in mode jax. A condition known while tracing picks its branch then (only that
branch is traced, as only it runs in mode py). One computed from input values becomes
``lax.cond``: both branches are traced, so each branch's checks leave the cond as flags that
are true where the branch is not taken, and a branch that cannot even be traced at these
shapes (an index out of range) raises its error after the call only where it is taken."""

from __future__ import annotations

import numpy as np

from symscan.backends.jax.graph import Deferred, NotLowerable, Trace, evaluate, is_traced
from symscan.backends.jax.ops import _as_type, jax_lowers
from symscan.scan.ifelse import IfElse


@jax_lowers(IfElse)
def _ifelse(node, inputs, trace):
    """(see the module docstring)"""
    from jax import lax

    condition, *captured = inputs
    graphs = node.op.inner_graphs()
    if not is_traced(condition):
        return evaluate(graphs[0] if bool(np.asarray(condition)) else graphs[1], captured, trace)
    traced = [i for i, v in enumerate(captured) if is_traced(v)]

    def values_with(operands):
        values = list(captured)
        for i, v in zip(traced, operands):
            values[i] = v
        return values

    probes = [_BranchProbe(g, node, values_with, [captured[i] for i in traced]) for g in graphs]
    shapes = _agreed_shapes(node, probes)

    def branch(k):
        def run(operands):
            flags = []
            for j, probe in enumerate(probes):
                flags += probe.flags(own=j == k)
            if probes[k].error is not None:
                return [_zeros(shape, out) for shape, out in zip(shapes, node.outputs)], flags
            branch_trace = Trace()
            outputs = evaluate(graphs[k], values_with(operands), branch_trace)
            own = [_all(d.conditions) for d in branch_trace.deferred]
            position = sum(p.n_flags for p in probes[:k])
            flags[position:position + len(own)] = own
            return [_as_type(r, out) for r, out in zip(outputs, node.outputs)], flags
        return run

    outputs, flags = lax.cond(condition.astype(bool).reshape(()), branch(0), branch(1),
                              [captured[i] for i in traced])
    position = 0
    for probe in probes:
        for message, error in probe.checks():
            trace.deferred.append(Deferred(message, error, [flags[position]]))
            position += 1
    return outputs


class _BranchProbe:
    """One branch traced alone at the operands' shapes: its checks, or the error it raises."""

    def __init__(self, graph, node, values_with, operands):
        import jax

        self.error, self.messages, self.shapes = None, [], None
        probe_trace = Trace()
        abstract = [jax.ShapeDtypeStruct(np.shape(v), v.dtype) for v in operands]
        try:
            results = jax.eval_shape(lambda ops: evaluate(graph, values_with(ops), probe_trace), abstract)
        except NotLowerable:
            raise
        except Exception as err:  # raised at trace time: in mode py only if this branch runs
            self.error = err
        else:
            self.shapes = [tuple(r.shape) for r in results]
            self.messages = [(d.message, d.error) for d in probe_trace.deferred]

    @property
    def n_flags(self) -> int:
        return 1 if self.error is not None else len(self.messages)

    def flags(self, own: bool) -> list:
        """This branch's flags in a branch's outputs: placeholders (true) unless it is its own;
        a branch that could not be traced is flagged false where it is taken."""
        import jax.numpy as jnp

        return [jnp.asarray(not (own and self.error is not None))] * self.n_flags

    def checks(self) -> list[tuple]:
        if self.error is not None:
            return [(str(self.error), type(self.error))]
        return self.messages


def _agreed_shapes(node, probes) -> list[tuple]:
    shapes = [p.shapes for p in probes if p.shapes is not None]
    if len(shapes) == 2 and shapes[0] != shapes[1]:
        raise NotLowerable(f"mode jax lowers {node.op} with a condition computed from input values as lax.cond, "
                           f"whose branches must give one shape, but they give {shapes[0]} and {shapes[1]}")
    return shapes[0] if shapes else [tuple(0 if n is None else n for n in out.type.shape) for out in node.outputs]


def _zeros(shape: tuple, out):
    import jax.numpy as jnp

    return jnp.zeros(shape, dtype=out.type.dtype)


def _all(conditions: list):
    import jax.numpy as jnp

    return jnp.all(jnp.stack([jnp.all(c) for c in conditions]))
