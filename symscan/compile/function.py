"""``function()``: turn symbolic inputs/outputs/updates into a callable.

Building: check the arguments, substitute ``givens``, copy the graph into a FunctionGraph,
run the mode's rewrites, hand the graph to the mode's backend. Calling: bind keyword values and
defaults (``In``) when there are any, check the inputs, evaluate, and only when everything
succeeded write the updates to the shared variables.
"""

from __future__ import annotations

import reprlib
import time
import warnings
from collections.abc import Mapping, Sequence

import numpy as np

import rewrites as rewriter
from symscan.backends.fast import FastEvaluator
from symscan.backends.heap import heap_arrays
from symscan.backends.reference import ReferenceEvaluator
from symscan.backends.tiered import TieredEvaluator, worth_tiering
from symscan.compile.io import In
from symscan.compile.modes import get_mode
from symscan.gradient.verify import set_function_builder
from symscan.graph.basic import Constant, SharedVariable, Variable, compiling, describe, html_of, set_eval_compiler
from symscan.graph.clone import clone_replace
from symscan.graph.fg import FunctionGraph
from symscan.graph.traversal import graph_inputs
from symscan.graph.type import TensorType
from symscan.tensor.basic import _is_python_scalar, as_tensor_variable, constant
from symscan.tensor.random import RandomVariable, generator_states, restore_generator_states


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


def _check_inputs(inputs) -> list[In]:
    """Each input as an ``In`` (a plain variable has no default), checked to be a root variable."""
    if isinstance(inputs, (Variable, In)):
        raise TypeError("function inputs must be a list of variables, e.g. function([x], y)")
    specs = [item if isinstance(item, In) else _plain_input(item, position) for position, item in enumerate(inputs)]
    for position, var in enumerate(spec.variable for spec in specs):
        if isinstance(var, SharedVariable):
            raise TypeError(f"inputs[{position}] {describe(var)} is a shared variable; shared variables are "
                            "read implicitly, so remove it from the inputs (or use givens=)")
        if isinstance(var, Constant) or var.owner is not None:
            raise TypeError(f"inputs[{position}] {describe(var)} is not a root variable: it is computed from "
                            "other variables; pass the variables it is computed from, or use givens=")
    if len({id(spec.variable) for spec in specs}) != len(specs):
        raise ValueError("the same variable appears twice among the inputs")
    return specs


def _plain_input(var, position: int) -> In:
    if not isinstance(var, Variable):
        raise TypeError(f"inputs[{position}] must be a symbolic variable, got {type(var).__name__}")
    return In(var)


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


def _default_updates(targets: list[Variable], explicit: list[tuple], skipped: set | None) -> list[tuple]:
    """Updates of shared variables the graph reads that carry a ``default_update`` (random
    generators, as in Theano) and have no explicit update; none of those in ``skipped``, and
    none at all when ``skipped`` is None (``no_default_updates=True``)."""
    if skipped is None:
        return []
    found, updated = [], {var for var, _ in explicit} | skipped
    pending = list(targets)
    while pending:
        new = [(var, var.default_update) for var in graph_inputs(pending)
               if isinstance(var, SharedVariable) and getattr(var, "default_update", None) is not None
               and var not in updated]
        updated.update(var for var, _ in new)
        found += new
        pending = [default for _, default in new]  # a default update may read other generators
    return found


def _skipped_defaults(no_default_updates: bool | Variable | Sequence[Variable] | None) -> set | None:
    """Theano's ``no_default_updates``: False applies every default update, True none (None is
    returned), a list of shared variables all but theirs."""
    if no_default_updates is True:
        return None
    if no_default_updates is False or no_default_updates is None:
        return set()
    items = [no_default_updates] if isinstance(no_default_updates, Variable) else list(no_default_updates)
    for position, var in enumerate(items):
        if not isinstance(var, SharedVariable):
            shown = describe(var) if isinstance(var, Variable) else repr(var)
            raise TypeError(f"no_default_updates[{position}] must be a shared variable, got {shown}; pass True, "
                            "False or a list of the shared variables whose default updates to skip")
    return set(items)


ON_UNUSED_INPUT = ("raise", "warn", "ignore")
DEFAULT_ON_UNUSED_INPUT = "ignore"
"""``ss.function``'s default. Theano's is "raise" (``theano.function`` keeps it); symscan's own
functions have always accepted unused inputs, and tests and notebooks rely on that."""


class UnusedInputError(ValueError):
    """An input of ``function`` is not needed for its outputs or updates (Theano's error of
    the same name, raised with ``on_unused_input="raise"``)."""


