"""``push_out_seq``: inner computation that reads only sequence elements (and non-sequences)
runs once over whole sequences before the loop: ``x_t @ W`` becomes ``X @ W``.

Each sequence tap is first aligned into an array whose row t is what the body reads at
step t; the vectorised result enters the loop as a new sequence. An output that is such a
computation needs no loop at all: it is replaced by the vectorised array, so a scan that
only maps disappears.
"""

from __future__ import annotations

from rewrites.registry import Declined, Rewritten, register
from rewrites.scan_utils import (
    after_loop_checks,
    aligned,
    classify_inner,
    frontier,
    loop_checks,
    rebuild,
    replace_inner,
    steps_known_non_negative,
)
from rewrites.vectorize import NotVectorizable, batchable, vectorize
from rewrites.vectorize_subtensor import INDEXING, index_start, indexing_unbatchable
from symscan.graph.basic import Constant, Variable
from symscan.graph.traversal import toposort
from symscan.scan.args import ScanArgs, SequenceEntry
from symscan.scan.checks import CheckSequenceLength, StepCount
from symscan.scan.op import Scan
from symscan.tensor.basic import static_int
from symscan.tensor.composite import Composite
from symscan.tensor.elemwise import Elemwise
from symscan.tensor.math import Dot, MatMul
from symscan.tensor.shape import DimShuffle
from symscan.tensor.subtensor import IncSubtensor, Subtensor


def _per_step(args: ScanArgs, stacked: set, invariant: set) -> set[Variable]:
    """Inner variables computable for all steps: ops with a batched form (for the operands
    that vary per step) over sequence taps and loop invariants."""
    known = classify_inner(args, stacked | invariant)
    movable, varying = stacked | invariant, set(stacked)
    for node in toposort(args.inner_outputs(), stop_at=args.inner_inputs()):
        flags = [v in varying for v in node.inputs]
        if node.outputs[0] in known and all(v in movable or isinstance(v, Constant) for v in node.inputs) \
                and batchable(node.op, node.inputs, flags, tile_bases=True) \
                and not (args.until is not None and _indexed_per_step(node.op, flags)):
            movable.update(node.outputs)
            if any(flags):
                varying.update(node.outputs)
    return movable


def _indexed_per_step(op, flags: list[bool]) -> bool:
    """An index that changes per step: over whole sequences it would read rows of steps a loop
    with until never runs, and raise where the loop does not (an index out of range there)."""
    return isinstance(op, INDEXING) and any(flags[index_start(op):])


@register("push_out_seq", phase="push_out", tracks=(Scan,), tags=("push_out", "scan"))
def push_out_seq(fgraph, node):
    args = ScanArgs.from_node(node)
    if not args.sequences:
        return None
    stacked_inner = {v: (s, tap) for s in args.sequences for v, tap in zip(s.inner, s.taps)}
    invariant = {n.inner: n.outer for n in args.non_seqs}
    movable = _per_step(args, set(stacked_inner), set(invariant))
    time_dependent = _depends_on(args, movable, set(stacked_inner))
    moves = [v for v in frontier(args, movable & time_dependent, set(args.inner_inputs()))]
    tiling = _tiling_inside_the_loop(args, moves, time_dependent)
    moves = [v for v in moves if v not in tiling]
    in_kernel = _kept_in_a_compiled_loop(fgraph, args, moves)
    moves = [v for v in moves if v not in in_kernel]
    if in_kernel and not moves:
        return Declined(KERNEL_DECLINED)
    # a map output that is a sequence element itself (a gradient's loop leaves such maps)
    copies = [e.inner_out for e in args.nit_sot if e.inner_out in stacked_inner and e.ring is None]
    if not moves and not copies:
        return Declined(TILING_DECLINED) if tiling else _indexing_declined(args, movable, time_dependent)
    if not steps_known_non_negative(args):
        return Declined("n_steps may be negative at run time (that reverses the loop)")
    checked, steps = _checked_sequences(args, moves + copies)
    stacked = {v: aligned(s, tap, steps, args.go_backwards, (checked or {}).get(s))
               for v, (s, tap) in stacked_inner.items()}
    memo, mapping, whole = {}, {}, {}
    if checked is not None:
        whole.update((v, stacked[v]) for v in copies)
    for inner_var in moves:
        try:
            outer_var = vectorize(inner_var, stacked, invariant, memo, tile_bases=True)
        except NotVectorizable:
            continue
        placeholder = inner_var.type.make_variable(name=inner_var.name)
        stored = outer_var[::-1] if args.go_backwards else outer_var
        args.sequences.append(SequenceEntry(stored, [placeholder], (0,), f"pushed {inner_var.owner.op}"))
        mapping[inner_var] = placeholder
        whole[inner_var] = outer_var
    if not mapping and not whole:
        return Declined("the per-step computation has no batched form" if moves else
                        "the map outputs that copy a sequence element cannot leave the loop (until)")
    replaced = _drop_map_outputs(args, whole, loop_checks(ScanArgs.from_node(node))) if checked is not None else {}
    replace_inner(args, mapping)
    loop_left = bool(args.buffered or args.shared)
    result = rebuild(args) if loop_left else {}
    result.update(replaced)
    moved = ", ".join(str(v.owner.op) for v in mapping)
    detail = f"computed {moved} over whole sequences before the loop" if mapping else "sequence rows copied"
    if replaced:
        detail += f"; {len(replaced)} map output(s) need no loop" + ("" if loop_left else ", so the loop is gone")
    return Rewritten(result, detail)


