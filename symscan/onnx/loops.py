"""Scan lowering: ONNX ``Scan`` where it fits, ``Loop`` for everything else.

ONNX Scan takes sequences read at tap 0, sit-sot states and per-step outputs: a scan with
only those, no ``until``, no ring buffers, no nested loop and a step count that cannot turn
negative lowers to Scan (``go_backwards`` through ``scan_input_directions``). Everything
else lowers to Loop: the iteration number reads each sequence tap by Gather (from the end
when going backwards, decided at run time when a negative n_steps may reverse the loop),
a mit-sot's window of past values is loop state, ``until`` becomes the loop condition, and
a ringed output keeps its last steps. Non-sequences are read from the enclosing graph by
name. Shared updates are final loop states. A loop that may run no step and needs one (see
``_may_run_no_step``) runs one on zeros and drops it. Sequences too short for the step count
and mit-sots with too few initial rows fail with scan's messages (``symscan.onnx.checks``).
"""

from __future__ import annotations

import numpy as np
from onnx import helper

from symscan.onnx.checks import check_initial_rows, check_sequence, title
from symscan.onnx.context import Lowering, lowers, onnx_type
from symscan.onnx.tensor_ops import unsqueeze
from symscan.scan.args import RecurrentEntry, ScanArgs, SequenceEntry
from symscan.scan.op import Scan
from symscan.tensor.basic import static_int
from symscan.tensor.elemwise import Elemwise
from symscan.tensor.subtensor import axis_length


def _info(name: str, var, leading: tuple = ()) -> object:
    shape = list(leading) + list(var.type.shape) if hasattr(var.type, "shape") else None
    return helper.make_tensor_value_info(name, onnx_type(var.type.dtype), shape)


def _scalar_info(name: str, dtype: str) -> object:
    return helper.make_tensor_value_info(name, onnx_type(dtype), [])


def last_only(entry) -> bool:
    """A recurrent output of which only the last step is kept (save_mem's ring of one): the
    loop carries it, and stacks no row of it."""
    return isinstance(entry, RecurrentEntry) and entry.ring == 1


def fits_onnx_scan(args: ScanArgs) -> bool:
    steps = static_int(args.n_steps)
    return (bool(args.sequences) and all(s.taps == (0,) for s in args.sequences) and not args.mit_sot
            and args.until is None and all(e.ring is None or last_only(e) for e in args.buffered)
            and (args.steps_from_sequences or (steps is not None and steps >= 0))
            and not any(isinstance(n.op, Scan) for n in args_inner_nodes(args)))


def args_inner_nodes(args: ScanArgs) -> list:
    from symscan.graph.traversal import toposort

    return toposort(args.inner_outputs(), stop_at=args.inner_inputs())


def _read_by_body(args: ScanArgs) -> set:
    """The inner variables the body reads (or returns)."""
    return {v for n in args_inner_nodes(args) for v in n.inputs} | set(args.inner_outputs())


@lowers(Scan)
def lower_scan(ctx: Lowering, node, ins: list[str]) -> list[str]:
    args = ScanArgs.from_node(node)
    outer = dict(zip(node.inputs, ins))
    if fits_onnx_scan(args):
        return _as_onnx_scan(ctx, node, args, outer)
    return _as_onnx_loop(ctx, node, args, outer)


def _lower_body(body: Lowering, args: ScanArgs, names: dict, outer: dict) -> list[str]:
    """Lower the inner graph into ``body``; non-sequences read the enclosing graph's names."""
    body.names.update(names)
    for entry in args.non_seqs:
        body.names[entry.inner] = outer[entry.outer]
    for inner_node in args_inner_nodes(args):
        body.node(inner_node)
    return [body.name_of(v) for v in args.inner_outputs()]


def _copy(body: Lowering, name: str) -> str:
    """Graph outputs need names of their own even when the value is an input or repeats."""
    return body.op1("Identity", [name])


