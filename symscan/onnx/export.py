"""``export()``: a compiled function (or output variables) as an ONNX model.

Model inputs are the function's inputs in order, named after the variables, then each
shared variable the graph reads, as an input whose initializer holds its current value (so
it may be left out of the feeds, or overridden). Model outputs are the function's outputs in
order, then the new value of each updated shared variable, in the order of its updates.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

import symscan.onnx.branches  # noqa: F401  (registers the lowerings)
import symscan.onnx.checks  # noqa: F401
import symscan.onnx.fused  # noqa: F401
import symscan.onnx.indexing  # noqa: F401
import symscan.onnx.loops  # noqa: F401
import symscan.onnx.recurrences  # noqa: F401
import symscan.onnx.sort  # noqa: F401
import symscan.onnx.tensor_ops  # noqa: F401
from symscan.graph.basic import SharedVariable, Variable
from symscan.graph.fg import FunctionGraph
from symscan.graph.traversal import graph_inputs
from symscan.onnx.context import ExportError, Lowering, value_info

MIN_OPSET = 16


@functools.lru_cache(maxsize=1)
def default_opset() -> int:
    """The newest opset both the installed onnx and onnxruntime support (at least 16)."""
    newest = onnx.defs.onnx_opset_version()
    try:
        import onnxruntime as ort
    except ImportError:
        return newest
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "probe",
                              [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])])
    for opset in range(newest, MIN_OPSET - 1, -1):
        model = _model(graph, opset)
        try:
            ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
            return opset
        except Exception:
            continue
    return MIN_OPSET


def _model(graph: onnx.GraphProto, opset: int) -> onnx.ModelProto:
    opsets = [helper.make_opsetid("", opset)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="symscan")
    model.ir_version = helper.find_min_ir_version_for(opsets)
    return model


def _graph_of(f_or_outputs, inputs) -> tuple[FunctionGraph, list[Variable], list, int]:
    """The graph to export, its user inputs, the updated shared variables, the output count."""
    fgraph = getattr(f_or_outputs, "fgraph", None)
    if fgraph is not None:
        n_out = len(f_or_outputs.outputs)
        return fgraph, list(fgraph.inputs), [var for var, _ in f_or_outputs.updates], n_out
    outputs = list(f_or_outputs) if isinstance(f_or_outputs, (list, tuple)) else [f_or_outputs]
    if inputs is None:
        inputs = [v for v in graph_inputs(outputs) if not isinstance(v, SharedVariable)
                  and not hasattr(v, "data")]
    fgraph = FunctionGraph(list(inputs), outputs, clone=True)
    return fgraph, list(fgraph.inputs), [], len(outputs)


def export(f_or_outputs, path: str | None = None, inputs=None, opset: int | None = None,
           output_names: list[str] | None = None) -> onnx.ModelProto:
    """An ``onnx.ModelProto`` of a compiled function or of output variables (see the module doc).

    Model inputs are named after their variables; outputs after theirs, or ``output_names``.
    """
    opset = default_opset() if opset is None else int(opset)
    if opset < MIN_OPSET:
        raise ValueError(f"export: opset {opset} is too old; symscan exports opset {MIN_OPSET} or newer")
    fgraph, user_inputs, updated, n_out = _graph_of(f_or_outputs, inputs)
    if output_names is not None and len(output_names) != len(fgraph.outputs):
        raise ValueError(f"export: {len(output_names)} output_names for {len(fgraph.outputs)} model outputs "
                         "(the function's outputs, then its updated shared variables)")
    ctx = Lowering(opset)
    shared = fgraph.shared_variables
    input_names = [ctx.claim(v.name or f"input_{i}") for i, v in enumerate(user_inputs)]
    shared_names = [ctx.claim(v.name or f"shared_{i}") for i, v in enumerate(shared)]
    wanted = output_names or _default_output_names(fgraph, n_out, updated)
    reserved = [ctx.claim(name) for name in wanted]
    ctx.names.update(zip(user_inputs, input_names))
    ctx.names.update(zip(shared, shared_names))
    results = ctx.graph(fgraph, input_names)
    for name, result in zip(reserved, results):  # one Identity each: outputs get names of their own
        ctx.nodes.append(helper.make_node("Identity", [result], [name], name=ctx.fresh("n_Identity")))
    graph = helper.make_graph(
        ctx.nodes, "symscan", [value_info(n, v) for n, v in zip(input_names + shared_names, user_inputs + shared)],
        [value_info(n, v) for n, v in zip(reserved, fgraph.outputs)],
        initializer=[numpy_helper.from_array(np.asarray(v.get_value(borrow=True)), name=n)
                     for n, v in zip(shared_names, shared)])
    drop_unread_nodes(graph)
    model = _model(graph, opset)
    onnx.checker.check_model(model)
    if path is not None:
        onnx.save(model, str(Path(path)))
    return model


def _subgraphs(graph: onnx.GraphProto):
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                yield attribute.g
            yield from attribute.graphs


def _read_names(graph: onnx.GraphProto) -> set[str]:
    names = {name for node in graph.node for name in node.input} | {out.name for out in graph.output}
    for sub in _subgraphs(graph):
        names |= _read_names(sub)
    return names


KEPT_WHEN_UNREAD = ("If", "Loop", "Scan")
"""Nodes kept though nothing reads them: symscan's checks are Ifs whose failing branch must run."""


def drop_unread_nodes(graph: onnx.GraphProto) -> None:
    """Remove the nodes nothing reads (in loop and branch bodies too), but Ifs and loops: a
    lowering that uses an input's value known now leaves that input's Constant unread (and
    onnxruntime warns of each), and a loop's buffer read without its initial rows leaves the
    Concat that adds them unread."""
    while _drop_unread(graph, _read_names(graph)):
        pass


def _drop_unread(graph: onnx.GraphProto, read: set[str]) -> bool:
    kept = [n for n in graph.node if n.op_type in KEPT_WHEN_UNREAD or any(out in read for out in n.output)]
    dropped = len(kept) != len(graph.node)
    if dropped:
        del graph.node[:]
        graph.node.extend(kept)
    for sub in _subgraphs(graph):
        dropped = _drop_unread(sub, read) or dropped
    return dropped


def _default_output_names(fgraph: FunctionGraph, n_out: int, updated: list) -> list[str]:
    """Outputs are named after their variables; an updated shared variable's new value after it."""
    names = []
    for i, var in enumerate(fgraph.outputs):
        if i < n_out:
            names.append(var.name or f"output_{i}")
        else:
            shared = updated[i - n_out]
            names.append(f"{shared.name or f'shared_{i - n_out}'}_updated")
    return names


__all__ = ["ExportError", "default_opset", "export"]