TILING_DECLINED = ("set/inc_subtensor on a loop-invariant base is batched only as a map output: read inside "
                   "the loop it would hold a copy of the base for every step")


KERNEL_DECLINED = ("mode numba: products of per-step matrices and elementwise work stay in the compiled loop "
                   "(one GEMM per step in cache, elementwise fused into the step, no T-row intermediate "
                   "through memory)")


STEP_LOCAL_OPS = (Elemwise, Composite, Subtensor, DimShuffle)
"""Per-element work and views: fused into a compiled step at no cost beyond reading its rows."""


def _kept_in_a_compiled_loop(fgraph, args: ScanArgs, moves: list) -> set:
    """In mode numba a loop that stays a loop is compiled: a product whose per-step operands
    are matrices is already a full GEMM there, and computing it over all steps first only adds
    a T-row array's trip through memory (W4: 19 ms against 13.7 ms). Elementwise work on
    sequence rows (a gradient's sigmoid of a recorded pre-activation) is fused into the step
    there, where over whole sequences it is one more T-row array written and read back.
    Products of per-step vectors are still moved out (one GEMM instead of T matrix-vector
    products: W5)."""
    if getattr(fgraph, "backend", None) != "numba" or not (args.recurrent or args.shared or args.until is not None):
        return set()
    kept = set()
    for v in moves:
        nodes = toposort([v], stop_at=args.inner_inputs())
        if all(isinstance(n.op, STEP_LOCAL_OPS) for n in nodes) or any(
                isinstance(n.op, (Dot, MatMul)) and min(n.inputs[0].ndim, n.inputs[1].ndim) >= 2 for n in nodes):
            kept.add(v)
    return kept



def _tiling_inside_the_loop(args: ScanArgs, moves: list, time_dependent: set) -> set:
    """Moves whose batched form repeats a loop-invariant set/inc_subtensor base along the time
    axis and that do not leave the loop as map outputs: as a new sequence they would hold one
    base-sized array per step where the loop holds one."""
    leaving = {e.inner_out for e in args.nit_sot if e.ring is None} if args.until is None else set()
    return {v for v in moves if v not in leaving and any(
        isinstance(n.op, IncSubtensor) and n.outputs[0] in time_dependent and n.inputs[0] not in time_dependent
        for n in toposort([v], stop_at=args.inner_inputs()))}


def _indexing_declined(args: ScanArgs, movable: set, time_dependent: set) -> Declined | None:
    """Why the first indexing of per-step values stays in the loop (for the report), if one does."""
    for node in toposort(args.inner_outputs(), stop_at=args.inner_inputs()):
        if isinstance(node.op, INDEXING) and node.outputs[0] not in movable \
                and all(v in movable or isinstance(v, Constant) for v in node.inputs):
            why = indexing_unbatchable(node.op, node.inputs, [v in time_dependent for v in node.inputs], True)
            if why:
                return Declined(f"{node.op} stays in the loop: {why}")
    return None


def _depends_on(args: ScanArgs, candidates: set, sources: set) -> set:
    dependent = set(sources)
    for node in toposort(args.inner_outputs(), stop_at=args.inner_inputs()):
        if any(v in dependent for v in node.inputs):
            dependent.update(node.outputs)
    return dependent & candidates


def _checked_sequences(args: ScanArgs, moves: list) -> tuple[dict | None, Variable]:
    """Sequences wrapped in the loop's "too short" check, for map outputs that leave the loop
    (the loop checks its sequences; a vectorised output alone would silently come out short),
    and the step count to align them with. None when no output can leave (under ``until``).
    An n_steps known only at run time becomes the loop's checked ``StepCount``."""
    if args.until is not None or not any(e.inner_out in moves and e.ring is None for e in args.nit_sot):
        return None, args.n_steps
    steps = 0 if args.steps_from_sequences else static_int(args.n_steps)
    if steps is None:
        return {}, StepCount.of(args)
    return {s: CheckSequenceLength(s.label, s.taps, steps)(s.outer) for s in args.sequences
            if s.outer.type.shape[0] is None and (s.span or steps)}, args.n_steps  # static: checked by scan()


def _drop_map_outputs(args: ScanArgs, whole: dict[Variable, Variable], checks: list[Variable]) -> dict:
    """Outputs that are exactly a pushed computation: the vectorised array replaces them (after
    the loop's checks: what is left of the loop may have no reader)."""
    replaced = {}
    for entry in list(args.nit_sot):
        if entry.inner_out in whole and entry.ring is None:
            replaced[entry.outer_out] = after_loop_checks(whole[entry.inner_out], checks)
            args.nit_sot.remove(entry)
    return replaced
