"""Which of ONNX's backend node tests symscan runs: those whose ops import and whose values
symscan can hold. Shared by tests/onnx/test_backend_node.py and benchmarks/onnx_coverage.py
(the README's table of supported ops)."""

from __future__ import annotations

import re
import warnings

UNSUPPORTED_VARIANTS = {
    r"^test_training_dropout": "Dropout in training mode draws random numbers (not imported)",
    r"^test_gathernd_.*batch_dim": "GatherND with batch_dims",
    r"^test_scatter_elements_with_reduction_(max|min|mul)|^test_scatternd_(max|min|multiply)":
        "a scatter with reduction mul, max or min (symscan scatters with none or add)",
}
"""Tests of an op symscan imports, in a form it does not (name pattern -> reason)."""


def subgraphs(graph):
    import onnx

    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                yield attribute.g
            yield from attribute.graphs


def op_types(graph) -> set[str]:
    return {n.op_type for n in graph.node} | {op for sub in subgraphs(graph) for op in op_types(sub)}


def _value_types(graph):
    for value in list(graph.input) + list(graph.output) + list(graph.value_info):
        yield value.type
    for sub in subgraphs(graph):
        yield from _value_types(sub)


def _elem_types(graph):
    """Every tensor element type the graph declares or creates (Cast targets, constants)."""
    import onnx

    for vtype in _value_types(graph):
        if vtype.WhichOneof("value") == "tensor_type":
            yield vtype.tensor_type.elem_type
    for tensor in graph.initializer:
        yield tensor.data_type
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.TENSOR:
                yield attribute.t.data_type
            elif attribute.name in ("to", "dtype") and attribute.type == onnx.AttributeProto.INT:
                yield attribute.i
    for sub in subgraphs(graph):
        yield from _elem_types(sub)


def reason_to_skip(case, supported: set[str]) -> str | None:
    """Why symscan does not run this test (None: it does)."""
    import numpy as np
    from onnx import helper

    from symscan.graph.type import SUPPORTED_DTYPES

    graph = case.model.graph
    missing = op_types(graph) - supported
    if missing:
        return f"ops symscan does not import: {', '.join(sorted(missing))}"
    if any(t.WhichOneof("value") not in ("tensor_type", None) for t in _value_types(graph)):
        return "sequence or optional values (symscan holds tensors)"
    for elem_type in _elem_types(graph):
        try:
            name = np.dtype(helper.tensor_dtype_to_np_dtype(elem_type)).name
        except Exception:
            name = str(elem_type)
        if name not in SUPPORTED_DTYPES:
            return f"dtype {helper.tensor_dtype_to_string(elem_type)} (symscan has no such dtype)"
    for pattern, reason in UNSUPPORTED_VARIANTS.items():
        if re.search(pattern, case.name):
            return reason
    return None


def selection() -> tuple[list, dict[str, str]]:
    """(the node test cases symscan runs, {name: reason} for the others)."""
    from onnx.backend.test.loader import load_model_tests

    import symscan as ss

    supported = set(ss.onnx.supported_ops())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the case generators' own overflow warnings
        cases = load_model_tests(kind="node")
    selected, skipped = [], {}
    for case in cases:
        reason = reason_to_skip(case, supported)
        if reason is None:
            selected.append(case)
        else:
            skipped[case.name] = reason
    return selected, skipped


def loop_tests(cases: list) -> list:
    return [c for c in cases if op_types(c.model.graph) & {"Loop", "Scan"}]
