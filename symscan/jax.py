"""``ss.jax.to_jax(f)``: a compiled symscan function as a pure JAX function, for users who
``jit``, ``vmap``, ``grad`` or shard it inside their own JAX code.

The pure function takes ``f``'s inputs, then the values of the shared variables it reads (in
the order of its ``shared`` attribute), and returns a tuple: ``f``'s outputs, then the new
values of its updates. Its derivative is symscan's: ``jax.grad`` through it runs the pullback
``ss.grad`` builds (a custom VJP), lowered to JAX as any graph, so gradients through loops
(``truncate_gradient``, disconnected inputs) are the other modes' exactly. Integer scalar
inputs that decide shapes must be Python ints or concrete arrays (XLA's shapes are static).
Checks that depend on input values (an index out of range, a singular matrix) raise through
``jax.debug.callback`` (as an error of XLA's runtime under ``jit``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from symscan.compile.function import Function


def to_jax(f: Function) -> Callable:
    """The pure JAX function computing ``f`` (see the module docstring for its signature)."""
    from symscan.backends.jax.evaluator import JaxEvaluator

    evaluator = f._evaluate if isinstance(f._evaluate, JaxEvaluator) else JaxEvaluator(f.fgraph)
    pure = _PureFunction(f, evaluator)
    return pure.as_jax()


class _PureFunction:
    def __init__(self, f: Function, evaluator) -> None:
        self.f, self.fgraph = f, evaluator.fgraph
        self.shared = list(self.fgraph.shared_variables)
        self.n_inputs = len(self.fgraph.inputs)
        self._vjp_graph = None

    def as_jax(self) -> Callable:
        import jax

        @jax.custom_vjp
        def pure(*values):
            return self.forward(values)

        def forward(*values):
            return self.forward(values), values

        def backward(values, cotangents):
            grads = self.pullback(values, cotangents)
            return tuple(grads.get(i) for i in range(len(values)))

        pure.defvjp(forward, backward)
        pure.shared = list(self.shared)
        pure.__doc__ = (f"symscan function {self.f.name or ''} as a pure JAX function: arguments "
                        f"{[str(v) for v in self._arguments()]}, results {[str(v) for v in self.fgraph.outputs]}")
        return pure

    def _arguments(self) -> list:
        return list(self.fgraph.inputs) + self.shared

    def _split(self, values) -> tuple[list, dict]:
        if len(values) != len(self._arguments()):
            names = ", ".join(str(v) for v in self._arguments())
            raise TypeError(f"the JAX function of {self.f.name or 'this function'} takes {len(self._arguments())} "
                            f"arguments ({names}: the inputs, then the shared values), got {len(values)}")
        inputs = [_concrete_int(v, var) for v, var in zip(values[:self.n_inputs], self.fgraph.inputs)]
        return inputs, dict(zip(self.shared, values[self.n_inputs:]))

    def forward(self, values) -> tuple:
        from symscan.backends.jax.graph import Trace, evaluate

        inputs, shared = self._split(values)
        trace = Trace()
        outputs = evaluate(self.fgraph, inputs, trace, shared)
        _raise_through_callbacks(trace)
        return tuple(outputs)

    def pullback(self, values, cotangents) -> dict[int, object]:
        """symscan's gradient of sum(output * cotangent) w.r.t. each float argument."""
        from symscan.backends.jax.graph import Trace, evaluate

        graph, positions = self._pullback_graph()
        inputs, shared = self._split(values)
        floats = [ct for ct, out in zip(cotangents, self.fgraph.outputs) if _is_float(out)]
        trace = Trace()
        grads = evaluate(graph, inputs + floats, trace, shared)
        _raise_through_callbacks(trace)
        return dict(zip(positions, grads))

    def _pullback_graph(self):
        if self._vjp_graph is None:
            from symscan.gradient.grad import grad
            from symscan.graph.fg import FunctionGraph

            outputs = [o for o in self.fgraph.outputs if _is_float(o)]
            cotangents = [o.type.make_variable(name=f"d{o.name or 'output'}") for o in outputs]
            positions = [i for i, v in enumerate(self._arguments()) if _is_float(v)]
            wrt = [self._arguments()[i] for i in positions]
            grads = grad(None, wrt, known_grads=dict(zip(outputs, cotangents)), disconnected_inputs="ignore")
            self._vjp_graph = (FunctionGraph(list(self.fgraph.inputs) + cotangents, grads, clone=False), positions)
        return self._vjp_graph


def _is_float(var) -> bool:
    dtype = getattr(var.type, "dtype", None)
    return dtype is not None and np.dtype(dtype).kind == "f"


def _concrete_int(value, var):
    """A Python int stays concrete (numpy), so that shapes it decides are static."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return np.asarray(value, dtype=var.type.dtype)
    return value


def _raise_through_callbacks(trace) -> None:
    import jax

    for deferred in trace.deferred:
        def check(*conditions, message=deferred.message, error=deferred.error):
            if not all(bool(np.all(np.asarray(c))) for c in conditions):
                raise error(message)

        jax.debug.callback(check, *deferred.conditions)
