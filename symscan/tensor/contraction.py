"""Tensor contractions written with transpose, reshape and dot/matmul (numpy's own method), so
every mode, ONNX export and the gradient follow from those ops: tensordot, batched_dot,
batched_tensordot."""

from __future__ import annotations

from collections.abc import Sequence

from symscan.graph.basic import Variable, describe
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.math import dot, matmul, prod
from symscan.tensor.shape import reshape, transpose


def _axes_pair(a: Variable, b: Variable, axes, opname: str, first: int = 0) -> tuple[list[int], list[int]]:
    """``axes`` as two lists of non-negative axes of a and b; an int n is a's last n and b's first
    n (after the ``first`` batch axes)."""
    if isinstance(axes, int):
        if not 0 <= axes <= min(a.ndim, b.ndim) - first:
            raise ValueError(f"{opname}: axes={axes} is more axes than {describe(a)} and {describe(b)} have")
        pairs = [list(range(a.ndim - axes, a.ndim)), list(range(first, first + axes))]
    else:
        pairs = _listed_axes(a, b, axes, opname)
    for i, j in zip(*pairs):
        la, lb = a.type.shape[i], b.type.shape[j]
        if la is not None and lb is not None and la != lb:
            raise ValueError(f"{opname}: axis {i} of {describe(a)} (length {la}) and axis {j} of {describe(b)} "
                             f"(length {lb}) cannot be contracted")
    return pairs[0], pairs[1]


def _listed_axes(a: Variable, b: Variable, axes, opname: str) -> list[list[int]]:
    if not isinstance(axes, Sequence) or len(axes) != 2:
        raise TypeError(f"{opname}: axes must be an int or a pair of axis lists, got {axes!r}")
    pairs = []
    for var, listed in zip((a, b), axes):
        listed = [listed] if isinstance(listed, int) else list(listed)
        if any(not -var.ndim <= ax < var.ndim for ax in listed):
            raise ValueError(f"{opname}: axes {listed} are out of range for {describe(var)}")
        pairs.append([ax % var.ndim for ax in listed])
    if len(pairs[0]) != len(pairs[1]):
        raise ValueError(f"{opname}: axes {axes} pair {len(pairs[0])} axes of a with {len(pairs[1])} of b; "
                         "give as many of each")
    return pairs


def _length(x: Variable, axes: list[int]) -> Variable | int:
    """The product of x's lengths along ``axes`` (1 for none)."""
    return prod([x.shape[i] for i in axes]) if len(axes) > 1 else (x.shape[axes[0]] if axes else 1)


def tensordot(a, b, axes=2) -> Variable:
    """numpy's ``tensordot``: sum over a's ``axes[0]`` and b's ``axes[1]`` (an int n: a's last n
    and b's first n); the result has a's free axes, then b's."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    sum_a, sum_b = _axes_pair(a, b, axes, "tensordot")
    free_a = [i for i in range(a.ndim) if i not in sum_a]
    free_b = [i for i in range(b.ndim) if i not in sum_b]
    # One matrix product: a as (free, summed), b as (summed, free), then the free axes unfolded.
    a2 = reshape(transpose(a, free_a + sum_a), (_length(a, free_a), _length(a, sum_a)))
    b2 = reshape(transpose(b, sum_b + free_b), (_length(b, sum_b), _length(b, free_b)))
    return reshape(dot(a2, b2), [a.shape[i] for i in free_a] + [b.shape[i] for i in free_b])


def batched_tensordot(a, b, axes=2) -> Variable:
    """``tensordot(a[i], b[i], axes)`` for each i of the leading (batch) axis, with axes counted in
    the full arrays (Theano's ``batched_tensordot``: axis 0 is the batch and is never summed)."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim < 1 or b.ndim < 1:
        raise TypeError(f"batched_tensordot: both operands need a batch axis, got {describe(a)} and {describe(b)}")
    sum_a, sum_b = _axes_pair(a, b, axes, "batched_tensordot", first=1)
    if 0 in sum_a or 0 in sum_b:
        raise ValueError(f"batched_tensordot: axes {axes} include the batch axis 0; list only the others")
    free_a = [i for i in range(1, a.ndim) if i not in sum_a]
    free_b = [i for i in range(1, b.ndim) if i not in sum_b]
    batch = a.shape[0]
    a3 = reshape(transpose(a, [0] + free_a + sum_a), (batch, _length(a, free_a), _length(a, sum_a)))
    b3 = reshape(transpose(b, [0] + sum_b + free_b), (batch, _length(b, sum_b), _length(b, free_b)))
    return reshape(matmul(a3, b3), [batch] + [a.shape[i] for i in free_a] + [b.shape[i] for i in free_b])


def batched_dot(a, b) -> Variable:
    """``dot(a[i], b[i])`` for each i of the leading axis (Theano's ``batched_dot``): a vector
    operand scales the other's rows; otherwise a's last axis meets b's second (its first
    after the batch axis) or, for a matrix b, its last."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim == 0 or b.ndim == 0:
        raise TypeError(f"batched_dot: both operands need a batch axis, got {describe(a)} and {describe(b)}")
    if a.ndim == 1:
        return a.dimshuffle([0] + ["x"] * (b.ndim - 1)) * b
    if b.ndim == 1:
        return a * b.dimshuffle([0] + ["x"] * (a.ndim - 1))
    return batched_tensordot(a, b, [[a.ndim - 1], [max(1, b.ndim - 2)]])