def body_outputs(body: Lowering, names: list[str]) -> list[str]:
    """The body's output names: a value a node of the body computes is its own output the first
    time; a body input, an enclosing graph's value or a repeat is copied (an Identity runs at
    every step, and onnxruntime mishandles a body input returned as it is)."""
    own = {out for node in body.nodes for out in node.output}
    result = []
    for name in names:
        result.append(name if name in own and name not in result else _copy(body, name))
    return result


def _steps(ctx: Lowering, args: ScanArgs, outer: dict) -> str:
    return ctx.cast(outer[args.n_steps], args.n_steps.dtype, "int64")


def _checked_steps(ctx: Lowering, args: ScanArgs, outer: dict, n: str) -> str:
    """``n`` (non-negative) once every sequence has ``n`` elements plus its taps' span, as mode
    "py" checks (else Slice would run fewer steps and a backward read would wrap round)."""
    if args.steps_from_sequences:  # counted from the sequences: negative when one is shorter than its span
        ok = ctx.op1("GreaterOrEqual", [n, ctx.const(np.int64(0))])
        return ctx.guard(n, "int64", ok, f"{title(args.name)}: the sequences are shorter than their taps need") \
            if any(s.span for s in args.sequences) else n
    for seq in args.sequences:
        n = check_sequence(ctx, n, "int64", outer[seq.outer], n, seq.label, seq.taps, title(args.name))
    return n


def _as_onnx_scan(ctx: Lowering, node, args: ScanArgs, outer: dict) -> list[str]:
    """A Scan node. When the loop may run no step (onnxruntime's Scan cannot), either an If runs
    the Scan only when there are steps (every output's row shape is known without the body), or
    the Scan runs one step on zero rows whose results are dropped (a nit-sot's row shape comes
    from that step)."""
    n = _checked_steps(ctx, args, outer, _steps(ctx, args, outer))
    stacked_entries = [e for e in args.sit_sot if not last_only(e)] + args.nit_sot
    if not _may_run_no_step(args):
        finals, stacks = _scan_node(ctx, args, outer, n, None)
    elif any(None in e.inner_out.type.shape for e in args.nit_sot):
        no_step = _no_step(ctx, n)
        finals, stacks = _scan_node(ctx, args, outer, n, no_step)
        n_sit = len(args.sit_sot)
        finals[n_sit:] = _unless(ctx, no_step, [outer[s.outer] for s in args.shared], finals[n_sit:])
        stacks = [_first_rows(ctx, stack, n) for stack in stacks]
    else:
        finals, stacks = _scan_if_steps(ctx, args, outer, n, stacked_entries)
    stacked = dict(zip(stacked_entries, stacks))
    results = []
    for entry, final in zip(args.sit_sot, finals):  # the buffer: the initial state, then the steps
        if last_only(entry):
            results.append(_last_step(ctx, final, n))
        else:
            results.append(_initial_then_steps(ctx, unsqueeze(ctx, outer[entry.outer_init], [0]), stacked[entry], 1))
    results += [stacked[e] for e in args.nit_sot]
    return results + finals[len(args.sit_sot):]


