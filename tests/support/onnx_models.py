"""ONNX models built by hand for the importer tests (tests/onnx/test_import_*.py): value
declarations, Constant nodes, graphs and models (checked by onnx's full checker), onnxruntime
sessions, and a comparison of results that states which output differs.

Dtypes are numpy names ("float32", "int64", "bool"); shapes are tuples whose entries are
lengths or symbolic names ("N").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

import symscan as ss

MODEL_OPSETS = (17, 21)
"""The opsets each hand-built model is written in (Loop and Scan are the same from 16 to 21)."""


def elem_type(dtype: str) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def value(name: str, dtype: str, shape: Sequence | None = ()) -> onnx.ValueInfoProto:
    """A tensor's declaration: ``shape`` None leaves the rank unknown."""
    return helper.make_tensor_value_info(name, elem_type(dtype), None if shape is None else list(shape))


def const(output: str, data, dtype: str | None = None) -> onnx.NodeProto:
    """A Constant node giving ``data`` (as ``dtype`` when given)."""
    array = np.asarray(data, dtype=dtype)
    return helper.make_node("Constant", [], [output], value=numpy_helper.from_array(array, name=output))


def graph(nodes: list, inputs: list, outputs: list, name: str = "body", initializers: dict | None = None):
    """A graph (a model's or a body's); ``initializers`` maps names to arrays."""
    tensors = [numpy_helper.from_array(np.asarray(v), name=k) for k, v in (initializers or {}).items()]
    return helper.make_graph(nodes, name, inputs, outputs, initializer=tensors)


def model(nodes: list, inputs: list, outputs: list, opset: int = 17, initializers: dict | None = None,
          check: bool = True) -> onnx.ModelProto:
    """A model of the default domain at ``opset``, passed through onnx's full checker."""
    built = helper.make_model(graph(nodes, inputs, outputs, name="model", initializers=initializers),
                              opset_imports=[helper.make_opsetid("", opset)])
    if check:
        onnx.checker.check_model(built, full_check=True)
    return built


def session(model_proto: onnx.ModelProto):
    """An onnxruntime session; the two optimizers the README names are off (symscan-exported
    models need that, hand-built ones do not mind)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(model_proto.SerializeToString(), options, providers=["CPUExecutionProvider"],
                                disabled_optimizers=["NoopElimination", "ConstantFolding"])


def feeds(model_proto: onnx.ModelProto, values: Sequence) -> dict:
    """The values by the names of the model's inputs (those without initializers), in order."""
    defaults = {t.name for t in model_proto.graph.initializer}
    names = [i.name for i in model_proto.graph.input if i.name not in defaults]
    assert len(names) == len(values), f"{len(values)} values for the inputs {names}"
    return {name: np.asarray(v) for name, v in zip(names, values)}


def run_onnxruntime(model_proto: onnx.ModelProto, values: Sequence) -> list:
    return session(model_proto).run(None, feeds(model_proto, values))


def check(model_proto: onnx.ModelProto, mode: str, *value_sets, numpy_loop=None, what: str = "") -> None:
    """For each list of values: the imported function (compiled once, in ``mode``) gives
    onnxruntime's outputs, and ``numpy_loop(*values)``'s when given."""
    f = ss.onnx.import_function(model_proto, mode=mode)
    for values in value_sets:
        got = f(*values)
        assert_outputs(got, run_onnxruntime(model_proto, values), f"{what}mode {mode!r} vs onnxruntime on {values}")
        if numpy_loop is not None:
            assert_outputs(got, numpy_loop(*values), f"{what}mode {mode!r} vs the numpy loop on {values}")


def run_symscan(model_proto: onnx.ModelProto, mode: str, values: Sequence, **kwargs) -> list:
    """The model imported and compiled in ``mode`` (``import_function``), called on ``values``."""
    return ss.onnx.import_function(model_proto, mode=mode, **kwargs)(*values)


def assert_outputs(got: Sequence, expected: Sequence, what: str, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    """Same number of outputs, each of the same dtype and shape; floats within ``rtol``/``atol``,
    ints and bools exact."""
    assert len(got) == len(expected), f"{what}: {len(got)} outputs instead of {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        g, e = np.asarray(g), np.asarray(e)
        where = f"{what}, output {i}"
        assert (g.dtype, g.shape) == (e.dtype, e.shape), f"{where}: {g.dtype}{g.shape} instead of {e.dtype}{e.shape}"
        if e.dtype.kind == "f":
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=where)
        else:
            np.testing.assert_array_equal(g, e, err_msg=where)


def op_types(graph_proto: onnx.GraphProto) -> list[str]:
    """The op types of a graph's nodes and of its bodies' nodes, in order."""
    found = []
    for node in graph_proto.node:
        found.append(node.op_type)
        for attribute in node.attribute:
            for sub in [attribute.g] if attribute.type == onnx.AttributeProto.GRAPH else attribute.graphs:
                found += op_types(sub)
    return found


def loop_body(nodes: list, carried: Sequence = (), scan_outputs: Sequence = (), cond_out: str = "cond_in",
              initializers: dict | None = None, name: str = "body", iteration: str = "i") -> onnx.GraphProto:
    """A Loop body: inputs ``iteration`` (int64) and ``cond_in`` (bool), then each carried
    value's input; outputs ``cond_out``, each carried value's output, the scan outputs.
    ``carried``: ``(name_in, name_out, dtype, shape)``; ``scan_outputs``: ``(name, dtype, shape)``."""
    inputs = [value(iteration, "int64"), value("cond_in", "bool")] + [value(n_in, d, s) for n_in, _, d, s in carried]
    outputs = ([value(cond_out, "bool")] + [value(n_out, d, s) for _, n_out, d, s in carried]
               + [value(n, d, s) for n, d, s in scan_outputs])
    return graph(nodes, inputs, outputs, name=name, initializers=initializers)
