"""``scan()``: parse the arguments, trace fn, build ScanArgs, make the node, slice the outputs."""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable

import numpy as np

from symscan.graph.basic import Variable
from symscan.graph.clone import clone_replace
from symscan.scan.args import NitSotEntry, NonSeqEntry, RecurrentEntry, ScanArgs, SequenceEntry, SharedEntry
from symscan.scan.outputs import check_output_count, checked_outputs, returned_outputs
from symscan.scan.parse import (
    OutputSpec,
    SequenceSpec,
    argument_roles,
    check_static_lengths,
    parse_n_steps,
    parse_non_sequences,
    parse_outputs_info,
    parse_sequences,
)
from symscan.scan.trace import call_fn, check_strict, find_outer_variables
from symscan.scan.unroll import scan_one_step
from symscan.scan.updates import ScanUpdates
from symscan.tensor.basic import static_int
from symscan.tensor.elemwise import minimum
from symscan.tensor.shape import shape


def scan(fn: Callable, sequences=None, outputs_info=None, non_sequences=None, n_steps=None,
         truncate_gradient: int = -1, go_backwards: bool = False, mode=None, name: str | None = None,
         profile: bool = False, allow_gc=None, strict: bool = False, return_list: bool = False):
    """Theano's scan: ``outputs, updates = scan(fn, sequences, outputs_info, non_sequences, n_steps)``.

    ``fn`` receives, in order, every tap of every sequence, every past tap of every
    recurrent output, then the non-sequences; it returns outputs, updates and ``until``.
    ``truncate_gradient=k`` (k > 0) lets gradients flow back through the last k executed steps
    only (Theano's truncated BPTT); ``mode`` and ``allow_gc`` are accepted for compatibility.
    """
    truncate_gradient = _check_truncate_gradient(truncate_gradient)
    seqs = parse_sequences(sequences)
    outs = parse_outputs_info(outputs_info)
    non_seqs = parse_non_sequences(non_sequences)
    steps, backwards = parse_n_steps(n_steps, go_backwards)
    if steps is None and not seqs:
        raise ValueError("scan: n_steps is required when there are no sequences")
    check_static_lengths(seqs, steps)
    if steps is not None and static_int(steps) == 1:  # a root int64 variable has no .data
        return scan_one_step(fn, seqs, outs, non_seqs, backwards, strict, return_list, name)
    placeholders = _placeholders(seqs, outs)
    parameters = _parameter_names(fn, sum(len(g) for g in placeholders) + len(non_seqs))
    for var, parameter in zip((v for group in placeholders for v in group), parameters):
        var.tag["parameter"] = parameter
    trace = call_fn(fn, [v for group in placeholders for v in group] + non_seqs, argument_roles(seqs, outs, non_seqs))
    check_output_count(trace, outs)
    recurrent_outputs = checked_outputs(trace, outs)
    find_outer_variables(trace, {v for group in placeholders for v in group}, non_seqs)
    if strict:
        check_strict(trace, non_seqs, fn)
    args = _build_args(trace, seqs, outs, placeholders, non_seqs, recurrent_outputs, steps, backwards, name)
    _tag_non_sequences(args, non_seqs, parameters[len(parameters) - len(non_seqs):] if non_seqs else [])
    args.profile = bool(profile)
    args.truncate_gradient = truncate_gradient
    node = args.to_node()
    return _slice_outputs(node, args, outs, return_list)


# ---------------------------------------------------------------------------- helpers
def _check_truncate_gradient(value) -> int:
    """-1 (every step) or a positive step count, as Theano."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or (value < 1 and value != -1):
        raise ValueError(f"scan: truncate_gradient must be -1 (backpropagate through every step) or a positive "
                         f"number of steps, got {value!r}")
    return int(value)


def _placeholders(seqs: list[SequenceSpec], outs: list[OutputSpec]) -> list[list[Variable]]:
    """Inner variables fn receives: one per sequence tap, then one per output tap."""
    groups = []
    for seq in seqs:
        element = seq.var.type.clone(shape=seq.var.type.shape[1:])
        groups.append([element.make_variable(name=_tap_name(seq.var.name, tap)) for tap in seq.taps])
    for out in outs:
        if out.kind == "nit_sot":
            groups.append([])
            continue
        state = out.initial.type if out.kind == "sit_sot" else out.initial.type.clone(shape=out.initial.type.shape[1:])
        groups.append([state.make_variable(name=_tap_name(out.name, tap)) for tap in out.taps])
    return groups


def _parameter_names(fn: Callable, count: int) -> list[str | None]:
    """The names of fn's first ``count`` positional parameters (None past them, or when fn's
    signature cannot be read): pictures label a loop's unnamed inputs by them."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return [None] * count
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name for p in itertools.takewhile(lambda p: p.kind in positional, parameters)]
    return (names + [None] * count)[:count]


