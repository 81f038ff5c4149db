"""The import context: names in scope, the op table, node calls and build-time values.

Each ONNX op type has a converter (``@converts("Add", ...)``) that builds the symscan graph
of one node from its inputs (symscan variables) and attributes. Loop and Scan bodies are
converted in child scopes, which see the enclosing graph's names (ONNX subgraphs may read
outer values by name); symscan's ``scan`` then finds those outer variables by itself.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper

from symscan.graph.basic import Constant, Variable
from symscan.graph.traversal import ancestors
from symscan.graph.type import SUPPORTED_DTYPES, TensorType
from symscan.scan.checks import AfterChecks
from symscan.scan.op import Scan
from symscan.tensor.basic import MAX_FOLDED_ELEMENTS, constant
from symscan.tensor.random import RandomVariable
from symscan.tensor.shape import Shape

CONVERTERS: dict[str, Callable] = {}
ONNX_DOMAINS = ("", "ai.onnx")


class ModelImportError(NotImplementedError):
    """Something in the ONNX model has no symscan form; the message names the op and the node."""


class StaticInputsNeeded(ModelImportError):
    """A value symscan needs when it builds the graph (an axis, a rank) is computed from graph
    inputs; ``input_names`` are those inputs (``load(..., static_inputs=...)`` can fix them)."""

    def __init__(self, message: str, variables: list[Variable]):
        super().__init__(message)
        self.variables = variables
        self.input_names: list[str] = []


def converts(*op_types: str) -> Callable:
    """Register ``fn(node: NodeCall) -> list of output variables`` for these ONNX op types."""

    def register(fn: Callable) -> Callable:
        for op_type in op_types:
            CONVERTERS[op_type] = fn
        return fn

    return register


def supported_ops() -> list[str]:
    """The ONNX op types (default domain) that import."""
    return sorted(CONVERTERS)


# ---------------------------------------------------------------------------- types and values
def numpy_dtype(elem_type: int, what: str) -> str:
    """The symscan dtype of an ONNX element type, or an error naming ``what``."""
    try:
        name = np.dtype(helper.tensor_dtype_to_np_dtype(elem_type)).name
    except (KeyError, TypeError, ValueError):
        name = None
    if name not in SUPPORTED_DTYPES:
        onnx_name = onnx.TensorProto.DataType.Name(elem_type) if elem_type in onnx.TensorProto.DataType.values() \
            else str(elem_type)
        raise ModelImportError(f"{what} holds ONNX {onnx_name}, which symscan has no dtype for; "
                               f"symscan holds {', '.join(SUPPORTED_DTYPES)}")
    return name


def tensor_type(type_proto: onnx.TypeProto, what: str) -> TensorType:
    """A symscan tensor type for an ONNX value type: static lengths kept, symbolic ones None."""
    kind = type_proto.WhichOneof("value")
    if kind != "tensor_type":
        raise ModelImportError(f"{what} is an ONNX {kind or 'untyped value'}; symscan imports tensors only "
                               "(no sequences, optionals or maps)")
    tensor = type_proto.tensor_type
    if not tensor.HasField("shape"):
        raise ModelImportError(f"{what} has no rank in the model; symscan needs each input's number of "
                               "dimensions (give the graph input a shape, with symbolic names for unknown lengths)")
    shape = tuple(d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim)
    return TensorType(numpy_dtype(tensor.elem_type, what), shape)


def array_of(tensor: onnx.TensorProto, what: str) -> np.ndarray:
    numpy_dtype(tensor.data_type, what)
    return numpy_helper.to_array(tensor)


# ---------------------------------------------------------------------------- scopes
class Scope:
    """The values named in one ONNX graph (the model's or a body's); lookups fall back to the
    enclosing graph's."""

    def __init__(self, parent: Scope | None = None):
        self.parent = parent
        self.values: dict[str, Variable] = {}
        self.checks: list[Variable] = []  # imported checks (Assert); unread ones ride on an output

    def lookup(self, name: str) -> Variable | None:
        scope = self
        while scope is not None:
            if name in scope.values:
                return scope.values[name]
            scope = scope.parent
        return None

    def bind(self, name: str, var: Variable) -> None:
        self.values[name] = var


@dataclass
class Importer:
    """Converts ONNX graphs; ``opset`` is the model's default-domain version."""

    opset: int

    def convert_graph(self, graph: onnx.GraphProto, scope: Scope) -> list[Variable]:
        """Convert every node of ``graph`` in ``scope`` (its inputs already bound); its outputs."""
        for tensor in graph.initializer:
            if tensor.name in scope.values:  # an input with a default value, bound already
                continue
            scope.bind(tensor.name, constant(array_of(tensor, f"initializer {tensor.name!r}"), name=tensor.name))
        for position, node in enumerate(graph.node):
            self.convert_node(node, position, scope, graph.name)
        outputs = []
        for out in graph.output:
            var = scope.lookup(out.name)
            if var is None:
                raise ModelImportError(f"graph {graph.name!r}: output {out.name!r} is computed by no node")
            outputs.append(var)
        return with_unread_checks(outputs, scope.checks)

    def convert_node(self, node: onnx.NodeProto, position: int, scope: Scope, graph_name: str) -> None:
        call = NodeCall(self, node, position, scope, graph_name)
        if node.domain not in ONNX_DOMAINS:
            raise ModelImportError(f"{call.where}: ops of domain {node.domain!r} have no symscan form "
                                   "(symscan imports the default ONNX domain)")
        converter = CONVERTERS.get(node.op_type)
        if converter is None:
            raise ModelImportError(f"{call.where}: ONNX op {node.op_type} has no symscan form; "
                                   "symscan.onnx.supported_ops() lists the ops that import")
        try:
            results = converter(call)
        except ModelImportError:
            raise
        except (TypeError, ValueError, IndexError) as err:  # symscan's build-time errors, with the node named
            raise type(err)(f"{call.where}: {err}") from err
        if len(results) < len([o for o in node.output if o]):
            raise AssertionError(f"{call.where}: the converter returned {len(results)} results: a bug in symscan")
        if all(isinstance(v, Constant) for v in call.inputs if v is not None):
            results = [fold_constant(var) for var in results]
        for name, var in zip(node.output, results):
            if name:
                if var.name is None:
                    var.name = name  # dprint and pictures show the model's names
                scope.bind(name, var)


