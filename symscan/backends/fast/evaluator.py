"""FastEvaluator: generate the source of a FunctionGraph once, compile it, call it."""

from __future__ import annotations

import linecache
import weakref
from collections.abc import Sequence

from symscan.backends.fast import branches, fused, loops, ops  # noqa: F401  (branches, fused: their emitters register)
from symscan.backends.fast.codegen import EMITTERS, Codegen
from symscan.backends.reference import with_node_context
from symscan.graph.fg import FunctionGraph


class FastEvaluator:
    """Evaluate ``fgraph`` with generated Python (see ``.source``); same interface and results
    as the reference interpreter."""

    def __init__(self, fgraph: FunctionGraph, name: str = "symscan_function"):
        self.fgraph = fgraph
        self.name = name
        gen = Codegen(self.emitters(), frees=True)
        gen.namespace.update(ops.elemwise_namespace())
        gen.namespace.update(loops.HELPERS)
        self.shared = fgraph.shared_variables
        params = [f"in{i}" for i in range(len(fgraph.inputs))] + [f"shared{i}" for i in range(len(self.shared))]
        names = dict(zip(list(fgraph.inputs) + self.shared, params))
        for var, param in names.items():
            if getattr(var.type, "ndim", None) == 0:
                # numpy scalars, not 0-d arrays: scalar arithmetic is several times faster
                gen.line(f"{param} = {param}[()]")
        results = gen.graph(fgraph, names)
        self.source = gen.source(name, params, results)
        self._filename = f"<symscan generated: {name} {id(self):x}>"
        self._line_nodes = gen.line_nodes
        # tracebacks and profilers show the generated lines, for as long as the function lives
        linecache.cache[self._filename] = (len(self.source), None, self.source.splitlines(True), self._filename)
        weakref.finalize(self, linecache.cache.pop, self._filename, None)
        code = compile(self.source, self._filename, "exec")
        exec(code, gen.namespace)
        self._fn = gen.namespace[name]
        self.profile: dict[str, dict] = gen.namespace.get("_profile", {})

    def emitters(self) -> dict:
        """The op table (the numba backend swaps the loop's emitter)."""
        return EMITTERS

    def __getstate__(self) -> dict:
        """Pickle the graph only: generated code objects and their namespace do not pickle."""
        return {"fgraph": self.fgraph, "name": self.name}

    def __setstate__(self, state: dict) -> None:
        """Generate and compile the code again (the same source for the same graph)."""
        self.__init__(state["fgraph"], state["name"])

    def __call__(self, inputs: Sequence, shared: dict | None = None) -> list:
        shared = shared or {}
        try:
            return self._fn(*inputs, *[shared[v] for v in self.shared])
        except Exception as err:
            node = self._failing_node(err)
            if node is None:
                raise
            raise with_node_context(err, node) from err

    def _failing_node(self, err: Exception):
        """The node whose generated line raised (the innermost frame of the generated code)."""
        node, tb = None, err.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == self._filename:
                node = self._line_nodes.get(tb.tb_lineno, node)
            tb = tb.tb_next
        return node
