"""numpy indexing: ``x[idx]`` (Subtensor) and ``set_subtensor`` / ``inc_subtensor`` (IncSubtensor).

An index is described by a static ``spec`` (one entry per index item: ``("int",)``,
``("slice", has_start, has_stop, has_step)``, ``("none",)``, ``("array",)`` or ``("ellipsis",)``)
and the symbolic values it needs are node inputs, so bounds may be symbolic. Results follow
numpy, including where advanced (integer-array) indices put their dimensions.

``("ellipsis",)`` is an Ellipsis that stands for no axis: numpy still counts it as separating
advanced indices (``x[:, [0, 1], ..., 0]`` on a 3-d ``x`` puts the advanced dims first), so it
is kept when the index has an integer array and dropped otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Apply, Op, Variable, describe
from symscan.graph.type import TensorType
from symscan.tensor.basic import (
    NotConstantError,
    _is_python_scalar,
    as_tensor_variable,
    constant,
    get_scalar_constant_value,
    static_int,
)
from symscan.tensor.elemwise import broadcast_static_shapes
from symscan.tensor.shape import DimShuffle, MakeVector, Shape

INT, NONE, ARRAY, ELLIPSIS = ("int",), ("none",), ("array",), ("ellipsis",)


# ---------------------------------------------------------------------------- parsing x[index]
def _as_index_scalar(value, x: Variable, position: int) -> Variable:
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        if not np.iinfo(np.int64).min <= value <= np.iinfo(np.int64).max:  # numpy's error, not an OverflowError
            raise IndexError(f"index {position} of {describe(x)} is {value}, which does not fit an int64")
        return constant(np.int64(value))
    var = as_tensor_variable(value)
    if var.ndim != 0 or var.dtype[0] not in "iu":
        raise TypeError(f"index {position} of {describe(x)} must be an integer scalar, got {describe(var)}")
    return var


def parse_index(x: Variable, index) -> tuple[tuple, list[Variable]]:
    """The (spec, inputs) describing ``x[index]``; errors name ``x`` and the index position."""
    items = list(index) if isinstance(index, tuple) else [index]
    if sum(1 for i in items if i is Ellipsis) > 1:
        raise IndexError(f"an index of {describe(x)} can have only one Ellipsis (...)")
    consuming = sum(1 for i in items if i is not None and i is not Ellipsis)
    if consuming > x.ndim:
        raise IndexError(f"too many indices for {describe(x)}: {consuming} given, it has {x.ndim} dimension(s)")
    if Ellipsis in [i if i is Ellipsis else None for i in items]:
        at = next(p for p, i in enumerate(items) if i is Ellipsis)
        if x.ndim > consuming:
            items[at:at + 1] = [slice(None)] * (x.ndim - consuming)
    spec, inputs = [], []
    for position, item in enumerate(items):
        if item is None:
            spec.append(NONE)
        elif item is Ellipsis:
            spec.append(ELLIPSIS)
        elif isinstance(item, slice):
            parts = [None if p is None else _as_index_scalar(p, x, position)
                     for p in (item.start, item.stop, item.step)]
            spec.append(("slice",) + tuple(p is not None for p in parts))
            inputs.extend(p for p in parts if p is not None)
        elif isinstance(item, (bool, np.bool_)):
            raise TypeError(f"index {position} of {describe(x)} is a bool; boolean masks are not supported, "
                            "index with integer positions instead")
        elif _is_python_scalar(item) or isinstance(item, (np.integer, np.floating)) or (
                isinstance(item, Variable) and item.ndim == 0):
            spec.append(INT)
            inputs.append(_as_index_scalar(item, x, position))
        else:
            if isinstance(item, list) and np.size(item) == 0:
                item = np.zeros(np.shape(item), dtype=np.int64)  # numpy reads an empty list as no positions
            array = as_tensor_variable(item)
            if array.dtype[0] not in "iu":
                raise TypeError(f"index {position} of {describe(x)} must hold integers, got {describe(array)}; "
                                "boolean masks are not supported, index with integer positions instead")
            spec.append(ARRAY)
            inputs.append(array)
    if ARRAY not in spec:
        spec = [entry for entry in spec if entry != ELLIPSIS]
    return tuple(spec), inputs


# ---------------------------------------------------------------------------- evaluation helpers
def build_index(spec: tuple, values: list) -> tuple:
    """The numpy index tuple for ``spec`` given the runtime values of its inputs."""
    it = iter(values)
    index = []
    for entry in spec:
        if entry is NONE or entry == NONE:
            index.append(None)
        elif entry == ELLIPSIS:
            index.append(Ellipsis)
        elif entry[0] == "slice":
            parts = [int(next(it)) if present else None for present in entry[1:]]
            index.append(slice(*parts))
        elif entry == INT:
            index.append(int(next(it)))
        else:
            index.append(np.asarray(next(it)))
    return tuple(index)


def _split_inputs(spec: tuple, inputs: list[Variable]) -> list[list[Variable]]:
    """The inputs of each spec entry."""
    it, out = iter(inputs), []
    for entry in spec:
        n = sum(entry[1:]) if entry[0] == "slice" else (0 if entry in (NONE, ELLIPSIS) else 1)
        out.append([next(it) for _ in range(n)])
    return out


def _slice_length(entry: tuple, parts: list[Variable], length: int | None) -> int | None:
    values = iter(parts)
    bounds = []
    for present in entry[1:]:
        bounds.append(static_int(next(values)) if present else None)
        if present and bounds[-1] is None:
            return None
    start, stop, step = bounds
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if length is None:
        return None
    return len(range(*slice(start, stop, step).indices(length)))


def infer_shape(x: Variable, spec: tuple, inputs: list[Variable]) -> tuple:
    """The static shape of ``x[index]``, numpy's rules for where advanced dims go."""
    per_entry = _split_inputs(spec, inputs)
    advanced = any(e == ARRAY for e in spec)
    dims, adv_positions, adv_vars, axis = [], [], [], 0
    for position, (entry, parts) in enumerate(zip(spec, per_entry)):
        if entry == NONE:
            dims.append(1)
            continue
        if entry == ELLIPSIS:  # no axis and no dim; it only separates advanced indices
            continue
        length = x.type.shape[axis]
        if entry[0] == "slice":
            dims.append(_slice_length(entry, parts, length))
        elif entry == INT:
            _check_static_bound(x, axis, parts[0], length)
            if advanced:
                adv_positions.append(position)
                adv_vars.append(parts[0])
        else:
            _check_static_array_bounds(x, axis, parts[0], length)
            adv_positions.append(position)
            adv_vars.append(parts[0])
        axis += 1
    dims_after = list(x.type.shape[axis:])
    if not advanced:
        return tuple(dims + dims_after)
    adv_shape = broadcast_static_shapes(adv_vars, f"indexing {describe(x)}")
    adjacent = adv_positions == list(range(adv_positions[0], adv_positions[-1] + 1))
    # ``dims`` holds the non-advanced dims in order; find where the advanced block goes.
    before = sum(1 for p, e in enumerate(spec) if p < adv_positions[0] and (e == NONE or e[0] == "slice"))
    if adjacent:
        return tuple(dims[:before]) + adv_shape + tuple(dims[before:] + dims_after)
    return adv_shape + tuple(dims + dims_after)