def _scan_node(ctx: Lowering, args: ScanArgs, outer: dict, n: str, no_step: str | None) -> tuple[list, list]:
    """The Scan node in ``ctx``: (final states: sit-sots then shared, stacked rows); with
    ``no_step``, its sequences are a row of zeros when no step runs."""
    names, inputs_info, scan_inputs = {}, [], []
    states = [(e.inner_in[0], outer[e.outer_init]) for e in args.sit_sot]
    states += [(s.inner_in, outer[s.outer]) for s in args.shared]
    for inner, _ in states:
        names[inner] = ctx.fresh(f"{inner.name or 'state'}_in")
        inputs_info.append(_info(names[inner], inner))
    directions = []
    for seq in args.sequences:
        if _steps_are_length_of(args, seq):
            steps = outer[seq.outer]
        else:  # the first n elements, or the last n going backwards
            if args.go_backwards:
                stop = ctx.op1("Gather", [ctx.op1("Shape", [outer[seq.outer]]), ctx.const(np.int64(0))])
                start = ctx.op1("Sub", [stop, n])
            else:
                start, stop = ctx.const(np.int64(0)), n
            steps = ctx.op1("Slice", [outer[seq.outer], unsqueeze(ctx, start, [0]), unsqueeze(ctx, stop, [0]),
                                      ctx.ints([0])])
        scan_inputs.append(steps if no_step is None else _or_zero_rows(ctx, steps, seq.outer, 1, no_step))
        inner = seq.inner[0]
        names[inner] = ctx.fresh(f"{inner.name or 'element'}_in")
        directions.append(int(args.go_backwards))
    inputs_info += [_info(names[s.inner[0]], s.inner[0]) for s in args.sequences]
    body = Lowering(ctx.opset, ctx)
    results = _lower_body(body, args, names, outer)
    sit = results[:len(args.sit_sot)]
    nit = results[len(args.sit_sot):len(args.sit_sot) + len(args.nit_sot)]
    shared = results[len(args.sit_sot) + len(args.nit_sot):]
    stacked_entries = [e for e in args.sit_sot if not last_only(e)] + args.nit_sot
    stacked_values = [r for e, r in zip(args.sit_sot + args.nit_sot, sit + nit) if e in stacked_entries]
    outs = body_outputs(body, sit + shared + stacked_values)
    state_outs, stacked_outs = outs[:len(sit + shared)], outs[len(sit + shared):]
    outputs_info = [_info(name, e.inner_out) for name, e in zip(state_outs, args.sit_sot + args.shared)]
    outputs_info += [_info(name, e.inner_out) for name, e in zip(stacked_outs, stacked_entries)]
    graph = helper.make_graph(body.nodes, ctx.fresh("scan_body"), inputs_info, outputs_info)
    outs = ctx.op("Scan", [initial for _, initial in states] + scan_inputs, len(state_outs) + len(stacked_outs),
                  hint="scan", body=graph, num_scan_inputs=len(scan_inputs), scan_input_directions=directions)
    return outs[:len(state_outs)], outs[len(state_outs):]


def _steps_are_length_of(args: ScanArgs, seq: SequenceEntry) -> bool:
    """Whether the step count is ``seq``'s length (by the graph's structure or static lengths),
    so that the Scan reads it whole rather than sliced. Not just because it is the only sequence:
    n_steps counted from the sequences may count some that rewrites dropped since."""
    steps = static_int(args.n_steps)
    if steps is not None:
        return steps == seq.outer.type.shape[0]
    return axis_length(args.n_steps) == (seq.outer, 0)


def _scan_if_steps(ctx: Lowering, args: ScanArgs, outer: dict, n: str, stacked_entries: list) -> tuple[list, list]:
    """The Scan in the else branch of an If on "no step": the then branch gives the initial states
    and no rows of each stacked output (whose row shape is known: a state's, or static)."""
    then, other = Lowering(ctx.opset, ctx), Lowering(ctx.opset, ctx)
    finals, stacks = _scan_node(other, args, outer, n, None)
    initial = [outer[e.outer_init] for e in args.sit_sot] + [outer[s.outer] for s in args.shared]
    then_outs = [then.op1("Identity", [v]) for v in initial] + [_no_rows(then, e, outer) for e in stacked_entries]
    else_outs = body_outputs(other, finals + stacks)
    entries = args.sit_sot + args.shared + stacked_entries
    branches = {f"{key}_branch": helper.make_graph(body.nodes, ctx.fresh(key), [],
                                                   [helper.make_tensor_value_info(o, onnx_type(e.inner_out.type.dtype),
                                                                                  None) for o, e in zip(outs, entries)])
                for key, body, outs in (("then", then, then_outs), ("else", other, else_outs))}
    outs = ctx.op("If", [_no_step(ctx, n)], len(entries), hint="scan", **branches)
    return outs[:len(finals)], outs[len(finals):]


