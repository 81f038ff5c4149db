"""``Composite``: one elementwise node for a fused chain of elementwise ops.

The fusion rewrite (``rewrites/fusion.py``) replaces a connected group of ``Elemwise`` and
``Cast`` nodes by one ``Composite`` node, so that a backend can compute the whole chain in one
pass over memory (one loop in numba, ``out=`` buffers in the fast evaluator).

Contract for backends:

- ``op.inner`` is a FunctionGraph over 0-d variables: inner input ``i`` is a 0-d
  ``TensorType`` of the dtype of the node's input ``i``; the inner outputs are computed by
  ``Elemwise`` and ``Cast`` nodes only, from the inner inputs and 0-d constants (an inner output
  is never an inner input or a constant itself). ``op.inner.toposort()`` (or ``inner_nodes(op)``)
  lists the chain in evaluation order.
- **Broadcasting: numpy's, right-aligned.** The node's inputs may have fewer dimensions than
  its outputs (a 0-d input, a bias vector added to a matrix) and lengths of 1 that stretch,
  exactly as ``Elemwise``'s. Every output has the broadcast shape of *all* the node's inputs
  (``broadcast_static_shapes``) and the dtype of its inner output. Element ``idx`` of every
  output is the inner graph evaluated on the inputs' elements at ``idx`` (broadcast).
- Each inner node computes in its own dtype, as the unfused chain did: a backend must keep the
  intermediate dtypes (an int64 sum stays int64 before a float op reads it).
- ``perform`` evaluates the inner graph with the same numpy functions on the whole arrays, so its
  results, warnings and errors are those of the unfused chain.

What the rewrite builds, beyond the contract: the first output is the chain's last node, the
others are values the graph reads elsewhere too; in a node with axes every inner value (outputs
included) reads at least one input with axes, and every output reads all of them (so none
needs broadcasting to the output shape); 0-d constants are inner, others are inputs; no input
appears twice. The inplace rewrite may mark a one-output node ``node.tag["inplace"] = i``
(input ``i`` is memory nothing else reads, of the output's dtype and rank) and, in a loop body,
``node.tag["into_buffer"]``, as it marks ``Elemwise`` nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from symscan.graph.basic import Apply, Constant, Op, Variable, describe
from symscan.graph.fg import FunctionGraph
from symscan.graph.signature import StructuralEquality, graph_signature
from symscan.graph.type import TensorType
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.elemwise import Cast, Elemwise, broadcast_static_shapes

SHORT_LABEL = 60
"""``str(op)`` shows the whole formula up to this many characters, else the ops' names."""


@dataclass(frozen=True, eq=False)
class Composite(StructuralEquality, Op):
    """A fused chain of elementwise ops; ``inner`` computes one element of each output."""

    inner: FunctionGraph
    _signature: tuple | None = field(default=None, repr=False, compare=False)
    _hash: int | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        check_inner_graph(self.inner)

    def structure_params(self) -> tuple:
        return ()

    def signature(self) -> tuple:
        # the inner graph is not one of ``inner_graphs()``: rewrites and pictures do not enter it
        if self._signature is None:
            object.__setattr__(self, "_signature", graph_signature(self.inner))
        return self._signature

    def make_node(self, *inputs) -> Apply:
        inputs = [as_tensor_variable(i) for i in inputs]
        if len(inputs) != len(self.inner.inputs):
            raise TypeError(f"{self} takes {len(self.inner.inputs)} inputs, got {len(inputs)}")
        for position, (outer, inner) in enumerate(zip(inputs, self.inner.inputs)):
            if outer.dtype != inner.dtype:
                raise TypeError(f"{self}: input {position} {describe(outer)} must have dtype {inner.dtype}")
        shape = broadcast_static_shapes(inputs, str(self))
        return Apply(self, inputs, [TensorType(out.dtype, shape) for out in self.inner.outputs])

    def perform(self, node: Apply, inputs: list) -> list:
        values = evaluate_inner(self.inner, [np.asarray(v) for v in inputs])
        shape = np.broadcast_shapes(*[np.shape(v) for v in inputs])
        return [_shaped(v, shape, out.dtype) for v, out in zip(values, node.outputs)]

    def formula(self) -> str:
        """The outputs as nested calls of the inputs ``i0, i1, ...`` (comma-separated)."""
        return ", ".join(expression(self.inner, out) for out in self.inner.outputs)

    def __repr__(self) -> str:
        return f"Composite{{{self.formula()}}}"

    def __str__(self) -> str:
        text = self.formula()
        if len(text) > SHORT_LABEL:
            names = [_op_name(n.op) for n in self.inner.toposort()]
            text = ",".join(dict.fromkeys(names))
            text = f"{text} ({len(names)} ops)" if len(text) <= SHORT_LABEL else f"{len(names)} ops"
        return f"Composite{{{text}}}"


