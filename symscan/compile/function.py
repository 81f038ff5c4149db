"""``function()``: turn symbolic inputs/outputs/updates into a callable.

Building: check the arguments, substitute ``givens``, copy the graph into a FunctionGraph,
run the mode's rewrites, hand the graph to the mode's backend. Calling: check the inputs,
evaluate, and only when everything succeeded write the updates to the shared variables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

import rewrites as rewriter
from symscan.backends.fast import FastEvaluator
from symscan.backends.reference import ReferenceEvaluator
from symscan.compile.modes import get_mode
from symscan.graph.basic import Constant, SharedVariable, Variable, describe, png_of, set_eval_compiler
from symscan.graph.clone import clone_replace
from symscan.graph.fg import FunctionGraph
from symscan.graph.traversal import graph_inputs
from symscan.graph.type import TensorType
from symscan.tensor.basic import _is_python_scalar, as_tensor_variable, constant


def _pairs(mapping, what: str) -> list[tuple]:
    if mapping is None:
        return []
    if isinstance(mapping, Mapping):
        return list(mapping.items())
    try:
        pairs = [tuple(p) for p in mapping]
    except TypeError:
        raise TypeError(f"{what} must be a dict or a list of (variable, value) pairs, "
                        f"got {type(mapping).__name__}") from None
    if any(len(p) != 2 for p in pairs):
        raise TypeError(f"{what} must be a dict or a list of (variable, value) pairs")
    return pairs


def _check_inputs(inputs) -> list[Variable]:
    if isinstance(inputs, Variable):
        raise TypeError("function inputs must be a list of variables, e.g. function([x], y)")
    inputs = list(inputs)
    for position, var in enumerate(inputs):
        if not isinstance(var, Variable):
            raise TypeError(f"inputs[{position}] must be a symbolic variable, got {type(var).__name__}")
        if isinstance(var, SharedVariable):
            raise TypeError(f"inputs[{position}] {describe(var)} is a shared variable; shared variables are "
                            "read implicitly, so remove it from the inputs (or use givens=)")
        if isinstance(var, Constant) or var.owner is not None:
            raise TypeError(f"inputs[{position}] {describe(var)} is not a root variable: it is computed from "
                            "other variables; pass the variables it is computed from, or use givens=")
    if len({id(v) for v in inputs}) != len(inputs):
        raise ValueError("the same variable appears twice among the inputs")
    return inputs


def _check_updates(updates) -> list[tuple[SharedVariable, Variable]]:
    checked, seen = [], set()
    for position, (var, new) in enumerate(_pairs(updates, "updates")):
        if not isinstance(var, SharedVariable):
            raise TypeError(f"updates[{position}]: only shared variables can be updated, got "
                            f"{describe(var) if isinstance(var, Variable) else repr(var)}")
        if var in seen:
            raise ValueError(f"updates: {describe(var)} is updated twice")
        seen.add(var)
        if not isinstance(var.type, TensorType):
            if getattr(new, "type", None) != var.type:
                raise TypeError(f"updates: the new value of {describe(var)} must be of type {var.type}")
            checked.append((var, new))
            continue
        if _is_python_scalar(new):  # weak, like a Python input: it must fit the dtype exactly
            new = constant(TensorType(var.dtype, ()).filter(new, what=f"updates: the new value of {describe(var)}"))
        else:
            new = as_tensor_variable(new)
        if new.dtype != var.dtype or new.ndim != var.ndim:
            raise TypeError(f"updates: the new value of {describe(var)} is {new.type}; it must keep the "
                            f"dtype {var.dtype} and {var.ndim} dimension(s): cast it with .astype('{var.dtype}')")
        checked.append((var, new))
    return checked


def _check_givens(givens) -> list[tuple[Variable, Variable]]:
    checked = []
    for position, (var, new) in enumerate(_pairs(givens, "givens")):
        if not isinstance(var, Variable):
            raise TypeError(f"givens[{position}]: keys must be symbolic variables, got {type(var).__name__}")
        new = as_tensor_variable(new) if isinstance(var.type, TensorType) else new
        if new.type != var.type and var.type.conflicts_with(new.type):
            raise TypeError(f"givens[{position}]: {describe(var)} cannot be replaced by {describe(new)}; "
                            "the replacement needs the same dtype and number of dimensions")
        checked.append((var, new))
    return checked


def _default_updates(targets: list[Variable], explicit: list[tuple]) -> list[tuple]:
    """Updates of shared variables the graph reads that carry a ``default_update`` (random
    generators, as in Theano) and have no explicit update."""
    found, updated = [], {var for var, _ in explicit}
    pending = list(targets)
    while pending:
        new = [(var, var.default_update) for var in graph_inputs(pending)
               if isinstance(var, SharedVariable) and getattr(var, "default_update", None) is not None
               and var not in updated]
        updated.update(var for var, _ in new)
        found += new
        pending = [default for _, default in new]  # a default update may read other generators
    return found


class Function:
    """A compiled function: call it with values for its inputs, in order."""

    def __init__(self, inputs, outputs, updates=None, givens=None, mode=None, rewrites=None,
                 name: str | None = None):
        self.name = name
        self.mode = get_mode(mode)
        self.inputs = _check_inputs(inputs)
        self.return_list = isinstance(outputs, (list, tuple))
        outputs = [as_tensor_variable(o) for o in (outputs if self.return_list else [outputs])]
        self.updates = _check_updates(updates)
        self.updates += _default_updates(outputs + [new for _, new in self.updates], self.updates)
        self.outputs = outputs
        targets = outputs + [new for _, new in self.updates]
        givens = _check_givens(givens)
        if givens:
            targets = clone_replace(targets, dict(givens))
        self.fgraph = FunctionGraph(self.inputs, targets, clone=True, name=name)
        rules = [r for r in rewriter.select(rewrites, self.mode.rewrites) if r.name not in self.mode.excluded]
        self._report = rewriter.rewrite_graph(self.fgraph, rules)
        self._evaluate = self._make_backend()
        self._shared = self.fgraph.shared_variables

    def _make_backend(self):
        if self.mode.backend == "reference":
            return ReferenceEvaluator(self.fgraph)
        if self.mode.backend == "fast":
            return FastEvaluator(self.fgraph, name=_identifier(self.name))
        if self.mode.backend == "onnxruntime":
            from symscan.onnx.runtime import OnnxRuntimeEvaluator  # onnx is an optional dependency

            return OnnxRuntimeEvaluator(self, self.fgraph)
        raise NotImplementedError(f"mode {self.mode.name!r} is not available yet; use mode='py' or 'fast'")

    @property
    def source(self) -> str | None:
        """The Python source the fast evaluator generated (None for other modes)."""
        return getattr(self._evaluate, "source", None)

    @property
    def profile(self) -> dict | None:
        """Per-scan calls and seconds for scans built with ``profile=True`` (else None)."""
        return getattr(self._evaluate, "profile", None) or None

    def _repr_png_(self) -> bytes | None:
        """Notebooks show the optimised graph (``ss.draw(f)``)."""
        return png_of(self)

    def rewrite_report(self) -> rewriter.RewriteReport:
        """What the rewriter did to this function's graph (fired and declined rules)."""
        return self._report

    def __call__(self, *args):
        if len(args) != len(self.inputs):
            names = ", ".join(repr(v.name or f"input {i}") for i, v in enumerate(self.inputs))
            raise TypeError(f"{self._title()} takes {len(self.inputs)} input(s) ({names}), got {len(args)}")
        values = [var.type.filter(arg, what=f"input {i} ({var.name or 'unnamed'!r}) of {self._title()}")
                  for i, (var, arg) in enumerate(zip(self.inputs, args))]
        shared_values = {s: s.get_value(borrow=True) for s in self._shared}
        results = self._evaluate(values, shared_values)
        n_out = len(self.outputs)
        new_states = [var.type.filter(value, what=f"the update of {describe(var)}")
                      for (var, _), value in zip(self.updates, results[n_out:])]
        updated = {var for var, _ in self.updates}
        kept = [value for var, value in shared_values.items() if var not in updated]
        new_states = _unaliased(new_states, values + kept)
        for (var, _), value in zip(self.updates, new_states):
            var.set_value(value, borrow=True)
        outs = _unaliased(results[:n_out], values + list(shared_values.values()) + new_states)
        return OutputList(outs) if self.return_list else outs[0]

    def _title(self) -> str:
        return f"function {self.name!r}" if self.name else "the function"

    def __repr__(self) -> str:
        return f"<Function {self.name or ''} mode={self.mode.name} {self.inputs} -> {self.outputs}>"


