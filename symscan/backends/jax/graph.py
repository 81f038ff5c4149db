"""A graph evaluated with JAX values, at trace time.

Under ``jax.jit`` every input is a tracer, but shapes are concrete: a value computed from
shapes and constants alone (a shape vector, a step count, an index) is computed with numpy by
the op's own ``perform`` and stays a concrete array, so the ops that need static values
(reshape targets, allocation lengths, slice bounds, n_steps) get them. Only values that depend
on the inputs go through the op table (``ops.py``). Checks whose conditions depend on input
values cannot raise inside XLA: they are collected in ``Trace.deferred`` and checked after
the call (``evaluator.py``), so mode jax raises where mode py does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from symscan.backends.reference import with_node_context
from symscan.graph.basic import Apply, Constant, Variable
from symscan.graph.fg import FunctionGraph


class NotLowerable(NotImplementedError):
    """An op (or a use of one) that mode jax cannot lower; the message names it and what to do."""


def is_traced(value) -> bool:
    import jax

    return isinstance(value, jax.core.Tracer)


class UntilReached(Exception):  # noqa: N818 - a signal that ends a trace, not an error
    """Ends a trace at a loop with until: its buffers and step count are the stage's results,
    ``finish`` turns their values into the loop's outputs."""

    def __init__(self, values: list, checks: list[Deferred], finish: Callable[[list], list]):
        super().__init__("a loop with until ends this stage")
        self.values, self.checks, self.finish = values, checks, finish


@dataclass
class Deferred:
    """A check whose conditions are known only when XLA has run: (message, error class,
    condition values); each condition must be all true."""

    message: str
    error: type
    conditions: list = field(default_factory=list)


@dataclass
class Trace:
    """What one trace of a function collects besides its outputs. A staged trace (the
    evaluator's top level) may end at a loop with until (``while_loops.py``): ``known`` holds
    the outputs of the loops earlier stages ran, in the order the trace meets them."""

    deferred: list[Deferred] = field(default_factory=list)
    staged: bool = False
    known: tuple = ()
    untils_seen: int = 0


def evaluate(fgraph: FunctionGraph, inputs: list, trace: Trace, shared: dict | None = None) -> list:
    """``fgraph``'s outputs for ``inputs`` and the values of the shared variables it reads
    (JAX tracers or numpy values)."""
    from symscan.backends.jax.ops import lower

    values: dict[Variable, object] = dict(zip(fgraph.inputs, inputs, strict=True))
    values.update(shared or {})
    for node in fgraph.toposort():
        args = [v.data if isinstance(v, Constant) else values[v] for v in node.inputs]
        try:
            results = _concrete(node, args) if not any(map(is_traced, args)) else None
            if results is None:
                results = lower(node, args, trace)
        except (NotLowerable, UntilReached):
            raise
        except Exception as err:
            raise with_node_context(err, node) from err
        for var, result in zip(node.outputs, results, strict=True):
            values[var] = result
    return [v.data if isinstance(v, Constant) else values[v] for v in fgraph.outputs]


def _concrete(node: Apply, args: list) -> list | None:
    """The op's numpy result when every input is concrete (None for loops and branches,
    which the table lowers: their bodies may still depend on traced values)."""
    from symscan.scan.ifelse import IfElse
    from symscan.scan.op import Scan
    from symscan.tensor.random import RandomVariable

    if isinstance(node.op, (Scan, IfElse, RandomVariable)):
        return None
    return [np.asarray(r) if not isinstance(r, np.ndarray) and np.ndim(r) == 0 and hasattr(r, "dtype") else r
            for r in node.op.perform(node, [np.asarray(a) if hasattr(a, "shape") else a for a in args])]
