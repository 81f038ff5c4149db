"""Converters of ONNX's control flow: Loop and Scan become symscan scans, If a switch or a check.

Loop: the loop-carried values are recurrent outputs (sit-sot), the scan outputs are per-step
outputs (nit-sot), the body's condition is ``until(not cond)`` and the trip count is
``n_steps`` (INT64_MAX when there is none: symscan's until loops grow their buffers). The
iteration number is a sequence ``arange(n_steps)`` when the loop runs all its steps (so
rewrites can move indexing by it out of the loop), else a counter carried by the loop. The
final values are the outputs' last rows, or the initial values when no step ran.

Scan: each scan input is a sequence (its axis moved first, reversed for direction 1), each
state a sit-sot, each scan output a nit-sot (reversed for direction 1, its axis moved back).

If: a condition known when the model is loaded picks its branch (the other is not even
converted, so it may hold ops symscan does not import); symscan's own exported checks
(``Lowering.guard``, whose failing branch is a node named after the error) become ``Assert``;
other Ifs become ``ifelse``, which computes only the chosen branch, as onnxruntime does. Its
branches must agree in dtype and rank (their lengths may differ); where they do not, the
condition must be known when the graph is built (it becomes a static input).
"""

from __future__ import annotations

import numpy as np
import onnx

import symscan.tensor as T
from symscan.graph.basic import Variable
from symscan.onnx.context import CHECK_MARK
from symscan.onnx.importer.context import NodeCall, Scope, converts, static_value
from symscan.onnx.importer.shape_ops import flipped, one_element
from symscan.scan.basic import scan
from symscan.scan.ifelse import ifelse
from symscan.scan.outputs import final_value
from symscan.scan.until import until
from symscan.tensor.assertion import assert_that
from symscan.tensor.basic import constant

INT64_MAX = np.iinfo(np.int64).max


def same_kind(node: NodeCall, names: list[str], before: list[Variable], after: list[Variable]) -> None:
    """Each carried value keeps its dtype and rank across a step (ONNX lets them change; a symscan
    state cannot: its shape is checked when the model runs)."""
    for name, old, new in zip(names, before, after):
        if new.dtype != old.dtype or new.ndim != old.ndim:
            raise node.fail(f"the loop-carried value {name!r} is {old.type} before a step and {new.type} after it; "
                            "symscan's loops keep each carried value's dtype and rank")


def run_body(node: NodeCall, body: onnx.GraphProto, bindings: list[tuple[str, Variable]]) -> list[Variable]:
    """The body's outputs, converted in a scope of its own with ``bindings`` for its inputs."""
    scope = Scope(node.scope)
    for name, var in bindings:
        scope.bind(name, var)
    return node.importer.convert_graph(body, scope)


# ---------------------------------------------------------------------------- Loop
def _always_true(body: onnx.GraphProto, scope: Scope) -> bool:
    """Whether the body's condition output is its condition input (passed on, as a for loop's
    is) or a value known True (a Constant in the body, or one of the enclosing graph, as
    torch.onnx writes): then the loop runs every step of its trip count."""
    producers = {out: n for n in body.node for out in n.output}
    name, cond_in = body.output[0].name, body.input[1].name
    for _ in range(len(body.node) + 1):
        if name == cond_in:
            return True
        node = producers.get(name)
        if node is None:  # from the enclosing graph
            outer = scope.lookup(name)
            known = None if outer is None else static_value(outer)
            return known is not None and bool(np.all(known))
        if node.op_type not in ("Identity", "Constant"):
            return False
        if node.op_type == "Constant":
            value = onnx.helper.get_attribute_value(node.attribute[0])
            return isinstance(value, onnx.TensorProto) and bool(np.all(onnx.numpy_helper.to_array(value)))
        name = node.input[0]
    return False


