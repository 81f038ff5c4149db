"""``push_out_non_seq``: inner computation that depends only on non-sequences runs once,
before the loop, and enters the body as a new non-sequence."""

from __future__ import annotations

from rewrites.registry import Rewritten, register
from rewrites.scan_utils import classify_inner, frontier, rebuild, replace_inner
from symscan.graph.clone import clone_replace
from symscan.graph.traversal import ancestors
from symscan.scan.args import NonSeqEntry, ScanArgs
from symscan.scan.op import Scan


@register("push_out_non_seq", phase="push_out", tracks=(Scan,), tags=("push_out", "scan"))
def push_out_non_seq(fgraph, node):
    args = ScanArgs.from_node(node)
    non_seqs = {n.inner: n.outer for n in args.non_seqs}
    invariant = classify_inner(args, non_seqs)
    inputs = set(args.inner_inputs())
    # Only computation that reads a non-sequence: constant-only parts are constant folding's.
    moves = [v for v in frontier(args, invariant, inputs) if set(ancestors([v])) & non_seqs.keys()]
    if not moves:
        return None
    outer = clone_replace(moves, non_seqs)
    mapping = {}
    for inner_var, outer_var in zip(moves, outer):
        placeholder = inner_var.type.make_variable(name=inner_var.name)
        args.non_seqs.append(NonSeqEntry(outer_var, placeholder, f"pushed {inner_var.owner.op}"))
        mapping[inner_var] = placeholder
    replace_inner(args, mapping)
    moved = ", ".join(str(v.owner.op) for v in moves)
    return Rewritten(rebuild(args), f"computed {moved} once before the loop (it reads only non-sequences)")
