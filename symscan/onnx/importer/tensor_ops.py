"""Converters of ONNX's products, reductions, scans along an axis and the softmax family."""

from __future__ import annotations

from collections import Counter

import numpy as np

import symscan.tensor as T
from symscan.graph.basic import Variable
from symscan.onnx.importer.context import NodeCall, converts
from symscan.onnx.importer.elementwise import as_dtype, scalar
from symscan.onnx.importer.shape_ops import flipped, length, size_of
from symscan.tensor.math import normalize_axis
from symscan.tensor.shape import concatenate, make_vector


# ---------------------------------------------------------------------------- products
@converts("MatMul")
def convert_matmul(node: NodeCall) -> list[Variable]:
    a, b = node.inputs
    return [T.matmul(a, b)]


@converts("Gemm")
def convert_gemm(node: NodeCall) -> list[Variable]:
    """``alpha * A' @ B' + beta * C``; A' and B' are transposed when ``transA``/``transB``."""
    a, b, c = node.input(0), node.input(1), node.input(2)
    if node.attr("transA", 0):
        a = a.T
    if node.attr("transB", 0):
        b = b.T
    result = T.dot(a, b)
    alpha, beta = node.attr("alpha", 1.0), node.attr("beta", 1.0)
    if alpha != 1.0:
        result = result * scalar(alpha, result)
    if c is not None and beta != 0.0:
        result = result + (c if beta == 1.0 else c * scalar(beta, c))
    return [as_dtype(result, a.dtype)]


@converts("Einsum")
def convert_einsum(node: NodeCall) -> list[Variable]:
    """numpy's einsum: repeated letters in one operand take its diagonal, ``...`` stands for
    broadcast axes; operands are contracted two at a time by one batched matmul (letters of
    both kept: the batch; summed: the inner axis), then summed and laid out as the output."""
    operands = [v for v in node.inputs if v is not None]
    terms, output = parse_einsum(node, node.attr("equation").replace(" ", ""), [v.ndim for v in operands])
    pairs = [_diagonals(x, term) for x, term in zip(operands, terms)]
    x, term = pairs[0]
    for position, (y, y_term) in enumerate(pairs[1:], start=1):
        later = set(output) | {c for _, t in pairs[position + 1:] for c in t}
        x, term = _contracted(x, term, y, y_term, later)
    x, term = _summed_out(x, term, set(output))
    return [as_dtype(T.transpose(x, [term.index(c) for c in output]) if output else x, operands[0].dtype)]


def _summed_out(x: Variable, term: str, kept: set[str]) -> tuple[Variable, str]:
    """``x`` summed over the letters not in ``kept``."""
    axes = [i for i, c in enumerate(term) if c not in kept]
    if not axes:
        return x, term
    return T.sum(x, axis=axes), "".join(c for c in term if c in kept)


def _contracted(x: Variable, tx: str, y: Variable, ty: str, kept: set[str]) -> tuple[Variable, str]:
    """The product of two operands summed over their shared letters no one later needs."""
    x, tx = _summed_out(x, tx, kept | set(ty))
    y, ty = _summed_out(y, ty, kept | set(tx))
    batch = [c for c in tx if c in ty and c in kept]
    inner = [c for c in tx if c in ty and c not in kept]
    left, right = [c for c in tx if c not in ty], [c for c in ty if c not in tx]
    x = T.transpose(x, [tx.index(c) for c in batch + left + inner])
    y = T.transpose(y, [ty.index(c) for c in batch + inner + right])
    nb = len(batch)
    x_lengths = [length(x, a) for a in range(nb)]
    y_lengths = [length(y, a) for a in range(nb)]
    x3 = T.reshape(x, make_vector(x_lengths + [size_of(x, range(nb, nb + len(left))),
                                               size_of(x, range(nb + len(left), x.ndim))], dtype="int64"))
    y3 = T.reshape(y, make_vector(y_lengths + [size_of(y, range(nb, nb + len(inner))),
                                               size_of(y, range(nb + len(inner), y.ndim))], dtype="int64"))
    product = T.matmul(x3, y3)  # batch axes broadcast as einsum's do
    lengths = [T.shape(product)[a] for a in range(nb)] + [length(x, a) for a in range(nb, nb + len(left))]
    lengths += [length(y, a) for a in range(nb + len(inner), y.ndim)]
    return T.reshape(product, make_vector(lengths, dtype="int64")), "".join(batch + left + right)