def _check_unused(inputs: list[Variable], targets: list[Variable], policy: str, title: str) -> None:
    """Raise, warn about or ignore inputs that nothing computed by the function reads."""
    if policy not in ON_UNUSED_INPUT:
        raise ValueError(f"on_unused_input must be one of {', '.join(map(repr, ON_UNUSED_INPUT))}, got {policy!r}")
    if policy == "ignore":
        return
    used = set(graph_inputs(targets))
    for position, var in enumerate(inputs):
        if var in used:
            continue
        message = (f"{title}: inputs[{position}] {describe(var)} is not needed to compute the outputs or updates; "
                   "remove it from the inputs, or pass on_unused_input='warn' or 'ignore' to accept it")
        if policy == "raise":
            raise UnusedInputError(message)
        warnings.warn(message, UserWarning, stacklevel=4)


def _check_downcast(allow_input_downcast) -> bool | None:
    if allow_input_downcast not in (None, True, False):
        raise TypeError(f"allow_input_downcast must be None, True or False, got {allow_input_downcast!r}")
    return allow_input_downcast


def _input_value(var: Variable, value, what: str, allow_downcast: bool | None, strict: bool = False):
    """``value`` checked against ``var``'s type, with Theano's ``allow_input_downcast``:
    True casts numbers to the input's dtype whatever is lost; None (the default) accepts safe
    numpy casts and Python numbers that fit once rounded (a float into float32); False also
    refuses Python numbers that rounding would change. ``strict`` (``In(strict=True)``) refuses
    any cast."""
    if allow_downcast is not None and isinstance(var.type, TensorType) and _numeric(value):  # (None: no cost)
        if allow_downcast:
            value = _cast(value, var.type.numpy_dtype)
        elif allow_downcast is False:
            _check_exact(value, var.type, what)
    try:
        return var.type.filter(value, what=what, strict=strict)
    except TypeError as err:
        if allow_downcast or strict or not _numeric(value):
            raise
        raise TypeError(f"{err}; or compile the function with allow_input_downcast=True to cast it, "
                        "accepting the loss of precision") from None


def _numeric(value) -> bool:
    if isinstance(value, Variable):
        return False
    try:
        return np.asarray(value).dtype.kind in "biufc"
    except (TypeError, ValueError):
        return False


def _cast(value, dtype: np.dtype) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype == dtype:
        return array
    with np.errstate(all="ignore"):
        return array.astype(dtype)


def _check_exact(value, vtype: TensorType, what: str) -> None:
    """With ``allow_input_downcast=False`` a Python number must convert without rounding."""
    if isinstance(value, (np.ndarray, np.generic)):
        return  # numpy values: the type's safe-cast rule decides
    array, target = np.asarray(value), vtype.numpy_dtype
    # int targets: the type's range check is exact already; complex into float: the type refuses it
    sources = "iufc" if target.kind == "c" else "iuf"
    if array.dtype == target or target.kind not in "fc" or array.dtype.kind not in sources:
        return
    converted = _cast(array, target)
    if not np.array_equal(converted, array, equal_nan=True):
        raise TypeError(f"{what} must be {vtype.dtype} (type {vtype}): the Python value {reprlib.repr(value)} would "
                        f"be stored as {reprlib.repr(converted.tolist())} (allow_input_downcast=False allows no "
                        f"rounding); pass np.asarray(value, dtype='{vtype.dtype}') or compile with "
                        "allow_input_downcast=None or True")


