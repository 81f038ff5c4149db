"""Shape ops: shape, reshape, specify_shape, dimshuffle (transpose / expand_dims / squeeze),
flatten, join (concatenate / stack) and make_vector."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Apply, Op, Variable, describe
from symscan.graph.type import TensorType, normalize_dtype
from symscan.tensor.basic import as_operands, as_tensor_variable, static_int


@dataclass(frozen=True)
class Shape(Op):
    """The shape of ``x`` as an int64 vector of length ``x.ndim``."""

    def make_node(self, x) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x], [TensorType("int64", (x.ndim,))])

    def perform(self, node, inputs):
        return [np.array(np.shape(inputs[0]), dtype=np.int64)]


@dataclass(frozen=True)
class MakeVector(Op):
    """A 1-d array of ``dtype`` from 0-d inputs (used for symbolic shapes)."""

    dtype: str = "int64"

    def make_node(self, *scalars) -> Apply:
        scalars = [as_tensor_variable(s) for s in scalars]
        for position, s in enumerate(scalars):
            if s.ndim != 0:
                raise TypeError(f"make_vector: element {position} must be 0-d, got {describe(s)}")
            if not np.can_cast(s.dtype, self.dtype, "same_kind"):
                raise TypeError(f"make_vector: element {position} {describe(s)} cannot become {self.dtype}")
        return Apply(self, scalars, [TensorType(self.dtype, (len(scalars),))])

    def perform(self, node, inputs):
        return [np.array(inputs, dtype=self.dtype).reshape(len(inputs))]


def make_vector(scalars: Sequence, dtype: str | None = None) -> Variable:
    """A vector from scalars; the dtype is promoted from the elements unless given."""
    scalars = as_operands(list(scalars), "make_vector")
    if dtype is None:
        dtype = np.result_type(*[s.dtype for s in scalars]).name if scalars else "int64"
    return MakeVector(normalize_dtype(dtype))(*scalars)


def shape_vector(shape, opname: str) -> Variable:
    """A symbolic shape (tuple of ints/scalars, or an int vector) as an int64 vector."""
    if isinstance(shape, Variable):
        if shape.ndim == 0:
            shape = [shape]
        else:
            if shape.ndim != 1 or shape.dtype[0] not in "iu" or shape.type.shape[0] is None:
                raise TypeError(f"{opname}: a shape must be an int vector of static length, got {describe(shape)}")
            if shape.dtype == "int64":
                return shape
            return make_vector([shape[i] for i in range(shape.type.shape[0])], dtype="int64")
    elif isinstance(shape, (int, np.integer)):
        shape = [shape]
    entries = [as_tensor_variable(int(s)) if isinstance(s, (int, np.integer)) else as_tensor_variable(s)
               for s in shape]
    for position, e in enumerate(entries):
        if e.ndim != 0 or e.dtype[0] not in "iu":
            raise TypeError(f"{opname}: shape entry {position} must be an integer scalar, got {describe(e)}")
    return MakeVector("int64")(*entries)


def static_entries(vector: Variable) -> list[int | None]:
    """Build-time values of the entries of a shape vector (None where unknown)."""
    length = vector.type.shape[0]
    if length is None:
        return []
    if vector.owner is not None and isinstance(vector.owner.op, MakeVector):
        return [static_int(e) for e in vector.owner.inputs]
    data = getattr(vector, "data", None)
    if data is not None:
        return [int(v) for v in data]
    return [None] * length


@dataclass(frozen=True)
class Reshape(Op):
    """``numpy.reshape`` to a shape vector of static length ``ndim`` (one entry may be -1)."""

    ndim: int

    def make_node(self, x, shape) -> Apply:
        x = as_tensor_variable(x)
        entries = static_entries(shape)
        if builtins.sum(1 for e in entries if e == -1) > 1 or builtins.any(e is not None and e < -1 for e in entries):
            raise ValueError(f"reshape of {describe(x)}: lengths must be >= 0 with at most one -1, got {entries}")
        out = [None if e is None or e < 0 else e for e in entries]
        size = None if None in x.type.shape else int(np.prod(x.type.shape, dtype=np.int64))
        if size is not None and None not in entries:
            product = int(np.prod([e for e in entries if e != -1], dtype=np.int64))
            if -1 in entries and product and size % product == 0:
                out[entries.index(-1)] = size // product
            elif -1 in entries or product != size:
                raise ValueError(f"cannot reshape {describe(x)} ({size} elements) to {tuple(entries)}")
        return Apply(self, [x, shape], [TensorType(x.dtype, tuple(out))])

    def perform(self, node, inputs):
        x, shape = inputs
        return [np.reshape(x, tuple(int(s) for s in shape))]

    def __str__(self) -> str:
        return f"Reshape{{{self.ndim}}}"


def reshape(x, newshape, ndim: int | None = None) -> Variable:
    """``x`` reshaped (Theano's ``reshape(x, newshape, ndim=None)``): ``newshape`` is a tuple of
    ints/int scalars or an int vector; ``ndim`` gives the length of a vector whose length is
    not known when the graph is built (checked at run time)."""
    x, shape = as_tensor_variable(x), newshape
    if isinstance(shape, Variable) and shape.ndim == 1 and shape.type.shape[0] is None:
        if ndim is None:
            raise TypeError(f"reshape of {describe(x)}: the length of the shape {describe(shape)} is not known when "
                            "the graph is built, so neither is the number of dimensions of the result; pass "
                            "ndim=<its length> (e.g. T.reshape(x, shape, ndim=2))")
        shape = SpecifyShape(f"reshape(..., ndim={ndim})", f"pass a shape of {ndim} entries, or change ndim")(
            shape, shape_vector((int(ndim),), "reshape"))
    vector = shape_vector(shape, "reshape")
    if ndim is not None and ndim != vector.type.shape[0]:
        raise ValueError(f"reshape: ndim={ndim} but the shape has {vector.type.shape[0]} entries")
    return Reshape(vector.type.shape[0])(x, vector)


@dataclass(frozen=True)
class SpecifyShape(Op):
    """Pass ``x`` through after checking that its shape is ``shape`` (an int64 vector of
    length ``x.ndim``). The result's type has the lengths known when the graph is built, so
    later ops can rely on them; the run-time check makes that safe. Rewrites keep the node:
    no rule removes it, and constant folding only folds it when the check passes.

    ``caller`` and ``fix`` word the error for the function that made the node (reshape's
    ``ndim`` checks a shape vector's length with one)."""

    caller: str = "specify_shape"
    fix: str = "pass a value of that shape, or correct the shape given to specify_shape"

    def make_node(self, x, shape) -> Apply:
        x, shape = as_tensor_variable(x), as_tensor_variable(shape)
        if shape.ndim != 1 or shape.type.shape[0] != x.ndim or shape.dtype[0] not in "iu":
            raise TypeError(f"{self.caller}: the shape of {describe(x)} must be an int vector of length {x.ndim}, "
                            f"got {describe(shape)}")
        static = []
        for axis, (known, given) in enumerate(zip(x.type.shape, static_entries(shape))):
            if given is not None and (given < 0 or (known is not None and known != given)):
                raise ValueError(f"{self.caller}: axis {axis} of {describe(x)} cannot have length {given}; "
                                 f"give the lengths the value has (its type says {x.type})")
            static.append(known if given is None else given)
        return Apply(self, [x, shape], [TensorType(x.dtype, tuple(static))])

    def perform(self, node, inputs):
        check_specified_shape(node, *inputs)
        return [inputs[0]]

    def __str__(self) -> str:
        return "SpecifyShape"


def check_specified_shape(node: Apply, x, shape) -> None:
    """The run-time check of a SpecifyShape node (the backends call it too, for one message)."""
    expected = tuple(int(n) for n in shape)
    if np.shape(x) != expected:
        op = node.op
        raise ValueError(f"{op.caller}: {describe(node.inputs[0])} has shape {np.shape(x)} at run time but "
                         f"{expected} was specified; {op.fix}")


def specify_shape(x, shape) -> Variable:
    """Theano's ``specify_shape``: ``x``, checked at run time to have ``shape`` (a tuple of
    ints/int scalars, or an int vector of length ``x.ndim``), with those lengths in its type."""
    x = as_tensor_variable(x)
    if isinstance(shape, Variable) and shape.ndim == 1 and shape.type.shape[0] is None:
        fix = f"give one length per dimension of {describe(x)}"
        shape = SpecifyShape("specify_shape", fix)(shape, shape_vector((x.ndim,), "specify_shape"))
    vector = shape_vector(shape, "specify_shape")
    if vector.type.shape[0] != x.ndim:
        raise ValueError(f"specify_shape: {describe(x)} has {x.ndim} dimension(s) but the shape has "
                         f"{vector.type.shape[0]} entries; give one length per dimension")
    return SpecifyShape()(x, vector)


@dataclass(frozen=True)
class DimShuffle(Op):
    """Reorder axes, insert length-1 axes ('x') and drop length-1 axes (those not listed).

    ``new_order`` lists input axes and 'x'; an input axis left out must have length 1
    (checked at build time when known, else at run time).
    """

    input_ndim: int
    new_order: tuple

    def make_node(self, x) -> Apply:
        x = as_tensor_variable(x)
        if x.ndim != self.input_ndim:
            raise TypeError(f"{self} expects {self.input_ndim} dimension(s), got {describe(x)}")
        for axis in self.dropped:
            if x.type.shape[axis] not in (None, 1):
                raise ValueError(f"cannot drop axis {axis} of {describe(x)}: its length is "
                                 f"{x.type.shape[axis]}, not 1")
        shape = tuple(1 if a == "x" else x.type.shape[a] for a in self.new_order)
        return Apply(self, [x], [TensorType(x.dtype, shape)])

    @property
    def dropped(self) -> tuple[int, ...]:
        return tuple(a for a in range(self.input_ndim) if a not in self.new_order)

    def perform(self, node, inputs):
        x = np.asarray(inputs[0])
        for axis in self.dropped:
            if x.shape[axis] != 1:
                raise ValueError(f"{self}: axis {axis} has length {x.shape[axis]}, not 1, so it cannot be dropped")
        kept = [a for a in self.new_order if a != "x"]
        shape = tuple(1 if a == "x" else x.shape[a] for a in self.new_order)
        # Dropped and inserted axes have length 1, so one reshape of the permuted view places them.
        return [np.transpose(x, kept + list(self.dropped)).reshape(shape)]

    def __str__(self) -> str:
        return f"DimShuffle{{{','.join(str(a) for a in self.new_order)}}}"


def dimshuffle(x, pattern: Sequence) -> Variable:
    """Theano's dimshuffle: ``x.dimshuffle(1, 0)``, ``x.dimshuffle('x', 0)``."""
    x = as_tensor_variable(x)
    pattern = tuple(p if p == "x" else int(p) for p in pattern)
    axes = [p for p in pattern if p != "x"]
    if len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ValueError(f"dimshuffle pattern {pattern} is not valid for {describe(x)}: "
                         f"each axis in 0..{x.ndim - 1} at most once, plus 'x' for new axes")
    if pattern == tuple(range(x.ndim)):
        return x
    return DimShuffle(x.ndim, pattern)(x)


def transpose(x, axes: Sequence[int] | None = None) -> Variable:
    """``numpy.transpose``: reverse the axes, or permute them by ``axes``."""
    x = as_tensor_variable(x)
    if axes is None:
        axes = tuple(reversed(range(x.ndim)))
    axes = [int(a) % x.ndim if -x.ndim <= int(a) < x.ndim else int(a) for a in axes]
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"transpose axes {axes} are not a permutation of the {x.ndim} axes of {describe(x)}")
    return dimshuffle(x, axes)


def expand_dims(x, axis) -> Variable:
    """``numpy.expand_dims``: new length-1 axes at the given positions of the result."""
    x = as_tensor_variable(x)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out_ndim = x.ndim + len(axes)
    positions = sorted(int(a) % out_ndim if -out_ndim <= a < out_ndim else -1 for a in axes)
    if -1 in positions or len(set(positions)) != len(positions):
        raise ValueError(f"expand_dims: axis {axis} is not valid for {describe(x)}")
    rest = iter(range(x.ndim))
    return dimshuffle(x, ["x" if i in positions else next(rest) for i in range(out_ndim)])


def shape_padleft(x, n_ones: int = 1) -> Variable:
    """``x`` with ``n_ones`` length-1 axes in front (Theano's ``shape_padleft``)."""
    x = as_tensor_variable(x)
    return dimshuffle(x, ["x"] * n_ones + list(range(x.ndim)))


def shape_padright(x, n_ones: int = 1) -> Variable:
    """``x`` with ``n_ones`` length-1 axes at the end (Theano's ``shape_padright``)."""
    x = as_tensor_variable(x)
    return dimshuffle(x, list(range(x.ndim)) + ["x"] * n_ones)


def shape_padaxis(x, axis: int) -> Variable:
    """``x`` with a length-1 axis at position ``axis`` of the result (``expand_dims`` with
    Theano's ``IndexError`` for an axis out of range)."""
    x = as_tensor_variable(x)
    if not -(x.ndim + 1) <= axis <= x.ndim:
        raise IndexError(f"shape_padaxis: axis {axis} is out of range [-{x.ndim + 1}, {x.ndim + 1}) for {describe(x)}")
    return expand_dims(x, axis)


def squeeze(x, axis=None) -> Variable:
    """Drop length-1 axes: those listed, or (axis=None) those statically known to be 1."""
    x = as_tensor_variable(x)
    if axis is None:
        drop = {i for i, n in enumerate(x.type.shape) if n == 1}
    else:
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        if any(not -x.ndim <= a < x.ndim for a in axes):
            raise ValueError(f"squeeze: axis {axis} is out of range for {describe(x)}")
        drop = {int(a) % x.ndim for a in axes}
    return dimshuffle(x, [i for i in range(x.ndim) if i not in drop])


@dataclass(frozen=True)
class Flatten(Op):
    """Keep the first ``ndim - 1`` axes and flatten the rest into one (Theano's flatten)."""

    ndim: int = 1

    def make_node(self, x) -> Apply:
        x = as_tensor_variable(x)
        if not 1 <= self.ndim <= builtins.max(x.ndim, 1):
            raise ValueError(f"flatten: ndim={self.ndim} must be between 1 and {x.ndim} for {describe(x)}")
        rest = x.type.shape[self.ndim - 1:]
        size = None if None in rest else int(np.prod(rest, dtype=np.int64))
        return Apply(self, [x], [TensorType(x.dtype, x.type.shape[:self.ndim - 1] + (size,))])

    def perform(self, node, inputs):
        """The merged length is explicit: numpy cannot infer a -1 when a kept axis has length 0."""
        x = np.asarray(inputs[0])
        merged = int(np.prod(x.shape[self.ndim - 1:], dtype=np.int64))
        return [x.reshape(x.shape[:self.ndim - 1] + (merged,))]


def flatten(x, ndim: int = 1) -> Variable:
    """``x`` with its trailing axes merged so that ``ndim`` axes remain."""
    return Flatten(int(ndim))(x)


@dataclass(frozen=True)
class Join(Op):
    """``numpy.concatenate`` along ``axis`` (dtype promoted like numpy)."""

    axis: int

    def make_node(self, *tensors) -> Apply:
        tensors = [as_tensor_variable(t) for t in tensors]
        if not tensors:
            raise ValueError("concatenate needs at least one tensor")
        ndim = tensors[0].ndim
        if ndim == 0 or any(t.ndim != ndim for t in tensors):
            raise ValueError("concatenate: all tensors need the same number (>= 1) of dimensions, got "
                             + ", ".join(describe(t) for t in tensors))
        if not 0 <= self.axis < ndim:
            raise ValueError(f"concatenate: axis {self.axis} is out of range for {ndim}-d tensors")
        shape = []
        for axis, lengths in enumerate(zip(*(t.type.shape for t in tensors))):
            if axis == self.axis:
                shape.append(None if None in lengths else builtins.sum(lengths))
                continue
            known = {n for n in lengths if n is not None}
            if len(known) > 1:
                raise ValueError(f"concatenate on axis {self.axis}: lengths on axis {axis} differ {sorted(known)}: "
                                 + ", ".join(describe(t) for t in tensors))
            shape.append(known.pop() if known else None)
        dtype = np.result_type(*[t.dtype for t in tensors]).name
        return Apply(self, tensors, [TensorType(dtype, tuple(shape))])

    def perform(self, node, inputs):
        return [np.concatenate(inputs, axis=self.axis).astype(node.outputs[0].dtype, copy=False)]

    def __str__(self) -> str:
        return f"Join{{axis={self.axis}}}"


def concatenate(tensors: Sequence, axis: int = 0) -> Variable:
    """``numpy.concatenate``."""
    tensors = as_operands(list(tensors), "concatenate")
    ndim = tensors[0].ndim if tensors else 0
    if ndim and not -ndim <= axis < ndim:
        raise ValueError(f"concatenate: axis {axis} is out of range for {ndim}-d tensors")
    return Join(axis % ndim if ndim else axis)(*tensors)


def join(axis: int, *tensors) -> Variable:
    """Theano's ``join(axis, *tensors)``: ``concatenate(tensors, axis)``."""
    return concatenate(tensors, axis)


def stack(tensors: Sequence, axis: int = 0) -> Variable:
    """``numpy.stack``: join along a new axis."""
    tensors = as_operands(list(tensors), "stack")
    if not tensors:
        raise ValueError("stack needs at least one tensor")
    if all(t.ndim == 0 for t in tensors) and axis in (0, -1):
        return make_vector(tensors)
    ndim = tensors[0].ndim + 1
    if not -ndim <= axis < ndim:
        raise ValueError(f"stack: axis {axis} is out of range for the {ndim}-d result")
    return concatenate([expand_dims(t, axis % ndim) for t in tensors], axis % ndim)


def shape(x) -> Variable:
    """The shape of ``x`` as an int64 vector."""
    return Shape()(x)
