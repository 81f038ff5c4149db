"""Pullbacks of the products and reductions: dot, matmul, outer, the reductions (sum, prod,
max, min, mean, all, any), argmax/argmin, cumsum/cumprod, and SumToShape.

A product's gradient is another product of the cotangent with the other operand; where the
operands have more than two dimensions, axes are merged by reshapes so that each gradient
is one ``dot`` (one GEMM), as the forward is.
"""

from __future__ import annotations

from symscan.gradient.grad import float_dtype
from symscan.gradient.registry import connections, pullback
from symscan.graph.basic import Variable
from symscan.tensor.broadcast import SumToShape, sum_to
from symscan.tensor.creation import zeros_like
from symscan.tensor.elemwise import and_, cast, eq, maximum, second, switch, true_div
from symscan.tensor.math import ArgReduce, CumOp, Dot, MatMul, Outer, Reduce, cumprod, cumsum, dot, matmul
from symscan.tensor.math import sum as reduce_sum
from symscan.tensor.shape import dimshuffle, flatten, reshape, shape


# ---------------------------------------------------------------------------- axis helpers
def length(x: Variable, axis: int):
    """The length of ``x`` along ``axis``: an int when the type knows it, else a scalar."""
    n = x.type.shape[axis]
    return n if n is not None else shape(x)[axis]


def product(lengths: list):
    """The product of ints and int scalars (an int when all are known)."""
    total = 1
    for n in lengths:
        total = total * n
    return total


def merge_axes(x: Variable, start: int, stop: int) -> Variable:
    """``x`` with the axes ``start .. stop-1`` merged into one (a new length-1 axis when there
    are none)."""
    if stop - start == 1:
        return x
    if start == stop:
        return dimshuffle(x, list(range(start)) + ["x"] + list(range(start, x.ndim)))
    lengths = [length(x, i) for i in range(x.ndim)]
    return reshape(x, lengths[:start] + [product(lengths[start:stop])] + lengths[stop:])


def swap_last(x: Variable) -> Variable:
    return dimshuffle(x, list(range(x.ndim - 2)) + [x.ndim - 1, x.ndim - 2])


def flip(x: Variable, axis: int) -> Variable:
    """``x`` reversed along ``axis``."""
    return x[(slice(None),) * axis + (slice(None, None, -1),)]


def with_reduced_axes(g: Variable, axes: tuple, ndim: int) -> Variable:
    """A reduction's cotangent with its reduced axes put back as length-1 axes."""
    rest = iter(range(g.ndim))
    return dimshuffle(g, ["x" if i in axes else next(rest) for i in range(ndim)])


# ---------------------------------------------------------------------------- products
@pullback(Dot)
def dot_pullback(node, cotangents):
    """a (I..., K) . b (J..., K, L) = out (I..., J..., L); a vector b has no J... and no L."""
    (g,), (a, b) = cotangents, node.inputs
    if a.ndim == 0 or b.ndim == 0:
        scalar, other = (a, b) if a.ndim == 0 else (b, a)
        g_scalar, g_other = reduce_sum(g * other), g * scalar
        return [g_scalar, g_other] if a.ndim == 0 else [g_other, g_scalar]
    if b.ndim == 1:
        if a.ndim == 1:
            return [g * b, g * a]
        p = a.ndim - 1
        g_a = dimshuffle(g, list(range(p)) + ["x"]) * b
        g_b = dot(merge_axes(g, 0, p), merge_axes(a, 0, p))  # (I) . (I, K)
        return [g_a, g_b]
    p, q = a.ndim - 1, b.ndim - 2
    b_t = dimshuffle(b, list(range(q)) + [q + 1, q])  # (J..., L, K)
    g_a = dot(merge_axes(g, p, g.ndim), merge_axes(b_t, 0, q + 1))  # (I..., JL) . (JL, K)
    g_rows = merge_axes(merge_axes(g, 0, p), 1, g.ndim - p + 1)  # (I, JL)
    g_b = dot(swap_last(merge_axes(a, 0, p)), g_rows)  # (K, I) . (I, JL)
    if q:
        g_b = reshape(g_b, [length(b, q)] + [length(b, i) for i in range(q)] + [length(b, q + 1)])
        g_b = dimshuffle(g_b, list(range(1, q + 1)) + [0, q + 1])
    return [g_a, g_b]


@pullback(MatMul)
def matmul_pullback(node, cotangents):
    """A vector operand is promoted to a matrix (a row on the left, a column on the right), as
    numpy does; the batch axes it was broadcast along are summed (``sum_to``)."""
    (g,), (a, b) = cotangents, node.inputs
    a2 = dimshuffle(a, ["x", 0]) if a.ndim == 1 else a
    b2 = dimshuffle(b, [0, "x"]) if b.ndim == 1 else b
    batch = g.ndim - (a.ndim > 1) - (b.ndim > 1)
    rest = iter(range(batch, g.ndim))
    g2 = dimshuffle(g, list(range(batch)) + [next(rest) if a.ndim > 1 else "x", next(rest) if b.ndim > 1 else "x"])
    g_a = sum_to(matmul(g2, swap_last(b2)), a2)
    g_b = sum_to(matmul(swap_last(a2), g2), b2)
    return [dimshuffle(g_a, [1]) if a.ndim == 1 else g_a, dimshuffle(g_b, [0]) if b.ndim == 1 else g_b]


