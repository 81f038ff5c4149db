"""``theano.tensor.nnet``: symscan's ``tensor.nnet`` names, with Theano's ``softmax``.

Only what symscan has: no convolutions (``conv``, ``conv2d``) or pooling.
"""

from __future__ import annotations

from symscan.graph.basic import Variable, describe
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.nnet import (
    binary_crossentropy,
    categorical_crossentropy,
    crossentropy_softmax_1hot,
    crossentropy_softmax_1hot_with_bias,
    crossentropy_softmax_argmax_1hot_with_bias,
    elu,
    h_softmax,
    hard_sigmoid,
    log_softmax,
    relu,
    selu,
    sigmoid,
    sigmoid_binary_crossentropy,
    softmax_graph,
    softplus,
    softsign,
    ultra_fast_sigmoid,
)
from symscan.tensor.nnet import softmax as _softmax


def softmax(c) -> Variable:
    """Theano's ``softmax``: row-wise over a matrix; a vector becomes a (1, n) row first (so
    Theano code reads ``s[0]`` or ``s[:, 0, :]`` of it). ``symscan.tensor.nnet.softmax`` keeps
    numpy/JAX's shape instead."""
    c = as_tensor_variable(c)
    if c.ndim not in (1, 2) or c.dtype[0] != "f":
        raise ValueError(f"softmax: Theano's softmax takes a vector or a matrix of floats, got {describe(c)}; "
                         "for other ranks use symscan.tensor.nnet.softmax(x, axis=...)")
    return _softmax(c.dimshuffle("x", 0) if c.ndim == 1 else c, axis=1)


def logsoftmax(c) -> Variable:
    """Theano's ``logsoftmax``: row-wise over a matrix, a vector as a (1, n) row (as ``softmax``)."""
    c = as_tensor_variable(c)
    if c.ndim not in (1, 2) or c.dtype[0] != "f":
        raise ValueError(f"logsoftmax: Theano's logsoftmax takes a vector or a matrix of floats, got {describe(c)}; "
                         "for other ranks use symscan.tensor.nnet.log_softmax(x, axis=...)")
    return log_softmax(c.dimshuffle("x", 0) if c.ndim == 1 else c, axis=1)


__all__ = ["binary_crossentropy", "categorical_crossentropy", "crossentropy_softmax_1hot",
           "crossentropy_softmax_1hot_with_bias", "crossentropy_softmax_argmax_1hot_with_bias", "elu", "h_softmax",
           "hard_sigmoid", "log_softmax", "logsoftmax", "relu", "selu", "sigmoid", "sigmoid_binary_crossentropy",
           "softmax", "softmax_graph", "softplus", "softsign", "ultra_fast_sigmoid"]
