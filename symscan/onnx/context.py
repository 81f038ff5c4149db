"""The lowering context: names, nodes and constants of one ONNX graph being written.

Each op class has a lowering (``@lowers(OpClass)``) that appends the ONNX nodes computing a
node from the names of its inputs. Loop bodies are written in child contexts, which see the
enclosing graph's names (ONNX subgraphs may read outer values by name).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper

from symscan.graph.basic import Apply, Constant, Variable, describe
from symscan.graph.fg import FunctionGraph

LOWERINGS: dict[type, Callable] = {}


class ExportError(NotImplementedError):
    """Something in the graph has no ONNX form; the message names the op and the variable."""


def lowers(*op_classes: type) -> Callable:
    """Register ``fn(ctx, node, ins) -> list of output names`` for nodes of these op classes."""

    def register(fn: Callable) -> Callable:
        for cls in op_classes:
            LOWERINGS[cls] = fn
        return fn

    return register


def onnx_type(dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


class Lowering:
    """An ONNX graph under construction (the model's, or a loop body's)."""

    def __init__(self, opset: int, parent: Lowering | None = None):
        self.opset = opset
        self.parent = parent
        self.nodes: list[onnx.NodeProto] = []
        self.names: dict[Variable, str] = {}
        self._taken: set[str] = parent._taken if parent else set()
        self._constants: dict[tuple, str] = {}  # one Constant node per value in this graph
        self.steps_of: dict[str, tuple[str, int]] = {}  # a loop's buffer -> (its steps alone, initial rows)

    # ------------------------------------------------------------------ names
    def fresh(self, hint: str = "t") -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in hint) or "t"
        name, count = base, 0
        while name in self._taken:
            count += 1
            name = f"{base}_{count}"
        self._taken.add(name)
        return name

    def claim(self, name: str) -> str:
        """``name`` itself for a model input or output (ONNX names may be any string), unless
        taken; then a fresh one like it."""
        if name and name not in self._taken:
            self._taken.add(name)
            return name
        return self.fresh(name)

    def _inherited(self, table: str, key):
        """``key``'s entry in the ``table`` of this graph or of the nearest enclosing one (a body
        reads the enclosing graphs' values by name)."""
        context = self
        while context is not None:
            entries = getattr(context, table)
            if key in entries:
                return entries[key]
            context = context.parent
        return None

    def buffer_steps(self, name: str) -> tuple[str, int] | None:
        """(the steps, the number of initial rows) of a loop output ``name`` written as its initial
        rows followed by the steps: ``buffer[rows:]``, what scan returns, is then the steps alone."""
        return self._inherited("steps_of", name)

    def lookup(self, var: Variable) -> str | None:
        return self._inherited("names", var)

    def name_of(self, var: Variable) -> str:
        name = self.lookup(var)
        if name is not None:
            return name
        if isinstance(var, Constant):
            name = self.const(var.data, var.name or "const")
            self.names[var] = name
            return name
        raise ExportError(f"the exported graph needs {describe(var)}, which is not one of its inputs")

    # ------------------------------------------------------------------ nodes
    def op(self, op_type: str, inputs: list[str], n_out: int = 1, hint: str | None = None, **attrs) -> list[str]:
        outs = [self.fresh(hint or op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=self.fresh(f"n_{op_type}"), **attrs))
        return outs

    def op1(self, op_type: str, inputs: list[str], hint: str | None = None, **attrs) -> str:
        return self.op(op_type, inputs, 1, hint, **attrs)[0]

    def const(self, value, hint: str = "const") -> str:
        """A Constant node's output; a value already made in this graph is reused. (Not one of an
        enclosing graph: onnxruntime's optimizers mishandle some values loop bodies read from outside.)"""
        array = np.asarray(value)
        key = (array.dtype.str, array.shape, array.tobytes())
        if key not in self._constants:
            tensor = numpy_helper.from_array(array, name=self.fresh(hint + "_value"))
            self._constants[key] = self.op1("Constant", [], hint=hint, value=tensor)
        return self._constants[key]

    def ints(self, values, hint: str = "ints") -> str:
        return self.const(np.asarray(values, dtype=np.int64), hint)

    def guard(self, value: str, dtype, ok: str, message: str) -> str:
        """``value`` once the bool scalar ``ok`` holds; otherwise running the model fails with
        ``message`` (see ``failed_check``). ONNX has no op that raises: the failing branch of an
        ``If`` gathers out of range, in a node named after the message, which onnxruntime quotes."""
        then, other = Lowering(self.opset, self), Lowering(self.opset, self)
        kept = then.op1("Identity", [value])
        flat = other.op1("Reshape", [value, other.ints([-1])])
        failed = other.fresh("failed")
        other.nodes.append(helper.make_node("Gather", [flat, other.const(np.int64(2 ** 62))], [failed],
                                            name=f"{CHECK_MARK}{self.fresh('check')}: {message}"))
        branches = {f"{key}_branch": helper.make_graph(body.nodes, self.fresh(f"check_{key}"), [],
                                                       [helper.make_tensor_value_info(out, onnx_type(dtype), None)])
                    for key, body, out in (("then", then, kept), ("else", other, failed))}
        return self.op1("If", [ok], hint="checked", **branches)

    def cast(self, name: str, from_dtype, to_dtype) -> str:
        if np.dtype(from_dtype) == np.dtype(to_dtype):
            return name
        return self.op1("Cast", [name], to=onnx_type(to_dtype))

    # ------------------------------------------------------------------ graphs
    def graph(self, fgraph: FunctionGraph, input_names: list[str]) -> list[str]:
        """Lower every node of ``fgraph`` (its inputs already named); the output names."""
        self.names.update(zip(fgraph.inputs, input_names))
        for node in fgraph.toposort():
            self.node(node)
        return [self.name_of(out) for out in fgraph.outputs]

    def node(self, node: Apply) -> None:
        lowering = LOWERINGS.get(type(node.op))
        if lowering is None:
            shown = ", ".join(describe(o) for o in node.outputs)
            raise ExportError(f"{node.op} has no ONNX lowering (it computes {shown}); compute it outside the "
                              "exported function or use mode='py'/'fast'")
        outs = lowering(self, node, [self.name_of(v) for v in node.inputs])
        self.names.update(zip(node.outputs, outs))


CHECK_MARK = "symscan check "


def failed_check(error_text: str) -> str | None:
    """The message of the ``guard`` that failed, read off onnxruntime's error text (None when
    the error came from anywhere else)."""
    match = re.search(re.escape(CHECK_MARK) + r"\S+: (.*?)' Status Message", error_text, re.S)
    return match.group(1) if match else None


def value_info(name: str, var: Variable) -> onnx.ValueInfoProto:
    """A graph input/output declaration with the variable's dtype and static shape."""
    vtype = var.type
    if not hasattr(vtype, "dtype"):
        raise ExportError(f"{describe(var)} is not a tensor, so it cannot be a graph input or output")
    return helper.make_tensor_value_info(name, onnx_type(vtype.dtype), list(vtype.shape))