def _check_static_bound(x: Variable, axis: int, index: Variable, length: int | None) -> None:
    try:
        value = int(get_scalar_constant_value(index))
    except NotConstantError:
        return
    if length is not None and not -length <= value < length:
        raise IndexError(f"index {value} is out of bounds for axis {axis} of {describe(x)} (length {length})")


def _check_static_array_bounds(x: Variable, axis: int, index: Variable, length: int | None) -> None:
    """A constant integer array is checked like a constant int: out of bounds fails at build time."""
    data = getattr(index, "data", None)
    if data is None or length is None or data.size == 0:
        return
    low, high = int(data.min()), int(data.max())
    if low < -length or high >= length:
        bad = low if low < -length else high
        raise IndexError(f"index {bad} is out of bounds for axis {axis} of {describe(x)} (length {length})")


# ---------------------------------------------------------------------------- ops
@dataclass(frozen=True)
class Subtensor(Op):
    """``x[index]`` for any mix of ints, slices, None and integer arrays (numpy semantics)."""

    spec: tuple

    def make_node(self, x, *index_inputs) -> Apply:
        x = as_tensor_variable(x)
        index_inputs = [as_tensor_variable(i) for i in index_inputs]
        shape = infer_shape(x, self.spec, index_inputs)
        return Apply(self, [x] + index_inputs, [TensorType(x.dtype, shape)])

    def perform(self, node, inputs):
        x, *values = inputs
        return [np.asarray(x)[build_index(self.spec, values)]]

    def static_value(self, node, index):
        """``x.shape[i]`` with a static length, or an element of a constant/make_vector."""
        x, *values = node.inputs
        if node.outputs[0].ndim != 0 or self.spec != (INT,):
            return None
        position = static_int(values[0])
        if position is None:
            return None
        producer = x.owner.op if x.owner is not None else None
        if isinstance(producer, Shape):
            length = x.owner.inputs[0].type.shape[position]
            return None if length is None else np.int64(length)
        if isinstance(producer, MakeVector):
            try:
                return get_scalar_constant_value(x.owner.inputs[position])
            except NotConstantError:
                return None
        data = getattr(x, "data", None)
        return None if data is None else data[position]

    def __str__(self) -> str:
        return f"Subtensor{{{format_spec(self.spec)}}}"