class OutputList(list):
    """The values of a function compiled with a list of outputs (a plain list otherwise).

    With one output, ``np.asarray(result)`` is that output's array, not a stack of one, so a
    one-output result compares directly with the expected array.
    """

    def __array__(self, dtype=None, copy=None):
        value = self[0] if len(self) == 1 else list(self)
        return np.asarray(value, dtype=dtype)


def _unaliased(results: Sequence, owned: Sequence) -> list[np.ndarray]:
    """``results`` as writable ndarrays sharing memory with nothing in ``owned`` nor each other.

    The caller (or a shared variable) keeps each one, so a result that is read-only (a
    constant), an input, a shared value or another result (merged duplicates) is copied.
    """
    owned, fresh = [a for a in owned if isinstance(a, np.ndarray)], []
    for value in results:
        if not isinstance(value, (np.ndarray, np.generic, int, float, bool, complex)):
            fresh.append(value)  # not an array (a random generator): nothing to alias
            continue
        out = np.asarray(value)
        if not out.flags.writeable or any(np.may_share_memory(out, a) for a in owned):
            out = out.copy()
        owned.append(out)
        fresh.append(out)
    return fresh


def _identifier(name: str | None) -> str:
    text = "".join(c if c.isalnum() else "_" for c in (name or "function"))
    return text if text[:1].isalpha() else f"f_{text}"


def function(inputs, outputs=None, updates=None, givens=None, mode=None, rewrites=None,
             name: str | None = None) -> Function:
    """Compile ``outputs`` as a function of ``inputs`` (see API.md, "Compiling and running")."""
    return Function(inputs, [] if outputs is None else outputs, updates=updates, givens=givens,
                    mode=mode, rewrites=rewrites, name=name)


def _compile_for_eval(var: Variable, givens_dict: Mapping):
    keys = list(givens_dict)
    cache = var.__dict__.setdefault("_eval_cache", {})
    key = tuple(id(k) for k in keys)
    if key not in cache:
        cache[key] = function(keys, var, mode="py")
    return cache[key](*[givens_dict[k] for k in keys])


set_eval_compiler(_compile_for_eval)
