"""``load()``: an ONNX model as symscan variables, ``(inputs, outputs)``.

Graph inputs become symbolic inputs of the declared dtype and static lengths (symbolic
lengths are unknown). An input with an initializer (a default value the caller may override,
IR version 4 and newer) becomes a shared variable holding it, as ``export`` writes shared
variables; other initializers are constants. Model-local functions are inlined first.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import onnx

import symscan.onnx.importer.control  # noqa: F401  (registers the converters)
import symscan.onnx.importer.elementwise  # noqa: F401
import symscan.onnx.importer.indexing  # noqa: F401
import symscan.onnx.importer.shape_ops  # noqa: F401
import symscan.onnx.importer.tensor_ops  # noqa: F401
from symscan.graph.basic import Variable
from symscan.graph.traversal import graph_inputs
from symscan.onnx.importer.context import (
    Importer,
    ModelImportError,
    Scope,
    StaticInputsNeeded,
    array_of,
    tensor_type,
)
from symscan.tensor.basic import constant
from symscan.tensor.shared import shared

OVERRIDABLE_INITIALIZERS_SINCE_IR = 4


def as_model(model_or_path) -> onnx.ModelProto:
    """A ModelProto from a ModelProto, a path or serialized bytes."""
    if isinstance(model_or_path, onnx.ModelProto):
        return model_or_path
    if isinstance(model_or_path, (bytes, bytearray)):
        return onnx.load_from_string(bytes(model_or_path))
    if isinstance(model_or_path, (str, Path)):
        return onnx.load(str(model_or_path))
    raise TypeError(f"load: expected an onnx.ModelProto, a path or serialized bytes, got "
                    f"{type(model_or_path).__name__}")


def model_opset(model: onnx.ModelProto) -> int:
    for opset in model.opset_import:
        if opset.domain in ("", "ai.onnx"):
            return opset.version
    raise ModelImportError("the model imports no version of the default ONNX domain (opset_import)")


def load(model_or_path, static_inputs: Mapping[str, object] | None = None) -> tuple[list[Variable], list[Variable]]:
    """``(inputs, outputs)`` of an ONNX model: symscan variables, ready for ``ss.function``.

    ``static_inputs`` fixes graph inputs to values (they become constants and leave the inputs):
    for inputs symscan must know when it builds the graph, such as a Slice's axes.
    """
    model = as_model(model_or_path)
    if model.functions:
        model = onnx.inliner.inline_local_functions(model)
    graph = model.graph
    static_inputs = dict(static_inputs or {})
    unknown = set(static_inputs) - {i.name for i in graph.input}
    if unknown:
        raise ValueError(f"load: static_inputs names {sorted(unknown)}, which are not inputs of the model; "
                         f"its inputs are {[i.name for i in graph.input]}")
    importer = Importer(model_opset(model))
    scope, inputs = Scope(), []
    defaults = {t.name: t for t in graph.initializer}
    overridable = model.ir_version >= OVERRIDABLE_INITIALIZERS_SINCE_IR
    for declared in graph.input:
        name, what = declared.name, f"graph input {declared.name!r}"
        vtype = tensor_type(declared.type, what)
        if name in static_inputs:
            var = constant(np.asarray(static_inputs[name], dtype=vtype.dtype), name=name)
        elif name in defaults:
            value = array_of(defaults[name], what)
            var = shared(value, name=name) if overridable else constant(value, name=name)
        else:
            var = vtype.make_variable(name=name)
            inputs.append(var)
        scope.bind(name, var)
    try:
        outputs = importer.convert_graph(graph, scope)
    except StaticInputsNeeded as err:
        err.input_names = [v.name for v in graph_inputs(err.variables) if v in inputs]
        raise
    return inputs, outputs
