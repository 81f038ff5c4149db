"""Theano's ``tensor.nnet`` names: sigmoid and softmax."""

from __future__ import annotations

from symscan.graph.basic import Variable
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.elemwise import exp, sigmoid, softplus, true_div
from symscan.tensor.math import max, sum


def softmax(x, axis: int = -1) -> Variable:
    """``exp(x) / sum(exp(x))`` along ``axis``, shifted by the max for stability."""
    x = as_tensor_variable(x)
    e = exp(x - max(x, axis=axis, keepdims=True))
    return true_div(e, sum(e, axis=axis, keepdims=True))


__all__ = ["sigmoid", "softmax", "softplus"]
