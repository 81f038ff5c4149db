"""Helpers the scan rewrites share: finding loop-invariant inner variables and rebuilding."""

from __future__ import annotations

from collections.abc import Iterable

from symscan.graph.basic import Constant, Variable
from symscan.graph.clone import clone_replace
from symscan.graph.fg import OUTPUT, FunctionGraph
from symscan.graph.traversal import toposort
from symscan.scan.args import ScanArgs, SequenceEntry
from symscan.scan.checks import AfterChecks, CheckRowShape, CheckSequenceLength, CheckStepShape, InitialRows, StepCount
from symscan.tensor.basic import static_int
from symscan.tensor.elemwise import Cast, Elemwise
from symscan.tensor.shape import DimShuffle, Shape, shape
from symscan.tensor.subtensor import Subtensor


def rebuild(args: ScanArgs) -> dict[Variable, Variable]:
    """Build the node for edited ``args``; map each kept old outer output to its new one."""
    node = args.to_node()
    return {old: new for old, new in zip(args.outer_outputs(), node.outputs) if old is not None}


def replace_inner(args: ScanArgs, mapping: dict[Variable, Variable]) -> None:
    """Substitute inner variables in every inner output of ``args`` (in place)."""
    args.set_inner_outputs(clone_replace(args.inner_outputs(), mapping))


def classify_inner(args: ScanArgs, seeds: Iterable[Variable]) -> set[Variable]:
    """Inner variables computed only from ``seeds`` and constants (``seeds`` included).

    With the non-sequences as seeds this is the loop-invariant part of the body; adding the
    sequence taps gives what can be computed for all steps at once.
    """
    known = set(seeds)
    for node in toposort(args.inner_outputs(), stop_at=args.inner_inputs()):
        if all(v in known or isinstance(v, Constant) for v in node.inputs) and not node.op.inner_graphs() \
                and not _is_random(node.op):
            known.update(node.outputs)
    return known


def _is_random(op) -> bool:
    return type(op).__name__ == "RandomVariable"


def readers_of(args: ScanArgs, var: Variable) -> list:
    """Inner nodes reading ``var`` plus the marker "output" if an inner output is ``var``."""
    nodes = [n for n in toposort(args.inner_outputs(), stop_at=args.inner_inputs()) if var in n.inputs]
    return nodes + (["output"] if any(o is var for o in args.inner_outputs()) else [])


def frontier(args: ScanArgs, movable: set[Variable], inner_inputs: set[Variable]) -> list[Variable]:
    """Movable variables (not inputs, not constants) that something not movable reads."""
    result: dict[Variable, None] = {}
    for node in toposort(args.inner_outputs(), stop_at=args.inner_inputs()):
        if node.outputs[0] in movable:
            continue
        for v in node.inputs:
            if v in movable and v not in inner_inputs and not isinstance(v, Constant):
                result.setdefault(v)
    for out in args.inner_outputs():
        if out in movable and out not in inner_inputs and not isinstance(out, Constant):
            result.setdefault(out)
    return list(result)


def scan_label(node) -> str:
    name = node.op.info.name
    return f"scan {name!r}" if name else "scan"


def inner_fgraph(args: ScanArgs) -> FunctionGraph:
    return FunctionGraph(args.inner_inputs(), args.inner_outputs(), clone=False)


def aligned(seq: SequenceEntry, tap: int, n_steps: Variable, backwards: bool,
            outer: Variable | None = None) -> Variable:
    """Rows the body reads from ``seq`` (or ``outer``, its checked stand-in) at ``tap`` over
    the steps, in step order."""
    outer = seq.outer if outer is None else outer
    if not backwards:
        start = seq.offset(tap)
        return outer[start:start + n_steps] if start else outer[:n_steps]
    end = shape(outer)[0] - (max(max(seq.taps), 0) - tap)
    return outer[end - n_steps:end][::-1]


def steps_known_non_negative(args: ScanArgs) -> bool:
    """A negative n_steps flips the direction at run time, which aligned arrays cannot follow."""
    return args.steps_from_sequences or non_negative(args.n_steps)


_NON_NEGATIVE_OPS = ("add", "mul", "floor_div", "minimum", "maximum")