def parse_einsum(node: NodeCall, equation: str, ndims: list[int]) -> tuple[list[str], str]:
    """(one letter per axis for each operand, the output's letters), ``...`` spelled out with
    letters of their own (aligned from the right, as they broadcast)."""
    left, arrow, output = equation.partition("->")
    terms = left.split(",")
    if len(terms) != len(ndims):
        raise node.fail(f"the equation {equation!r} has {len(terms)} operands, the node {len(ndims)}")
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in equation]
    width = max((n - len(t.replace("...", "")) for t, n in zip(terms, ndims) if "..." in t), default=0)
    broadcast = "".join(spare[:width])
    terms = [t.replace("...", broadcast[width - (n - len(t.replace("...", ""))):]) for t, n in zip(terms, ndims)]
    if not arrow:  # numpy's implicit output: the broadcast axes, then the letters used once, sorted
        counts = Counter("".join(terms))
        output = broadcast + "".join(sorted(c for c in counts if counts[c] == 1 and c not in broadcast))
    output = output.replace("...", broadcast)
    for term, ndim in zip(terms, ndims):
        if len(term) != ndim:
            raise node.fail(f"the equation {equation!r} gives {term!r} to an operand of {ndim} axes")
    return terms, output


def _diagonals(x: Variable, term: str) -> tuple[Variable, str]:
    """``x`` with each repeated letter's axes replaced by their diagonal (as the last axis)."""
    while len(set(term)) < len(term):
        letter = next(c for c in term if term.count(c) > 1)
        first, second = (i for i, c in enumerate(term) if c == letter)
        rest = [i for i in range(x.ndim) if i not in (first, second)]
        moved = T.dimshuffle(x, rest + [first, second])
        positions = T.arange(T.minimum(T.shape(x)[first], T.shape(x)[second]))
        x = moved[(Ellipsis, positions, positions)]
        term = "".join(term[i] for i in rest) + letter
    return x, term


# ---------------------------------------------------------------------------- reductions
AXES_AS_INPUT_SINCE = {"ReduceSum": 13}
"""Opset from which a reduction takes its axes as an input (18 for the others)."""


def reduction_axes(node: NodeCall, x: Variable) -> tuple[int, ...] | None:
    """The axes a Reduce* node reduces (None: all), or () when it reduces nothing."""
    if node.opset >= AXES_AS_INPUT_SINCE.get(node.op_type, 18):
        axes = node.static_or(1, "axes", None)
        axes = None if axes is None else [int(a) for a in np.ravel(axes)]
    else:
        axes = node.attr("axes")
    if not axes:
        return () if node.attr("noop_with_empty_axes", 0) else None
    return normalize_axis(axes, x.ndim, x, node.op_type)


def maybe_empty(x: Variable, axes) -> bool:
    """Whether a reduced axis may have no element (its length is not known to be positive)."""
    reduced = range(x.ndim) if axes is None else axes
    return any(x.type.shape[a] in (None, 0) for a in reduced)


def padded(x: Variable, axes, value) -> Variable:
    """``x`` with one more element of ``value`` along each reduced axis: a max (min) over no
    element is then -inf (+inf), as ONNX defines it, where numpy's has no value."""
    for axis in range(x.ndim) if axes is None else axes:
        shape = [1 if a == axis else T.shape(x)[a] for a in range(x.ndim)]
        x = concatenate([x, T.alloc(scalar(value, x), *shape)], axis=axis)
    return x


def extreme(dtype: str, sign: int):
    """-inf/+inf, or an integer dtype's lowest/highest value."""
    if np.dtype(dtype).kind == "f":
        return sign * np.inf
    if dtype == "bool":
        return sign > 0
    info = np.iinfo(dtype)
    return info.max if sign > 0 else info.min


@converts("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1",
          "ReduceL2", "ReduceLogSum", "ReduceLogSumExp")
def convert_reduce(node: NodeCall) -> list[Variable]:
    x = node.inputs[0]
    axes = reduction_axes(node, x)
    keepdims = bool(node.attr("keepdims", 1))
    if axes == ():
        return [_reduced_nothing(node.op_type, x)]

    def total(v):
        return T.sum(v, axis=axes, keepdims=keepdims)

    kind = node.op_type
    if kind in ("ReduceMax", "ReduceMin"):
        sign = -1 if kind == "ReduceMax" else 1
        source = padded(x, axes, extreme(x.dtype, sign)) if maybe_empty(x, axes) else x
        fn = T.max if kind == "ReduceMax" else T.min
        result = fn(source, axis=axes, keepdims=keepdims)
    elif kind == "ReduceLogSumExp":
        result = _log_sum_exp(x, axes, keepdims)
    else:
        result = {"ReduceSum": lambda: total(x), "ReduceMean": lambda: T.mean(x, axis=axes, keepdims=keepdims),
                  "ReduceProd": lambda: T.prod(x, axis=axes, keepdims=keepdims),
                  "ReduceSumSquare": lambda: total(x * x), "ReduceL1": lambda: total(T.abs(x)),
                  "ReduceL2": lambda: T.sqrt(total(x * x)), "ReduceLogSum": lambda: T.log(total(x))}[kind]()
    return [as_dtype(result, x.dtype)]


