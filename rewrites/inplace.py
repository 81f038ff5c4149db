"""``inplace``: mark where the fast evaluator may write results into existing memory.

- An elementwise node (a fused chain with one output too) may overwrite one of its inputs
  (``node.tag["inplace"] = i``) when nothing else reads that input's memory (the input, nor
  any array it is a view of), it is not a graph input, a constant, a shared value or a view
  of one, and it has the output's dtype and number of dimensions (the evaluator still checks
  the shape at run time, since broadcasting can grow the result).
- Inside a loop body, the node that computes a recurrent output may write it straight into
  the output's buffer row (``node.tag["into_buffer"] = True``).
- A random draw may draw from its generator itself rather than from a copy
  (``node.tag["inplace"] = 0``, Theano's ``random_make_inplace``) when nothing else reads the
  old state: the draw is its one reader, and the state is a shared stream's that the function
  updates with the draw's new state (a call that fails puts the state back), or a loop's
  carried state (a loop copies its generators once, when it starts).
Marks are annotations: they never change what the reference interpreter computes.
"""

from __future__ import annotations

from rewrites.registry import register
from symscan.graph.basic import Constant, SharedVariable
from symscan.graph.fg import OUTPUT
from symscan.scan.args import ScanArgs
from symscan.scan.checks import AfterChecks, CheckRowShape, CheckSequenceLength, CheckStepShape, InitialRows
from symscan.scan.ifelse import IfElse
from symscan.scan.op import Scan
from symscan.tensor.assertion import Assert
from symscan.tensor.broadcast import SumToShape
from symscan.tensor.composite import Composite
from symscan.tensor.elemwise import Elemwise
from symscan.tensor.gradient_markers import GradientMarker
from symscan.tensor.math import Dot
from symscan.tensor.random import RandomVariable
from symscan.tensor.shape import DimShuffle, Flatten, Reshape, SpecifyShape
from symscan.tensor.subtensor import IncSubtensor, Subtensor

VIEW_OPS = (DimShuffle, Subtensor, Reshape, Flatten, SpecifyShape, CheckSequenceLength, CheckRowShape, InitialRows,
            CheckStepShape, AfterChecks, GradientMarker, SumToShape, Assert)
"""Ops whose output may be a view of their first input (numpy returns views for these; the
checks pass their input through, InitialRows slices it, sum_to returns an unbroadcast input)."""


def _overwritable(fgraph, node, position: int) -> bool:
    """Writing ``node``'s output into input ``position`` clobbers nothing anyone reads.

    The input and every array it is a view of must be fresh memory computed in this graph
    (not an input, constant or shared value) with one reader each: the next link of the chain.
    """
    var, out = node.inputs[position], node.outputs[0]
    if var.type.dtype != out.type.dtype or var.type.ndim != out.type.ndim:
        return False
    reader = (node, position)
    while True:
        if isinstance(var, (Constant, SharedVariable)) or var in fgraph.inputs or var.owner is None:
            return False
        if fgraph.clients.get(var, []) != [reader] or any(v is var for v in fgraph.outputs):
            return False
        if isinstance(var.owner.op, Scan) and var.index >= var.owner.op.info.n_buffered:
            return False  # a shared state's final value is its initial value when no step runs
        if isinstance(var.owner.op, IfElse):
            return False  # a branch may pass a captured value through, or a view of one
        if not _may_be_a_view(var.owner):
            return True
        reader, var = (var.owner, 0), var.owner.inputs[0]


def _may_be_a_view(node) -> bool:
    """Whether ``node``'s output may share its first input's memory: a view op, or the real
    part of a real array (numpy and numba return the array itself)."""
    if isinstance(node.op, VIEW_OPS):
        return True
    return isinstance(node.op, Elemwise) and node.op.name == "real" and not node.inputs[0].dtype.startswith("complex")


@register("inplace", phase="inplace", tags=("inplace",), kind="graph")
def mark_inplace(fgraph):
    marked = []
    for node in fgraph.toposort():
        if _elementwise(node) and "inplace" not in node.tag:
            for position in range(len(node.inputs)):
                if _overwritable(fgraph, node, position):
                    node.tag["inplace"] = position
                    marked.append((node.outputs[0], node.outputs[0], f"{node.op} overwrites input {position}"))
                    break
        elif isinstance(node.op, IncSubtensor) and "inplace" not in node.tag and _overwritable(fgraph, node, 0):
            node.tag["inplace"] = 0  # fresh memory (e.g. np.zeros) nothing else reads: no copy of the base
            marked.append((node.outputs[0], node.outputs[0], f"{node.op} writes into its base"))
        elif isinstance(node.op, RandomVariable) and "inplace" not in node.tag and _owned_generator(fgraph, node):
            node.tag["inplace"] = 0
            marked.append((node.outputs[1], node.outputs[1], f"{node.op} draws from its generator in place"))
    if getattr(fgraph, "is_loop_body", False):
        marked += _mark_buffer_writes(fgraph)
    return marked


def _elementwise(node) -> bool:
    return isinstance(node.op, Elemwise) or isinstance(node.op, Composite) and len(node.outputs) == 1


def _owned_generator(fgraph, node) -> bool:
    """The draw is the one reader of its generator state, a state nobody needs afterwards."""
    rng = node.inputs[0]
    if fgraph.clients.get(rng, []) != [(node, 0)]:
        return False
    if getattr(fgraph, "is_loop_body", False):
        return rng in _carried_states(fgraph)
    position = getattr(fgraph, "update_positions", {}).get(rng)  # set by function(): shared -> output
    return position is not None and fgraph.outputs[position] is node.outputs[0]


def _carried_states(fgraph) -> set:
    """A loop body's inputs that hold its shared states from one step to the next (not its
    non-sequences: a generator passed as one draws from the same state at every step)."""
    loop = getattr(fgraph, "loop_node", None)
    if loop is None or not isinstance(loop.op, Scan):
        return set()
    return {entry.inner_in for entry in ScanArgs.from_parts(loop.op.info, fgraph, list(loop.inputs)).shared}


def _mark_buffer_writes(fgraph) -> list:
    marked = []
    for position, out in enumerate(fgraph.outputs[:getattr(fgraph, "n_buffered", 0)]):
        node = out.owner
        if (node is None or "into_buffer" in node.tag or not (_elementwise(node) or isinstance(node.op, Dot))
                or any(c != (OUTPUT, position) for c in fgraph.clients[out])):
            continue
        node.tag["into_buffer"] = True
        marked.append((out, out, f"{node.op} writes output {position} into its buffer row"))
    return marked
