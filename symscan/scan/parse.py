"""Step 1 of scan(): the user's arguments as plain records (``SequenceSpec``, ``OutputSpec``),
with errors that name the argument by role and position."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Variable, describe
from symscan.tensor.basic import as_tensor_variable, static_int
from symscan.tensor.elemwise import cast


@dataclass
class SequenceSpec:
    var: Variable
    taps: tuple[int, ...]
    label: str

    @property
    def span(self) -> int:
        return max(max(self.taps), 0) - min(min(self.taps), 0)

    def offset(self, tap: int) -> int:
        return tap - min(min(self.taps), 0)


@dataclass
class OutputSpec:
    """One entry of outputs_info: ``kind`` is "nit_sot", "sit_sot" or "mit_sot".

    ``name`` is the user's name for the initial value, kept apart because a mit-sot's
    ``initial`` may be a slice of it (which has no name).
    """

    kind: str
    initial: Variable | None
    taps: tuple[int, ...]
    label: str
    name: str | None = None

    @property
    def span(self) -> int:
        return -min(self.taps) if self.taps else 0


def as_list(value) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _name(var) -> str:
    return f" {var.name!r}" if getattr(var, "name", None) else ""


def _taps(value, where: str) -> tuple[int, ...]:
    taps = as_list(value)
    if not all(isinstance(t, (int, np.integer)) and not isinstance(t, bool) for t in taps):
        raise TypeError(f"scan: {where} taps must be integers, got {value!r}")
    if len(set(taps)) != len(taps):
        raise ValueError(f"scan: {where} taps {list(taps)} repeat a tap; list each tap once")
    return tuple(int(t) for t in taps)


def _as_input(value, where: str) -> Variable:
    try:
        return as_tensor_variable(value)
    except TypeError as err:
        raise TypeError(f"scan: {where} must be a tensor variable or a numeric value, got "
                        f"{type(value).__name__} {value!r} ({err})") from None


def parse_sequences(sequences) -> list[SequenceSpec]:
    specs = []
    for i, item in enumerate(as_list(sequences)):
        where = f"sequences[{i}]"
        if isinstance(item, dict):
            if "input" not in item:
                raise ValueError(f"scan: {where} is a dict without 'input'; use dict(input=X, taps=[...])")
            var, taps = _as_input(item["input"], where), item.get("taps", [0])
            label = f"{where}{_name(var)}"
            taps = (0,) if taps is None else _taps(taps, label)
            if not taps:
                raise ValueError(f"scan: {label} has no taps; give at least one, e.g. taps=[0], or drop the sequence")
        else:
            var, taps = _as_input(item, where), (0,)
            label = f"{where}{_name(var)}"
        if var.ndim < 1:
            raise ValueError(f"scan: {label} is {var.type}, a scalar; a sequence needs a leading "
                             "time axis (pass a vector or higher), or pass it as a non_sequence")
        specs.append(SequenceSpec(var, taps, label))
    return specs


def parse_outputs_info(outputs_info) -> list[OutputSpec]:
    specs = []
    for i, item in enumerate(as_list(outputs_info)):
        where = f"outputs_info[{i}]"
        if item is None:
            specs.append(OutputSpec("nit_sot", None, (), f"output {i}"))
            continue
        if isinstance(item, dict):
            initial, taps = item.get("initial"), item.get("taps", [-1] if "initial" in item else None)
            if initial is None:
                if taps:
                    raise ValueError(f"scan: {where} gives taps {taps} but no initial value; past values of an "
                                     "output need dict(initial=X, taps=[...]); drop the taps for a map output")
                specs.append(OutputSpec("nit_sot", None, (), f"output {i}"))
                continue
            if taps is None:
                specs.append(OutputSpec("nit_sot", None, (), f"output {i}"))
                continue
        else:
            initial, taps = item, (-1,)
        initial = _as_input(initial, where)
        label = f"{where} (initial{_name(initial)})" if initial.name else where
        taps = _taps(taps, label)
        if not taps:
            specs.append(OutputSpec("nit_sot", None, (), f"output {i}"))
            continue
        if any(t >= 0 for t in taps):
            raise ValueError(f"scan: {label} taps {list(taps)} must all be negative (past values of the output); "
                             "use taps like [-2, -1]")
        name = initial.name
        kind = "sit_sot" if taps == (-1,) else "mit_sot"
        if kind == "mit_sot":
            span = -min(taps)
            if initial.ndim < 1:
                raise ValueError(f"scan: {label} is {initial.type}, but taps {list(taps)} need {span} past values: "
                                 f"give an initial value with a leading axis of length {span}")
            length = initial.type.shape[0]
            if length is not None and length < span:
                raise ValueError(f"scan: {label} has {length} rows on its leading axis, but taps {list(taps)} "
                                 f"need {span}; initial[0] is output[-{span}]")
            if length != span:
                initial = initial[:span]
        specs.append(OutputSpec(kind, initial, taps, label, name))
    return specs


def parse_non_sequences(non_sequences) -> list[Variable]:
    return [item if isinstance(item, Variable) else _as_input(item, f"non_sequences[{i}]")
            for i, item in enumerate(as_list(non_sequences))]


def parse_n_steps(n_steps, go_backwards: bool) -> tuple[Variable | None, bool]:
    """``n_steps`` as an int64 scalar (None when absent) and the direction it implies."""
    if n_steps is None:
        return None, go_backwards
    if isinstance(n_steps, (bool, np.bool_, float, np.floating, str)):
        raise TypeError(f"scan: n_steps must be an int or an integer scalar variable, got "
                        f"{type(n_steps).__name__} {n_steps!r}; pass int(n_steps)")
    var = _as_input(n_steps, "n_steps")
    if var.ndim != 0 or var.dtype[0] not in "iu":
        raise TypeError(f"scan: n_steps must be an integer scalar, got {describe(var)}")
    value = static_int(var)
    if value is not None:
        if value < 0:
            go_backwards = not go_backwards
        return as_tensor_variable(np.int64(abs(value))), go_backwards
    return cast(var, "int64"), go_backwards


def argument_roles(seqs: list[SequenceSpec], outs: list[OutputSpec], non_seqs: list) -> list[str]:
    """What each argument of fn is, in the order scan passes them."""
    roles = [f"{s.label} tap {tap}" for s in seqs for tap in s.taps]
    roles += [f"{o.label} tap {tap}" for o in outs for tap in o.taps]
    return roles + [f"non_sequences[{i}]" + (f" {v.name!r}" if v.name else "") for i, v in enumerate(non_seqs)]


def static_length(var: Variable) -> int | None:
    return var.type.shape[0]


def check_static_lengths(sequences: Sequence[SequenceSpec], n_steps: Variable | None) -> None:
    """A sequence too short for a constant n_steps and its taps is an error at build time."""
    steps = None if n_steps is None else static_int(n_steps)
    for seq in sequences:
        length = static_length(seq.var)
        if length is None:
            continue
        need = (steps if steps is not None else 1) + seq.span
        if steps is not None and length < need or steps is None and length < seq.span:
            raise ValueError(too_short_message(seq.label, length, seq.taps, steps, seq.span))


def too_short_message(label: str, length: int, taps, steps: int | None, span: int) -> str:
    if steps is None:
        return (f"scan: {label} has {length} elements but its taps {list(taps)} span {span}; "
                "pass a longer sequence or fewer taps")
    return (f"scan: {label} has {length} elements but {steps} steps with taps {list(taps)} need "
            f"{steps + span} (n_steps + {span}); pass a longer sequence or a smaller n_steps")