def _no_rows(ctx: Lowering, entry, outer: dict) -> str:
    """No row of an output: a state's shape after a 0, or a nit-sot's static one."""
    if isinstance(entry, RecurrentEntry):
        row = ctx.op1("Shape", [outer[entry.outer_init]])
    else:
        row = ctx.ints(list(entry.inner_out.type.shape))
    zero = helper.make_tensor("zero", onnx_type(entry.inner_out.type.dtype), [1], [0])
    return ctx.op1("ConstantOfShape", [ctx.op1("Concat", [ctx.ints([0]), row], axis=0)], value=zero)


def _last_step(ctx: Lowering, final: str, n: str) -> str:
    """A ring of one step: the final state as a row, none when no step ran (``n`` <= 0)."""
    count = ctx.op1("Min", [ctx.op1("Max", [n, ctx.const(np.int64(0))]), ctx.const(np.int64(1))])
    return ctx.op1("Slice", [unsqueeze(ctx, final, [0]), ctx.ints([0]), unsqueeze(ctx, count, [0]), ctx.ints([0])])


def _may_run_no_step(args: ScanArgs) -> bool:
    """Whether the step count may be 0 at run time.

    onnxruntime's Scan rejects empty scan inputs, and a nit-sot's step shape (which its empty
    output keeps) may be known only by running the body, as mode "py" does
    (``unrun_nit_sot_shapes``). Such a loop runs one step on zeros and drops its results; a Scan
    whose outputs' row shapes are known without the body runs in an If instead
    (``_scan_if_steps``).
    """
    steps = static_int(args.n_steps)
    return steps is None or steps == 0


def _no_step(ctx: Lowering, n: str) -> str:
    return ctx.op1("LessOrEqual", [n, ctx.const(np.int64(0))])


def _or_zero_rows(ctx: Lowering, data: str, var, rows: int, no_step: str) -> str:
    """``data``, or ``rows`` rows of zeros shaped like its elements when no step runs."""
    then, other = Lowering(ctx.opset, ctx), Lowering(ctx.opset, ctx)
    element_shape = then.op1("Slice", [then.op1("Shape", [data]), then.ints([1]), then.ints([2 ** 62])])
    shape = then.op1("Concat", [then.ints([rows]), element_shape], axis=0)
    zero = helper.make_tensor("zero", onnx_type(var.type.dtype), [1], [0])
    zeros, kept = then.op1("ConstantOfShape", [shape], value=zero), _copy(other, data)
    branches = {f"{key}_branch": helper.make_graph(body.nodes, ctx.fresh(key), [], [_rows_info(name, var)])
                for key, body, name in (("then", then, zeros), ("else", other, kept))}
    return ctx.op1("If", [no_step], **branches)


def _rows_info(name: str, var) -> object:
    """Any number of rows of ``var``'s elements."""
    return helper.make_tensor_value_info(name, onnx_type(var.type.dtype), [None] + list(var.type.shape[1:]))


def _first_rows(ctx: Lowering, stack: str, n: str) -> str:
    return ctx.op1("Slice", [stack, ctx.ints([0]), unsqueeze(ctx, n, [0]), ctx.ints([0])])


def _unless(ctx: Lowering, no_step: str, initial: list[str], finals: list[str]) -> list[str]:
    """The final states, or the initial ones when no step ran."""
    return [ctx.op1("Where", [no_step, first, final]) for first, final in zip(initial, finals)]


