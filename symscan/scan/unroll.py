"""scan() with a constant n_steps of 1 (or -1): no loop, fn is applied once in the outer graph."""

from __future__ import annotations

from collections.abc import Callable

from symscan.graph.basic import Variable
from symscan.scan.outputs import check_output_count, checked_outputs
from symscan.scan.parse import OutputSpec, SequenceSpec, argument_roles
from symscan.scan.trace import call_fn, check_strict, find_outer_variables
from symscan.scan.updates import ScanUpdates
from symscan.tensor.shape import expand_dims


def _sequence_slice(seq: SequenceSpec, tap: int, backwards: bool) -> Variable:
    """The element tap ``tap`` reads at the only step (from the end when going backwards)."""
    index = seq.offset(tap)
    return seq.var[index - seq.span - 1] if backwards else seq.var[index]


def _output_tap(out: OutputSpec, tap: int) -> Variable:
    return out.initial if out.kind == "sit_sot" else out.initial[out.span + tap]


def scan_one_step(fn: Callable, seqs: list[SequenceSpec], outs: list[OutputSpec], non_seqs: list,
                  backwards: bool, strict: bool, return_list: bool):
    args = [_sequence_slice(s, tap, backwards) for s in seqs for tap in s.taps]
    args += [_output_tap(o, tap) for o in outs for tap in o.taps]
    trace = call_fn(fn, args + non_seqs, argument_roles(seqs, outs, non_seqs))
    check_output_count(trace, outs)
    outputs = checked_outputs(trace, outs)
    find_outer_variables(trace, set())
    if strict:
        check_strict(trace, non_seqs)
    updates = ScanUpdates()
    for var, new in trace.updates:
        updates[var] = new
    results = [expand_dims(out, 0) for out in outputs]
    if len(results) == 1 and not return_list:
        return results[0], updates
    return results, updates
