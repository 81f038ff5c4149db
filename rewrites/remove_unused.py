"""``remove_unused`` (remove_constants_and_unused): drop what a Scan does not need.

- non-sequences and sequence taps no inner node reads (a dropped tap re-slices the sequence
  so the remaining taps read the same elements, in either direction); a whole sequence
  stays unless it is known now to be long enough (only the loop can check it at run time);
- outputs nobody outside reads, when no other part of the body reads their past values (a
  mit-sot's check of its initial rows stays, on n_steps);
- constant non-sequences, which move into the body (so constant folding can see them);
- an ``until`` condition that is constant False (``remove_never_until``): the loop runs all its
  steps (an imported ONNX for loop whose condition output is a constant).
"""

from __future__ import annotations

from rewrites.registry import Declined, Rewritten, register
from rewrites.scan_utils import keep_initial_rows_check, rebuild, replace_inner
from symscan.graph.basic import Constant
from symscan.graph.clone import clone_replace
from symscan.graph.traversal import ancestors
from symscan.scan.args import ScanArgs, SequenceEntry, taps_span
from symscan.scan.checks import AfterChecks, CheckSequenceLength, StepCount
from symscan.scan.op import Scan
from symscan.tensor.basic import static_int


def _read_inside(args: ScanArgs) -> set:
    """Inner inputs some inner output (or the until condition) depends on."""
    return set(ancestors(args.inner_outputs())) & set(args.inner_inputs())


def _drop_taps(seq: SequenceEntry, keep: list[int]) -> SequenceEntry:
    """The sequence with only the taps at positions ``keep``, re-sliced to read the same rows."""
    taps = tuple(seq.taps[i] for i in keep)
    lo_old, hi_old = min(min(seq.taps), 0), max(max(seq.taps), 0)
    lo_new, hi_new = min(min(taps), 0), max(max(taps), 0)
    start, end_trim = lo_new - lo_old, hi_old - hi_new
    outer = seq.outer[start:-end_trim] if end_trim else (seq.outer[start:] if start else seq.outer)
    return SequenceEntry(outer, [seq.inner[i] for i in keep], taps, seq.label)


def _length_known_enough(args: ScanArgs, seq: SequenceEntry) -> bool:
    """Whether the sequence is known now to be long enough for the loop (so that the loop's
    "too short" error cannot happen): n_steps is counted from the sequences and it has no taps'
    span, or its length and n_steps are known and the length is enough."""
    if args.steps_from_sequences and seq.span == 0:
        return True
    length = seq.outer.type.shape[0]
    if length is None:
        return False
    if args.steps_from_sequences:
        return length >= seq.span
    steps = static_int(args.n_steps)
    return steps is not None and length >= abs(steps) + seq.span


def _drop_sequences(args: ScanArgs, read: set) -> tuple[list[str], list[str]]:
    """Drop unused sequence taps (in place): what was dropped, and unused sequences that stay.

    The loop checks each sequence against n_steps and all its taps; a sequence that leaves the
    loop, or keeps fewer taps, keeps that check: on the sequence (``CheckSequenceLength``) when
    the steps it needs are known now, else on n_steps (``AfterChecks`` of a ``StepCount``). An
    unused sequence of unknown length with a constant n_steps stays, so that n_steps stays a
    constant for the rules that use it."""
    done, kept, sequences, on_n_steps = [], [], [], []
    steps = None if args.steps_from_sequences else static_int(args.n_steps)
    for seq in args.sequences:
        keep = [i for i, v in enumerate(seq.inner) if v in read]
        if len(keep) == len(seq.taps):
            sequences.append(seq)
            continue
        checked = seq.outer
        span_kept = bool(keep) and taps_span(tuple(seq.taps[i] for i in keep)) == seq.span
        if not span_kept and not _length_known_enough(args, seq):
            if not keep and steps is not None:
                sequences.append(seq)
                kept.append(seq.label or "a sequence")
                continue
            if args.steps_from_sequences or steps is not None:
                checked = CheckSequenceLength(seq.label, seq.taps, abs(steps or 0))(seq.outer)
                if not keep:  # n_steps is counted from it: it reads the length through the check
                    args.n_steps = clone_replace([args.n_steps], {seq.outer: checked})[0]
            else:
                on_n_steps.append(seq)
        if keep:
            sequences.append(_drop_taps(SequenceEntry(checked, seq.inner, seq.taps, seq.label), keep))
            done.append(f"dropped unused taps of {seq.label}")
        else:
            done.append(f"dropped unused {seq.label}")
    if on_n_steps:
        check = StepCount(tuple((s.label, s.taps) for s in on_n_steps), False, args.name)(
            args.n_steps, *[s.outer for s in on_n_steps])
        args.n_steps = AfterChecks()(args.n_steps, check)
    args.sequences = sequences
    return done, kept


def _unused_outputs(fgraph, args: ScanArgs) -> list[str]:
    """Remove outputs not read outside whose past values nothing else inside reads."""
    changed = True
    removed = []
    while changed:
        changed = False
        for kind in ("nit_sot", "mit_sot", "sit_sot", "shared"):
            for entry in list(getattr(args, kind)):
                if entry.outer_out is None or fgraph.clients.get(entry.outer_out):
                    continue
                past = getattr(entry, "inner_in", [])
                own = set(past if isinstance(past, list) else [past])
                if own & set(ancestors(args.inner_outputs_except(entry))):
                    continue
                getattr(args, kind).remove(entry)
                removed.append(entry.label or kind.replace("_", "-"))
                if kind == "mit_sot":
                    keep_initial_rows_check(args, entry)
                changed = True
    return removed


@register("remove_unused", phase="canonicalize", tracks=(Scan,),
          tags=("canonicalize", "scan", "remove_constants_and_unused"))
def remove_unused(fgraph, node):
    args = ScanArgs.from_node(node)
    done = [f"dropped unused output {label}" for label in _unused_outputs(fgraph, args)]
    constants = {n.inner: n.outer for n in args.non_seqs if isinstance(n.outer, Constant)}
    if constants:
        replace_inner(args, constants)
        done.append(f"moved {len(constants)} constant non-sequence(s) into the body")
    read = _read_inside(args)
    done += [f"dropped unused non-sequence {n.label}" for n in args.non_seqs
             if n.inner not in read and n.outer not in constants.values()]
    args.non_seqs = [n for n in args.non_seqs if n.inner in read]
    dropped, kept = _drop_sequences(args, read)
    done += dropped
    stays = f"kept unused {', '.join(kept)}: with an explicit n_steps only the loop checks its length"
    if not done or not (args.buffered or args.shared):
        return Declined(stays) if kept else None
    return Rewritten(rebuild(args), "; ".join(done + ([stays] if kept else [])))


@register("remove_never_until", phase="canonicalize", tracks=(Scan,),
          tags=("canonicalize", "scan", "remove_constants_and_unused"))
def remove_never_until(fgraph, node):
    args = ScanArgs.from_node(node)
    if args.until is None or not isinstance(args.until, Constant) or bool(args.until.data):
        return None
    args.until = None
    return Rewritten(rebuild(args), "the until condition is always False: a loop over all n_steps")
