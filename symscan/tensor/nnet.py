"""Theano's ``tensor.nnet`` names: sigmoid, softplus, softmax, relu and the cross-entropies."""

from __future__ import annotations

from symscan.graph.basic import Variable, describe
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.creation import arange
from symscan.tensor.elemwise import abs, exp, log, sigmoid, softplus, true_div
from symscan.tensor.math import max, sum


def softmax(x, axis: int = -1) -> Variable:
    """``exp(x) / sum(exp(x))`` along ``axis``, shifted by the max for stability."""
    x = as_tensor_variable(x)
    e = exp(x - max(x, axis=axis, keepdims=True))
    return true_div(e, sum(e, axis=axis, keepdims=True))


def relu(x, alpha=0) -> Variable:
    """Theano's ``relu``: ``x`` where positive, ``alpha * x`` elsewhere (written with ``abs``,
    as Theano did, so that the gradient at 0 is ``(1 + alpha) / 2``)."""
    x = as_tensor_variable(x)
    if isinstance(alpha, (int, float)) and alpha == 0:
        return 0.5 * (x + abs(x))
    return 0.5 * (1 + alpha) * x + 0.5 * (1 - alpha) * abs(x)


def binary_crossentropy(output, target) -> Variable:
    """Elementwise ``-(t log(o) + (1 - t) log(1 - o))``; ``output`` strictly inside (0, 1)."""
    output, target = as_tensor_variable(output), as_tensor_variable(target)
    return -(target * log(output) + (1.0 - target) * log(1.0 - output))


def categorical_crossentropy(coding_dist, true_dist) -> Variable:
    """``-sum(true * log(coding))`` over the last axis, or, for ``true_dist`` of integer class
    indices (one fewer axis, a matrix's rows), ``-log(coding[i, true[i]])``."""
    coding, true = as_tensor_variable(coding_dist), as_tensor_variable(true_dist)
    if true.ndim == coding.ndim:
        return -sum(true * log(coding), axis=coding.ndim - 1)
    if true.ndim == coding.ndim - 1 == 1 and true.dtype[0] in "iu":
        return -log(coding[arange(coding.shape[0]), true])
    raise TypeError(f"categorical_crossentropy: true_dist {describe(true)} must be a distribution of the shape "
                    f"of coding_dist {describe(coding)}, or (for a matrix) an integer vector of class indices")


__all__ = ["binary_crossentropy", "categorical_crossentropy", "relu", "sigmoid", "softmax", "softplus"]
