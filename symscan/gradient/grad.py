"""``grad``: reverse-mode differentiation of a graph, with Theano 1.0's semantics.

Two passes. Forward: which variables depend on each ``wrt`` (following the ops' connection
patterns, cut at ``consider_constant``). Backward, over the nodes in reverse order: each
node whose outputs received a gradient hands them to its op's pullback, and the pullback's
results are summed per input. Gradients are never integer-typed. As in Theano, an op is asked
for its pullback even when the cost reaches it only through integer outputs: the gradient
there is zero (``ZERO``), but the op may say it is undefined (a discrete random draw), and
the ops below it must be asked too.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from symscan.config import config
from symscan.gradient.registry import connection_pattern, pullback_of
from symscan.gradient.types import (
    DisconnectedInputError,
    NullType,
    NullTypeGradError,
    disconnected_type,
    is_disconnected,
    is_null,
)
from symscan.graph.basic import Apply, Variable, describe
from symscan.graph.traversal import toposort
from symscan.tensor.basic import as_tensor_variable, constant
from symscan.tensor.creation import zeros_like
from symscan.tensor.elemwise import add, cast


def grad(cost, wrt, consider_constant=None, disconnected_inputs: str = "raise", add_names: bool = True,
         known_grads: Mapping | None = None, return_disconnected: str = "zero", null_gradients: str = "raise"):
    """The gradient of the scalar ``cost`` w.r.t. ``wrt`` (a variable, or a list/tuple of them:
    the result has the same structure). See API.md, "Gradients", and GRADIENTS.md §1."""
    wrt_list, rebuild = _as_structure(wrt)
    cost = _check_cost(cost, known_grads)
    _check_options(disconnected_inputs, return_disconnected, null_gradients)
    seeds = _seeds(cost, known_grads)
    constants = set(consider_constant or ())
    order = toposort(list(seeds))
    totals = _backward(order, seeds, _depending_on(order, wrt_list, constants), constants)
    results = []
    for position, var in enumerate(wrt_list):
        results.append(_result(var, position, totals.get(var), _connected(order, var, seeds, constants),
                               disconnected_inputs, return_disconnected, null_gradients))
    if add_names:
        cost_name = cost.name if cost is not None and cost.name else "cost"
        for var, g in zip(wrt_list, results):
            if isinstance(g, Variable) and g.name is None and var.name:
                g.name = f"(d{cost_name}/d{var.name})"
    return rebuild(results)


def Lop(f, wrt, eval_points, consider_constant=None, disconnected_inputs: str = "raise"):  # noqa: N802 (Theano's name)
    """The vector-Jacobian product ``eval_points . df/dwrt`` (``f`` and ``eval_points`` of one
    structure; the result has ``wrt``'s)."""
    fs = list(f) if isinstance(f, (list, tuple)) else [f]
    points = list(eval_points) if isinstance(eval_points, (list, tuple)) else [eval_points]
    if len(fs) != len(points):
        raise ValueError(f"Lop: {len(fs)} output(s) but {len(points)} eval_points; give one per output")
    return grad(None, wrt, consider_constant=consider_constant, disconnected_inputs=disconnected_inputs,
                known_grads=dict(zip(fs, points)))


# ---------------------------------------------------------------------------- arguments
def _as_structure(wrt):
    if isinstance(wrt, (set, frozenset)):
        raise TypeError("grad: wrt must be a variable, a list or a tuple; a set has no order to return the "
                        "gradients in")
    if isinstance(wrt, list):
        return list(wrt), list
    if isinstance(wrt, tuple):
        return list(wrt), tuple
    return [wrt], lambda results: results[0]


def _check_cost(cost, known_grads):
    if cost is None:
        if not known_grads:
            raise ValueError("grad: cost is None and there are no known_grads; give a scalar cost, or the "
                             "gradients of some variables in known_grads")
        return None
    if not isinstance(cost, Variable):
        cost = as_tensor_variable(cost)
    if getattr(cost.type, "ndim", None) != 0:
        raise TypeError(f"grad: cost must be a scalar (0-d) variable, got {describe(cost)}; reduce it first, "
                        "e.g. cost.sum() or cost.mean()")
    if np.dtype(cost.dtype).kind not in "biufc":
        raise TypeError(f"grad: cost must be numeric, got {describe(cost)}")
    return cost


def _check_options(disconnected_inputs: str, return_disconnected: str, null_gradients: str) -> None:
    if disconnected_inputs not in ("raise", "warn", "ignore"):
        raise ValueError(f"grad: disconnected_inputs must be 'raise', 'warn' or 'ignore', got {disconnected_inputs!r}")
    if str(return_disconnected).lower() not in ("zero", "none", "disconnected"):
        raise ValueError(f"grad: return_disconnected must be 'zero', 'None' or 'Disconnected', got "
                         f"{return_disconnected!r}")
    if null_gradients not in ("raise", "return"):
        raise ValueError(f"grad: null_gradients must be 'raise' or 'return', got {null_gradients!r}")


class _Zero:
    """A gradient term known to be zero: what comes back through integer outputs only, or a
    pullback's None for an input its connection pattern connects. It adds nothing, but unlike
    a disconnected term it still reaches the ops below, whose pullbacks are asked (with zeros)."""

    def __repr__(self) -> str:
        return "ZERO"


ZERO = _Zero()


def float_dtype(var: Variable) -> str:
    """The dtype of a gradient of ``var``: its own when it is a float (or complex), else floatX."""
    return var.dtype if np.dtype(var.dtype).kind in "fc" else config.floatX


def _seeds(cost, known_grads) -> dict[Variable, list]:
    """The starting gradients: 1 for the cost, and each of ``known_grads``."""
    seeds: dict[Variable, list] = {}
    if cost is not None:
        seeds[cost] = [constant(np.ones((), dtype=float_dtype(cost)))]  # the cost is 0-d: no need to compute it
    for var, value in (known_grads or {}).items():
        if not isinstance(var, Variable):
            raise TypeError(f"grad: the keys of known_grads must be variables, got {type(var).__name__}")
        if is_disconnected(value) or is_null(value):
            seeds.setdefault(var, []).append(value)
            continue
        value = as_tensor_variable(value)
        if np.dtype(value.dtype).kind not in "fc":
            raise TypeError(f"grad: known_grads[{describe(var)}] is {describe(value)}; gradients are floats")
        seeds.setdefault(var, []).append(value)
    return seeds


# ---------------------------------------------------------------------------- the two passes
def _depending_on(order: list[Apply], sources: Sequence[Variable], constants: set) -> set:
    """Variables computed from ``sources`` (``sources`` included), through connected inputs,
    not through ``constants`` (``consider_constant``)."""
    depends = set(sources)
    for node in order:
        pattern = None
        for i, var in enumerate(node.inputs):
            if var in depends and (var not in constants or var in sources):
                pattern = pattern or connection_pattern(node)
                depends.update(out for out, connected in zip(node.outputs, pattern[i]) if connected)
    return depends


def _connected(order: list[Apply], var: Variable, seeds: dict, constants: set) -> bool:
    return var in seeds or any(s in _depending_on(order, [var], constants) for s in seeds)


def _backward(order: list[Apply], seeds: dict, depends: set, constants: set) -> dict:
    """The summed gradient of every variable in ``depends`` that one reaches."""
    terms: dict[Variable, list] = {var: list(values) for var, values in seeds.items()}
    totals: dict[Variable, Variable | None] = {}

    def total(var: Variable):
        if var not in totals:
            totals[var] = _sum_terms(var, terms.get(var, []))
        return totals[var]

    for node in reversed(order):
        if not any(out in depends for out in node.outputs):
            continue
        arriving = [total(out) for out in node.outputs]
        if all(g is None for g in arriving):
            continue
        wanted = [var in depends and (var not in constants) for var in node.inputs]
        if not any(wanted):
            continue
        grads, valued = _ask_pullback(node, arriving)
        pattern = None
        for i, (var, g, want) in enumerate(zip(node.inputs, grads, wanted)):
            if not want:
                continue
            if is_disconnected(g):
                pattern = pattern or connection_pattern(node)
                if not any(pattern[i]):
                    continue
                g = ZERO  # the pullback's None for a connected input: zero, as Theano's ops say
            if is_null(g) or g is ZERO:
                terms.setdefault(var, []).append(g)
            else:
                terms.setdefault(var, []).append(_as_gradient_of(var, g, node) if valued else ZERO)
    for var in terms:
        total(var)
    return totals


def _ask_pullback(node: Apply, arriving: list) -> tuple[list, bool]:
    """The node's input gradients, and whether they carry values: only when a float output
    received a nonzero gradient. Otherwise (integer outputs, zeros) they count only as zero,
    or undefined (Theano checks that such terms are zero; here they are taken to be)."""
    null = next((g for g in arriving if is_null(g)), None)
    if null is not None:  # undefined above: undefined for every input below
        return [null] * len(node.inputs), True
    grads = pullback_of(node)(node, [_cotangent(out, g) for out, g in zip(node.outputs, arriving)])
    if len(grads) != len(node.inputs):
        raise ValueError(f"the pullback of {node.op} returned {len(grads)} gradients for {len(node.inputs)} inputs")
    valued = any(g is not None and g is not ZERO and _is_float(out) for out, g in zip(node.outputs, arriving))
    return grads, valued


def _cotangent(var: Variable, g):
    """The gradient arriving at ``var`` as its pullback's input: in ``var``'s dtype for a
    float, as it is (a float) for an integer, zeros for ZERO; None where nothing arrived."""
    if is_null(g):
        return g
    if g is None or not hasattr(var.type, "dtype"):
        return None
    if g is ZERO:
        return zeros_like(var, dtype=float_dtype(var))
    if not _is_float(var) or g.dtype == var.dtype:
        return g
    return cast(g, var.dtype)


def _is_float(var: Variable) -> bool:
    return np.dtype(getattr(var.type, "dtype", "int8")).kind in "fc"


def _as_gradient_of(var: Variable, g, node: Apply) -> Variable:
    g = as_tensor_variable(g)
    if getattr(g.type, "ndim", None) != var.type.ndim:
        raise ValueError(f"the pullback of {node.op} gave a gradient {describe(g)} for {describe(var)}: the number "
                         "of dimensions differs (a bug in that pullback)")
    dtype = float_dtype(var)
    return g if g.dtype == dtype else cast(g, dtype)


def _sum_terms(var: Variable, values: list):
    values = [v for v in values if not is_disconnected(v)]
    if not values:
        return None
    nulls = [v for v in values if is_null(v)]
    if nulls:
        return nulls[0]
    values = [v for v in values if v is not ZERO]
    if not values:
        return ZERO
    result = values[0]
    for v in values[1:]:
        result = add(result, v)
    return result


# ---------------------------------------------------------------------------- results
def _result(var: Variable, position: int, g, connected: bool, disconnected_inputs: str,
            return_disconnected: str, null_gradients: str):
    if is_null(g):
        if null_gradients == "raise":
            raise NullTypeGradError(f"grad: the gradient w.r.t. wrt[{position}] {describe(var)} is undefined: "
                                    f"{g.type.why}; pass null_gradients='return' to get it as a NullType variable")
        return g
    if connected:
        if g is None or g is ZERO:  # reached only through integer outputs: zero
            return zeros_like(var, dtype=float_dtype(var))
        return g
    message = (f"grad: the cost does not depend on wrt[{position}] {describe(var)}; pass "
               "disconnected_inputs='ignore' (or 'warn') to get a zero gradient for it")
    if disconnected_inputs == "raise":
        raise DisconnectedInputError(message)
    if disconnected_inputs == "warn":
        warnings.warn(message, UserWarning, stacklevel=3)
    kind = str(return_disconnected).lower()
    if kind == "zero":
        return zeros_like(var, dtype=float_dtype(var)) if hasattr(var.type, "dtype") else None
    if kind == "none":
        return None
    return disconnected_type()


__all__ = ["ZERO", "Lop", "NullType", "float_dtype", "grad"]
