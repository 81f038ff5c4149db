"""Theano's ``tensor.nnet`` names: sigmoid (and its approximations), softplus, softsign, softmax,
log_softmax, relu, elu, selu, the cross-entropies (with Theano's fused softmax forms) and the
two-level hierarchical softmax."""

from __future__ import annotations

from symscan.graph.basic import Variable, describe
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.contraction import tensordot
from symscan.tensor.creation import arange
from symscan.tensor.elemwise import abs, clip, exp, expm1, gt, log, sigmoid, sign, softplus, switch, true_div
from symscan.tensor.math import argmax, dot, logsumexp, max, sum
from symscan.tensor.shape import reshape


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


def softmax_graph(c) -> Variable:
    """Theano's ``softmax_graph``: ``exp(c) / sum(exp(c))`` over the last axis, written out (no
    max shift: it overflows where ``softmax`` does not, as Theano's did)."""
    e = exp(as_tensor_variable(c))
    return e / sum(e, axis=-1, keepdims=True)


def elu(x, alpha=1.0) -> Variable:
    """Theano's ``elu``: ``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""
    x = as_tensor_variable(x)
    return switch(gt(x, 0), x, alpha * expm1(x))


SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
"""The constants of Klambauer et al. (2017) that make selu self-normalising (Theano's)."""


def selu(x) -> Variable:
    """Theano's ``selu``: ``scale * elu(x, alpha)`` with the self-normalising constants."""
    return SELU_SCALE * elu(x, SELU_ALPHA)


def _rows_and_indices(x, y_idx, opname: str) -> tuple[Variable, Variable]:
    x, y_idx = as_tensor_variable(x), as_tensor_variable(y_idx)
    if x.ndim != 2 or x.dtype[0] != "f":
        raise TypeError(f"{opname}: x must be a float matrix (one row of scores per example), got {describe(x)}")
    if y_idx.ndim != 1 or y_idx.dtype[0] not in "iu":
        raise TypeError(f"{opname}: y_idx must be an int vector (one class index per row of x), got {describe(y_idx)}")
    return x, y_idx


def crossentropy_softmax_argmax_1hot_with_bias(x, b, y_idx) -> tuple[Variable, Variable, Variable]:
    """Theano's fused op as a graph: (nll, softmax, argmax) of the rows of ``x + b``, with
    ``nll[i] = -log softmax(x + b)[i, y_idx[i]]`` computed as a log-softmax (finite where the
    softmax underflows)."""
    x, y_idx = _rows_and_indices(x, y_idx, "crossentropy_softmax_1hot_with_bias")
    scores = x + as_tensor_variable(b)
    nll = -log_softmax(scores, axis=1)[arange(scores.shape[0]), y_idx]
    return nll, softmax(scores, axis=1), argmax(scores, axis=1)


def crossentropy_softmax_1hot_with_bias(x, b, y_idx) -> tuple[Variable, Variable]:
    """Theano's (nll, softmax) of the rows of ``x + b`` for the class indices ``y_idx``."""
    nll, probabilities, _ = crossentropy_softmax_argmax_1hot_with_bias(x, b, y_idx)
    return nll, probabilities


def crossentropy_softmax_1hot(x, y_idx) -> tuple[Variable, Variable]:
    """Theano's (nll, softmax) of the rows of ``x`` for the class indices ``y_idx``:
    ``nll[i] = -log softmax(x)[i, y_idx[i]]``."""
    return crossentropy_softmax_1hot_with_bias(x, 0, y_idx)


def h_softmax(x, batch_size, n_outputs: int, n_classes: int, n_outputs_per_class: int, W1, b1, W2, b2,
              target=None) -> Variable:
    """Theano's two-level hierarchical softmax (Goodman 2001): p(o | x) = p(class | x) p(o | class,
    x), outputs grouped in ``n_classes`` consecutive classes of ``n_outputs_per_class``. Shapes:
    x (batch, d), W1 (d, n_classes), b1 (n_classes,), W2 (n_classes, d, n_outputs_per_class),
    b2 (n_classes, n_outputs_per_class). Without ``target``: (batch, n_outputs), every output.
    With ``target`` (int, (batch,) or (batch, 1)): the (batch,) probabilities of each row's target
    only, at the cost of one class's second layer per row (Theano's code returns this vector;
    its docstring said (batch, 1)). ``batch_size`` is accepted for Theano's signature; the
    batch is x's first axis."""
    x = as_tensor_variable(x)
    if x.ndim != 2:
        raise TypeError(f"h_softmax: x must be a matrix (batch, features), got {describe(x)}")
    if n_classes * n_outputs_per_class < n_outputs:
        raise ValueError(f"h_softmax: n_classes * n_outputs_per_class = {n_classes} * {n_outputs_per_class} is "
                         f"below n_outputs = {n_outputs}; the classes must hold every output")
    W2, b2 = as_tensor_variable(W2), as_tensor_variable(b2)
    class_probs = softmax(dot(x, W1) + b1, axis=1)
    if target is None:
        scores = tensordot(x, W2, (1, 1)) + b2  # (batch, n_classes, n_outputs_per_class)
        in_class = softmax(scores, axis=2)
        probs = reshape(class_probs.dimshuffle(0, 1, "x") * in_class, (x.shape[0], n_classes * n_outputs_per_class))
        return probs[:, :n_outputs]
    target = as_tensor_variable(target)
    if target.dtype[0] not in "iu" or target.ndim not in (1, 2):
        raise TypeError(f"h_softmax: target must be int class indices of shape (batch,) or (batch, 1), "
                        f"got {describe(target)}")
    target = target.flatten() if target.ndim == 2 else target
    target_class, within = target // n_outputs_per_class, target % n_outputs_per_class
    rows = arange(x.shape[0])
    scores = sum(x.dimshuffle(0, 1, "x") * W2[target_class], axis=1) + b2[target_class]  # (batch, per class)
    return class_probs[rows, target_class] * softmax(scores, axis=1)[rows, within]


__all__ = ["binary_crossentropy", "categorical_crossentropy", "crossentropy_softmax_1hot",
           "crossentropy_softmax_1hot_with_bias", "crossentropy_softmax_argmax_1hot_with_bias", "elu", "h_softmax",
           "hard_sigmoid", "log_softmax", "relu", "selu", "sigmoid", "sigmoid_binary_crossentropy", "softmax",
           "softmax_graph", "softplus", "softsign", "ultra_fast_sigmoid"]
