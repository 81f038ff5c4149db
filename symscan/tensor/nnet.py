"""Theano's ``tensor.nnet`` names: sigmoid (and its approximations), softplus, softsign, softmax,
log_softmax, relu and the cross-entropies."""

from __future__ import annotations

from symscan.graph.basic import Variable, describe
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.creation import arange
from symscan.tensor.elemwise import abs, clip, exp, log, sigmoid, sign, softplus, switch, true_div
from symscan.tensor.math import logsumexp, max, sum


def softmax(x, axis: int = -1) -> Variable:
    """``exp(x) / sum(exp(x))`` along ``axis``, shifted by the max for stability."""
    x = as_tensor_variable(x)
    e = exp(x - max(x, axis=axis, keepdims=True))
    return true_div(e, sum(e, axis=axis, keepdims=True))


def log_softmax(x, axis: int = -1) -> Variable:
    """``log(softmax(x))`` along ``axis`` as ``x - logsumexp(x)``: finite where softmax underflows."""
    x = as_tensor_variable(x)
    return x - logsumexp(x, axis=axis, keepdims=True)


def softsign(x) -> Variable:
    """``x / (1 + |x|)``."""
    x = as_tensor_variable(x)
    return x / (1 + abs(x))


def hard_sigmoid(x) -> Variable:
    """Theano's cheap sigmoid: ``clip(0.2 x + 0.5, 0, 1)``."""
    x = as_tensor_variable(x)
    return clip(x * 0.2 + 0.5, 0, 1)


def ultra_fast_sigmoid(x) -> Variable:
    """Theano's piecewise approximation of sigmoid (max error about 0.02), the same values:
    ``0.5 (1 + z(x / 2))`` with z a rational-then-linear fit of tanh, constant beyond |x| = 6.
    Its gradient is that of the approximation (0 beyond |x| = 6); Theano's op had none."""
    x = as_tensor_variable(x)
    half = abs(x) * 0.5
    z = switch(half < 1.7, 1.5 * half / (1 + half),
               switch(half < 3, 0.935409070603099 + 0.0458812946797165 * (half - 1.7), 0.99505475368673))
    return 0.5 * (sign(x) * z + 1)


def sigmoid_binary_crossentropy(output, target) -> Variable:
    """``binary_crossentropy(sigmoid(output), target)`` for logits ``output``, written without the
    sigmoid so that large logits stay finite: ``softplus(-|o|) + o ((o > 0) - t)``."""
    output, target = as_tensor_variable(output), as_tensor_variable(target)
    return softplus(-abs(output)) + output * ((output > 0) - target)


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


__all__ = ["binary_crossentropy", "categorical_crossentropy", "hard_sigmoid", "log_softmax", "relu", "sigmoid",
           "sigmoid_binary_crossentropy", "softmax", "softplus", "softsign", "ultra_fast_sigmoid"]