def _trip_count(node: NodeCall, runs_every_step: bool) -> Variable:
    """n_steps: the trip count (none: INT64_MAX, a bound for the condition), no step when the
    initial condition is false."""
    trip, cond = node.input(0), node.input(1)
    if trip is None and runs_every_step:
        raise node.fail("Loop without a trip count whose condition stays true never ends")
    steps = constant(np.int64(INT64_MAX)) if trip is None else T.maximum(one_element(trip, "int64"), 0)
    if cond is not None:
        cond = one_element(cond, "bool")
        known = static_value(cond)
        if known is None:
            steps = T.switch(cond, steps, np.int64(0))
        elif not bool(known):
            steps = constant(np.int64(0))
    return steps


@converts("Loop")
def convert_loop(node: NodeCall) -> list[Variable]:
    body = node.attrs["body"]
    initial = node.inputs[2:]
    n_carried, n_outputs = len(initial), len(body.output)
    if len(body.input) != 2 + n_carried or n_outputs < 1 + n_carried:
        raise node.fail(f"the body has {len(body.input)} inputs and {n_outputs} outputs for {n_carried} "
                        "loop-carried values (it needs 2 + N inputs and 1 + N + K outputs)")
    runs_every_step = _always_true(body, node.scope)
    steps = _trip_count(node, runs_every_step)
    iteration_name, cond_name = body.input[0].name, body.input[1].name
    carried_names = [i.name for i in body.input[2:]]
    true = constant(np.bool_(True))

    def step(*args):
        if runs_every_step:
            iteration, states = args[0], list(args[1:])
            counter = []
        else:  # the counter is the last state: the previous iteration number
            states, previous = list(args[:-1]), args[-1]
            iteration = previous + np.int64(1)
            counter = [iteration]
        results = run_body(node, body, [(iteration_name, iteration), (cond_name, true)]
                           + list(zip(carried_names, states)))
        same_kind(node, carried_names, states, results[1:1 + n_carried])
        outputs = list(results[1:]) + counter
        if runs_every_step:
            return outputs
        return outputs, until(T.invert(one_element(results[0], "bool")))

    outputs_info = list(initial) + [None] * (n_outputs - 1 - n_carried)
    if runs_every_step:  # the steps are the sequence's: scan needs no n_steps (and no length check)
        outs, _ = scan(step, sequences=[T.arange(steps, dtype="int64")], outputs_info=outputs_info,
                       name=node.node.name or "loop", return_list=True)
    else:
        outs, _ = scan(step, outputs_info=outputs_info + [constant(np.int64(-1))], n_steps=steps,
                       name=node.node.name or "loop", return_list=True)
    finals = [final_value(out) for out in outs[:n_carried]]
    return finals + list(outs[n_carried:n_outputs - 1])


# ---------------------------------------------------------------------------- Scan
def _moved_first(x: Variable, axis: int) -> Variable:
    axis = axis + x.ndim if axis < 0 else axis
    return x if axis == 0 else T.dimshuffle(x, [axis] + [a for a in range(x.ndim) if a != axis])


def _moved_from_first(x: Variable, axis: int) -> Variable:
    axis = axis + x.ndim if axis < 0 else axis
    if axis == 0:
        return x
    order = list(range(1, x.ndim))
    order.insert(axis, 0)
    return T.dimshuffle(x, order)


def _known_true(condition: Variable) -> bool:
    value = static_value(condition)
    return value is not None and bool(value)


def equal_lengths(node: NodeCall, sequences: list[Variable]) -> list[Variable]:
    """The sequences, the first checked to be as long as the others: ONNX requires equal
    lengths where symscan's scan stops at the shortest (the steps are their length)."""
    first, *others = sequences
    equal = [T.eq(T.shape(first)[0], T.shape(other)[0]) for other in others]
    pending = [e for e in equal if not _known_true(e)]
    message = f"{node.where}: its scan inputs have different lengths along their scan axes; ONNX requires equal ones"
    return [assert_that(first, *pending, message=message)] + others


@converts("Scan")
def convert_scan(node: NodeCall) -> list[Variable]:
    if node.opset < 9:
        return convert_batched_scan(node)
    return scan_over(node, node.inputs, node.attrs["body"])


