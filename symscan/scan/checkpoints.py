"""``scan_checkpoints``: a scan whose gradient keeps one state per block of steps (Theano's).

The loop becomes two nested scans: an outer scan over blocks of ``save_every_N`` steps, whose
step runs an inner scan over the block and keeps only its last state. The outer scan's trace
(one state per block) is all that the gradient stores; each block's steps are recomputed
inside the backward pass, so the memory of the gradient goes from ``n_steps`` states to about
``n_steps / save_every_N + save_every_N`` of them, for about one more forward pass of work.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from symscan.graph.basic import Variable
from symscan.scan.basic import scan
from symscan.scan.checks import StepCount
from symscan.scan.parse import (
    OutputSpec,
    SequenceSpec,
    check_static_lengths,
    parse_n_steps,
    parse_non_sequences,
    parse_outputs_info,
    parse_sequences,
)
from symscan.scan.trace import parse_return
from symscan.tensor.basic import static_int
from symscan.tensor.creation import arange, zeros
from symscan.tensor.elemwise import minimum
from symscan.tensor.shape import concatenate, reshape, shape


class ScanCheckpointsError(ValueError, RuntimeError):
    """An argument ``scan_checkpoints`` does not support (a ``ValueError``, and a
    ``RuntimeError`` as Theano raised for taps)."""


def scan_checkpoints(fn: Callable, sequences=None, outputs_info=None, non_sequences=None, n_steps=None,
                     save_every_N: int = 10, padding: bool = True, *, name: str = "checkpointscan_fn",
                     no_padding: bool | None = None):
    """Theano's ``scan_checkpoints``: ``scan`` that stores one state every ``save_every_N`` steps.

    ``fn``, ``sequences``, ``outputs_info``, ``non_sequences`` and ``n_steps`` mean what they
    mean for ``scan``, within these limits (Theano's):

    * every output is recurrent with the single tap -1 (a sit-sot): an ``outputs_info`` entry
      that is ``None``, or a dict with other taps or no initial value, is an error;
    * sequences have no taps other than ``[0]``; several sequences are cut to the shortest,
      and to ``n_steps`` when it is given (a sequence shorter than ``n_steps`` is scan's error);
    * ``n_steps`` is >= 0 (a negative ``n_steps``, which makes ``scan`` run backwards, is
      an error when it is a constant and gives no blocks when it is symbolic); fn may return
      updates but not ``until``.

    Returns ``(outputs, updates)`` as Theano does: each output holds the state at the end of
    each block, i.e. after steps ``N, 2N, ...`` and after the last step, with a leading axis
    of ``ceil(n_steps / N)`` rows (``N = save_every_N``). ``outputs[-1]`` is the final state,
    equal to ``scan(...)[0][-1]``; the states in between are recomputed by the gradient.

    ``padding=True`` pads the sequences with zeros to a multiple of ``save_every_N`` (a copy)
    when their length is not one; the last block's inner scan runs only the real steps, so
    the padding is never read. With ``padding=False`` (Theano 1.0's ``no_padding=True``,
    also accepted) the length must be a multiple of ``save_every_N``: an error at build
    time when the lengths are known then, at run time (numpy's reshape error) otherwise.
    """
    if no_padding is not None:
        padding = not no_padding
    block = _check_block_length(save_every_N)
    seqs = _sequences(sequences)
    outs = _sit_sot_outputs(outputs_info)
    non_seqs = parse_non_sequences(non_sequences)
    steps = _step_count(seqs, n_steps, name)
    steps_value = static_int(steps)
    if not padding and steps_value is not None and steps_value % block:
        raise ScanCheckpointsError(
            f"scan_checkpoints: padding=False needs a number of steps that is a multiple of save_every_N={block}, "
            f"but the loop runs {steps_value} steps; pass padding=True (the sequences are then padded with zeros) "
            "or a save_every_N that divides the number of steps")
    # The inner scan of block b runs min(N, n_steps - b N) steps: N, ..., N, then the rest.
    starts = arange(0, steps if n_steps is None else _raw_n_steps(n_steps), block, dtype="int64")
    block_steps = minimum(block, steps - starts)
    blocks = [_blocks(s.var, steps, steps_value, block, padding) for s in seqs]
    n_seqs, n_outs = len(blocks), len(outs)

    def outer_step(*args):
        block_seqs, count = list(args[:n_seqs]), args[n_seqs]
        states = list(args[n_seqs + 1:n_seqs + 1 + n_outs])
        inner_non_seqs = list(args[n_seqs + 1 + n_outs:])
        results, updates = scan(_no_until(fn), sequences=block_seqs, outputs_info=states,
                                non_sequences=inner_non_seqs, n_steps=count, name=f"{name}_inner",
                                return_list=True)
        return [r[-1] for r in results or []], updates

    return scan(outer_step, sequences=blocks + [block_steps], outputs_info=[o.initial for o in outs],
                non_sequences=non_seqs, name=f"{name}_outer", allow_gc=True)


# ---------------------------------------------------------------------------- arguments
def _check_block_length(save_every_N) -> int:
    if isinstance(save_every_N, bool) or not hasattr(save_every_N, "__index__") or int(save_every_N) < 1:
        raise ScanCheckpointsError(f"scan_checkpoints: save_every_N must be a positive int, got {save_every_N!r}")
    return int(save_every_N)


def _sequences(sequences) -> list[SequenceSpec]:
    specs = parse_sequences(sequences)
    for spec in specs:
        if spec.taps != (0,):
            raise ScanCheckpointsError(
                f"scan_checkpoints: {spec.label} has taps {list(spec.taps)}; scan_checkpoints "
                "reads each sequence at tap 0 only (as Theano's does); pass shifted slices of the sequence as "
                "separate sequences (e.g. x[:-1] and x[1:]) or use ss.scan")
    return specs


def _sit_sot_outputs(outputs_info) -> list[OutputSpec]:
    items = outputs_info if isinstance(outputs_info, (list, tuple)) else [outputs_info]
    specs = parse_outputs_info(items)
    if not specs:
        raise ScanCheckpointsError("scan_checkpoints: outputs_info is empty; give the initial state of each output "
                                   "(scan_checkpoints keeps the last state of each block, so every output is "
                                   "fed back)")
    for i, (item, spec) in enumerate(zip(items, specs)):
        if spec.kind == "sit_sot":
            continue
        if spec.kind == "nit_sot":
            what = "None" if item is None else f"{item!r}, which gives no past value"
            raise ScanCheckpointsError(
                f"scan_checkpoints: outputs_info[{i}] is {what} (a map output, not fed back); scan_checkpoints "
                "keeps only the last state of each block, so every output must be recurrent with tap -1: give "
                "it an initial value, or compute map outputs with ss.scan/ss.map")
        raise ScanCheckpointsError(
            f"scan_checkpoints: {spec.label} has taps {list(spec.taps)}; scan_checkpoints doesn't work with taps: "
            "only the single tap -1 (the previous state, a sit-sot) is supported; carry the older values in "
            "the state yourself or use ss.scan")
    return specs


def _raw_n_steps(n_steps) -> Variable:
    """n_steps as given (int64): a negative symbolic value then makes no blocks."""
    return parse_n_steps(n_steps, False)[0]


def _step_count(seqs: list[SequenceSpec], n_steps, name: str) -> Variable:
    """The loop's step count, with scan's errors when a sequence is too short for n_steps."""
    if n_steps is None:
        if not seqs:
            raise ScanCheckpointsError("scan_checkpoints: n_steps is required when there are no sequences")
        lengths = [shape(s.var)[0] for s in seqs]
        steps = lengths[0]
        for length in lengths[1:]:
            steps = minimum(steps, length)
        return steps
    steps, backwards = parse_n_steps(n_steps, False)
    if backwards:
        raise ScanCheckpointsError(f"scan_checkpoints: n_steps={n_steps!r} is negative; scan_checkpoints runs "
                                   "forward only (reverse the sequences instead, e.g. x[::-1])")
    check_static_lengths(seqs, steps)
    if not seqs or static_int(steps) is not None and all(s.var.type.shape[0] is not None for s in seqs):
        return steps
    return StepCount(tuple((s.label, s.taps) for s in seqs), False, name)(steps, *[s.var for s in seqs])


def _no_until(fn: Callable) -> Callable:
    """fn, refusing ``until``: a block's inner scan would stop but the outer loop would not."""

    @functools.wraps(fn)  # scan checks the arguments against fn's own signature
    def step(*args):
        result = fn(*args)
        if parse_return(result)[2] is not None:
            raise ScanCheckpointsError("scan_checkpoints: fn returned until(...); scan_checkpoints cannot stop "
                                       "early (only the block would stop, not the loop); use ss.scan")
        return result

    return step


# ---------------------------------------------------------------------------- blocks
def _blocks(seq: Variable, steps: Variable, steps_value: int | None, block: int, padding: bool) -> Variable:
    """``seq[:steps]`` as ``(n_blocks, block, ...)``, zero-padded to whole blocks when asked."""
    length = seq.type.shape[0]
    rows = seq if length is not None and length == steps_value else seq[:steps]
    pad = None if steps_value is None else -steps_value % block
    trailing = [shape(seq)[i] if n is None else n for i, n in enumerate(seq.type.shape) if i > 0]
    if padding and pad != 0:
        missing = (block - steps % block) % block if pad is None else pad
        rows = concatenate([rows, zeros([missing] + trailing, dtype=seq.dtype)])
    return reshape(rows, [-1, block] + trailing)