def _reduced_nothing(kind: str, x: Variable) -> Variable:
    """A reduction over no axis (``noop_with_empty_axes``): each element on its own."""
    if kind in ("ReduceSumSquare",):
        return x * x
    if kind == "ReduceL1":
        return T.abs(x)
    if kind == "ReduceL2":
        return T.sqrt(x * x)
    if kind == "ReduceLogSum":
        return T.log(x)
    return x  # sum, mean, max, min, prod and log-sum-exp of one element


def _log_sum_exp(x: Variable, axes, keepdims: bool) -> Variable:
    """``log(sum(exp(x)))`` shifted by the max (0 where the max is infinite: no element, or
    all -inf, where the result is -inf)."""
    source = padded(x, axes, -np.inf) if maybe_empty(x, axes) else x
    peak = T.max(source, axis=axes, keepdims=True)
    shift = T.switch(T.eq(T.abs(peak), scalar(np.inf, peak)), scalar(0, peak), peak)
    summed = T.log(T.sum(T.exp(x - shift), axis=axes, keepdims=keepdims))
    return summed + (shift if keepdims else T.squeeze(shift, axis=range(x.ndim) if axes is None else axes))


@converts("ArgMax", "ArgMin")
def convert_arg_reduce(node: NodeCall) -> list[Variable]:
    x = node.inputs[0]
    axis = normalize_axis(node.attr("axis", 0), x.ndim, x, node.op_type)[0]
    keepdims = bool(node.attr("keepdims", 1))
    fn = T.argmax if node.op_type == "ArgMax" else T.argmin
    if not node.attr("select_last_index", 0):
        return [fn(x, axis=axis, keepdims=keepdims)]
    # the last extreme: the first one in the reversed axis, counted from the end
    reversed_x = flipped(x, axis)
    last = T.shape(x)[axis] - 1
    return [last - fn(reversed_x, axis=axis, keepdims=keepdims)]


@converts("CumSum")
def convert_cumsum(node: NodeCall) -> list[Variable]:
    x = node.inputs[0]
    axis = normalize_axis(int(node.static(1, "axis")), x.ndim, x, "CumSum")[0]
    reverse = node.attr("reverse", 0)
    result = T.cumsum(flipped(x, axis) if reverse else x, axis=axis)
    if node.attr("exclusive", 0):  # shifted by one: a zero first, as many sums as elements
        shape = [1 if a == axis else T.shape(x)[a] for a in range(x.ndim)]
        head = T.alloc(scalar(0, result), *shape)
        shifted = concatenate([head, result], axis=axis)
        result = shifted[(slice(None),) * axis + (slice(None, T.shape(x)[axis]),)]
    return [as_dtype(flipped(result, axis) if reverse else result, x.dtype)]


# ---------------------------------------------------------------------------- softmax family
def _coerced_2d(node: NodeCall, x: Variable, fn) -> Variable:
    """Before opset 13, softmax-like ops flattened ``x`` to 2-d at ``axis`` (default 1) and
    worked on each row."""
    axis = node.attr("axis", 1)
    axis = axis + x.ndim if axis < 0 else axis
    rows, columns = size_of(x, range(axis)), size_of(x, range(axis, x.ndim))
    flat = T.reshape(x, T.make_vector([rows, columns], dtype="int64"))
    return T.reshape(fn(flat, 1), T.shape(x))


def _softmax(x: Variable, axis: int) -> Variable:
    return T.softmax(x, axis=axis)


def _log_softmax(x: Variable, axis: int) -> Variable:
    shifted = x - T.max(x, axis=axis, keepdims=True)
    return shifted - T.log(T.sum(T.exp(shifted), axis=axis, keepdims=True))


def _hardmax(x: Variable, axis: int) -> Variable:
    """1 at the first maximum along ``axis``, 0 elsewhere."""
    first = T.argmax(x, axis=axis, keepdims=True)
    positions = T.arange(T.shape(x)[axis])
    positions = T.reshape(positions, [-1 if a == axis % x.ndim else 1 for a in range(x.ndim)])
    return as_dtype(T.eq(positions, first), x.dtype)


@converts("Softmax", "LogSoftmax", "Hardmax")
def convert_softmax(node: NodeCall) -> list[Variable]:
    (x,) = node.inputs
    fn = {"Softmax": _softmax, "LogSoftmax": _log_softmax, "Hardmax": _hardmax}[node.op_type]
    if node.opset < 13:
        return [_coerced_2d(node, x, fn)]
    return [fn(x, node.attr("axis", -1))]


@converts("Dropout")
def convert_dropout(node: NodeCall) -> list[Variable]:
    """Inference: the input, and a mask of ones (training mode draws random numbers)."""
    x, training = node.input(0), node.input(2)
    if training is not None and bool(node.static(2, "training_mode")):
        raise node.fail("Dropout in training mode draws random numbers, which symscan does not import; "
                        "export the model for inference")
    return [x, T.ones_like(x, dtype="bool")]
