"""What ``ss.function`` calls in mode jax: the graph traced once per input signature into one
``jax.jit`` function.

Integer scalars among the inputs are static arguments (a step count or an index decides
shapes, which XLA needs before it runs; each new value traces again). Shared values are
arguments and their updates results, as for the other backends. Checks that depend on input
values run after XLA (``graph.Deferred``). float64 graphs need JAX's 64-bit mode: it is switched
on when this backend loads (``jax_enable_x64``), for the whole process.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from symscan.backends.jax import branches, linalg  # noqa: F401 - they register their lowerings in the op table
from symscan.backends.jax.graph import NotLowerable, Trace, evaluate
from symscan.graph.basic import Variable
from symscan.graph.fg import FunctionGraph


def _jax():
    try:
        import jax
    except ImportError as err:
        raise ImportError("mode 'jax' needs jax: pip install 'symscan[jax]' (or pip install jax)") from err
    jax.config.update("jax_enable_x64", True)
    return jax


class JaxEvaluator:
    """``fgraph`` as a jitted JAX function of its inputs and shared values."""

    def __init__(self, fgraph: FunctionGraph):
        self.jax = _jax()
        _refuse_random(fgraph)
        self.fgraph = fgraph
        self.shared = list(fgraph.shared_variables)
        self.static = tuple(i for i, v in enumerate(fgraph.inputs)
                            if getattr(v.type, "ndim", None) == 0 and np.dtype(v.type.dtype).kind in "iub")
        self._deferred: dict[int, list] = {}  # per trace: its checks' (message, error class)
        self._n_inputs = len(fgraph.inputs)
        self._jitted = self.jax.jit(self._traced, static_argnums=self.static)

    def _traced(self, *values):
        trace = Trace()
        inputs = list(values[:self._n_inputs])
        for i in self.static:
            inputs[i] = np.asarray(inputs[i], dtype=self.fgraph.inputs[i].type.dtype)
        outputs = evaluate(self.fgraph, inputs, trace, dict(zip(self.shared, values[self._n_inputs:])))
        key = len(self._deferred)  # the checks' messages stay here; the traced function returns their key
        self._deferred[key] = [(d.message, d.error) for d in trace.deferred]
        return outputs, [d.conditions for d in trace.deferred], np.int64(key)

    def __call__(self, inputs: Sequence, shared: dict[Variable, object] | None = None) -> list:
        shared = shared or {}
        args = [int(v) if i in self.static else v for i, v in enumerate(inputs)]
        args += [shared[s] for s in self.shared]
        outputs, groups, key = self._jitted(*args)
        for (message, error), conditions in zip(self._deferred[int(key)], groups):
            if not all(bool(np.all(np.asarray(c))) for c in conditions):
                raise error(message)
        return [np.array(v) for v in outputs]


def _refuse_random(fgraph: FunctionGraph) -> None:
    """Random draws are not lowered yet (they will come from ``jax.random``): say so when the
    function is built, naming the draw, rather than at its first call."""
    from symscan.tensor.random import RandomVariable

    for node in fgraph.toposort():
        if isinstance(node.op, RandomVariable):
            raise NotLowerable(f"mode jax does not draw random numbers yet ({node.op}); build this function in "
                               "mode 'fast' or 'numba'")
        for inner in node.op.inner_graphs():
            _refuse_random(inner)