def scan_over(node: NodeCall, inputs: list[Variable], body: onnx.GraphProto) -> list[Variable]:
    """Scan (opset 9 and newer) of ``inputs``: the states, then the scan inputs."""
    m = node.attr("num_scan_inputs")
    n_states = len(inputs) - m
    k = len(body.output) - n_states
    in_axes = node.attr("scan_input_axes") or [0] * m
    in_dirs = node.attr("scan_input_directions") or [0] * m
    out_axes = node.attr("scan_output_axes") or [0] * k
    out_dirs = node.attr("scan_output_directions") or [0] * k
    sequences = []
    for x, axis, direction in zip(inputs[n_states:], in_axes, in_dirs):
        moved = _moved_first(x, axis)
        sequences.append(flipped(moved, 0) if direction else moved)
    names = [i.name for i in body.input]

    def step(*args):
        elements, states = args[:m], args[m:]
        results = run_body(node, body, list(zip(names, list(states) + list(elements))))
        same_kind(node, names[:n_states], states, results[:n_states])
        return results

    outs, _ = scan(step, sequences=equal_lengths(node, sequences), outputs_info=list(inputs[:n_states]) + [None] * k,
                   name=node.node.name or "scan", return_list=True)
    outs = outs or []
    finals = [final_value(out) for out in outs[:n_states]]
    stacked = []
    for out, axis, direction in zip(outs[n_states:], out_axes, out_dirs):
        stacked.append(_moved_from_first(flipped(out, 0) if direction else out, axis))
    return finals + stacked


def convert_batched_scan(node: NodeCall) -> list[Variable]:
    """Scan-8: axis 0 of every input is a batch, each batch element scanned along axis 1."""
    lengths, *inputs = node.inputs
    if lengths is not None:
        raise node.fail("Scan-8 with sequence_lens has no symscan form (each batch element would stop at its "
                        "own length); leave sequence_lens out or use opset 9's Scan")
    body = node.attrs["body"]
    m = node.attr("num_scan_inputs")
    directions = node.attr("directions") or [0] * m
    n_states = len(inputs) - m

    def one_batch(*rows):
        sequences = [flipped(r, 0) if d else r for r, d in zip(rows[n_states:], directions)]
        names = [i.name for i in body.input]

        def step(*args):
            return run_body(node, body, list(zip(names, list(args[m:]) + list(args[:m]))))

        k = len(body.output) - n_states
        outs, _ = scan(step, sequences=equal_lengths(node, sequences), outputs_info=list(rows[:n_states]) + [None] * k,
                       return_list=True)
        return [final_value(o) for o in outs[:n_states]] + list(outs[n_states:])

    outs, _ = scan(one_batch, sequences=list(inputs), name=node.node.name or "scan", return_list=True)
    return list(outs)


# ---------------------------------------------------------------------------- If
def _check_message(branch: onnx.GraphProto) -> str | None:
    """The message of a branch that only fails: symscan's exported guards name it."""
    for branch_node in branch.node:
        if branch_node.name.startswith(CHECK_MARK):
            return branch_node.name.split(": ", 1)[1] if ": " in branch_node.name else branch_node.name
    return None


@converts("If")
def convert_if(node: NodeCall) -> list[Variable]:
    cond = one_element(node.inputs[0], "bool")
    then_branch, else_branch = node.attrs["then_branch"], node.attrs["else_branch"]
    known = static_value(cond)
    if known is not None:
        return run_body(node, then_branch if bool(known) else else_branch, [])
    message = _check_message(else_branch)
    if message is not None:
        checked = [assert_that(v, cond, message=message) for v in run_body(node, then_branch, [])]
        node.scope.checks.extend(checked)  # onnxruntime runs an If nobody reads: kept on an output
        return checked
    then_values, else_values = run_body(node, then_branch, []), run_body(node, else_branch, [])
    for a, b in zip(then_values, else_values):
        if a.dtype != b.dtype or a.ndim != b.ndim:
            node.static(0, f"the condition, because its branches give {a.type} and {b.type}")
    return ifelse(cond, then_values, else_values)