def inner_nodes(op: Composite) -> list[Apply]:
    """The inner chain's nodes in evaluation order (what a backend lowers one by one)."""
    return op.inner.toposort()


def check_inner_graph(inner: FunctionGraph) -> None:
    """The contract of the module docstring; a broken one is a bug in whoever built it."""
    for var in inner.inputs:
        if not isinstance(var.type, TensorType) or var.type.ndim != 0:
            raise TypeError(f"Composite: inner input {describe(var)} must be a 0-d tensor")
    for node in inner.apply_nodes:
        if not isinstance(node.op, (Elemwise, Cast)):
            raise TypeError(f"Composite: the inner graph may hold Elemwise and Cast nodes only, not {node.op}")
        for var in node.inputs:
            if isinstance(var, Constant) and var.type.ndim != 0:
                raise TypeError(f"Composite: inner constant {describe(var)} must be 0-d")
        if node.outputs[0].type.ndim != 0:
            raise TypeError(f"Composite: inner node {node.op} must compute a 0-d value")
    for var in inner.outputs:
        if var.owner is None:
            raise TypeError(f"Composite: inner output {describe(var)} must be computed by an inner node")


def evaluate_inner(inner: FunctionGraph, inputs: list) -> list:
    """The inner graph on whole arrays with the Elemwise/Cast ``perform`` (numpy broadcasting)."""
    values: dict[Variable, object] = dict(zip(inner.inputs, inputs, strict=True))
    for node in inner.toposort():
        args = [v.data if isinstance(v, Constant) else values[v] for v in node.inputs]
        values[node.outputs[0]] = node.op.perform(node, args)[0]
    return [values[v] for v in inner.outputs]


def _shaped(value, shape: tuple, dtype: str) -> np.ndarray:
    """``value`` as an array of the node's output shape and dtype (numpy gives scalars for 0-d)."""
    value = np.asarray(value)
    if value.shape != shape:  # an output that reads only some inputs: broadcast as documented
        value = np.array(np.broadcast_to(value, shape), copy=True)
    return value if value.dtype == dtype else value.astype(dtype)


def _op_name(op) -> str:
    return op.name if isinstance(op, Elemwise) else op.dtype


def expression(inner: FunctionGraph, var: Variable) -> str:
    """``var`` as nested calls: ``sigmoid(add(i0, i1))``; inner inputs are ``i0, i1, ...``."""
    if var in inner.inputs:
        return f"i{inner.inputs.index(var)}"
    if isinstance(var, Constant):
        return _constant_text(var.data)
    args = ", ".join(expression(inner, v) for v in var.owner.inputs)
    return f"{_op_name(var.owner.op)}({args})"


def _constant_text(data: np.ndarray) -> str:
    value = np.asarray(data)[()]
    return repr(value.item()) if isinstance(value, np.generic) else repr(value)


def composite_of(inputs: list[Variable], outputs: list[Variable]) -> tuple[Composite, list[Variable]]:
    """A Composite computing ``outputs`` (results of elementwise nodes) from ``inputs`` (the
    outer values the chain reads); returns the op and its node's outputs, in ``outputs``' order."""
    inner_inputs = [TensorType(v.dtype, ()).make_variable() for v in inputs]
    memo: dict[Variable, Variable] = dict(zip(inputs, inner_inputs))
    inner_outputs = [_rebuild_scalar(v, memo) for v in outputs]
    op = Composite(FunctionGraph(inner_inputs, inner_outputs, clone=False))
    return op, op.make_node(*inputs).outputs


def _rebuild_scalar(var: Variable, memo: dict) -> Variable:
    """The 0-d counterpart of ``var`` (an Elemwise/Cast result over ``memo``'s keys)."""
    if var in memo:
        return memo[var]
    if isinstance(var, Constant):
        if var.type.ndim != 0:  # its axes count in the broadcast shape
            raise ValueError(f"Composite: constant {describe(var)} is not 0-d; pass it as an input")
        return var
    node = var.owner
    if node is None or not isinstance(node.op, (Elemwise, Cast)):
        raise ValueError(f"Composite: {describe(var)} is not computed by an elementwise op; pass it as an input")
    args = [_rebuild_scalar(v, memo) for v in node.inputs]
    memo[var] = node.op.make_node(*args).outputs[0]
    return memo[var]


__all__ = ["Composite", "composite_of", "evaluate_inner", "expression", "inner_nodes"]
