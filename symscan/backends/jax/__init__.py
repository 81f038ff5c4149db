"""Mode "jax": the optimised graph as one ``jax.jit`` function (XLA on CPUs, GPUs and TPUs).

``graph.py`` walks a graph with JAX values, ``ops.py`` is the op table, ``loops.py`` lowers
Scan to ``lax.scan``, ``evaluator.py`` is what ``ss.function`` calls. jax is an optional
dependency (the extra ``jax``): nothing here is imported unless mode "jax" is asked for.
"""

from symscan.backends.jax.evaluator import JaxEvaluator

__all__ = ["JaxEvaluator"]
