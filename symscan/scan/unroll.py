"""scan() with a constant n_steps of 1 (or -1): no loop, fn is applied once in the outer graph."""

from __future__ import annotations

from collections.abc import Callable

from symscan.graph.basic import Variable
from symscan.scan.checks import CheckSequenceLength
from symscan.scan.outputs import check_output_count, checked_outputs, returned_outputs
from symscan.scan.parse import OutputSpec, SequenceSpec, argument_roles
from symscan.scan.trace import call_fn, check_strict, find_outer_variables
from symscan.scan.updates import ScanUpdates
from symscan.tensor.shape import expand_dims, shape


def _sequence_slice(seq: SequenceSpec, tap: int, backwards: bool) -> Variable:
    """The element tap ``tap`` reads at the only step (from the end when going backwards).

    As in Theano, the tap's window ``x[offset : offset + len - span]`` is cut first: it is
    empty when the sequence is too short, so reading it fails at run time instead of a
    negative index wrapping round to a wrong element.
    """
    var = seq.var if seq.var.type.shape[0] is not None else CheckSequenceLength(seq.label, seq.taps, 1)(seq.var)
    start = seq.offset(tap)
    window = var[start:shape(var)[0] - seq.span + start]
    return window[-1] if backwards else window[0]


def _output_tap(out: OutputSpec, tap: int) -> Variable:
    return out.initial if out.kind == "sit_sot" else out.initial[out.span + tap]


def scan_one_step(fn: Callable, seqs: list[SequenceSpec], outs: list[OutputSpec], non_seqs: list,
                  backwards: bool, strict: bool, return_list: bool):
    args = [_sequence_slice(s, tap, backwards) for s in seqs for tap in s.taps]
    args += [_output_tap(o, tap) for o in outs for tap in o.taps]
    trace = call_fn(fn, args + non_seqs, argument_roles(seqs, outs, non_seqs))
    check_output_count(trace, outs)
    outputs = checked_outputs(trace, outs)
    find_outer_variables(trace, set(args))  # what scan passes fn is no free variable, for strict=True
    if strict:
        check_strict(trace, non_seqs, fn)
    updates = ScanUpdates()
    for var, new in trace.updates:
        updates[var] = new
    results = [expand_dims(out, 0) for out in outputs]
    return returned_outputs(results, return_list), updates
