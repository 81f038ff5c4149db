"""Products and reductions: dot, matmul, outer, sum/prod/max/min/mean/all/any, argmax/argmin,
cumsum/cumprod. Output dtypes are numpy's; static shapes are checked at build time."""

from __future__ import annotations

import builtins
import functools
from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Apply, Op, Variable, describe
from symscan.graph.type import TensorType, normalize_dtype
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.elemwise import cast, exp, isinf, log, switch


@functools.cache
def _probe_dtype(fn_name: str, ndims: tuple, dtypes: tuple, kwargs: tuple = ()) -> str:
    """The dtype numpy's ``fn_name`` gives for inputs of these ndims and dtypes."""
    probes = [np.ones((1,) * n, dtype=d) for n, d in zip(ndims, dtypes)]
    return np.asarray(getattr(np, fn_name)(*probes, **dict(kwargs))).dtype.name


def _check_lengths(a: int | None, b: int | None, opname: str, x: Variable, y: Variable, what: str) -> None:
    if a is not None and b is not None and a != b:
        raise ValueError(f"{opname}: {what} do not match ({a} vs {b}) for {describe(x)} and {describe(y)}; "
                         "transpose or reshape one of them")


def _result_dtype(opname: str, fn_name: str, inputs: list[Variable]) -> str:
    try:
        return _probe_dtype(fn_name, tuple(i.ndim for i in inputs), tuple(i.dtype for i in inputs))
    except TypeError as err:
        raise TypeError(f"{opname} is not defined for {' and '.join(describe(i) for i in inputs)}: {err}") from None


@dataclass(frozen=True)
class Dot(Op):
    """``numpy.dot``: a scalar scales, 1-d·1-d is an inner product, else sum over a's last axis
    and b's second-to-last."""

    def make_node(self, a, b) -> Apply:
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        sa, sb = a.type.shape, b.type.shape
        if a.ndim == 0 or b.ndim == 0:
            shape = sb if a.ndim == 0 else sa
        elif b.ndim == 1:
            _check_lengths(sa[-1], sb[0], "dot", a, b, "the contracted lengths")
            shape = sa[:-1]
        else:
            _check_lengths(sa[-1], sb[-2], "dot", a, b, "the contracted lengths")
            shape = sa[:-1] + sb[:-2] + sb[-1:]
        return Apply(self, [a, b], [TensorType(_result_dtype("dot", "dot", [a, b]), shape)])

    def perform(self, node, inputs):
        a, b = inputs
        if np.ndim(a) > 2 and 1 <= np.ndim(b) <= 2:
            # The same contraction as one matrix product: numpy's dot has no BLAS path for n-d
            # operands (30x slower), and one big GEMM beats matmul's batch of small ones.
            flat = np.dot(np.reshape(a, (-1, a.shape[-1])), b)
            return [np.reshape(flat, a.shape[:-1] + b.shape[1:])]
        return [np.dot(a, b)]


@dataclass(frozen=True)
class MatMul(Op):
    """``numpy.matmul`` (the ``@`` operator): batched matrix product, no scalars."""

    def make_node(self, a, b) -> Apply:
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError(f"matmul: operands must have at least 1 dimension, got {describe(a)} and "
                             f"{describe(b)}; use * or T.dot for scalars")
        sa = (1,) + a.type.shape if a.ndim == 1 else a.type.shape
        sb = b.type.shape + (1,) if b.ndim == 1 else b.type.shape
        _check_lengths(sa[-1], sb[-2], "matmul", a, b, "the contracted lengths")
        batch = _broadcast_batch(sa[:-2], sb[:-2], a, b)
        shape = batch + (sa[-2],) * (a.ndim > 1) + (sb[-1],) * (b.ndim > 1)
        return Apply(self, [a, b], [TensorType(_result_dtype("matmul", "matmul", [a, b]), shape)])

    def perform(self, node, inputs):
        return [np.matmul(*inputs)]


def _broadcast_batch(sa: tuple, sb: tuple, a: Variable, b: Variable) -> tuple:
    n = builtins.max(len(sa), len(sb))
    sa, sb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    out = []
    for x, y in zip(sa, sb):
        if x == 1 or y == 1:
            out.append(y if x == 1 else x)
        else:
            _check_lengths(x, y, "matmul", a, b, "the batch lengths")
            out.append(x if x is not None else y)
    return tuple(out)


@dataclass(frozen=True)
class Outer(Op):
    """``numpy.outer``: both inputs are flattened; the result is (a.size, b.size)."""

    def make_node(self, a, b) -> Apply:
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        shape = tuple(_static_size(v) for v in (a, b))
        return Apply(self, [a, b], [TensorType(_result_dtype("outer", "multiply", [a, b]), shape)])

    def perform(self, node, inputs):
        return [np.outer(*inputs)]


def _static_size(v: Variable) -> int | None:
    return None if None in v.type.shape else int(np.prod(v.type.shape, dtype=np.int64))