def _steps_and_direction(ctx: Lowering, args: ScanArgs, outer: dict) -> tuple[str, str | bool | None]:
    """The step count and, when there are sequences to read, whether the loop walks them backwards:
    a bool when known now, else a name (a negative n_steps reverses the loop: decided at run time)."""
    n = _steps(ctx, args, outer)
    steps = static_int(args.n_steps)
    if args.steps_from_sequences or (steps is not None and steps >= 0):
        back = bool(args.go_backwards) if args.sequences else None
        return _checked_steps(ctx, args, outer, n), back
    back = None
    if args.sequences:
        negative = ctx.op1("Less", [n, ctx.const(np.int64(0))])
        back = ctx.op1("Xor", [ctx.const(np.bool_(args.go_backwards)), negative])
    return _checked_steps(ctx, args, outer, ctx.op1("Abs", [n])), back


def _as_onnx_loop(ctx: Lowering, node, args: ScanArgs, outer: dict) -> list[str]:
    n, back = _steps_and_direction(ctx, args, outer)
    # With no step, the step shape of a nit-sot not known statically comes from a step on zeros.
    probe = _may_run_no_step(args) and any(None in e.inner_out.type.shape for e in args.nit_sot)
    no_step = _no_step(ctx, n) if probe and (args.sequences or args.shared) else None
    trips = ctx.op1("Max", [n, ctx.const(np.int64(1))]) if probe else n
    carried = _initial_windows(ctx, args, outer)
    graph, stacked_entries = _loop_body(ctx, args, outer, back, no_step)
    initial = carried + [outer[s.outer] for s in args.shared]
    initial += [ctx.ints([size or 0 for size in e.inner_out.type.shape], "step_shape") for e in args.nit_sot]
    outs = ctx.op("Loop", [trips, ctx.const(np.bool_(True))] + initial, len(initial) + len(stacked_entries),
                  hint="loop", body=graph)
    finals, stack_list = outs[:len(initial)], outs[len(initial):]
    n_rec, n_shared = len(args.recurrent), len(args.shared)
    if probe:  # the step run on zeros leaves no trace but the step shapes
        if args.shared:
            finals[n_rec:n_rec + n_shared] = _unless(ctx, no_step, initial[n_rec:n_rec + n_shared],
                                                     finals[n_rec:n_rec + n_shared])
        stack_list = [_first_rows(ctx, stack, n) for stack in stack_list]
    step_shapes = {e: _state_shape(ctx, outer[e.outer_init], e in args.sit_sot) for e in args.recurrent}
    step_shapes.update(zip(args.nit_sot, finals[n_rec + n_shared:]))
    stacks = {e: _unflatten(ctx, stack, step_shapes[e]) for e, stack in zip(stacked_entries, stack_list)}
    results = []
    for entry, window, first in zip(args.recurrent, finals[:n_rec], carried):
        if last_only(entry):  # the window's newest row, when a step ran
            newest = window if entry in args.sit_sot else \
                ctx.op1("Gather", [window, ctx.const(np.int64(entry.span - 1))], axis=0)
            results.append(_last_step(ctx, newest, n))
        else:
            results.append(_buffer(ctx, entry, stacks[entry], first, entry in args.sit_sot))
    results += [_ring(ctx, e, stacks[e]) for e in args.nit_sot]
    return results + finals[n_rec:n_rec + n_shared]


