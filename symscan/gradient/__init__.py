"""Gradients: ``grad`` (reverse mode, Theano's semantics), Lop/Rop, jacobian/hessian,
verify_grad, the gradient markers, and the pullback of each op (``symscan.gradient.ops``)."""

from symscan.gradient import ops  # noqa: F401  (registers the pullbacks)
from symscan.gradient.derived import Rop, hessian, jacobian
from symscan.gradient.grad import Lop, grad
from symscan.gradient.markers import disconnected_grad, grad_clip, grad_scale, undefined_grad, zero_grad
from symscan.gradient.registry import PULLBACKS, connections, pullback
from symscan.gradient.types import (
    DisconnectedInputError,
    DisconnectedType,
    NullType,
    NullTypeGradError,
    grad_not_implemented,
    grad_undefined,
)
from symscan.gradient.verify import GradientError, verify_grad

__all__ = ["PULLBACKS", "DisconnectedInputError", "DisconnectedType", "GradientError", "Lop", "NullType",
           "NullTypeGradError", "Rop", "connections", "disconnected_grad", "grad", "grad_clip", "grad_not_implemented",
           "grad_scale", "grad_undefined", "hessian", "jacobian", "pullback", "undefined_grad", "verify_grad",
           "zero_grad"]
