"""Array creation: alloc, zeros, ones, zeros_like, ones_like, arange, eye, identity_like, tile,
stacklists, mgrid and ogrid."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symscan.config import config
from symscan.graph.basic import Apply, Constant, Op, Variable, describe
from symscan.graph.type import TensorType, normalize_dtype
from symscan.tensor.basic import as_operands, as_tensor_variable, constant, static_int
from symscan.tensor.elemwise import Elemwise, broadcast_static_shapes, cast, maximum, second, switch
from symscan.tensor.elemwise import abs as absolute
from symscan.tensor.shape import MakeVector, reshape, shape_vector, stack


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


def is_zeros_like(var: Variable) -> bool:
    """Whether ``var`` is ``zeros_like(a)`` (``second(a, 0)``): zeros of a's shape, positive
    ones (so that ``0 + v`` is ``v``), whatever a's values."""
    node = var.owner
    if node is None or node.op != Elemwise("second"):
        return False
    fill = node.inputs[1]
    return (isinstance(fill, Constant) and all(n == 1 for n in fill.type.shape) and bool(np.all(fill.data == 0))
            and not bool(np.any(np.signbit(np.real(fill.data)))))


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




def identity_like(x) -> Variable:
    """``eye`` of a matrix's shape and dtype (Theano's ``identity_like``)."""
    x = as_tensor_variable(x)
    if x.ndim != 2:
        raise TypeError(f"identity_like: takes a matrix, got {describe(x)}")
    return eye(x.shape[0], x.shape[1], dtype=x.dtype)


def _tile_reps(reps, ndim: int | None) -> list:
    """``reps`` as a list of ints / int scalars (Theano's forms: an int, a list, an int scalar, or
    an int vector, whose length must then be given by ``ndim`` unless it is static)."""
    if isinstance(reps, (list, tuple)):
        reps = list(reps)
    else:
        reps_var = as_tensor_variable(reps)
        if reps_var.dtype[0] not in "iu" or reps_var.ndim > 1:
            raise TypeError(f"tile: reps must be ints, an int scalar or an int vector, got {describe(reps_var)}")
        if reps_var.ndim == 0:
            reps = [reps_var]
        elif reps_var.type.shape[0] is not None:
            reps = [reps_var[i] for i in range(reps_var.type.shape[0])]
        elif ndim is None:
            raise ValueError(f"tile: reps {describe(reps_var)} has no static length; give ndim= (the result's)")
        else:  # padded with 1s on the left up to ndim, as numpy pads
            offset = ndim - reps_var.shape[0]
            reps = [switch(i < offset, 1, reps_var[maximum(i - offset, 0)]) for i in range(ndim)]
    for position, r in enumerate(reps):
        if not isinstance(r, (int, np.integer)) and as_tensor_variable(r).dtype[0] not in "iu":
            raise TypeError(f"tile: reps[{position}] must be an int or an int scalar, got {r!r}")
    return reps


def tile(x, reps, ndim: int | None = None) -> Variable:
    """``numpy.tile`` (Theano's ``tile(x, reps, ndim=None)``): ``x`` repeated ``reps[i]`` times
    along axis i; the result has ``max(x.ndim, len(reps))`` axes (or ``ndim``), missing ones
    counting as 1 on the left. Written as alloc + reshape, so every mode and the gradient follow."""
    x = as_tensor_variable(x)
    reps = _tile_reps(reps, ndim)
    ndim = max(x.ndim, len(reps)) if ndim is None else ndim
    if ndim < x.ndim or ndim < len(reps):
        raise ValueError(f"tile: ndim={ndim} is less than x's {x.ndim} axes or the {len(reps)} reps")
    reps = [1] * (ndim - len(reps)) + reps
    lengths = [1] * (ndim - x.ndim) + [x.shape[i] for i in range(x.ndim)]
    # x as (1, s0, 1, s1, ...) broadcast to (r0, s0, r1, s1, ...), then each pair merged
    spread = x.dimshuffle(_padded_pattern(x.ndim, ndim))
    grown = alloc(spread, *[n for pair in zip(reps, lengths) for n in pair])
    return reshape(grown, [r * n for r, n in zip(reps, lengths)])


def _padded_pattern(x_ndim: int, ndim: int) -> list:
    """The dimshuffle of an ``x_ndim``-d x to the (rep, length) pairs of ``ndim`` axes."""
    pattern = []
    for i in range(ndim):
        axis = i - (ndim - x_ndim)
        pattern += ["x", axis if axis >= 0 else "x"]
    return pattern


def stacklists(arg) -> Variable:
    """Nested lists of tensors stacked to one tensor of the same nesting (Theano's ``stacklists``:
    ``stacklists([[a, b], [c, d]])`` of scalars is a 2x2 matrix)."""
    if isinstance(arg, (list, tuple)):
        return stack([stacklists(item) for item in arg])
    return as_tensor_variable(arg)


class _Grid:
    """``mgrid[0:5, 0:3]`` / ``ogrid[...]``: numpy's grids as a list of tensors, one per slice
    (Theano's form; bounds may be symbolic ints). ``ogrid``'s are open: length 1 off their axis."""

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __getitem__(self, slices) -> list[Variable]:
        slices = slices if isinstance(slices, tuple) else (slices,)
        if not all(isinstance(s, slice) and s.stop is not None for s in slices):
            raise TypeError(f"{'ogrid' if self.sparse else 'mgrid'}: index with slices start:stop[:step], "
                            f"got {slices!r}")
        ranges = [arange(0 if s.start is None else s.start, s.stop, 1 if s.step is None else s.step)
                  for s in slices]
        n = len(ranges)
        grids = [r.dimshuffle(["x"] * j + [0] + ["x"] * (n - 1 - j)) for j, r in enumerate(ranges)]
        if self.sparse:
            return grids
        return [alloc(g, *[r.shape[0] for r in ranges]) for g in grids]


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)


def bartlett(M) -> Variable:
    """``numpy.bartlett``: the triangular window of ``M`` points (float64), 1 - |2k + 1 - M| / (M - 1)
    for k < M, peak 1 in the middle; empty for M < 1 and [1.0] for M == 1. ``M`` is an int or a
    symbolic integer scalar."""
    M = as_tensor_variable(M)
    if M.ndim != 0 or M.dtype[0] not in "iu":
        raise TypeError(f"bartlett: M must be an integer scalar (the number of points), got {describe(M)}")
    offsets = cast(2 * arange(M) + 1 - M, "float64")
    return 1.0 - absolute(offsets) / cast(maximum(M - 1, 1), "float64")  # M == 1: the one offset is 0
