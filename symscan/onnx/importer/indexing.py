"""Converters of ONNX's gathers and scatters by index tensors, as numpy indexing: every axis
but the indexed one is read by a broadcast ``arange`` (``take_along_axis``), and a scatter is
``set_subtensor``/``inc_subtensor`` on those indices (``inc`` adds repeated positions up, as
``numpy.add.at`` and ONNX's ``reduction="add"`` do)."""

from __future__ import annotations

import symscan.tensor as T
from symscan.graph.basic import Variable
from symscan.onnx.importer.context import NodeCall, converts
from symscan.onnx.importer.shape_ops import length
from symscan.tensor.math import normalize_axis


def along_axis(indices: Variable, data: Variable, axis: int) -> tuple:
    """The index tuple reading ``data`` at ``indices`` along ``axis`` and in place elsewhere."""
    index = []
    for a in range(data.ndim):
        if a == axis:
            index.append(indices)
            continue
        positions = T.arange(length(indices, a))
        index.append(T.reshape(positions, [-1 if b == a else 1 for b in range(data.ndim)]))
    return tuple(index)


def _scatter(node: NodeCall, data: Variable, index: tuple, updates: Variable) -> Variable:
    reduction = node.attr("reduction", "none")
    if reduction not in ("none", "add"):
        raise node.fail(f"reduction {reduction!r} has no symscan form (symscan scatters with none or add)")
    update = T.set_subtensor if reduction == "none" else T.inc_subtensor
    return update(data[index], updates)


@converts("GatherElements")
def convert_gather_elements(node: NodeCall) -> list[Variable]:
    x, indices = node.inputs
    axis = normalize_axis(node.attr("axis", 0), x.ndim, x, "GatherElements")[0]
    return [x[along_axis(indices, x, axis)]]


@converts("ScatterElements", "Scatter")
def convert_scatter_elements(node: NodeCall) -> list[Variable]:
    data, indices, updates = node.inputs
    axis = normalize_axis(node.attr("axis", 0), data.ndim, data, node.op_type)[0]
    return [_scatter(node, data, along_axis(indices, data, axis), updates)]


def _tuple_of(node: NodeCall, indices: Variable) -> tuple:
    """``indices[..., k]`` for each k: one index array per leading axis of the data."""
    if node.attr("batch_dims", 0):
        raise node.fail("batch_dims has no symscan form; gather per batch element instead")
    depth = indices.type.shape[-1] if indices.ndim else None
    if depth is None:
        raise node.fail(f"the indices' last axis (how many leading axes they index) must have a static length, "
                        f"got {indices.type}")
    return tuple(indices[(Ellipsis, k)] for k in range(depth))


@converts("GatherND")
def convert_gather_nd(node: NodeCall) -> list[Variable]:
    data, indices = node.inputs
    return [data[_tuple_of(node, indices)]]


@converts("ScatterND")
def convert_scatter_nd(node: NodeCall) -> list[Variable]:
    data, indices, updates = node.inputs
    return [_scatter(node, data, _tuple_of(node, indices), updates)]