def _tag_non_sequences(args: ScanArgs, non_seqs: list[Variable], parameters: list[str | None]) -> None:
    """Tag each explicit non-sequence's inner variable with the parameter fn received it as."""
    first = {}
    for var, parameter in zip(non_seqs, parameters):
        first.setdefault(var, parameter)
    for entry in args.non_seqs:
        if first.get(entry.outer) is not None:
            entry.inner.tag["parameter"] = first[entry.outer]


def _tap_name(name: str | None, tap: int) -> str | None:
    if name is None:
        return None
    return f"{name}[t]" if tap == 0 else f"{name}[t{tap:+d}]"


def _build_args(trace, seqs, outs, placeholders, non_seqs, outputs, steps, backwards, name) -> ScanArgs:
    """ScanArgs for the traced fn: every outer variable fn read becomes an inner input."""
    updated = dict(trace.updates)
    explicit = list(dict.fromkeys(non_seqs))
    implicit = [v for v in trace.outer if v not in set(explicit) and v not in updated]
    replace, non_seq_entries, shared_entries = {}, [], []
    for position, var in enumerate(explicit + implicit):
        if var in updated:
            continue
        inner = var.type.make_variable(name=var.name)
        replace[var] = inner
        label = var.name or (f"non_sequences[{position}]" if position < len(explicit) else "")
        non_seq_entries.append(NonSeqEntry(var, inner, label))
    for var, new in trace.updates:
        inner = var.type.make_variable(name=var.name)
        replace[var] = inner
        shared_entries.append((var, inner, new))
    targets = list(outputs) + [new for _, _, new in shared_entries]
    targets += [trace.condition] if trace.condition is not None else []
    targets = clone_replace(targets, replace)
    inner_outputs = iter(targets)
    derived = steps is None
    if derived:
        steps = _steps_from_sequences(seqs)
    args = ScanArgs(n_steps=steps, go_backwards=backwards, steps_from_sequences=derived, name=name)
    groups = iter(placeholders)
    for seq in seqs:
        args.sequences.append(SequenceEntry(seq.var, next(groups), seq.taps, seq.label))
    specs = outs or [OutputSpec("nit_sot", None, (), f"output {i}") for i in range(len(outputs))]
    kinds = {"mit_sot": args.mit_sot, "sit_sot": args.sit_sot}
    for spec in specs:
        group, out = next(groups, []), next(inner_outputs)
        if spec.kind == "nit_sot":
            args.nit_sot.append(NitSotEntry(out, label=spec.label))
        else:
            kinds[spec.kind].append(RecurrentEntry(spec.initial, group, out, spec.taps, label=spec.label))
    for var, inner, _ in shared_entries:
        args.shared.append(SharedEntry(var, inner, next(inner_outputs), label=var.name or "shared"))
    args.non_seqs = non_seq_entries
    args.until = next(inner_outputs, None)
    return args


def _steps_from_sequences(seqs: list[SequenceSpec]) -> Variable:
    """The step count the sequences allow: the shortest length minus its taps' span."""
    counts = [shape(s.var)[0] - s.span if s.span else shape(s.var)[0] for s in seqs]
    steps = counts[0]
    for count in counts[1:]:
        steps = minimum(steps, count)
    return steps


def _slice_outputs(node, args: ScanArgs, outs: list[OutputSpec], return_list: bool):
    """The user's outputs (initial taps sliced off) in outputs_info order, and the updates."""
    by_entry = {}
    for entry, out in zip(args.buffered, node.outputs):
        by_entry[id(entry)] = out[entry.span:] if isinstance(entry, RecurrentEntry) else out
    ordered, kinds = [], {"mit_sot": iter(args.mit_sot), "sit_sot": iter(args.sit_sot),
                          "nit_sot": iter(args.nit_sot)}
    specs = outs or [OutputSpec("nit_sot", None, (), "")] * len(args.nit_sot)
    for spec in specs:
        ordered.append(by_entry[id(next(kinds[spec.kind]))])
    updates = ScanUpdates()
    n_buffered = len(args.buffered)
    for entry, out in zip(args.shared, node.outputs[n_buffered:]):
        out.name = f"{entry.outer.name}_final" if entry.outer.name else None
        updates[entry.outer] = out
    return returned_outputs(ordered, return_list), updates

