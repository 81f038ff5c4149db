"""Converters of ONNX's shape, indexing and creation ops.

Axes and ranks must be known when the graph is built (symscan types have a static number
of dimensions); lengths and indices may be computed at run time. Slice, Gather and Split
read with numpy's indexing, whose clamping of out-of-range slice bounds is ONNX's.
"""

from __future__ import annotations

import numpy as np

import symscan.tensor as T
from symscan.graph.basic import Variable
from symscan.onnx.importer.context import (
    NodeCall,
    StaticInputsNeeded,
    array_of,
    converts,
    numpy_dtype,
    static_value,
)
from symscan.onnx.importer.elementwise import as_dtype
from symscan.tensor.basic import constant
from symscan.tensor.math import normalize_axis
from symscan.tensor.shape import make_vector


def entries(vector: Variable) -> list:
    """The entries of a 1-d int vector of static length: ints where known now, else scalars."""
    length = vector.type.shape[0]
    if vector.ndim != 1 or length is None:
        raise ValueError(f"expected a 1-d int64 vector of known length, got {vector.type}")
    value = static_value(vector)
    if value is not None:
        return [int(v) for v in value]
    return [vector[i] for i in range(length)]


def axes_of(node: NodeCall, position: int, ndim: int, x: Variable, attr: str = "axes") -> list[int] | None:
    """Axes from the ``axes`` attribute (older opsets) or input ``position``, normalized."""
    axes = node.attr(attr)
    if axes is None and node.input(position) is not None:
        axes = [int(a) for a in np.ravel(node.static(position, attr))]
    if axes is None:
        return None
    return [int(a) + ndim if a < 0 else int(a) for a in axes]


def length(x: Variable, axis: int):
    """``x``'s length along ``axis``: an int when static, else a scalar."""
    known = x.type.shape[axis]
    return known if known is not None else T.shape(x)[axis]


def size_of(x: Variable, axes) -> Variable:
    """The product of ``x``'s lengths along ``axes`` (int64; 1 for none), multiplied out: an
    integer ``prod`` would export as a loop (onnxruntime's integer ReduceProd is inexact)."""
    known = 1
    product = None
    for axis in axes:
        n = length(x, axis)
        if isinstance(n, int):
            known *= n
        else:
            product = n if product is None else product * n
    if product is None:
        return constant(np.int64(known))
    return product if known == 1 else product * np.int64(known)