@dataclass(frozen=True)
class IncSubtensor(Op):
    """A copy of ``x`` with ``x[index]`` set to (or incremented by) ``y``.

    Increments through integer arrays accumulate repeated positions (``numpy.add.at``), as
    Theano's ``inc_subtensor`` does; assignments let the last repeated position win.
    """

    spec: tuple
    set_instead_of_inc: bool = False

    def make_node(self, x, y, *index_inputs) -> Apply:
        x, y = as_tensor_variable(x), as_tensor_variable(y)
        index_inputs = [as_tensor_variable(i) for i in index_inputs]
        target = TensorType(x.dtype, infer_shape(x, self.spec, index_inputs)).make_variable(name="x[index]")
        if y.ndim > target.ndim:
            raise ValueError(f"{self._verb()}: the value {describe(y)} has more dimensions than "
                             f"{describe(x)}[index] ({target.type})")
        shape = broadcast_static_shapes([target, y], self._verb())
        # numpy broadcasts y *to* x[index]: a length-1 axis of x[index] cannot take a longer y.
        if any(t is not None and s is not None and t != s for t, s in zip(target.type.shape, shape)):
            raise ValueError(f"{self._verb()}: the value {describe(y)} cannot broadcast to the shape of "
                             f"{describe(x)}[index] ({target.type})")
        if y.dtype != x.dtype and not np.can_cast(y.dtype, x.dtype, "safe"):
            raise TypeError(f"{self._verb()}: the value {describe(y)} would be downcast to {x.dtype}, the dtype "
                            f"of {describe(x)}; cast it explicitly with .astype('{x.dtype}')")
        return Apply(self, [x, y] + index_inputs, [x.type])

    def _verb(self) -> str:
        return "set_subtensor" if self.set_instead_of_inc else "inc_subtensor"

    def perform(self, node, inputs):
        x, y, *values = inputs
        out = np.array(x, copy=True)
        index = build_index(self.spec, values)
        if self.set_instead_of_inc:
            out[index] = y
        elif ARRAY in self.spec:
            np.add.at(out, index, np.asarray(y, dtype=out.dtype))
        else:
            out[index] += y
        return [out]

    def __str__(self) -> str:
        return f"{'Set' if self.set_instead_of_inc else 'Inc'}Subtensor{{{format_spec(self.spec)}}}"


def format_spec(spec: tuple) -> str:
    """A short text of an index spec: ``i, 1:?:, None, [int]``."""
    out = []
    for entry in spec:
        if entry == INT:
            out.append("i")
        elif entry == NONE:
            out.append("None")
        elif entry == ARRAY:
            out.append("[int]")
        elif entry == ELLIPSIS:
            out.append("...")
        else:
            out.append(":".join("?" if present else "" for present in entry[1:3])
                       + (":?" if entry[3] else ""))
    return ", ".join(out)


# ---------------------------------------------------------------------------- user functions
def subtensor(x, index) -> Variable:
    """``x[index]`` (what ``TensorVariable.__getitem__`` calls)."""
    x = as_tensor_variable(x)
    spec, inputs = parse_index(x, index)
    return Subtensor(spec)(x, *inputs)


def _inc_or_set(x_index, y, set_instead_of_inc: bool) -> Variable:
    verb = "set_subtensor" if set_instead_of_inc else "inc_subtensor"
    node = getattr(x_index, "owner", None)
    if node is None or not isinstance(node.op, Subtensor):
        got = describe(x_index) if isinstance(x_index, Variable) else repr(x_index)
        raise TypeError(f"{verb} needs an indexed tensor like x[i] or x[:] as its first argument, got {got}")
    x, *index_inputs = node.inputs
    y = constant(y, dtype=_weak_dtype(y, x)) if _is_python_scalar(y) else as_tensor_variable(y)
    return IncSubtensor(node.op.spec, set_instead_of_inc)(x, y, *index_inputs)


def _weak_dtype(value, x: Variable) -> str:
    dtype = np.result_type(x.dtype, value)
    return x.dtype if np.can_cast(dtype, x.dtype, "same_kind") else dtype.name


def set_subtensor(x_index, y) -> Variable:
    """A copy of ``x`` with ``x[index] = y``; call as ``set_subtensor(x[index], y)``."""
    return _inc_or_set(x_index, y, True)


def inc_subtensor(x_index, y) -> Variable:
    """A copy of ``x`` with ``x[index] += y``; call as ``inc_subtensor(x[index], y)``."""
    return _inc_or_set(x_index, y, False)


# ---------------------------------------------------------------------------- lengths read off shapes
def axis_length(var: Variable) -> tuple[Variable, int] | None:
    """``(x, axis)`` when ``var`` is the length of ``x`` along ``axis``: ``shape(x)[axis]``, or
    that length as a 1-element slice of the shape made 0-d (ONNX's Squeeze of Shape(x)[0:1])."""
    node = var.owner
    if node is None or var.ndim != 0:
        return None
    if isinstance(node.op, DimShuffle) and node.inputs[0].owner is not None:
        sliced = node.inputs[0].owner
        if isinstance(sliced.op, Subtensor) and sliced.op.spec == (("slice", True, True, False),):
            start, stop = (static_int(v) for v in sliced.inputs[1:])
            source = _shape_of(sliced.inputs[0])
            if source is not None and start is not None and stop == start + 1 and 0 <= start < source.ndim:
                return source, start
        return None
    if isinstance(node.op, Subtensor) and node.op.spec == (INT,):
        source, position = _shape_of(node.inputs[0]), static_int(node.inputs[1])
        if source is not None and position is not None and 0 <= position < source.ndim:
            return source, position
    return None


def _shape_of(vector: Variable) -> Variable | None:
    return vector.owner.inputs[0] if vector.owner is not None and isinstance(vector.owner.op, Shape) else None
