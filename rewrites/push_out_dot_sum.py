"""``push_out_dot_sum``: an accumulator ``acc + dot(a_t, b_t)`` (matrices) that is read only at
its end becomes one matrix product after the loop. The loop emits the factors instead, and
``acc_0 + sum_t a_t b_t`` is ``acc_0 + A' @ B'`` with the steps folded into the inner axis:
``A'[i, (t, k)] = a_t[i, k]``, ``B'[(t, k), j] = b_t[k, j]``. A gradient's loop sums a weight's
gradient so (``x_t^T g_t`` at every step, Theano's ``scan_push_out_dot1``), and one large
product is much faster than T small ones.

The loop's rule that every step keeps the state's shape stays: ``acc_0 + A' @ B'`` is checked
against ``acc_0``'s shape (a product that only broadcasts to it is fine, as in the loop).
"""

from __future__ import annotations

from rewrites.registry import Rewritten, register
from rewrites.scan_utils import steps_known_non_negative
from rewrites.shape_sources import all_ones
from symscan.graph.fg import OUTPUT
from symscan.graph.traversal import ancestors
from symscan.scan.args import NitSotEntry, ScanArgs
from symscan.scan.checks import AfterChecks, CheckStepShape
from symscan.scan.op import Scan
from symscan.tensor.basic import constant, static_int
from symscan.tensor.elemwise import Elemwise, eq, mul, switch
from symscan.tensor.math import Dot, dot
from symscan.tensor.shape import reshape, shape, transpose
from symscan.tensor.subtensor import INT, Subtensor


@register("push_out_dot_sum", phase="push_out", tracks=(Scan,), tags=("push_out", "scan"))
def push_out_dot_sum(fgraph, node):
    args = ScanArgs.from_node(node)
    if any(e.ring is not None for e in args.buffered):
        return None
    for entry in args.sit_sot:
        factors = _summed_product(args, entry)
        reads = _final_reads(fgraph, entry) if factors is not None else None
        if reads is None:
            continue
        a, b = factors
        label = entry.label or "an accumulator"
        args.sit_sot.remove(entry)
        first = len(args.buffered)
        args.nit_sot += [NitSotEntry(a, label=f"{label}: left factor"), NitSotEntry(b, label=f"{label}: right factor")]
        loop = args.to_node()
        mapping = {old: new for old, new in zip(args.outer_outputs(), loop.outputs) if old is not None}
        stacked_a, stacked_b = loop.outputs[first:first + 2]
        total = Elemwise("add")(entry.outer_init, _sum_of_products(stacked_a, stacked_b, _step_count(args)))
        final = CheckStepShape(label, args.name)(total, _shape_of(entry.outer_init))
        for read, needs_step in reads:  # the last step's row of no step is scan's IndexError still
            mapping[read] = AfterChecks()(final, stacked_a[-1]) if needs_step else final
        return Rewritten(mapping, f"{label}: the sum of dot({a.owner.op if a.owner else 'a'}, ...) over the steps is "
                                  "one product after the loop")
    return None


def _summed_product(args: ScanArgs, entry):
    """(a, b) when the entry's new value is ``acc + dot(a, b)`` of matrices and nothing else in
    the body reads acc."""
    out, (acc,) = entry.inner_out, entry.inner_in
    node = out.owner
    if node is None or node.op != Elemwise("add") or len(node.inputs) != 2 or acc not in node.inputs:
        return None
    term = node.inputs[1] if node.inputs[0] is acc else node.inputs[0]
    if term is acc or term.owner is None or not isinstance(term.owner.op, Dot) or out.ndim != 2:
        return None
    a, b = term.owner.inputs
    if a.ndim != 2 or b.ndim != 2:
        return None
    others = [v for v in args.inner_outputs_except(entry)] + [a, b]
    if acc in ancestors(others):
        return None
    return a, b


def _final_reads(fgraph, entry) -> list | None:
    """The reads of the accumulator's last row, as (variable read, whether the read needs a
    step): ``buffer[-1]`` (the initial value when no step ran), or scan()'s ``buffer[1:][-1]``
    (an IndexError when no step ran). None when anything else reads it."""
    reads = []
    for reader, _ in fgraph.clients.get(entry.outer_out, []):
        if _is_last_row(reader):
            reads.append((reader.outputs[0], False))
            continue
        if reader == OUTPUT or not isinstance(reader.op, Subtensor) or reader.op.spec != (STEPS_SLICE,) \
                or static_int(reader.inputs[1]) != 1:
            return None
        steps = fgraph.clients.get(reader.outputs[0], [])
        if not steps or not all(_is_last_row(r) for r, _ in steps):
            return None
        reads += [(r.outputs[0], True) for r, _ in steps]
    return reads or None


STEPS_SLICE = ("slice", True, False, False)  # buffer[1:]: a sit-sot's steps


def _is_last_row(reader) -> bool:
    return (reader != OUTPUT and isinstance(reader.op, Subtensor) and reader.op.spec == (INT,)
            and static_int(reader.inputs[1]) == -1)


def _shape_of(init):
    """A variable of ``init``'s shape that the check can read instead of ``init`` (``second(w,
    0.0)``, zeros like w: w), so that nothing but the sum reads the zeros (fusion folds them in)."""
    node = init.owner
    if node is not None and node.op == Elemwise("second") and node.inputs[0].ndim == init.ndim \
            and all_ones(node.inputs[1]):
        return node.inputs[0]
    return init


def _step_count(args: ScanArgs):
    """The loop's n_steps when it is the number of rows of its outputs (never negative, no
    ``until``, int64 like a shape), for the sum to read instead of a stack's length; else None."""
    steps = args.n_steps
    if args.until is None and steps.dtype == "int64" and steps_known_non_negative(args):
        return steps
    return None


def _length(x, axis: int):
    """``x.shape[axis]``: a constant when the type knows it."""
    static = x.type.shape[axis]
    return constant(static, dtype="int64") if static is not None else shape(x)[axis]


def _sum_of_products(stacked_a, stacked_b, steps=None):
    """sum_t a_t @ b_t for stacked a (T, m, k) and b (T, k, n) (T: ``steps``, or a's length);
    when T is 0, zeros of shape (1, 1), which add to any initial value as no step does (the
    stacks' row shapes may be unknown then)."""
    steps = _length(stacked_a, 0) if steps is None else steps
    none = eq(steps, 0)
    rows = switch(none, 1, _length(stacked_a, 1))
    cols = switch(none, 1, _length(stacked_b, 2))
    inner = mul(steps, _length(stacked_a, 2))
    left = reshape(transpose(stacked_a, (1, 0, 2)), [rows, inner])
    right = reshape(stacked_b, [inner, cols])
    return dot(left, right)
