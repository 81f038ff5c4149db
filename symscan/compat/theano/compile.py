"""``theano.compile``: Theano's ``function`` (its signature and defaults) over ``ss.function``.

Differences from ``ss.function``: the parameter order (``mode`` third, as in Theano),
``on_unused_input``'s default, Theano's ``"raise"``, and inputs that are computed variables:
Theano cuts the graph there and takes their values from the caller, ``ss.function`` refuses
them. Theano's mode names ("FAST_RUN", "FAST_COMPILE", "DebugMode") and ``In`` inputs are
understood by ``ss.function`` itself.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

from symscan.compile import THEANO_MODE_NAMES, Function, In, UnusedInputError
from symscan.compile import function as _function
from symscan.graph import Constant, SharedVariable, Variable, clone_replace, describe

THEANO_ON_UNUSED_INPUT = "raise"
"""What ``on_unused_input=None`` means: Theano's ``config.on_unused_input`` default."""


@dataclass(frozen=True)
class Out:
    """Theano's ``Out(variable, borrow=False)``: an output with Theano's borrow flag, which
    changes nothing here (every call returns arrays the caller owns, as ``borrow=False``)."""

    variable: Variable
    borrow: bool = False


def _without_out(outputs):
    """The outputs with each ``Out`` replaced by its variable."""
    if isinstance(outputs, Out):
        return outputs.variable
    if isinstance(outputs, (list, tuple)):
        return type(outputs)(o.variable if isinstance(o, Out) else o for o in outputs)
    return outputs


def function(inputs, outputs=None, mode=None, updates=None, givens=None, no_default_updates: bool | list = False,
             accept_inplace: bool = False, name: str | None = None, rebuild_strict: bool = True,
             allow_input_downcast: bool | None = None, profile: bool | None = None,
             on_unused_input: str | None = None) -> Function:
    """Theano 1.0's ``theano.function``. ``accept_inplace`` and ``rebuild_strict`` are accepted
    and change nothing (symscan graphs hold no user inplace ops, and ``givens`` always keep
    types); ``profile`` is accepted too: loops built with ``scan(profile=True)`` are timed."""
    inputs, outputs, updates, givens = _cut_at_inputs(inputs, _without_out(outputs), updates, givens)
    return _function(inputs, outputs, updates=updates, givens=givens, mode=mode, name=name,
                     allow_input_downcast=allow_input_downcast,
                     on_unused_input=THEANO_ON_UNUSED_INPUT if on_unused_input is None else on_unused_input,
                     no_default_updates=no_default_updates)


def _cut_at_inputs(inputs, outputs, updates, givens):
    """Theano's inputs that are computed variables: each becomes a fresh root variable of the
    same type and name wherever the outputs, updates and givens read it, so the graph above it
    is never evaluated (its shared variables are not read, their default updates not run)."""
    if isinstance(inputs, (Variable, In)):
        return inputs, outputs, updates, givens  # ss.function explains that a list is needed
    inputs, cuts = list(inputs), {}
    _refuse_inputs_in_givens(inputs, givens)
    for position, item in enumerate(inputs):
        var = item.variable if isinstance(item, In) else item
        if isinstance(var, Variable) and var.owner is not None and not isinstance(var, (Constant, SharedVariable)):
            if var not in cuts:  # twice among the inputs: ss.function names the duplicate
                cuts[var] = var.clone()
            if isinstance(item, In):
                inputs[position] = copy.copy(item)
                inputs[position].variable = cuts[var]
            else:
                inputs[position] = cuts[var]
    if not cuts:
        return inputs, outputs, updates, givens
    return inputs, _replaced(outputs, cuts), _replaced_values(updates, cuts), _replaced_values(givens, cuts)


def _refuse_inputs_in_givens(inputs, givens) -> None:
    """Theano refuses ``givens`` that replace an input: the replacement would never be used."""
    if isinstance(givens, Mapping):
        keys = list(givens)
    else:  # malformed entries are left to ss.function, which names them
        keys = [pair[0] for pair in givens or () if isinstance(pair, (tuple, list)) and len(pair) == 2]
    variables = {id(item.variable if isinstance(item, In) else item) for item in inputs}
    for key in keys:
        if id(key) in variables:
            name = key.name or "x"
            raise ValueError(f"givens replaces {describe(key)}, which is an input of the function, so the "
                             f"replacement would have no effect; compile function([new], ..., givens={{{name}: "
                             f"g(new)}}) with a new input, or function([{name}], theano.clone(outputs, "
                             f"replace={{{name}: g({name})}}))")


def _replaced(outputs, cuts: dict):
    if isinstance(outputs, Variable):
        return clone_replace([outputs], cuts)[0]
    if isinstance(outputs, (list, tuple)):
        variables = [o for o in outputs if isinstance(o, Variable)]
        copies = dict(zip(map(id, variables), clone_replace(variables, cuts)))
        return type(outputs)(copies.get(id(o), o) for o in outputs)
    return outputs


def _replaced_values(pairs, cuts: dict):
    """Updates or givens (a dict or (key, value) pairs) with the cut applied to the values;
    anything malformed is passed on as it is, for ss.function to name."""
    if pairs is None:
        return None
    try:
        items = list(pairs.items()) if isinstance(pairs, Mapping) else [tuple(p) for p in pairs]
    except TypeError:
        return pairs
    if any(len(p) != 2 for p in items):
        return items
    values = _replaced([value for _, value in items], cuts)
    return [(key, value) for (key, _), value in zip(items, values)]


class Param(In):
    """Theano's deprecated name for ``In`` (``default`` is ``In``'s ``value``)."""

    def __init__(self, variable: Variable, default=None, name: str | None = None, mutable: bool = False,
                 strict: bool = False, allow_downcast: bool | None = None, implicit: bool | None = None,
                 borrow: bool | None = None):
        warnings.warn("theano.Param is deprecated: replace Param(x, default=v) by theano.In(x, value=v)",
                      DeprecationWarning, stacklevel=2)
        super().__init__(variable, name=name, value=default, mutable=mutable, strict=strict,
                         allow_downcast=allow_downcast, implicit=implicit, borrow=borrow)


__all__ = ["THEANO_MODE_NAMES", "In", "Param", "UnusedInputError", "function"]
