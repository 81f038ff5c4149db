"""Step 2 of scan(): call ``fn`` on placeholder variables, read what it returned, and find the
outer variables its graph uses (free variables, shared variables, random generators)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from symscan.graph.basic import Apply, Constant, SharedVariable, Variable, describe
from symscan.graph.fg import MissingInputError
from symscan.scan.until import until
from symscan.tensor.basic import _is_python_scalar, as_tensor_variable, constant
from symscan.tensor.random import RandomVariable


@dataclass
class Trace:
    """What fn built: outputs, (shared, new value) updates, the until condition, and the
    serial number of the first node fn created (nodes at or after it are fn's own)."""

    outputs: list
    updates: list[tuple[SharedVariable, Variable]]
    condition: Variable | None
    first_serial: int
    outer: list[Variable] = field(default_factory=list)
    generators: set = field(default_factory=set)


def call_fn(fn: Callable, args: Sequence, roles: Sequence[str]) -> Trace:
    """Call ``fn(*args)`` and sort its return value into outputs, updates and until.

    ``roles`` says what each argument is, for the error when fn cannot take them.
    """
    _check_signature(fn, args, roles)
    first = Apply.next_serial()
    outputs, updates, condition = parse_return(fn(*args))
    return Trace(outputs, updates, condition, first)


def _check_signature(fn: Callable, args: Sequence, roles: Sequence[str]) -> None:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins and some callables have no signature: just call
        return
    try:
        signature.bind(*args)
    except TypeError as err:
        passed = "; ".join(f"{i}: {role}" for i, role in enumerate(roles)) or "nothing"
        raise TypeError(f"scan: fn{signature} cannot take the {len(args)} argument(s) scan passes ({err}). "
                        f"scan passes, in order, each sequence tap, each past tap of each output, then the "
                        f"non_sequences: {passed}") from None


def _is_update_pairs(value) -> bool:
    return (isinstance(value, (list, tuple)) and len(value) > 0
            and all(isinstance(p, (list, tuple)) and len(p) == 2 and isinstance(p[0], SharedVariable)
                    for p in value))


def _output(value, position: int):
    if isinstance(value, Variable) or _is_python_scalar(value) or hasattr(value, "dtype"):
        return value
    raise TypeError(f"scan: fn returned {type(value).__name__} {value!r} at position {position}; fn must return "
                    "variables (outputs), a dict or list of pairs (updates), and until(...) last")


def parse_return(result) -> tuple[list, list, Variable | None]:
    """Theano's rules: outputs, updates (dict or pairs) in any order, ``until`` last."""
    items = list(result) if isinstance(result, (list, tuple)) and not _is_update_pairs(result) else [result]
    condition = None
    positions = [i for i, item in enumerate(items) if isinstance(item, until)]
    if positions:
        if positions != [len(items) - 1]:
            raise TypeError("scan: fn must return until(...) as its last element, after outputs and updates")
        condition = items.pop().condition
    outputs, updates = [], []
    # A list inside the returned tuple is a group of outputs when the tuple also held updates
    # or an until: ``return [y1, y2], until(c)`` is two outputs, as in Theano.
    grouped = len(items) <= 2 and (condition is not None
                                   or any(isinstance(i, dict) or _is_update_pairs(i) for i in items))
    for position, item in enumerate(items):
        if isinstance(item, dict):
            updates.extend(item.items())
        elif _is_update_pairs(item):
            updates.extend(tuple(p) for p in item)
        elif grouped and isinstance(item, (list, tuple)):
            outputs.extend(_output(v, position) for v in item)
        else:
            outputs.append(_output(item, position))
    for position, (var, _) in enumerate(updates):
        if not isinstance(var, SharedVariable):
            raise TypeError(f"scan: fn's updates must have shared variables as keys; update {position} has "
                            f"{describe(var) if isinstance(var, Variable) else repr(var)}")
    seen: set = set()
    for var, _ in updates:
        if var in seen:
            raise ValueError(f"scan: fn returns two updates for {describe(var)}; return one new value per "
                             "shared variable")
        seen.add(var)
    return outputs, [(var, _update_value(var, new)) for var, new in updates], condition


def _update_value(var: SharedVariable, new) -> Variable:
    if _is_python_scalar(new):
        try:
            return constant(new, dtype=var.type.dtype)
        except TypeError:
            raise TypeError(f"scan: fn's update of {describe(var)} is the Python value {new!r}, which does not "
                            f"fit {var.type.dtype}; return a value of dtype {var.type.dtype}") from None
    new = new if isinstance(new, Variable) else as_tensor_variable(new)
    if new.type != var.type and (getattr(new.type, "dtype", None) != getattr(var.type, "dtype", None)
                                 or getattr(new.type, "ndim", None) != getattr(var.type, "ndim", None)):
        raise TypeError(f"scan: the update of {describe(var)} is {new.type}; it must keep {var.type.dtype} with "
                        f"{var.type.ndim} dimension(s): cast it with .astype('{var.type.dtype}')")
    return new


def find_outer_variables(trace: Trace, placeholders: set, non_sequences: Sequence[Variable] = ()) -> None:
    """Fill ``trace.outer``: variables fn read but did not build (in first-use order).

    A variable is fn's own when its node was created during the call; the walk stops at
    placeholders, constants and outer variables. A random draw counts as fn's own wherever it
    was made, with everything computed from it (Theano builds the body from the graph's roots,
    so a draw made outside fn is drawn again at every step, as its loop tutorial shows). A
    shared random generator of a draw in the body becomes an update of the loop; when fn made
    the draw, its default update is cleared, so the state advances only where the scan's
    updates are applied (a draw made outside keeps it for the graphs outside the loop). A draw
    passed in ``non_sequences`` is an input of the loop instead: drawn once.
    """
    explicit = set(non_sequences)
    updated = {var for var, _ in trace.updates}
    seen: set = set()
    pulled_in: set = set()  # nodes made outside fn that the body recomputes at every step
    random = _RandomAncestry()
    stack = [v for _, v in reversed(trace.updates)] + list(reversed(trace.outputs))
    stack += [trace.condition] if trace.condition is not None else []
    while stack:
        var = stack.pop()
        if not isinstance(var, Variable) or var in seen or var in placeholders or isinstance(var, Constant):
            continue
        seen.add(var)
        own = var.owner is not None and var.owner.serial >= trace.first_serial
        if var.owner is not None and (own or (var not in explicit and random.draws(var))):
            if var.owner.serial < trace.first_serial:
                pulled_in.add(var.owner)
            stack.extend(reversed(var.owner.inputs))
            continue
        trace.outer.append(var)
        default = getattr(var, "default_update", None)
        if not isinstance(var, SharedVariable) or var in updated or default is None or default.owner is None:
            continue
        if default.owner.serial >= trace.first_serial or default.owner in pulled_in:
            trace.updates.append((var, default))
            trace.generators.add(var)
            updated.add(var)
            if default.owner not in pulled_in:
                var.default_update = None
            stack.append(default)


class _RandomAncestry:
    """Whether a variable is, or is computed from, a random draw (memoised per scan call)."""

    def __init__(self) -> None:
        self.known: dict = {}

    def draws(self, var: Variable) -> bool:
        pending = [var]
        while pending:
            v = pending[-1]
            if v in self.known or v.owner is None:
                self.known.setdefault(v, False)
                pending.pop()
                continue
            inputs = [i for i in v.owner.inputs if i not in self.known and i.owner is not None]
            if inputs:
                pending.extend(inputs)
                continue
            pending.pop()
            self.known[v] = isinstance(v.owner.op, RandomVariable) or any(self.known.get(i, False)
                                                                          for i in v.owner.inputs)
        return self.known[var]


def check_strict(trace: Trace, explicit: Sequence[Variable], fn: Callable | None = None) -> None:
    """With strict=True every outer variable fn reads must be among the non_sequences."""
    explicit_set = set(explicit)
    for var in trace.outer:
        if var not in explicit_set and var not in trace.generators:
            kind = "shared variable" if isinstance(var, SharedVariable) else "variable"
            shown = describe(var) if var.name or fn is None else _python_name(fn, var) or describe(var)
            raise MissingInputError(f"scan(strict=True): fn uses the {kind} {shown} but it is not among "
                                    "non_sequences; add it to non_sequences or pass strict=False")


def _python_name(fn: Callable, var: Variable) -> str | None:
    """How fn's code refers to an unnamed variable (a closure or global name), for errors."""
    try:
        names = inspect.getclosurevars(fn)
    except (TypeError, ValueError):
        return None
    for scope in (names.nonlocals, names.globals):
        for name, value in scope.items():
            if value is var:
                return f"{name!r} ({var.type})"
    return None
