"""``scan_merge``: two scans with the same steps (same n_steps, direction, no until), neither
reading the other's outputs, become one loop."""

from __future__ import annotations

from rewrites.registry import Declined, Rewritten, register
from rewrites.scan_utils import rebuild
from symscan.graph.merge import expression_key
from symscan.graph.traversal import depends_on
from symscan.scan.args import ScanArgs
from symscan.scan.op import Scan
from symscan.tensor.basic import static_int


def _different_steps(a: ScanArgs, b: ScanArgs) -> str:
    """Why the two loops do not run the same steps ("" when they do)."""
    if a.until is not None or b.until is not None:
        return "a while loop (until) stops at a run-time condition"
    if a.go_backwards != b.go_backwards:
        return "different directions"
    if a.steps_from_sequences != b.steps_from_sequences:
        return "different n_steps"
    if a.n_steps is b.n_steps or expression_key(a.n_steps) == expression_key(b.n_steps):
        return ""  # the same computation (e.g. the length of the same sequence) gives the same count
    sa, sb = static_int(a.n_steps), static_int(b.n_steps)
    return "" if sa is not None and sa == sb else "different n_steps"


def _independent(first, second) -> bool:
    return not depends_on(second.inputs, first.outputs) and not depends_on(first.inputs, second.outputs)


def merged_args(a: ScanArgs, b: ScanArgs) -> ScanArgs:
    """One ScanArgs running both bodies side by side (entries concatenated kind by kind)."""
    return ScanArgs(
        n_steps=a.n_steps, sequences=a.sequences + b.sequences, mit_sot=a.mit_sot + b.mit_sot,
        sit_sot=a.sit_sot + b.sit_sot, nit_sot=a.nit_sot + b.nit_sot, shared=a.shared + b.shared,
        non_seqs=a.non_seqs + b.non_seqs, go_backwards=a.go_backwards,
        steps_from_sequences=a.steps_from_sequences,
        name="+".join(n for n in (a.name, b.name) if n) or None, profile=a.profile or b.profile)


@register("scan_merge", phase="merge", tracks=(Scan,), tags=("merge", "scan"))
def scan_merge(fgraph, node):
    args = ScanArgs.from_node(node)
    why = []
    for other in fgraph.toposort():
        if other is node or not isinstance(other.op, Scan):
            continue
        other_args = ScanArgs.from_node(other)
        reason = _different_steps(args, other_args)
        if not reason and not _independent(node, other):
            reason = "one reads the other's outputs"
        if not reason and {s.outer for s in args.shared} & {s.outer for s in other_args.shared}:
            reason = "both update the same shared variable"  # order would matter
        if reason:
            why.append(f"not with {other.op}: {reason}")
            continue
        return Rewritten(rebuild(merged_args(args, other_args)),
                         f"merged with {other.op} (same steps, independent): one loop")
    return Declined("; ".join(why)) if why else None
