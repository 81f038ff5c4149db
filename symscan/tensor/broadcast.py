"""``sum_to``: the transpose of numpy broadcasting, which every elementwise gradient needs.

A value broadcast from shape ``s`` to a larger shape gets, in the backward direction, the sum
over the axes it was broadcast along. Where static lengths decide those axes the result is a
plain ``Reduce``; where a length is known only at run time (symscan, like numpy, broadcasts a
length-1 axis it could not see at build time) the ``SumToShape`` op decides when it runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Apply, Op, Variable, describe
from symscan.graph.type import TensorType
from symscan.tensor.basic import as_tensor_variable


@dataclass(frozen=True)
class SumToShape(Op):
    """Sum ``x`` down to the shape of ``like`` (which broadcasts to ``x``'s shape): over the
    leading axes ``like`` does not have, and over the axes where ``like`` has length 1.
    Inputs: x, like (only its shape is read); with ``from_shape``, like's shape itself (an
    int64 vector), so that nothing computes ``like`` only for its shape."""

    from_shape: bool = False

    def make_node(self, x, like) -> Apply:
        x, like = as_tensor_variable(x), as_tensor_variable(like)
        if self.from_shape:
            from symscan.tensor.shape import static_entries

            ndim, shape = like.type.shape[0], tuple(static_entries(like))
        else:
            ndim, shape = like.ndim, like.type.shape
        if ndim is None or ndim > x.ndim:
            raise ValueError(f"sum_to: {describe(like)} has more dimensions than {describe(x)}")
        return Apply(self, [x, like], [TensorType(x.dtype, shape)])

    def target_ndim(self, node: Apply) -> int:
        like = node.inputs[1]
        return like.type.shape[0] if self.from_shape else like.ndim

    def perform(self, node, inputs):
        x, like = np.asarray(inputs[0]), inputs[1]
        shape = tuple(int(n) for n in like) if self.from_shape else np.shape(like)
        return [sum_to_shape(x, shape)]

    def __str__(self) -> str:
        return "SumToShape"


def sum_to_shape(x: np.ndarray, shape: tuple) -> np.ndarray:
    """numpy: ``x`` summed down to ``shape`` (the shape it was broadcast from)."""
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and x.shape[lead + i] != 1)
    return np.asarray(x.sum(axis=axes, keepdims=True).reshape(shape) if axes else x, dtype=x.dtype)


def sum_to(x, like) -> Variable:
    """``x`` summed to ``like``'s shape (see the module docstring): nothing when the static
    shapes show no broadcasting, a static ``sum`` when they show exactly where, else
    ``SumToShape``."""
    from symscan.tensor.math import sum as reduce_sum
    from symscan.tensor.shape import dimshuffle

    x, like = as_tensor_variable(x), as_tensor_variable(like)
    lead = x.ndim - like.ndim
    if lead < 0:
        raise ValueError(f"sum_to: {describe(like)} has more dimensions than {describe(x)}")
    axes, unknown = list(range(lead)), False
    for i, (n_like, n_x) in enumerate(zip(like.type.shape, x.type.shape[lead:])):
        if n_like == 1 and n_x != 1:
            axes.append(lead + i)
        elif n_like is None and n_x != 1:
            unknown = True  # may be 1 at run time and broadcast
    if unknown:
        return SumToShape()(x, like)
    if not axes:
        return x
    kept = [i - lead for i in axes if i >= lead]
    summed = reduce_sum(x, axis=tuple(axes), keepdims=False)
    if not kept:
        return summed
    order, j = [], 0
    for i in range(like.ndim):
        if i in kept:
            order.append("x")
        else:
            order.append(j)
            j += 1
    return dimshuffle(summed, order)