def normalize_axis(axis, ndim: int, x: Variable, opname: str) -> tuple[int, ...] | None:
    """``axis`` as a sorted tuple of non-negative ints (None stays None); errors name ``x``."""
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for ax in axes:
        # bool is an int in Python, but axis=True is a mistake (numpy refuses it too)
        if not isinstance(ax, (int, np.integer)) or isinstance(ax, (bool, np.bool_)):
            raise TypeError(f"{opname}: axis must be an int, a tuple of ints or None, got {ax!r} "
                            f"for {describe(x)}")
        if not -ndim <= ax < ndim:
            raise ValueError(f"{opname}: axis {ax} is out of range for {describe(x)} with {ndim} dimension(s)")
        out.append(int(ax) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{opname}: repeated axis in {axis} for {describe(x)}")
    return tuple(sorted(out))


REDUCE_FUNCTIONS = {"sum": "sum", "prod": "prod", "max": "max", "min": "min", "mean": "mean",
                    "all": "all", "any": "any"}


@dataclass(frozen=True)
class Reduce(Op):
    """A numpy reduction ``kind`` over ``axis`` (None: all axes), optionally keeping dims."""

    kind: str
    axis: tuple | None = None
    keepdims: bool = False

    def make_node(self, x) -> Apply:
        x = as_tensor_variable(x)
        axes = range(x.ndim) if self.axis is None else self.axis
        shape = tuple(1 if i in axes else n for i, n in enumerate(x.type.shape) if self.keepdims or i not in axes)
        kwargs = (("axis", self.axis), ("keepdims", self.keepdims))
        try:
            dtype = _probe_dtype(REDUCE_FUNCTIONS[self.kind], (x.ndim,), (x.dtype,), kwargs)
        except TypeError as err:
            raise TypeError(f"{self.kind} is not defined for {describe(x)}: {err}") from None
        return Apply(self, [x], [TensorType(dtype, shape)])

    def perform(self, node, inputs):
        fn = getattr(np, REDUCE_FUNCTIONS[self.kind])
        return [fn(inputs[0], axis=self.axis, keepdims=self.keepdims)]

    def __str__(self) -> str:
        parts = ([] if self.axis is None else [f"axis={list(self.axis)}"]) + (["keepdims"] if self.keepdims else [])
        return f"{self.kind.capitalize()}{{{', '.join(parts)}}}" if parts else self.kind.capitalize()


@dataclass(frozen=True)
class ArgReduce(Op):
    """``numpy.argmax``/``argmin`` over one axis, or the flattened array when ``axis`` is None."""

    kind: str
    axis: int | None = None
    keepdims: bool = False

    def make_node(self, x) -> Apply:
        x = as_tensor_variable(x)
        if self.axis is None:
            shape = (1,) * x.ndim if self.keepdims else ()
        else:
            shape = tuple(1 if i == self.axis else n for i, n in enumerate(x.type.shape)
                          if self.keepdims or i != self.axis)
        return Apply(self, [x], [TensorType("int64", shape)])

    def perform(self, node, inputs):
        fn = np.argmax if self.kind == "argmax" else np.argmin
        return [np.asarray(fn(inputs[0], axis=self.axis, keepdims=self.keepdims), dtype=np.int64)]


@dataclass(frozen=True)
class CumOp(Op):
    """``numpy.cumsum``/``cumprod`` along ``axis`` (None: over the flattened array)."""

    kind: str
    axis: int | None = None

    def make_node(self, x) -> Apply:
        x = as_tensor_variable(x)
        shape = (_static_size(x),) if self.axis is None else x.type.shape
        dtype = _result_dtype(self.kind, self.kind, [x])
        return Apply(self, [x], [TensorType(dtype, shape)])

    def perform(self, node, inputs):
        return [getattr(np, self.kind)(inputs[0], axis=self.axis)]


def dot(a, b) -> Variable:
    """``numpy.dot`` semantics."""
    return Dot()(a, b)


def matmul(a, b) -> Variable:
    """``numpy.matmul`` semantics (``a @ b``)."""
    return MatMul()(a, b)


def outer(a, b) -> Variable:
    """``numpy.outer`` semantics."""
    return Outer()(a, b)


def _reduction(kind: str):
    def reduce(x, axis=None, keepdims: bool = False) -> Variable:
        x = as_tensor_variable(x)
        return Reduce(kind, normalize_axis(axis, x.ndim, x, kind), bool(keepdims))(x)

    reduce.__name__ = reduce.__qualname__ = kind
    reduce.__doc__ = f"``numpy.{kind}`` over ``axis`` (None: all axes)."
    return reduce


def _accumulating_reduction(kind: str):
    def reduce(x, axis=None, dtype=None, keepdims: bool = False, acc_dtype=None) -> Variable:
        x = as_tensor_variable(x)
        if isinstance(dtype, bool):  # keepdims passed in dtype's place (numpy's and Theano's order)
            raise TypeError(f"{kind}: dtype={dtype!r} is not a dtype; the third argument is dtype, as in numpy "
                            "and Theano: pass keepdims=... by keyword")
        plain = Reduce(kind, normalize_axis(axis, x.ndim, x, kind), bool(keepdims))
        if dtype is None and acc_dtype is None:
            return plain(x)
        default = plain.make_node(x).outputs[0].dtype
        out_dtype = default if dtype is None else normalize_dtype(dtype)
        acc = np.promote_types(default, out_dtype).name if acc_dtype is None else _checked_acc_dtype(kind, x, acc_dtype)
        # Reducing x cast to the accumulator gives every backend and the gradient for free. An
        # integer accumulator narrower than numpy's int64 is exact too: the wider sum or product
        # cast back to it wraps as accumulating in it would (arithmetic modulo 2**bits). A mean
        # of integers accumulates in float64 whatever acc_dtype says, as numpy's does.
        total = plain(cast(x, acc))
        wraps = kind != "mean" and np.dtype(acc).kind in "iu"
        return cast(cast(total, acc) if wraps else total, out_dtype)

    reduce.__name__ = reduce.__qualname__ = kind
    reduce.__doc__ = (f"``numpy.{kind}`` over ``axis`` (None: all axes), with Theano's ``dtype`` (of the result) "
                      "and ``acc_dtype`` (of the accumulator; by default the wider of numpy's result dtype and "
                      "``dtype``, so that a requested narrow result loses nothing before its final cast).")
    return reduce


def _checked_acc_dtype(kind: str, x: Variable, acc_dtype) -> str:
    """Theano's rule: the accumulator must hold x's values (any float or complex accumulator
    does for integers and bools)."""
    acc = normalize_dtype(acc_dtype)
    if np.dtype(acc).kind in "fc" and np.dtype(x.dtype).kind in "biu":
        return acc
    if np.promote_types(x.dtype, acc).name != acc:
        raise TypeError(f"{kind}: acc_dtype={acc!r} would lose precision for {describe(x)}; use an acc_dtype at "
                        f"least as precise as {np.promote_types(x.dtype, acc).name}, leave it out, or pass "
                        f"dtype={acc!r} to cast the result instead")
    return acc


sum = _accumulating_reduction("sum")
prod = _accumulating_reduction("prod")
max = _reduction("max")
min = _reduction("min")
mean = _accumulating_reduction("mean")
all = _reduction("all")
any = _reduction("any")


def _single_axis(x: Variable, axis, opname: str) -> int | None:
    axes = normalize_axis(axis, x.ndim, x, opname)
    if axes is not None and len(axes) != 1:
        raise ValueError(f"{opname} takes a single axis or None, got {axis}")
    return None if axes is None else axes[0]


def argmax(x, axis=None, keepdims: bool = False) -> Variable:
    """``numpy.argmax`` (int64)."""
    x = as_tensor_variable(x)
    return ArgReduce("argmax", _single_axis(x, axis, "argmax"), bool(keepdims))(x)


def argmin(x, axis=None, keepdims: bool = False) -> Variable:
    """``numpy.argmin`` (int64)."""
    x = as_tensor_variable(x)
    return ArgReduce("argmin", _single_axis(x, axis, "argmin"), bool(keepdims))(x)


def cumsum(x, axis=None) -> Variable:
    """``numpy.cumsum``."""
    x = as_tensor_variable(x)
    return CumOp("cumsum", _single_axis(x, axis, "cumsum"))(x)


def cumprod(x, axis=None) -> Variable:
    """``numpy.cumprod``."""
    x = as_tensor_variable(x)
    return CumOp("cumprod", _single_axis(x, axis, "cumprod"))(x)


def max_and_argmax(x, axis=None, keepdims: bool = False) -> list[Variable]:
    """Theano's ``[max(x, axis), argmax(x, axis)]``; the argmax takes one axis or None."""
    return [max(x, axis=axis, keepdims=keepdims), argmax(x, axis=axis, keepdims=keepdims)]


def ptp(x, axis=None, keepdims: bool = False) -> Variable:
    """numpy's ``ptp`` (peak to peak): ``max - min`` over ``axis`` (None: all axes)."""
    return max(x, axis=axis, keepdims=keepdims) - min(x, axis=axis, keepdims=keepdims)


def logsumexp(x, axis=None, keepdims: bool = False) -> Variable:
    """``log(sum(exp(x)))`` over ``axis`` (scipy's ``logsumexp``), shifted by the max so that
    large values do not overflow; an infinite max (all -inf, or an inf) shifts by 0 instead.
    The shift's gradient is zero (its terms cancel exactly): the gradient is softmax(x) alone,
    as JAX's, with no mask of the max's positions (H1's backward loop read one per step)."""
    from symscan.tensor.gradient_markers import GradientMarker

    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.ndim, x, "logsumexp")
    axes = tuple(range(x.ndim)) if axes is None else axes
    peak = GradientMarker("disconnected")(max(x, axis=axes, keepdims=True))
    shift = switch(isinf(peak), 0, peak)
    out = log(sum(exp(x - shift), axis=axes, keepdims=True)) + shift
    if keepdims:
        return out
    return out.dimshuffle([i for i in range(x.ndim) if i not in axes])
