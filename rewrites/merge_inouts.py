"""``merge_inouts``: within one scan, identical outer inputs (the same sequence with the same
taps, the same non-sequence) become one, and outputs computing the same thing become one; a
per-step output that is a recurrent output's new value is that output's steps (an ONNX Scan
returning its state every step, as an RNN's does, writes it as both)."""

from __future__ import annotations

from rewrites.registry import Rewritten, register
from rewrites.scan_utils import rebuild, replace_inner
from symscan.graph.merge import expression_key
from symscan.scan.args import NitSotEntry, ScanArgs
from symscan.scan.op import Scan


def _merge_inputs(args: ScanArgs, outer_memo: dict) -> dict:
    """Drop repeated sequences/non-sequences; map each dropped inner input to the kept one.

    Outer variables are compared by what they compute (``x[-2:]`` built twice is one input).
    """
    mapping, kept_seqs, seen = {}, [], {}
    for seq in args.sequences:
        first = seen.setdefault((expression_key(seq.outer, memo=outer_memo), seq.taps), seq)
        if first is seq:
            kept_seqs.append(seq)
        else:
            mapping.update(zip(seq.inner, first.inner))
    args.sequences = kept_seqs
    kept_non_seqs, seen = [], {}
    for entry in args.non_seqs:
        first = seen.setdefault(expression_key(entry.outer, memo=outer_memo), entry)
        if first is entry:
            kept_non_seqs.append(entry)
        else:
            mapping[entry.inner] = first.inner
    args.non_seqs = kept_non_seqs
    return mapping


def _merge_outputs(args: ScanArgs, outer_memo: dict) -> list[tuple]:
    """(dropped entry, kept entry) for outputs that compute the same values: recurrent ones
    first, then per-step ones (into a recurrent one, or another per-step one), so that no kept
    entry is dropped in turn."""
    pairs, memo = _recurrent_twins(args, outer_memo), {}
    for dropped, _ in pairs:
        (args.mit_sot if dropped in args.mit_sot else args.sit_sot).remove(dropped)
    recurrent_keys = [(expression_key(r.inner_out, memo=memo), r) for r in args.recurrent if r.ring is None]
    nit_seen: dict = {}
    for entry in list(args.nit_sot):
        key = expression_key(entry.inner_out, memo=memo)
        twin = next((r for r_key, r in recurrent_keys if r_key == key and entry.ring is None), None)
        first = twin or nit_seen.setdefault(key, entry)
        if first is not entry and (twin is not None or entry.ring == first.ring):
            pairs.append((entry, first))
            args.nit_sot.remove(entry)
    return pairs


def _recurrent_twins(args: ScanArgs, outer_memo: dict) -> list[tuple]:
    """(dropped, kept) recurrent outputs that compute the same values: the same kind, initial
    rows, taps and ring, and bodies that are equal when twins' past values are read as one.

    Twins are found together, so coupled states are twins too: an LSTM's h and c and their
    copies in the loop that records a gradient's residuals (each copy reads the other copy).
    Partition refinement: start from classes of equal (kind, initial rows, taps, ring) and split
    a class by its members' bodies until no class splits; by induction over the steps, members
    of a class then hold equal values at every step."""
    entries = [(0, e) for e in args.mit_sot] + [(1, e) for e in args.sit_sot]
    classes = _numbered([(kind, expression_key(e.outer_init, memo=outer_memo), e.taps, e.ring) for kind, e in entries])
    while True:
        leaves = {v: ("past", c, i) for c, (_, e) in zip(classes, entries) for i, v in enumerate(e.inner_in)}
        refined = _numbered([(c, expression_key(e.inner_out, leaves=leaves)) for c, (_, e) in zip(classes, entries)])
        if len(set(refined)) == len(set(classes)):
            break
        classes = refined
    kept: dict = {}
    pairs = []
    for c, (_, entry) in zip(classes, entries):
        first = kept.setdefault(c, entry)
        if first is not entry:
            pairs.append((entry, first))
    return pairs


def _numbered(keys: list) -> list[int]:
    """Each key's class number (equal keys, equal numbers)."""
    numbers: dict = {}
    return [numbers.setdefault(k, len(numbers)) for k in keys]


@register("merge_inouts", phase="merge", tracks=(Scan,), tags=("merge", "scan"))
def merge_inouts(fgraph, node):
    args = ScanArgs.from_node(node)
    outer_memo: dict = {}
    mapping = _merge_inputs(args, outer_memo)
    if mapping:
        replace_inner(args, mapping)
    pairs = _merge_outputs(args, outer_memo)
    for dropped, kept in pairs:  # other outputs may read the dropped state's past values
        if getattr(dropped, "inner_in", None):
            replace_inner(args, dict(zip(dropped.inner_in, kept.inner_in)))
    if not mapping and not pairs:
        return None
    result = rebuild(args)
    for dropped, kept in pairs:
        steps_only = isinstance(dropped, NitSotEntry) and not isinstance(kept, NitSotEntry)
        result[dropped.outer_out] = result[kept.outer_out][kept.span:] if steps_only else result[kept.outer_out]
    return Rewritten(result, f"merged {len(mapping)} repeated inner input(s) and {len(pairs)} repeated output(s)")
