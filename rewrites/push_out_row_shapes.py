"""``push_out_row_shapes``: the shape of a sequence's element, read inside the body, is the
sequence's shape without its time axis at every step, and a state's (sit-sot, mit-sot) is its
initial value's, since the loop raises when a step changes it; such shapes enter the body as
non-sequences read once before the loop. A gradient's body reads such shapes for its ``sum_to`` targets
(``x_t.shape[0]``); once they are non-sequences, ``push_out_non_seq`` moves what is computed
from them (their ``maximum``, the target vectors) out of the loop too.

Reading an array's shape cannot fail, so nothing that raised before the loop raises now, and
the steps read the same numbers as before.
"""

from __future__ import annotations

from rewrites.registry import Rewritten, register
from rewrites.scan_utils import rebuild, replace_inner
from symscan.graph.traversal import toposort
from symscan.scan.args import NonSeqEntry, ScanArgs
from symscan.scan.op import Scan
from symscan.tensor.basic import static_int
from symscan.tensor.shape import Shape, shape
from symscan.tensor.subtensor import INT, Subtensor


@register("push_out_row_shapes", phase="push_out", tracks=(Scan,), tags=("push_out", "scan"))
def push_out_row_shapes(fgraph, node):
    args = ScanArgs.from_node(node)
    reads = _row_shape_reads(args, _row_sources(args))
    if not reads:
        return None
    mapping = {}
    for inner_var, outer_var in reads.items():
        placeholder = inner_var.type.make_variable(name=inner_var.name)
        args.non_seqs.append(NonSeqEntry(outer_var, placeholder, "pushed row shape"))
        mapping[inner_var] = placeholder
    replace_inner(args, mapping)
    return Rewritten(rebuild(args), f"{len(reads)} shape read(s) of sequence elements or states come from the "
                                    "outer shapes, read once before the loop")


def _row_sources(args: ScanArgs) -> dict:
    """{inner tap: (outer variable, leading axes)}: a tap's shape is the outer variable's
    without its leading axes (a sequence's time axis, a mit-sot's initial rows)."""
    sources = {tap: (seq.outer, 1) for seq in args.sequences for tap in seq.inner}
    sources.update({tap: (entry.outer_init, 1) for entry in args.mit_sot for tap in entry.inner_in})
    sources.update({tap: (entry.outer_init, 0) for entry in args.sit_sot for tap in entry.inner_in})
    return sources


def _row_shape_reads(args: ScanArgs, sources: dict) -> dict:
    """{inner shape read: the same value computed from the outer variable}: ``x_t.shape[k]`` as
    ``x.shape[k + 1]`` (a constant k within x_t's dimensions), and a whole ``x_t.shape`` read by
    anything else as ``x.shape[1:]``."""
    reads = {}
    body = toposort(args.inner_outputs(), stop_at=args.inner_inputs())
    for node in body:
        tap = _shape_of_tap(node.inputs[0], sources) if isinstance(node.op, Subtensor) else None
        if tap is not None and node.op.spec == (INT,):
            k = static_int(node.inputs[1])
            outer, lead = sources[tap]
            if k is not None and -tap.ndim <= k < tap.ndim and outer.ndim == tap.ndim + lead:
                reads[node.outputs[0]] = shape(outer)[k + lead if k >= 0 else k]
    read_whole = {v for node in body if node.outputs[0] not in reads for v in node.inputs}
    read_whole |= set(args.inner_outputs())
    for node in (n for n in body if isinstance(n.op, Shape)):
        tap = node.inputs[0]
        if tap in sources and node.outputs[0] in read_whole:
            outer, lead = sources[tap]
            if outer.ndim == tap.ndim + lead:
                reads[node.outputs[0]] = shape(outer)[lead:] if lead else shape(outer)
    return reads


def _shape_of_tap(var, sources: dict):
    """The tap whose ``Shape`` ``var`` is, or None."""
    owner = var.owner
    if owner is not None and isinstance(owner.op, Shape) and owner.inputs[0] in sources:
        return owner.inputs[0]
    return None