class NodeCall:
    """One node being converted: its inputs (symscan variables, None where omitted), its
    attributes, and where it is (for errors)."""

    def __init__(self, importer: Importer, node: onnx.NodeProto, position: int, scope: Scope, graph_name: str):
        self.importer, self.node, self.scope = importer, node, scope
        self.op_type = node.op_type
        label = node.name or f"#{position}"
        outputs = ", ".join(repr(o) for o in node.output if o)
        self.where = f"ONNX node {label!r} ({node.op_type} -> {outputs}) in graph {graph_name!r}"
        self.inputs: list[Variable | None] = []
        for name in node.input:
            if not name:
                self.inputs.append(None)
                continue
            var = scope.lookup(name)
            if var is None:
                raise ModelImportError(f"{self.where}: input {name!r} is not computed before this node "
                                       "(nodes must be in topological order) nor an input of an enclosing graph")
            self.inputs.append(var)
        self.attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}

    @property
    def opset(self) -> int:
        return self.importer.opset

    def input(self, position: int) -> Variable | None:
        """Input ``position``, or None when the node omits it."""
        return self.inputs[position] if position < len(self.inputs) else None

    def attr(self, name: str, default=None):
        value = self.attrs.get(name, default)
        return value.decode() if isinstance(value, bytes) else value

    def fail(self, why: str) -> ModelImportError:
        """An error for a form of the op symscan does not import (the caller raises it)."""
        return ModelImportError(f"{self.where}: {why}")

    def static(self, position: int, what: str) -> np.ndarray:
        """The value of input ``position`` when the model is loaded (an initializer, a Constant,
        or computed from those); symscan needs it then because it decides shapes or axes."""
        var = self.input(position)
        value = None if var is None else static_value(var)
        if value is None:
            shown = self.node.input[position] if position < len(self.node.input) else "(omitted)"
            raise StaticInputsNeeded(
                f"{self.where}: input {position} ({what}, {shown!r}) must be known when the model is loaded, because "
                "symscan fixes the number of dimensions and the axes when it builds the graph; make it an "
                "initializer or a Constant, or pass the graph inputs it is computed from in "
                "load(..., static_inputs={name: value})", [] if var is None else [var])
        return value

    def static_or(self, position: int, what: str, default):
        """``static(position)``, or ``default`` when the input is omitted."""
        return default if self.input(position) is None else self.static(position, what)


def with_unread_checks(outputs: list[Variable], checks: list[Variable]) -> list[Variable]:
    """``outputs``, each computed after the checks no output reads (onnxruntime runs every node,
    so a failing check fails the model even when nothing reads it). Each: a loop body's first
    output is its condition, which a for loop drops."""
    needed = set(ancestors(outputs))
    unread = [c for c in checks if c not in needed]
    return [AfterChecks()(out, *unread) for out in outputs] if unread else outputs


# ---------------------------------------------------------------------------- build-time values
_KNOWN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Each variable's build-time value (or None), once worked out: a variable's value never changes."""


def static_value(var: Variable) -> np.ndarray | None:
    """``var``'s value when it follows from constants and static lengths alone (computed now,
    with the ops' reference implementations, up to ``MAX_FOLDED_ELEMENTS``), else None."""
    try:
        return _KNOWN[var]
    except KeyError:
        pass
    _KNOWN[var] = value = _static_value(var)
    return value


def _static_value(var: Variable) -> np.ndarray | None:
    if isinstance(var, Constant):
        return np.asarray(var.data)
    node = var.owner
    if node is None or isinstance(node.op, (Scan, RandomVariable)):
        return None
    if isinstance(node.op, Shape):
        lengths = node.inputs[0].type.shape
        return None if None in lengths else np.asarray(lengths, dtype=np.int64)
    lengths = var.type.shape
    if None not in lengths and np.prod(lengths, dtype=float) > MAX_FOLDED_ELEMENTS:
        return None  # judged before computing it
    inputs = [static_value(v) for v in node.inputs]
    if any(v is None for v in inputs):
        return None
    try:
        with np.errstate(all="ignore"):
            results = node.op.perform(node, inputs)
    except Exception:  # an error stays a run-time one
        return None
    return np.asarray(results[var.index], dtype=var.type.dtype)


def fold_constant(var: Variable) -> Variable:
    """``var`` as a constant when it is computed from constants (so that later nodes see static
    values: shapes, axes, an If's condition); as it is when computing it fails or it is big."""
    if isinstance(var, Constant) or var.owner is None:
        return var
    value = static_value(var)
    if value is None or value.size > MAX_FOLDED_ELEMENTS:
        return var
    return constant(value, name=var.name)