def _loop_body(ctx: Lowering, args: ScanArgs, outer: dict, back, no_step: str | None) -> tuple[object, list]:
    """The Loop's body graph and the entries whose rows it stacks. Inputs: the iteration number,
    the condition, each recurrent output's window, each shared state, each nit-sot's step shape;
    outputs: the condition, the new windows and shared states, the step shapes, the stacked rows."""
    body = Lowering(ctx.opset, ctx)
    iteration, keep_going = body.fresh("i"), body.fresh("cond_in")
    window_names = [body.fresh(f"{e.label or 'state'}_window".replace(" ", "_")) for e in args.recurrent]
    shared_names = [body.fresh(f"{s.label or 'shared'}_in") for s in args.shared]
    names = _sequence_reads(ctx, body, args, outer, iteration, back, no_step)
    read = _read_by_body(args)
    for entry, window in zip(args.recurrent, window_names):
        for tap, inner in zip(entry.taps, entry.inner_in):
            if entry in args.sit_sot or inner in read:
                names[inner] = window if entry in args.sit_sot else \
                    body.op1("Gather", [window, body.const(np.int64(entry.span + tap))], axis=0)
    names.update({s.inner_in: name for s, name in zip(args.shared, shared_names)})
    results = _lower_body(body, args, names, outer)
    new_windows = [_shifted(body, e, w, r, e in args.sit_sot)
                   for e, w, r in zip(args.recurrent, window_names, results)]
    n_buffered = len(args.buffered)
    shared_results = results[n_buffered:n_buffered + len(args.shared)]
    condition = _go_on(body, args.until, results[-1]) if args.until is not None else keep_going
    # Each step's output leaves the body flattened (a 1-d row; the shape comes back after), as
    # onnx's reference Loop stacks rows with vstack; a nit-sot's step shape is carried out.
    stacked_entries = [e for e in args.buffered if not last_only(e)]
    stacked = [body.op1("Reshape", [r, body.ints([-1])])
               for e, r in zip(args.buffered, results[:n_buffered]) if not last_only(e)]
    shape_names = [body.fresh("step_shape_in") for _ in args.nit_sot]
    shape_outs = [body.op1("Shape", [r]) for r in results[len(args.recurrent):n_buffered]]
    outputs = iter(body_outputs(body, [condition] + new_windows + shared_results + shape_outs + stacked))
    condition = next(outputs)
    windows_out, shared_out, shape_outs, stacked = ([next(outputs) for _ in group] for group in
                                                    (new_windows, shared_results, shape_outs, stacked))
    inputs_info = [_scalar_info(iteration, "int64"), _scalar_info(keep_going, "bool")]
    inputs_info += [_window_info(name, args, e) for name, e in zip(window_names, args.recurrent)]
    inputs_info += [_info(name, s.inner_in) for name, s in zip(shared_names, args.shared)]
    inputs_info += [_shape_info(name, e) for name, e in zip(shape_names, args.nit_sot)]
    outputs_info = [_scalar_info(condition, "bool")]
    outputs_info += [_window_info(name, args, e) for name, e in zip(windows_out, args.recurrent)]
    outputs_info += [_info(name, s.inner_out) for name, s in zip(shared_out, args.shared)]
    outputs_info += [_shape_info(name, e) for name, e in zip(shape_outs, args.nit_sot)]
    outputs_info += [helper.make_tensor_value_info(name, onnx_type(e.inner_out.type.dtype), [None])
                     for name, e in zip(stacked, stacked_entries)]
    return helper.make_graph(body.nodes, ctx.fresh("loop_body"), inputs_info, outputs_info), stacked_entries


def _go_on(body: Lowering, until, lowered: str) -> str:
    """The Loop's condition: not ``until``; ``until = not c`` (an imported while loop's) gives ``c``."""
    producer = until.owner
    if producer is not None and producer.op == Elemwise("invert") and producer.inputs[0].dtype == "bool":
        return body.name_of(producer.inputs[0])
    return body.op1("Not", [lowered])


def _shape_info(name: str, entry) -> object:
    return helper.make_tensor_value_info(name, onnx_type("int64"), [entry.inner_out.ndim])


def _state_shape(ctx: Lowering, init: str, sit_sot: bool) -> str:
    """The shape of one step of a recurrent output, read off its initial value."""
    shape = ctx.op1("Shape", [init])
    return shape if sit_sot else ctx.op1("Slice", [shape, ctx.ints([1]), ctx.ints([2 ** 62])])


def _unflatten(ctx: Lowering, stack: str, step_shape: str) -> str:
    """(steps, flat row) back to (steps, *step shape)."""
    rows = ctx.op1("Slice", [ctx.op1("Shape", [stack]), ctx.ints([0]), ctx.ints([1])])
    return ctx.op1("Reshape", [stack, ctx.op1("Concat", [rows, step_shape], axis=0)], allowzero=1)


