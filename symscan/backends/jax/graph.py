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

import functools
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


class StageEnd(Exception):  # noqa: N818 - a signal that ends a trace, not an error
    """Ends a staged trace where it needs what only a run tells: the values are the stage's
    results, ``finish`` turns them (as numpy) into what the next stage knows. A loop with until
    gives its buffers and step count (its outputs, known as traced arguments); a value that
    must be static (a length, a step count computed from input values) gives itself (known as
    a static argument: each new value compiles the next stage again)."""

    def __init__(self, values: list, checks: list[Deferred], finish: Callable[[list], object], static: bool,
                 slot: int | None = None, loop: Apply | None = None):
        super().__init__("this stage ends here")
        self.values, self.checks, self.finish, self.static = values, checks, finish, static
        self.slot = slot  # where in ``known`` the result goes (a resumed loop replaces its earlier state)
        self.loop = loop  # the loop with until that ends the stage


@dataclass(frozen=True)
class Static:
    """A numpy value computed by an earlier stage, hashable (a static argument of ``jax.jit``)."""

    data: bytes
    dtype: str
    shape: tuple

    @classmethod
    def of(cls, value) -> Static:
        value = np.array(value, order="C")
        return cls(value.tobytes(), value.dtype.str, value.shape)

    @property
    def value(self) -> np.ndarray:
        return np.frombuffer(self.data, dtype=self.dtype).reshape(self.shape).copy()


@dataclass
class Deferred:
    """A check whose conditions are known only when XLA has run: (message, error class,
    condition values); each condition must be all true. A check inside a loop also says which
    loop (``loop``) and the first step it failed at (``step``): of a loop's failed checks, the
    one that failed first is raised, as in mode py."""

    message: str
    error: type
    conditions: list = field(default_factory=list)
    loop: int | None = None
    step: object = None

    def holds(self):
        """Whether every condition holds (a traced bool; in a loop body it runs every step, so
        a scalar condition is used as it is)."""
        import jax.numpy as jnp

        flags = [c if jnp.ndim(c) == 0 else jnp.all(c) for c in self.conditions]
        return functools.reduce(jnp.logical_and, flags)

    def in_loop(self, node: Apply, passed, first_failure) -> Deferred:
        """This check of a loop body, for the whole loop: ``passed`` at every step, else
        first failed at step ``first_failure``."""
        return Deferred(f"{self.message} (in {node.op})", self.error, [passed], id(node), first_failure)


def first_failure(flags, steps: int):
    """The first step whose flag is false (``steps`` when none is)."""
    import jax.numpy as jnp

    return jnp.where(jnp.all(flags), steps, jnp.argmin(flags))


@dataclass
class Trace:
    """What one trace of a function collects besides its outputs. A staged trace (the
    evaluator's top level) may end where it needs a run's result (``StageEnd``): ``known``
    holds the outputs of the loops with until that earlier stages ran, ``static_known`` the
    values they computed for ``concrete``, each in the order the trace meets them."""

    deferred: list[Deferred] = field(default_factory=list)
    staged: bool = False
    known: tuple = ()
    static_known: tuple = ()
    untils_seen: int = 0
    concretes_seen: int = 0

    def concrete(self, value, what: str, node: Apply):
        """``value`` as numpy: as it is when tracing knows it, else as an earlier stage computed
        it; else this stage ends to compute it (the top level only: inside a loop or a branch
        there is no stage to end)."""
        if not is_traced(value):
            return np.asarray(value)
        if not self.staged:
            raise NotLowerable(f"mode jax needs the {what} of {node.op} before it runs (XLA's shapes are static), "
                               "but it depends on values computed inside a loop, a branch on a traced condition "
                               "or ss.jax.to_jax; compute it from shapes or constants, or run this function in "
                               "mode 'fast' or 'numba'")
        index = self.concretes_seen
        self.concretes_seen += 1
        if index < len(self.static_known):
            return self.static_known[index].value
        raise StageEnd([value], [], lambda values: Static.of(values[0]), static=True)


def evaluate(fgraph: FunctionGraph, inputs: list, trace: Trace, shared: dict | None = None) -> list:
    """``fgraph``'s outputs for ``inputs`` and the values of the shared variables it reads
    (JAX tracers or numpy values)."""
    from symscan.backends.jax.ops import accumulations_together, lower

    values: dict[Variable, object] = dict(zip(fgraph.inputs, inputs, strict=True))
    values.update(shared or {})
    order = fgraph.toposort()
    together, ready = accumulations_together(order), {}
    for node in order:
        if node in ready:
            results = ready.pop(node)
        else:
            args = [_value_of(v, values) for v in node.inputs]
            try:
                results = _concrete(node, args) if not any(map(is_traced, args)) else None
                if results is None and node in together:
                    results = _lowered_together(node, together[node], values, trace, ready)
                if results is None:
                    results = lower(node, [_as_operand(v, a) for v, a in zip(node.inputs, args)], trace)
            except (NotLowerable, StageEnd):
                raise
            except Exception as err:
                raise with_node_context(err, node) from err
        for var, result in zip(node.outputs, results, strict=True):
            values[var] = result
    return [_value_of(v, values) for v in fgraph.outputs]


def _value_of(var: Variable, values: dict):
    return var.data if isinstance(var, Constant) else values[var]


def _lowered_together(node: Apply, later: list[Apply], values: dict, trace: Trace, ready: dict) -> list | None:
    """``node``'s outputs lowered in one loop with the ``later`` nodes whose inputs are ready
    (their outputs go to ``ready``); None when that does not apply."""
    from symscan.backends.jax.ops import lower_accumulations

    nodes = [node] + [n for n in later if all(isinstance(v, Constant) or v in values for v in n.inputs)]
    if len(nodes) == 1:
        return None
    outputs = lower_accumulations(nodes, [[_value_of(v, values) for v in n.inputs] for n in nodes], trace)
    if outputs is None:
        return None
    ready.update(zip(nodes[1:], outputs[1:]))
    return outputs[0]


LARGEST_CONSTANT_BYTES = 2**16
"""An allocation computed from shapes alone (or a folded constant of one value) larger than
this reaches a lowered op as XLA's own fill, not as a literal in the program (W9's 80 MB of
zeros: compiled in, then copied each call); ops computed with numpy still read it as numpy."""


def _as_operand(var: Variable, value):
    """``value`` as a lowered op reads it: a large Alloc of one value, or a large constant of
    one value (constant folding makes them), as XLA's fill."""
    from symscan.tensor.creation import Alloc

    if not (isinstance(value, np.ndarray) and value.nbytes > LARGEST_CONSTANT_BYTES):
        return value
    filled = var.owner is not None and isinstance(var.owner.op, Alloc) and var.owner.inputs[0].ndim == 0
    if filled or (isinstance(var, Constant) and _one_value(value)):
        import jax.numpy as jnp

        return jnp.broadcast_to(value.flat[0], value.shape)
    return value


def _one_value(value: np.ndarray) -> bool:
    """Every element the same bytes (so -0.0 is not 0.0, and NaNs of one kind are one value)."""
    flat = np.ascontiguousarray(value).reshape(-1)
    raw = flat.view(np.uint8).reshape(flat.size, flat.itemsize)
    return bool(np.all(raw == raw[0]))


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
