"""``theano.gradient``: symscan's gradients under Theano's names."""

import warnings

from symscan.gradient import (
    DisconnectedInputError,
    DisconnectedType,
    GradientError,
    Lop,
    NullType,
    NullTypeGradError,
    Rop,
    disconnected_grad,
    grad,
    grad_clip,
    grad_not_implemented,
    grad_scale,
    grad_undefined,
    hessian,
    jacobian,
    undefined_grad,
    verify_grad,
    zero_grad,
)


def consider_constant(x):
    """Deprecated in Theano 1.0 in favour of ``zero_grad`` / ``disconnected_grad``: ``x`` with
    a zero gradient."""
    warnings.warn("consider_constant() is deprecated, use zero_grad() or disconnected_grad() instead",
                  DeprecationWarning, stacklevel=2)
    return zero_grad(x)


__all__ = ["DisconnectedInputError", "DisconnectedType", "GradientError", "Lop", "NullType", "NullTypeGradError", "Rop",
           "consider_constant", "disconnected_grad", "grad", "grad_clip", "grad_not_implemented", "grad_scale",
           "grad_undefined", "hessian", "jacobian", "undefined_grad", "verify_grad", "zero_grad"]
