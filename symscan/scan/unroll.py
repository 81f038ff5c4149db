"""scan() with a constant n_steps of 1 (or -1): no loop, fn is applied once in the outer graph.

The loop's checks stay: every sequence long enough, every mit-sot with its initial rows, each
recurrent output keeping its state's shape, whether or not fn reads them (``CheckStepShape``, ``AfterChecks``).
"""

from __future__ import annotations

from collections.abc import Callable

from symscan.graph.basic import Variable
from symscan.scan.checks import AfterChecks, CheckSequenceLength, CheckStepShape, InitialRows
from symscan.scan.outputs import check_output_count, checked_outputs, returned_outputs
from symscan.scan.parse import OutputSpec, SequenceSpec, argument_roles
from symscan.scan.trace import call_fn, check_strict, find_outer_variables
from symscan.scan.updates import ScanUpdates
from symscan.tensor.shape import expand_dims, shape


def _checked_sequence(seq: SequenceSpec) -> Variable:
    """The sequence, through the loop's "too short" check when its length is known only at
    run time (a static length was checked when scan() was called)."""
    return seq.var if seq.var.type.shape[0] is not None else CheckSequenceLength(seq.label, seq.taps, 1)(seq.var)


def _sequence_slice(seq: SequenceSpec, var: Variable, tap: int, backwards: bool) -> Variable:
    """The element tap ``tap`` reads at the only step (from the end when going backwards).

    As in Theano, the tap's window ``x[offset : offset + len - span]`` is cut first: it is
    empty when the sequence is too short, so reading it fails at run time instead of a
    negative index wrapping round to a wrong element.
    """
    start = seq.offset(tap)
    window = var[start:shape(var)[0] - seq.span + start]
    return window[-1] if backwards else window[0]


def _initial_rows(out: OutputSpec, name: str | None) -> Variable:
    """The rows a recurrent output's taps read: a sit-sot's state, a mit-sot's checked window."""
    return out.initial if out.kind == "sit_sot" else InitialRows(out.label, out.taps, False, name)(out.initial)


def _output_tap(out: OutputSpec, rows: Variable, tap: int) -> Variable:
    return rows if out.kind == "sit_sot" else rows[out.span + tap]


def scan_one_step(fn: Callable, seqs: list[SequenceSpec], outs: list[OutputSpec], non_seqs: list,
                  backwards: bool, strict: bool, return_list: bool, name: str | None = None):
    checked = [_checked_sequence(s) for s in seqs]
    rows = [_initial_rows(o, name) if o.kind != "nit_sot" else None for o in outs]
    args = [_sequence_slice(s, var, tap, backwards) for s, var in zip(seqs, checked) for tap in s.taps]
    args += [_output_tap(o, r, tap) for o, r in zip(outs, rows) for tap in o.taps]
    trace = call_fn(fn, args + non_seqs, argument_roles(seqs, outs, non_seqs))
    check_output_count(trace, outs)
    outputs = checked_outputs(trace, outs)
    find_outer_variables(trace, set(args), non_seqs)  # what scan passes fn is no free variable, for strict=True
    if strict:
        check_strict(trace, non_seqs, fn)
    guards = [v for v in checked if v.owner is not None] + [r for o, r in zip(outs, rows) if o.kind == "mit_sot"]
    updates = ScanUpdates()
    for var, new in trace.updates:  # the loop would fail before any update too
        updates[var] = AfterChecks()(new, *guards) if guards else new
    specs = outs or [OutputSpec("nit_sot", None, (), "")] * len(outputs)
    results = [expand_dims(_step_value(out, spec, r, name, guards), 0)
               for out, spec, r in zip(outputs, specs, rows or [None] * len(outputs))]
    return returned_outputs(results, return_list), updates


def _step_value(value: Variable, spec: OutputSpec, rows: Variable | None, name: str | None,
                guards: list[Variable]) -> Variable:
    """``value`` after the loop's checks; ``rows`` are a recurrent output's (checked) initial rows."""
    if spec.kind != "nit_sot":
        row = rows if spec.kind == "sit_sot" else rows[0]
        if None in value.type.shape or value.type.shape != row.type.shape:  # else the types fix the shape
            value = CheckStepShape(spec.label, name)(value, row)
    return AfterChecks()(value, *guards) if guards else value
