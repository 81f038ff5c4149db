"""``push_out_output``: an output computed at each step from other outputs' values (and
loop invariants) is computed once, after the loop, from their stacked values."""

from __future__ import annotations

from rewrites.registry import Declined, Rewritten, register
from rewrites.scan_utils import rebuild
from rewrites.vectorize import NotVectorizable, vectorize
from symscan.graph.traversal import ancestors
from symscan.scan.args import RecurrentEntry, ScanArgs
from symscan.scan.op import Scan


@register("push_out_output", phase="push_out", tracks=(Scan,), tags=("push_out", "scan"))
def push_out_output(fgraph, node):
    args = ScanArgs.from_node(node)
    if any(e.ring is not None for e in args.buffered):
        return None
    invariant = {n.inner: n.outer for n in args.non_seqs}
    declined = None
    for entry in args.nit_sot:
        if entry.outer_out is None or not fgraph.clients.get(entry.outer_out):
            continue
        sources = [e for e in args.buffered if e is not entry and e.inner_out is not entry.inner_out]
        leaves = {e.inner_out: e for e in sources}
        if entry.inner_out in leaves or not _reads_any(entry.inner_out, leaves):
            continue
        try:  # a dry run on placeholders: is the whole computation batchable from those leaves?
            probe = {v: v.type.clone(shape=(None,) + v.type.shape).make_variable() for v in leaves}
            vectorize(entry.inner_out, probe, invariant)
        except NotVectorizable as why:  # e.g. it reads a sequence element or a past value
            declined = declined or Declined(f"{entry.label or 'an output'} is not a function of other outputs' "
                                            f"values and loop invariants: {why}")
            continue
        args.nit_sot.remove(entry)
        mapping = rebuild(args)
        stacked = {}
        for v, source in leaves.items():
            new_out = mapping[source.outer_out]
            stacked[v] = new_out[source.span:] if isinstance(source, RecurrentEntry) else new_out
        mapping[entry.outer_out] = vectorize(entry.inner_out, stacked, invariant)
        return Rewritten(mapping, f"{entry.label or 'an output'} ({entry.inner_out.owner.op}) is computed after "
                                  "the loop from the stacked outputs it reads")
    return declined


def _reads_any(var, leaves: dict) -> bool:
    return any(v in leaves for v in ancestors([var]))