@pullback(Outer)
def outer_pullback(node, cotangents):
    """``outer`` flattens both operands; each gradient is reshaped back."""
    (g,), (a, b) = cotangents, node.inputs
    g_a = dot(g, flatten(b, 1))
    g_b = dot(flatten(a, 1), g)
    return [reshape(g_a, shape(a), ndim=a.ndim), reshape(g_b, shape(b), ndim=b.ndim)]


# ---------------------------------------------------------------------------- reductions
@pullback(Reduce)
def reduce_pullback(node, cotangents):
    (g,), (x,), op = cotangents, node.inputs, node.op
    if g is None or op.kind in ("all", "any"):  # a bool output: zero
        return [zeros_like(x, dtype=float_dtype(x))]
    axes = tuple(range(x.ndim)) if op.axis is None else op.axis
    g_kept = g if op.keepdims else with_reduced_axes(g, axes, x.ndim)
    if op.kind == "sum":
        return [second(x, g_kept)]
    if op.kind == "mean":
        count = product([length(x, i) for i in axes])
        # An empty reduction has an empty gradient; dividing by 1 there avoids numpy's warning.
        count = max(count, 1) if isinstance(count, int) else cast(maximum(count, 1), g.dtype)
        return [second(x, true_div(g_kept, count))]
    if op.kind in ("max", "min"):
        # the extremum of x itself, not the node's output: inside a gradient's loop that is the
        # forward's saved value while x is recomputed (merge makes them one node elsewhere)
        out = Reduce(op.kind, op.axis, True)(x)
        return [g_kept * eq(x, out)]  # every tied extremum gets the whole cotangent, as in Theano
    return [g_kept * prod_derivative(x, axes)]


def prod_derivative(x: Variable, axes: tuple) -> Variable:
    """d prod(x, axes) / dx, exact with zeros: with no zero in its group, each entry gets the
    product of the others (product / entry); with one zero, only the zero gets the product of
    the others; with several, every entry gets 0."""
    is_zero = eq(x, 0)
    zeros = reduce_sum(is_zero, axis=axes, keepdims=True)
    nonzero_product = Reduce("prod", axes, True)(switch(is_zero, 1, x))
    no_zero = true_div(nonzero_product, switch(is_zero, 1, x))
    return switch(eq(zeros, 0), no_zero, switch(and_(eq(zeros, 1), is_zero), nonzero_product, 0))


@pullback(ArgReduce)
def argreduce_pullback(node, cotangents):
    """The output is an integer: connected (it depends on x's values) but zero."""
    (x,) = node.inputs
    return [zeros_like(x, dtype=float_dtype(x))]


@pullback(CumOp)
def cumop_pullback(node, cotangents):
    """Over the flattened input when ``axis`` is None (the output is then 1-d)."""
    (g,), (x,), op = cotangents, node.inputs, node.op
    values = x if op.axis is not None else flatten(x, 1)
    axis = 0 if op.axis is None else op.axis
    if op.kind == "cumsum":
        g_values = reverse_cumsum(g, axis)
    else:
        g_values = cumprod_derivative(values, node.outputs[0], g, axis)
    return [g_values if op.axis is not None else reshape(g_values, shape(x), ndim=x.ndim)]


def reverse_cumsum(x: Variable, axis: int) -> Variable:
    """``sum(x[i:])`` at each i along ``axis``: the transpose of cumsum."""
    return flip(cumsum(flip(x, axis), axis), axis)


def cumprod_derivative(x: Variable, out: Variable, g: Variable, axis: int) -> Variable:
    """The pullback of ``out = cumprod(x, axis)``, exact with zeros in ``x``.

    ``g_x[j] = sum_{i >= j} g[i] * prod_{k <= i, k != j} x[k]``. Before the first zero of a
    lane, x[j] is not zero and the inner product is ``out[i] / x[j]`` (0 once i passes the
    zero, as out[i] is). At the first zero z it is the cumprod of x with x[z] taken as 1 (any
    later zero still counts). After it, every term contains x[z] = 0.
    """
    is_zero = eq(x, 0)
    zeros_so_far = cumsum(is_zero, axis)
    first_zero = and_(is_zero, eq(zeros_so_far, 1))
    before_zero = true_div(reverse_cumsum(g * out, axis), switch(is_zero, 1, x))
    at_zero = reverse_cumsum(g * cumprod(switch(first_zero, 1, x), axis), axis)
    return switch(eq(zeros_so_far, 0), before_zero, switch(first_zero, at_zero, 0))


# ---------------------------------------------------------------------------- SumToShape
@connections(SumToShape)
def sum_to_shape_connections(node):
    return [[True], [False]]  # only the shape of ``like`` is read


@pullback(SumToShape)
def sum_to_shape_pullback(node, cotangents):
    """The transpose of summing to a shape is broadcasting back to x's shape."""
    (g,), (x, _) = cotangents, node.inputs
    return [second(x, g), None]
