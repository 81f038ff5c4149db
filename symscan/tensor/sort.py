"""``sort`` and ``argsort`` along one axis (None: the flattened array), as numpy's.

Both use numpy's stable order (equal values keep their positions, NaN last), whatever ``kind``
asks for: every kind gives the same sorted values, and the stable permutation is one of the
orders any kind may give, so every backend returns the same indices and ``sort(x)`` is
exactly ``x`` taken at ``argsort(x)`` (signed zeros included).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Apply, Op, Variable, describe
from symscan.graph.type import TensorType
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.math import _static_size, normalize_axis

SORT_KINDS = ("quicksort", "mergesort", "heapsort", "stable")
"""numpy's names for a sort algorithm; all give the stable order here (see the module)."""


def _sorted_shape(x: Variable, axis: int | None) -> tuple:
    return (_static_size(x),) if axis is None else x.type.shape


@dataclass(frozen=True)
class Sort(Op):
    """``numpy.sort`` along ``axis`` (None: the flattened array, a 1-d result)."""

    axis: int | None = -1

    def make_node(self, x) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x], [TensorType(x.dtype, _sorted_shape(x, self.axis))])

    def perform(self, node, inputs):
        return [np.sort(inputs[0], axis=self.axis, kind="stable")]


@dataclass(frozen=True)
class ArgSort(Op):
    """``numpy.argsort`` along ``axis`` with the stable order (int64 positions)."""

    axis: int | None = -1

    def make_node(self, x) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x], [TensorType("int64", _sorted_shape(x, self.axis))])

    def perform(self, node, inputs):
        return [np.argsort(inputs[0], axis=self.axis, kind="stable").astype(np.int64, copy=False)]


def _checked_axis(opname: str, x: Variable, axis, kind: str | None, order) -> int | None:
    if kind is not None and kind not in SORT_KINDS:
        raise ValueError(f"{opname}: kind={kind!r} is not a sort kind; use one of {', '.join(SORT_KINDS)} (all give "
                         "the stable order here)")
    if order is not None:
        raise ValueError(f"{opname}: order={order!r} sorts structured arrays by field, which tensors do not have; "
                         "leave order out")
    if axis is not None and (not isinstance(axis, (int, np.integer)) or isinstance(axis, (bool, np.bool_))):
        raise TypeError(f"{opname}: axis must be an int or None, got {axis!r} for {describe(x)}")
    if axis is not None and x.ndim == 0:
        raise ValueError(f"{opname}: axis {axis} is out of range for 0-d {describe(x)}; pass axis=None to sort it "
                         "as a 1-d array of one element")
    return None if axis is None else normalize_axis(axis, x.ndim, x, opname)[0]


def sort(x, axis=-1, kind: str | None = None, order=None) -> Variable:
    """``numpy.sort``: ``x`` sorted along ``axis`` (None: flattened first), NaN last."""
    x = as_tensor_variable(x)
    return Sort(_checked_axis("sort", x, axis, kind, order))(x)


def argsort(x, axis=-1, kind: str | None = None, order=None) -> Variable:
    """``numpy.argsort`` with ``kind="stable"`` (ties keep their order): int64 positions."""
    x = as_tensor_variable(x)
    return ArgSort(_checked_axis("argsort", x, axis, kind, order))(x)
