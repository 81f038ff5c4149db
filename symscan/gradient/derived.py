"""Built from ``grad``: Rop (two pullbacks), jacobian and hessian (a scan over rows calling
``grad`` in its step, as Theano builds them)."""

from __future__ import annotations

from symscan.gradient.grad import Lop, float_dtype, grad
from symscan.graph.basic import Variable, describe
from symscan.scan import scan
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.creation import arange, zeros_like
from symscan.tensor.shape import concatenate, reshape, shape


def Rop(f, wrt, eval_points, disconnected_outputs: str = "raise", return_disconnected: str = "zero"):  # noqa: N802
    """The Jacobian-vector product ``df/dwrt . eval_points`` (result shaped like ``f``), by two
    pullbacks: the vector-Jacobian product for a placeholder cotangent ``u`` is linear in
    ``u``; pulling that back w.r.t. ``u`` gives the JVP (PyTensor's default)."""
    fs = list(f) if isinstance(f, (list, tuple)) else [f]
    wrts = list(wrt) if isinstance(wrt, (list, tuple)) else [wrt]
    points = list(eval_points) if isinstance(eval_points, (list, tuple)) else [eval_points]
    if len(wrts) != len(points):
        raise ValueError(f"Rop: {len(wrts)} wrt but {len(points)} eval_points; give one per wrt")
    us = [zeros_like(out, dtype=float_dtype(out)) for out in fs]
    pulled = Lop(fs, wrts, us, disconnected_inputs="ignore")
    jvps = grad(None, us, known_grads=dict(zip(pulled, [as_tensor_variable(p) for p in points])),
                disconnected_inputs="ignore" if disconnected_outputs != "raise" else "raise",
                return_disconnected=return_disconnected)
    return type(f)(jvps) if isinstance(f, (list, tuple)) else jvps[0]


def jacobian(expression, wrt, consider_constant=None, disconnected_inputs: str = "raise"):
    """d expression / d wrt, shaped ``expression.shape + wrt.shape`` for each wrt (a scalar
    expression is plain ``grad``); a scan over the expression's entries, each calling grad."""
    expression = as_tensor_variable(expression)
    wrts, single = (list(wrt), False) if isinstance(wrt, (list, tuple)) else ([wrt], True)
    if expression.ndim == 0:
        result = grad(expression, wrts, consider_constant=consider_constant, disconnected_inputs=disconnected_inputs)
    else:
        flat = reshape(expression, (-1,))

        def row(i, flat, *wrts):
            return grad(flat[i], list(wrts), consider_constant=consider_constant,
                        disconnected_inputs=disconnected_inputs)

        rows, _ = scan(row, sequences=arange(shape(flat)[0]), non_sequences=[flat] + wrts, return_list=True,
                       name="jacobian")
        result = [reshape(r, concatenate([shape(expression), shape(w)]), ndim=expression.ndim + w.ndim)
                  for r, w in zip(rows, wrts)]
    return result[0] if single else type(wrt)(result)


def hessian(cost, wrt, consider_constant=None, disconnected_inputs: str = "raise"):
    """The Hessian of the scalar ``cost`` w.r.t. each (vector) wrt: the jacobian of its gradient."""
    cost = as_tensor_variable(cost)
    if cost.ndim != 0:
        raise TypeError(f"hessian: cost must be a scalar, got {describe(cost)}")
    wrts, single = (list(wrt), False) if isinstance(wrt, (list, tuple)) else ([wrt], True)
    result = []
    for w in wrts:
        if not isinstance(w, Variable) or w.ndim != 1:
            raise TypeError(f"hessian: each wrt must be a vector, got {describe(as_tensor_variable(w))}; flatten "
                            "it first")
        g = grad(cost, w, consider_constant=consider_constant, disconnected_inputs=disconnected_inputs)
        result.append(jacobian(g, w, consider_constant=consider_constant, disconnected_inputs="ignore"))
    return result[0] if single else type(wrt)(result)
