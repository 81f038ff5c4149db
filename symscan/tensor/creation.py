"""Array creation: alloc, zeros, ones, zeros_like, ones_like, arange, eye."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symscan.config import config
from symscan.graph.basic import Apply, Op, Variable, describe
from symscan.graph.type import TensorType, normalize_dtype
from symscan.tensor.basic import as_operands, as_tensor_variable, constant, static_int
from symscan.tensor.elemwise import broadcast_static_shapes, second
from symscan.tensor.shape import MakeVector, shape_vector


def _check_length_scalar(var: Variable, opname: str, what: str) -> Variable:
    var = as_tensor_variable(var)
    if var.ndim != 0 or var.dtype[0] not in "iu":
        raise TypeError(f"{opname}: {what} must be an integer scalar, got {describe(var)}")
    return var


@dataclass(frozen=True)
class Alloc(Op):
    """``value`` broadcast to the shape given by scalar inputs (a fresh, writable array)."""

    def make_node(self, value, *lengths) -> Apply:
        value = as_tensor_variable(value)
        lengths = [_check_length_scalar(n, "alloc", f"length {i}") for i, n in enumerate(lengths)]
        if value.ndim > len(lengths):
            raise ValueError(f"alloc: {describe(value)} has more dimensions than the shape ({len(lengths)})")
        static = tuple(static_int(n) for n in lengths)
        target = TensorType(value.dtype, static).make_variable(name="shape")
        shape = broadcast_static_shapes([target, value], "alloc")
        # The value broadcasts *to* the shape: a length-1 entry cannot take a longer value axis.
        if any(t is not None and s is not None and t != s for t, s in zip(static, shape)):
            raise ValueError(f"alloc: {describe(value)} cannot broadcast to the shape {static}")
        return Apply(self, [value, *lengths], [TensorType(value.dtype, static)])

    def perform(self, node, inputs):
        value, *lengths = inputs
        return [np.array(np.broadcast_to(value, tuple(int(n) for n in lengths)), copy=True)]


def alloc(value, *shape) -> Variable:
    """``value`` broadcast to ``shape`` (lengths may be symbolic)."""
    return Alloc()(value, *shape)


def _full(shape, fill_value, dtype) -> Variable:
    dtype = normalize_dtype(dtype or config.floatX)
    vector = shape_vector(shape, "zeros/ones")
    if vector.owner is not None and isinstance(vector.owner.op, MakeVector):
        lengths = vector.owner.inputs
    else:
        lengths = [vector[i] for i in range(vector.type.shape[0])]
    return alloc(constant(fill_value, dtype=dtype), *lengths)


def zeros(shape, dtype=None) -> Variable:
    """An array of zeros of ``shape`` (ints, int scalars, or an int vector such as ``x.shape``)."""
    return _full(shape, 0, dtype)


def ones(shape, dtype=None) -> Variable:
    """An array of ones of ``shape``."""
    return _full(shape, 1, dtype)


def zeros_like(x, dtype=None) -> Variable:
    """Zeros with ``x``'s shape and (unless given) dtype."""
    x = as_tensor_variable(x)
    return second(x, constant(0, dtype=normalize_dtype(dtype or x.dtype)))


def ones_like(x, dtype=None) -> Variable:
    """Ones with ``x``'s shape and (unless given) dtype."""
    x = as_tensor_variable(x)
    return second(x, constant(1, dtype=normalize_dtype(dtype or x.dtype)))


@dataclass(frozen=True)
class Arange(Op):
    """``numpy.arange(start, stop, step, dtype)``."""

    dtype: str

    def make_node(self, start, stop, step) -> Apply:
        parts = [as_tensor_variable(v) for v in (start, stop, step)]
        for var, name in zip(parts, ("start", "stop", "step")):
            if var.ndim != 0 or var.dtype[0] not in "biuf":
                raise TypeError(f"arange: {name} must be a real scalar, got {describe(var)}")
        values = [static_int(v) for v in parts]
        length = None
        if None not in values:
            if values[2] == 0:
                raise ValueError("arange: step must not be zero")
            length = len(range(*values))
        return Apply(self, parts, [TensorType(self.dtype, (length,))])

    def perform(self, node, inputs):
        """A zero step is an error here (numpy would also warn of a division by zero first)."""
        if inputs[2] == 0:
            raise ValueError("arange: step must not be zero")
        return [np.arange(*inputs, dtype=self.dtype)]


def arange(start, stop=None, step=1, dtype=None) -> Variable:
    """``numpy.arange``; the default dtype is promoted from the arguments (ints stay ints)."""
    if stop is None:
        start, stop = 0, start
    parts = as_operands([start, stop, step], "arange")
    if dtype is None:
        dtype = np.result_type(*[p.dtype for p in parts]).name
    return Arange(normalize_dtype(dtype))(*parts)


@dataclass(frozen=True)
class Eye(Op):
    """``numpy.eye(n, m, k, dtype)``."""

    dtype: str

    def make_node(self, n, m, k) -> Apply:
        n, m, k = (_check_length_scalar(v, "eye", name) for v, name in zip((n, m, k), "nmk"))
        return Apply(self, [n, m, k], [TensorType(self.dtype, (static_int(n), static_int(m)))])

    def perform(self, node, inputs):
        n, m, k = (int(v) for v in inputs)
        return [np.eye(n, m, k, dtype=self.dtype)]


def eye(n, m=None, k=0, dtype=None) -> Variable:
    """The identity-like matrix ``numpy.eye``; ``dtype`` defaults to ``config.floatX``."""
    return Eye(normalize_dtype(dtype or config.floatX))(n, n if m is None else m, k)