# ---------------------------------------------------------------------------- shapes
@converts("Shape")
def convert_shape(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    start, end = node.attr("start", 0), node.attr("end")
    shape = T.shape(x)
    if (start, end) == (0, None):
        return [shape]
    return [shape[start:end]]


@converts("Size")
def convert_size(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    return [size_of(x, range(x.ndim))]


@converts("Reshape")
def convert_reshape(node: NodeCall) -> list[Variable]:
    """ONNX's 0 copies the input's length at that position (unless ``allowzero``)."""
    x, shape = node.inputs
    wanted = entries(shape)
    if not node.attr("allowzero", 0):
        wanted = [length(x, i) if isinstance(w, int) and w == 0 else _zero_copies(w, x, i)
                  for i, w in enumerate(wanted)]
    return [T.reshape(x, make_vector(wanted, dtype="int64") if wanted else constant(np.zeros(0, np.int64)))]


def _zero_copies(wanted, x: Variable, axis: int):
    if isinstance(wanted, int) or axis >= x.ndim:
        return wanted
    return T.switch(T.eq(wanted, 0), T.shape(x)[axis], wanted)


@converts("Flatten")
def convert_flatten(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    axis = node.attr("axis", 1)
    axis = axis + x.ndim if axis < 0 else axis
    rows, columns = size_of(x, range(axis)), size_of(x, range(axis, x.ndim))
    return [T.reshape(x, make_vector([rows, columns], dtype="int64"))]


@converts("Squeeze")
def convert_squeeze(node: NodeCall) -> list[Variable]:
    x = node.inputs[0]
    axes = axes_of(node, 1, x.ndim, x)
    if axes is None:
        lengths = static_value(T.shape(x))
        if lengths is None:
            raise StaticInputsNeeded(f"{node.where}: Squeeze without axes drops every axis of length 1, but the "
                                     f"lengths of {x.type} are known only at run time; give the axes, or pass "
                                     "the inputs they are computed from in load(..., static_inputs=...)",
                                     [T.shape(x)])
        return [T.squeeze(x, axis=[a for a, n in enumerate(lengths) if n == 1])]
    return [T.squeeze(x, axis=axes)]


@converts("Unsqueeze")
def convert_unsqueeze(node: NodeCall) -> list[Variable]:
    x = node.inputs[0]
    raw = node.attr("axes")
    if raw is None:
        raw = [int(a) for a in np.ravel(node.static(1, "axes"))]
    out_ndim = x.ndim + len(raw)
    return [T.expand_dims(x, [int(a) + out_ndim if a < 0 else int(a) for a in raw])]


@converts("Transpose")
def convert_transpose(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    return [T.transpose(x, node.attr("perm"))]


@converts("Concat")
def convert_concat(node: NodeCall) -> list[Variable]:
    parts = [v for v in node.inputs if v is not None]
    return [T.concatenate(parts, axis=node.attr("axis"))]


@converts("Expand")
def convert_expand(node: NodeCall) -> list[Variable]:
    """Broadcast both ways: ``x`` and the shape, as numpy broadcasts two operands."""
    x, shape = node.inputs
    model = T.alloc(constant(np.zeros((), np.int8)), *entries(shape))
    return [T.second(model, x)]


@converts("Tile")
def convert_tile(node: NodeCall) -> list[Variable]:
    """Each axis i of length n becomes (repeats[i], n) by broadcasting, then one reshape merges them."""
    x, repeats = node.inputs
    counts = entries(repeats)
    if not x.ndim:
        return [x]
    spread = T.dimshuffle(x, [p for a in range(x.ndim) for p in ("x", a)])
    target = [v for a in range(x.ndim) for v in (counts[a], length(x, a))]
    broadcast = T.second(T.alloc(constant(np.zeros((), np.int8)), *target), spread)
    merged = [counts[a] * length(x, a) for a in range(x.ndim)]
    return [T.reshape(broadcast, make_vector(merged, dtype="int64"))]


# ---------------------------------------------------------------------------- indexing
@converts("Gather")
def convert_gather(node: NodeCall) -> list[Variable]:
    x, indices = node.inputs
    axis = normalize_axis(node.attr("axis", 0), x.ndim, x, "Gather")[0]
    return [x[(slice(None),) * axis + (indices,)]]  # a 0-d index drops the axis, as in ONNX


@converts("Slice")
def convert_slice(node: NodeCall) -> list[Variable]:
    x = node.inputs[0]
    if node.opset < 10:  # bounds were attributes
        starts, ends = node.attr("starts"), node.attr("ends")
        axes = node.attr("axes") or list(range(len(starts)))
        steps = [1] * len(starts)
    else:
        starts, ends = entries(_int64(node.inputs[1])), entries(_int64(node.inputs[2]))
        axes = [int(a) for a in np.ravel(node.static_or(3, "axes", np.arange(len(starts))))]
        steps = entries(_int64(node.inputs[4])) if node.input(4) is not None else [1] * len(starts)
    index = [slice(None)] * x.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps):
        axis = axis + x.ndim if axis < 0 else axis
        index[axis] = slice(start, end, step)  # ONNX's INT64_MAX/MIN ends clamp as Python's do
    return [x[tuple(index)]]


def _int64(var: Variable) -> Variable:
    return as_dtype(var, "int64")


@converts("Split")
def convert_split(node: NodeCall) -> list[Variable]:
    x = node.inputs[0]
    axis = normalize_axis(node.attr("axis", 0), x.ndim, x, "Split")[0]
    n_out = len(node.node.output)
    sizes = node.attr("split")
    if sizes is None and node.opset >= 13 and node.input(1) is not None:
        sizes = entries(_int64(node.inputs[1]))
    total = length(x, axis)
    if sizes is None:  # equal parts, the last one smaller (opset 18's num_outputs)
        chunk = _ceil_div(total, n_out)
        bounds = [(i * chunk, (i + 1) * chunk) for i in range(n_out)]
    else:
        offsets = [0]
        for size in sizes:
            offsets.append(offsets[-1] + size)
        bounds = list(zip(offsets[:-1], offsets[1:]))
    before = (slice(None),) * axis
    return [x[before + (slice(start, stop),)] for start, stop in bounds]


def _ceil_div(total, parts: int):
    if isinstance(total, int):
        return -(-total // parts)
    return (total + (parts - 1)) // parts


# ---------------------------------------------------------------------------- creation
@converts("Constant")
def convert_constant(node: NodeCall) -> list[Variable]:
    for key, dtype in (("value_float", np.float32), ("value_floats", np.float32), ("value_int", np.int64),
                       ("value_ints", np.int64)):
        if key in node.attrs:
            return [constant(np.asarray(node.attrs[key], dtype=dtype))]
    if "value" in node.attrs:
        return [constant(array_of(node.attrs["value"], f"{node.where}: its value"))]
    raise node.fail(f"Constant with {sorted(node.attrs)} has no symscan form (strings and sparse tensors are "
                    "not imported)")


@converts("ConstantOfShape")
def convert_constant_of_shape(node: NodeCall) -> list[Variable]:
    (shape,) = node.inputs
    value = node.attrs.get("value")
    fill = array_of(value, f"{node.where}: its value").reshape(()) if value is not None else np.float32(0)
    return [T.alloc(constant(fill), *entries(_int64(shape)))]


@converts("Range")
def convert_range(node: NodeCall) -> list[Variable]:
    start, limit, delta = (one_element(v) for v in node.inputs)
    return [T.arange(start, limit, delta, dtype=start.dtype)]


def one_element(var: Variable, dtype: str | None = None) -> Variable:
    """A one-element tensor as a 0-d one (of ``dtype`` when given): ONNX calls for scalar trip
    counts, conditions and Range bounds, exporters pass 1-d ones, and onnxruntime takes them."""
    if var.ndim:
        var = T.reshape(var, constant(np.zeros(0, np.int64)))
    return var if dtype is None else T.cast(var, dtype)


def flipped(x: Variable, axis: int) -> Variable:
    """``x`` reversed along ``axis``."""
    return x[(slice(None),) * axis + (slice(None, None, -1),)]


@converts("EyeLike")
def convert_eye_like(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    dtype = node.attr("dtype")
    dtype = x.dtype if dtype is None else numpy_dtype(dtype, f"{node.where}: its dtype")
    return [T.eye(length(x, 0), length(x, 1), k=node.attr("k", 0), dtype=dtype)]