def _initial_windows(ctx: Lowering, args: ScanArgs, outer: dict) -> list[str]:
    """Loop state for each recurrent output: a sit-sot's state, a mit-sot's first ``span`` rows."""
    windows = []
    for entry in args.recurrent:
        init = outer[entry.outer_init]
        if entry in args.sit_sot:
            windows.append(init)
        else:
            init = check_initial_rows(ctx, init, entry.outer_init.dtype, entry.label, entry.taps, title(args.name))
            windows.append(ctx.op1("Slice", [init, ctx.ints([0]), ctx.ints([entry.span]), ctx.ints([0])]))
    return windows


def _window_info(name: str, args: ScanArgs, entry: RecurrentEntry):
    state = args.state_type(entry)
    leading = () if entry in args.sit_sot else (entry.span,)
    return helper.make_tensor_value_info(name, onnx_type(state.dtype), list(leading) + list(state.shape))


def _shifted(body: Lowering, entry: RecurrentEntry, window: str, new: str, sit_sot: bool) -> str:
    """The window after a step: drop the oldest row, append the new value (a sit-sot's
    window is its state)."""
    if sit_sot:
        return new
    rest = body.op1("Slice", [window, body.ints([1]), body.ints([entry.span]), body.ints([0])])
    return body.op1("Concat", [rest, unsqueeze(body, new, [0])], axis=0)


def _sequence_reads(ctx: Lowering, body: Lowering, args: ScanArgs, outer: dict, iteration: str,
                    back: str | bool | None, no_step: str | None) -> dict:
    """Each sequence tap's element at the iteration number (from the end when going backwards);
    taps the body does not read (rewrites may leave some) are not read."""
    names, read = {}, _read_by_body(args)
    for seq in args.sequences:
        taps = [(tap, inner) for tap, inner in zip(seq.taps, seq.inner) if inner in read]
        if not taps:
            continue
        data = outer[seq.outer]
        if no_step is not None:
            data = _or_zero_rows(ctx, data, seq.outer, seq.span + 1, no_step)
        length = None if back is False else ctx.op1("Gather", [ctx.op1("Shape", [data]), ctx.const(np.int64(0))])
        for tap, inner in taps:
            offset = seq.offset(tap)
            forward = body.op1("Add", [iteration, body.const(np.int64(offset))]) if offset else iteration
            if back is False:
                position = forward
            else:
                last = ctx.op1("Add", [length, ctx.const(np.int64(offset - seq.span - 1))])
                backward = body.op1("Sub", [last, iteration])
                position = backward if back is True else body.op1("Where", [back, backward, forward])
            names[inner] = body.op1("Gather", [data, position], axis=0)
    return names


def _buffer(ctx: Lowering, entry: RecurrentEntry, stack: str, first: str, sit_sot: bool) -> str:
    """A recurrent output: the initial rows then the steps (or, ringed, the last steps)."""
    if entry.ring is not None:
        return _ring(ctx, entry, stack)
    rows = unsqueeze(ctx, first, [0]) if sit_sot else first
    return _initial_then_steps(ctx, rows, stack, entry.span)


def _initial_then_steps(ctx: Lowering, rows: str, stack: str, span: int) -> str:
    """The buffer: the initial rows, then the steps (a reader of ``[span:]`` gets ``stack`` itself,
    and the unread Concat is dropped: see ``export.drop_unread_nodes``)."""
    buffer = ctx.op1("Concat", [rows, stack], axis=0)
    ctx.steps_of[buffer] = (stack, span)
    return buffer


def _ring(ctx: Lowering, entry, stack: str) -> str:
    """A ringed output is the last ``ring`` steps; otherwise every step."""
    if entry.ring is None:
        return stack
    return ctx.op1("Slice", [stack, ctx.ints([-entry.ring]), ctx.ints([2 ** 62]), ctx.ints([0])])