def non_negative(var: Variable) -> bool:
    """Whether ``var`` is never negative: a constant >= 0, an unsigned value, a shape entry,
    or sums/products/floor quotients/min/max of such (``n_steps=X.shape[0] // 2``)."""
    value = static_int(var)
    if value is not None or var.dtype[0] == "u" or var.owner is None:
        return (value is not None and value >= 0) or var.dtype[0] == "u"
    op, inputs = var.owner.op, var.owner.inputs
    if isinstance(op, StepCount):
        return True
    if isinstance(op, (AfterChecks, DimShuffle)):  # the values pass through
        return non_negative(inputs[0])
    if isinstance(op, Subtensor):
        return inputs[0].owner is not None and isinstance(inputs[0].owner.op, Shape)
    if isinstance(op, Elemwise) and op.name == "maximum":  # at least any of its operands
        return any(non_negative(v) for v in inputs)
    if isinstance(op, Cast) or (isinstance(op, Elemwise) and op.name in _NON_NEGATIVE_OPS):
        return all(non_negative(v) for v in inputs)
    return isinstance(op, Elemwise) and op.name == "abs"


# ---------------------------------------------------------------------------- the loop's checks
def loop_checks(args: ScanArgs) -> list[Variable]:
    """The loop's run-time checks as values (``symscan.scan.checks``): its sequences long
    enough for n_steps and their taps, every mit-sot with the initial rows its taps need.

    An output a rule computes without the loop carries them (``after_loop_checks``): the loop
    that is left may have no reader, and the loop's errors must not go with it."""
    checks = [StepCount.of(args)] if args.sequences else []
    for entry in args.mit_sot:
        rows = entry.outer_init.type.shape[0]
        if rows is None or rows < entry.span:
            checks.append(InitialRows(entry.label, entry.taps, False, args.name)(entry.outer_init))
    return checks


def after_loop_checks(value: Variable, checks: list[Variable]) -> Variable:
    return AfterChecks()(value, *checks) if checks else value


CHECK_OPS = (CheckSequenceLength, StepCount, InitialRows, CheckRowShape, CheckStepShape)
"""Ops that compute a loop's run-time checks (their errors are the loop's)."""


def checks_dropped_with(fgraph: FunctionGraph, node, new: Variable, limit: int = 256) -> list[Variable]:
    """The loop checks (``CHECK_OPS``, other than ``node`` itself) that no value would read any
    more once ``node``'s output is replaced by ``new``: a rule that drops an operand (``second(a,
    b)`` is b when the shapes agree) must hang them on ``new`` (``after_loop_checks``), or an
    error would become a result. Looks at most ``limit`` nodes up from ``node``."""
    alive = _kept_by(fgraph, new)
    dead, candidates, changed = {node}, [], True
    stack = [v for v in node.inputs if v.owner is not None]
    while stack and len(candidates) < limit:
        owner = stack.pop().owner
        if owner not in candidates and owner is not node:
            candidates.append(owner)
            stack.extend(v for v in owner.inputs if v.owner is not None)
    while changed:  # a node dies when every reader of every output is dead
        changed = False
        for owner in candidates:
            if owner not in dead and not any(v in alive for v in owner.outputs) and all(
                    reader is not OUTPUT and reader in dead
                    for v in owner.outputs for reader, _ in fgraph.clients.get(v, [(OUTPUT, 0)])):
                dead.add(owner)
                changed = True
    return [owner.outputs[0] for owner in candidates if owner in dead and isinstance(owner.op, CHECK_OPS)]


def _kept_by(fgraph: FunctionGraph, new: Variable) -> set:
    """The graph's variables ``new`` reads (itself, if in the graph): they stay computed."""
    kept, stack = set(), [new]
    while stack:
        var = stack.pop()
        if var in fgraph.clients:
            kept.add(var)
        elif var.owner is not None:
            stack.extend(var.owner.inputs)
    return kept


def keep_initial_rows_check(args: ScanArgs, entry) -> None:
    """A mit-sot ``entry`` leaving the loop ``args`` keeps the loop's "too few initial rows"
    error there: n_steps, which the loop reads anyway, is computed after the check (unless the
    rows are known to suffice)."""
    rows = entry.outer_init.type.shape[0]
    if rows is None or rows < entry.span:
        check = InitialRows(entry.label, entry.taps, False, args.name)(entry.outer_init)
        args.n_steps = AfterChecks()(args.n_steps, check)