class Function:
    """A compiled function: call it with values for its inputs, in order or by name (an input's
    name is its variable's, or ``In(var, name=...)``); inputs with a default may be left out."""

    def __init__(self, inputs, outputs, updates=None, givens=None, mode=None, rewrites=None,
                 name: str | None = None, allow_input_downcast: bool | None = None,
                 on_unused_input: str = DEFAULT_ON_UNUSED_INPUT,
                 no_default_updates: bool | Sequence[SharedVariable] = False):
        self.name = name
        self.mode = get_mode(mode)
        self._default_mode = mode is None  # only the default mode hands loops over to numba
        specs = _check_inputs(inputs)
        self.inputs = [spec.variable for spec in specs]
        self.allow_input_downcast = _check_downcast(allow_input_downcast)
        self._bind_inputs(specs)
        self.return_list = isinstance(outputs, (list, tuple))
        outputs = [as_tensor_variable(o) for o in (outputs if self.return_list else [outputs])]
        self.updates = _check_updates(updates)
        self.updates += _default_updates(outputs + [new for _, new in self.updates], self.updates,
                                         _skipped_defaults(no_default_updates))
        self.outputs = outputs
        targets = outputs + [new for _, new in self.updates]
        givens = _check_givens(givens)
        if givens:
            targets = clone_replace(targets, dict(givens))
        _check_unused(self.inputs, targets, on_unused_input, self._title())
        self.fgraph = FunctionGraph(self.inputs, targets, clone=True, name=name)
        self._last_call_seconds = 0.0  # a long call runs with large arrays from the heap (backends.heap)
        self.fgraph.backend = self.mode.backend  # a few rewrites weigh costs by backend (push_out_seq)
        # graphs bound for numba: mode numba's, or the default mode's hand-over ("tiered"; rewrites/fusion.py)
        tiered = self._default_mode and worth_tiering(self.fgraph)
        self.fgraph.numba_ahead = "numba" if self.mode.backend == "numba" else ("tiered" if tiered else False)
        # the inplace rewrite lets a draw advance its shared generator where the update takes its new state
        self.fgraph.update_positions = {var: len(outputs) + i for i, (var, _) in enumerate(self.updates)}
        rules = [r for r in rewriter.select(rewrites, self.mode.rewrites) if r.name not in self.mode.excluded]
        with compiling():
            self._report = rewriter.rewrite_graph(self.fgraph, rules)
            self._evaluate = self._make_backend()
        self._shared = self.fgraph.shared_variables
        self._advanced_in_place = [n.inputs[0] for n in self.fgraph.apply_nodes
                                   if isinstance(n.op, RandomVariable) and n.tag.get("inplace") == 0]

    def _make_backend(self):
        if self.mode.backend == "reference":
            return ReferenceEvaluator(self.fgraph)
        if self.mode.backend == "fast":
            tiered = self._default_mode and worth_tiering(self.fgraph)
            return (TieredEvaluator if tiered else FastEvaluator)(self.fgraph, name=_identifier(self.name))
        if self.mode.backend == "numba":
            from symscan.backends.numba import NumbaEvaluator  # numba is an optional dependency

            return NumbaEvaluator(self.fgraph, name=_identifier(self.name))
        if self.mode.backend == "jax":
            from symscan.backends.jax import JaxEvaluator  # jax is an optional dependency

            return JaxEvaluator(self.fgraph)
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

    def _repr_html_(self) -> str | None:
        """Notebooks show the optimised graph, interactive (``ss.draw(f)``)."""
        return html_of(self)

    def rewrite_report(self) -> rewriter.RewriteReport:
        """What the rewriter did to this function's graph (fired and declined rules)."""
        return self._report

    def backend_report(self) -> list[str]:
        """How the loops run: in mode "numba", each loop's kernel or its reason to stay a Python
        loop; in the default mode, whether the numba version has taken over (``state``)."""
        evaluator = self._evaluate
        lines = [str(r) for r in getattr(evaluator, "report", [])]
        state = getattr(evaluator, "state", None)
        if state is not None:
            lines.append(f"tier: {state}")
        return lines

    def _bind_inputs(self, specs: list[In]) -> None:
        """What each call needs per input: its check (``_checks``), its position by keyword
        (``_positions``) and its default value, checked now as Theano does (``_defaults``)."""
        self._input_names = [spec.name for spec in specs]
        self._checks = []
        for i, spec in enumerate(specs):
            # an In's own allow_downcast wins; otherwise the function's applies (Theano ignores the
            # function's flag for In inputs, which only surprises)
            downcast = self.allow_input_downcast if spec.allow_downcast is None else spec.allow_downcast
            what = f"input {i} ({spec.name or 'unnamed'!r}) of {self._title()}"
            self._checks.append((spec.variable, what, downcast, spec.strict))
        self._defaults = {}
        for i, spec in enumerate(specs):
            if not spec.required:
                var, what, downcast, strict = self._checks[i]
                value = _input_value(var, spec.value, f"the default value of {what}", downcast, strict)
                self._defaults[i] = var.type.copy_value(value)  # later changes to the caller's array stay out
        self._positions: dict[str, tuple[int, ...]] = {}  # more than one position: ambiguous
        for i, name in enumerate(self._input_names):
            if name is not None:
                self._positions[name] = self._positions.get(name, ()) + (i,)

    def __call__(self, *args, **kwargs):
        if kwargs or len(args) != len(self._checks):
            args = self._bind(args, kwargs)
        values = [_input_value(var, arg, what, downcast, strict)
                  for (var, what, downcast, strict), arg in zip(self._checks, args)]
        shared_values = {s: s.get_value(borrow=True) for s in self._shared}
        # a failed call leaves every shared value as it was: the generators draws advanced in
        # place get their states back (the others are replaced only below, once all succeeded)
        saved = generator_states(shared_values[s] for s in self._advanced_in_place)
        try:
            start = time.perf_counter()
            with heap_arrays(self._last_call_seconds):
                results = self._evaluate(values, shared_values)
            self._last_call_seconds = time.perf_counter() - start
            n_out = len(self.outputs)
            new_states = [var.type.filter(value, what=f"the update of {describe(var)}")
                          for (var, _), value in zip(self.updates, results[n_out:])]
        except BaseException:
            restore_generator_states(saved)
            raise
        updated = {var for var, _ in self.updates}
        kept = [value for var, value in shared_values.items() if var not in updated]
        new_states = _unaliased(new_states, values + kept)
        for (var, _), value in zip(self.updates, new_states):
            var.set_value(value, borrow=True)
        outs = _unaliased(results[:n_out], values + list(shared_values.values()) + new_states)
        return OutputList(outs) if self.return_list else outs[0]

    def _bind(self, args: tuple, kwargs: dict) -> list:
        """The value of each input from positional values, keywords (input names) and defaults."""
        names = ", ".join(repr(name or f"input {i}") for i, name in enumerate(self._input_names))
        if len(args) > len(self.inputs):
            raise TypeError(f"{self._title()} takes {len(self.inputs)} input(s) ({names}), got {len(args)}")
        bound = list(args) + [_MISSING] * (len(self.inputs) - len(args))
        for name, value in kwargs.items():
            positions = self._positions.get(name)
            if positions is None:
                raise TypeError(f"{self._title()} has no input named {name!r}; its inputs are ({names}): pass one "
                                "of those names, or the value by position")
            if len(positions) > 1:
                raise TypeError(f"{self._title()}: inputs {' and '.join(map(str, positions))} are all named "
                                f"{name!r}, so {name}= is ambiguous; pass their values by position, or name them "
                                "apart with In(var, name=...)")
            position = positions[0]
            if bound[position] is not _MISSING:
                raise TypeError(f"{self._title()} got two values for input {position} ({name!r}): one by position "
                                f"and one as {name}=...; pass it once")
            bound[position] = value
        for i, value in enumerate(bound):
            if value is _MISSING:
                if i not in self._defaults:
                    name = self._input_names[i]
                    how = f"by position or as {name}=..." if name else "by position"
                    raise TypeError(f"{self._title()} takes {len(self.inputs)} input(s) ({names}), got "
                                    f"{len(args) + len(kwargs)}: no value for input {i} ({name or 'unnamed'!r}); "
                                    f"pass it {how}, or give it a default with In(var, value=...)")
                bound[i] = self._defaults[i]
        return bound

    def _title(self) -> str:
        return f"function {self.name!r}" if self.name else "the function"

    def __repr__(self) -> str:
        return f"<Function {self.name or ''} mode={self.mode.name} {self.inputs} -> {self.outputs}>"


_MISSING = object()  # an input not given yet while binding a call's arguments


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
             name: str | None = None, allow_input_downcast: bool | None = None,
             on_unused_input: str = DEFAULT_ON_UNUSED_INPUT,
             no_default_updates: bool | Sequence[SharedVariable] = False) -> Function:
    """Compile ``outputs`` as a function of ``inputs`` (see API.md, "Compiling and running");
    ``allow_input_downcast``, ``on_unused_input`` and ``no_default_updates`` are Theano's."""
    return Function(inputs, [] if outputs is None else outputs, updates=updates, givens=givens,
                    mode=mode, rewrites=rewrites, name=name, allow_input_downcast=allow_input_downcast,
                    on_unused_input=on_unused_input, no_default_updates=no_default_updates)


def _compile_for_eval(var: Variable, givens_dict: Mapping):
    keys = list(givens_dict)
    cache = var.__dict__.setdefault("_eval_cache", {})
    key = tuple(id(k) for k in keys)
    if key not in cache:
        cache[key] = function(keys, var, mode="py", on_unused_input="ignore")
    return cache[key](*[givens_dict[k] for k in keys])


set_eval_compiler(_compile_for_eval)
set_function_builder(function)  # verify_grad compiles through it (the gradient layer is below compile)
