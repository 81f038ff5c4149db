"""The Scan emitter: each loop becomes a Python ``for`` over preallocated buffers.

The body's nodes are emitted inline (nested loops nest). Sequences are read through views
already in step order. A recurrent output's recent values (as many as its taps reach back)
live in local variables that shift each step, so the body reads no buffer; the buffer only
collects the output: every row, or (after save_mem) a ring of the last steps, or for a ring
of one step nothing until the loop ends. A loop with ``until`` allocates its buffers with room
for ``scan_loop.start_room`` steps and runs in chunks of steps up to that room, growing the
buffers between chunks (``Chunks``); other loops allocate every step's row. The checks and
result slicing are the reference loop's own functions (``symscan.backends.scan_loop``), so
errors and results match.
"""

from __future__ import annotations

import time

import numpy as np

from symscan.backends import blas_threads, scan_loop
from symscan.backends.fast.codegen import Codegen, emits
from symscan.backends.fast.ops import IN_PLACE_MIN_SIZE
from symscan.backends.reference import ReferenceEvaluator
from symscan.scan import checks
from symscan.scan.args import ScanArgs
from symscan.scan.op import Scan
from symscan.tensor.basic import static_int
from symscan.tensor.composite import Composite
from symscan.tensor.elemwise import Cast, Elemwise
from symscan.tensor.math import ArgReduce, CumOp, Dot, MatMul, Outer, Reduce
from symscan.tensor.random import GeneratorType
from symscan.tensor.shape import DimShuffle, Flatten, Join, MakeVector, Shape
from symscan.tensor.sort import ArgSort, Sort
from symscan.tensor.subtensor import IncSubtensor, Subtensor

MAX_WINDOW = 8
"""Recurrent outputs reaching further back than this read their taps from the buffer."""


def history_buffer(rows: np.ndarray, room: int, dtype) -> np.ndarray:
    """A full buffer: the initial rows, then room for ``room`` steps (every step, or what a
    loop with until holds before it grows)."""
    buf = np.empty((rows.shape[0] + room,) + rows.shape[1:], dtype=dtype)
    buf[:rows.shape[0]] = rows
    return buf


HELPERS = {"_scan_direction": checks.direction_and_steps, "_scan_check": checks.check_sequences,
           "_scan_initial": checks.initial_rows, "_scan_length": scan_loop.buffer_length,
           "_scan_result": scan_loop.result_rows, "_scan_unrun": scan_loop.unrun_nit_sot_shapes,
           "_scan_shape_error": checks.shape_error, "_scan_history": history_buffer,
           "_scan_room": scan_loop.start_room, "_scan_more_room": scan_loop.more_room,
           "_scan_grown": scan_loop.grown, "_perf": time.perf_counter}


SHAPE_STABLE_OPS = (Elemwise, Cast, Composite, Dot, MatMul, Outer, Reduce, ArgReduce, CumOp, Sort, ArgSort,
                    DimShuffle, Flatten, Shape, MakeVector, Join, IncSubtensor)
"""Ops whose output shape follows from their input shapes alone (not from input values)."""


def shape_stable(node) -> bool:
    if isinstance(node.op, Subtensor):  # slice bounds from data make the shape data-dependent
        return all(static_int(v) is not None for v, e in zip(node.inputs[1:], _index_entries(node.op.spec))
                   if e == "bound")
    return isinstance(node.op, SHAPE_STABLE_OPS)


def _index_entries(spec) -> list[str]:
    kinds = []
    for entry in spec:
        if entry[0] == "slice":
            kinds += ["bound"] * sum(entry[1:])
        elif entry[0] in ("int", "array"):
            kinds.append(entry[0])
    return kinds


class _Loop:
    """One loop being written: its ScanArgs, outer names and a prefix for its locals.

    ``stable``: every step sees inputs of the same shapes (sequence rows, loop invariants,
    states whose rows are checked) and the body's ops make shapes from shapes only, so the
    shape checks of step 0 hold for every step.
    """

    def __init__(self, gen: Codegen, node, ins: list[str]):
        self.gen, self.node = gen, node
        self.args = ScanArgs.from_node(node)
        self.a = gen.bind(self.args, "scan")
        self.outer = dict(zip(node.inputs, ins))
        self.p = gen.fresh("L")
        self.stable = not self.args.shared and all(shape_stable(n) for n in node.op.inner.apply_nodes)
        # the steps the buffers have rows for: all n of them, unless the loop has until
        self.room = self.name("room") if self.args.until is not None else self.name("n")
        self.arrays: list[str] = []  # locals that may hold arrays or views into them

    def name(self, what: str) -> str:
        return f"{self.p}_{what}"

    def array_name(self, what: str) -> str:
        """A local holding an array, or a view that keeps one alive: released after the loop."""
        name = self.name(what)
        self.arrays.append(name)
        return name


class _Output:
    """How one buffered output is kept: window locals, storage and its write statement."""

    def __init__(self, loop: _Loop, entry, index: int, recurrent: bool):
        self.entry, self.recurrent = entry, recurrent
        self.history = entry.span if recurrent else 0
        self.window = [loop.name(f"w{index}_{j}") for j in range(self.history)] \
            if recurrent and self.history <= MAX_WINDOW else []
        self.store, self.row_shape = loop.name(f"buf{index}"), loop.name(f"rs{index}")
        self.last = loop.name(f"last{index}")  # ring of one step: the latest value only
        self.rows = loop.name(f"init{index}")
        self.label = loop.gen.bind(entry.label, "label")

    @property
    def keeps_last_only(self) -> bool:
        return self.entry.ring == 1

    def growing_buffers(self) -> list[tuple[str, int | None, int]]:
        """The buffers that more room can lengthen, each as (``"store"`` or ``"taps"``, ring,
        rows before the steps): a ring store holds the steps only."""
        found = []
        if not self.keeps_last_only:
            ring = self.entry.ring
            found.append(("store", ring, self.history if ring is None else 0))
        if self.recurrent and not self.window:
            found.append(("taps", None, self.history))
        return [(kind, ring, history) for kind, ring, history in found if scan_loop.may_grow(ring, history)]


class Chunks:
    """How a loop with until whose buffers can grow runs: in chunks of steps, each up to the
    room the buffers have, growing them between chunks. No step checks the room, and a numba
    kernel rebinds no buffer inside its step loop (a rebinding there made W6's kernel 7x
    slower). ``head`` opens the chunk loop; the step loop, one level deeper, runs over
    ``steps``; ``tail`` (at the level of the chunk loop's body) ends the chunk loop unless
    there are steps to run; the backend writes the growth after it. ``prefix`` names the
    chunk's first and end step."""

    def __init__(self, prefix: str, room: str, n: str, steps: str) -> None:
        start, stop = self.start, self.stop = f"{prefix}chunk", f"{prefix}chunk_end"
        self.head = [f"{start} = 0", "while True:", f"    {stop} = min({room}, {n})"]
        self.steps = f"range({start}, {stop})"
        self.tail = [f"if {steps} != {n} or {stop} == {n}:  # the until ended the loop, or every step ran",
                     "    break", f"{start} = {stop}"]


@emits(Scan)
def emit_scan(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    write_scan(gen, node, ins, outs, _loop_body)


def write_scan(gen: Codegen, node, ins: list[str], outs: list[str], body) -> None:
    """The code around a loop (checks, views, buffers, results); ``body(loop, n, views,
    outputs, shared, steps)`` writes the loop itself (a Python ``for``, or a compiled kernel's
    call in the numba backend)."""
    loop = _Loop(gen, node, ins)
    args, n, back, steps = loop.args, loop.name("n"), loop.name("back"), loop.name("steps")
    if node.op.info.profile:
        gen.line(f"{loop.name('t0')} = _perf()")
    gen.line(f"{back}, {n} = _scan_direction({loop.a}, int({loop.outer[args.n_steps]}))")
    views = _sequence_views(loop, n, back)
    if args.until is not None:
        gen.line(f"{loop.room} = _scan_room({n}, True)")
    outputs = [_Output(loop, e, i, True) for i, e in enumerate(args.recurrent)]
    outputs += [_Output(loop, e, len(outputs) + i, False) for i, e in enumerate(args.nit_sot)]
    for out in outputs:
        _prepare(loop, out, loop.room)
    shared = [loop.array_name(f"sh{i}") for i in range(len(args.shared))]
    for name, entry in zip(shared, args.shared):
        if isinstance(entry.outer.type, GeneratorType):  # the loop's own: its draws may advance it in place
            gen.line(f"{name} = {gen.bind(entry.outer.type.copy_value, 'copy_generator')}({loop.outer[entry.outer]})")
        else:
            gen.line(f"{name} = {loop.outer[entry.outer]}")
    gen.line(f"{steps} = {n}")
    _blas_threads_around(loop, lambda: body(loop, n, views, outputs, shared, steps), steps)
    results = [_result(loop, out, steps) for out in outputs]
    results += [f"np.asarray({s})" if hasattr(e.outer.type, "dtype") else s for e, s in zip(args.shared, shared)]
    if args.nit_sot:
        _empty_nit_sots(loop, outputs, results, shared, steps)
    for out, expr in zip(outs, results):
        gen.line(f"{out} = {expr}")
    if node.op.info.profile:
        record = gen.bind(_profile_record(gen, node), "record")
        gen.line(f"{record}(_perf() - {loop.name('t0')})")
    if gen.frees:
        _release(loop)


def _release(loop: _Loop) -> None:
    """After the loop, its locals let go of their arrays: a view or the last step's row keeps
    a whole sequence or buffer alive (the results hold what they need). ``= None``, not
    ``del``: a loop of no steps never binds its step locals."""
    names = list(dict.fromkeys(loop.arrays))
    if names:
        loop.gen.line(f"{' = '.join(names)} = None")


def _blas_threads_around(loop: _Loop, write_body, steps: str) -> None:
    """The loop's products on the BLAS threads its steps get (``blas_threads.LoopThreads``,
    one object per loop: one thread unless its steps hold large products), switched once
    around the outermost loop whose body multiplies matrices; ``gen.loop_depth`` tells
    emitters they are in a loop. The run's step count is set as the ``try``'s last line, so
    a loop that raised is not timed. (A body that raises leaves the indent as it found it:
    the numba backend then writes the loop again.)"""
    gen = loop.gen
    depth, indent = getattr(gen, "loop_depth", 0), gen.indent
    switch = depth == 0 and blas_threads.uses_blas(loop.node.op.inner)
    if switch:
        threads, run = gen.bind(blas_threads.LoopThreads(), "blas_loop"), loop.name("blas")
        gen.line(f"{run} = {threads}.start()")
        gen.line("try:")
        gen.indent += 1
    gen.loop_depth = depth + 1
    try:
        write_body()
        if switch:
            gen.line(f"if {run} is not None:")
            gen.line(f"    {run}.steps = {steps}")
    finally:
        gen.loop_depth, gen.indent = depth, indent
    if switch:
        gen.line("finally:")
        gen.line(f"    {threads}.end({run})")


def _sequence_views(loop: _Loop, n: str, back: str) -> list[tuple[str, object]]:
    """One view per sequence tap whose row t is what the body reads at step t."""
    gen, args = loop.gen, loop.args
    lengths = []
    for i, seq in enumerate(args.sequences):
        lengths.append(loop.name(f"len{i}"))
        gen.line(f"{lengths[-1]} = {loop.outer[seq.outer]}.shape[0]")
    gen.line(f"_scan_check({loop.a}, [{', '.join(lengths)}], {n})")
    views = []
    for seq, length in zip(args.sequences, lengths):
        data = loop.outer[seq.outer]
        for tap, inner in zip(seq.taps, seq.inner):
            view, off = loop.array_name(f"seq{len(views)}"), seq.offset(tap)
            end = f"{length} - {seq.span} + {off}"
            gen.line(f"{view} = {data}[{end} - {n}:{end}][::-1] if {back} else {data}[{off}:{off} + {n}]")
            views.append((view, inner))
    return views


def _prepare(loop: _Loop, out: _Output, room: str) -> None:
    """Initial window locals and the output's storage (rows for ``room`` steps), before the loop."""
    gen, entry, dtype = loop.gen, out.entry, out.entry.inner_out.type.dtype
    loop.arrays += ([out.rows] + out.window if out.recurrent else []) + [out.last if out.keeps_last_only else out.store]
    if out.recurrent:
        rows = out.rows
        gen.line(f"{rows} = _scan_initial({loop.a}, {gen.bind(entry, 'entry')}, {loop.outer[entry.outer_init]})")
        gen.line(f"{out.row_shape} = {rows}.shape[1:]")
        for j, local in enumerate(out.window):
            gen.line(f"{local} = {rows}[{j}]")
        if out.keeps_last_only:
            gen.line(f"{out.last} = None")
        elif entry.ring is None:
            gen.line(f"{out.store} = _scan_history({rows}, {room}, {dtype!r})")
        else:
            gen.line(f"{out.store} = np.empty((_scan_length({entry.ring}, 0, {room}),) + {out.row_shape}, "
                     f"dtype={dtype!r})")
        if not out.window:  # taps too far back for locals: the body reads a full history buffer
            gen.line(f"{out.store}_taps = _scan_history({rows}, {room}, {dtype!r})")
            loop.arrays.append(f"{out.store}_taps")
        return
    shape = entry.inner_out.type.shape
    if out.keeps_last_only:
        gen.line(f"{out.last} = None")
    elif None not in shape:
        gen.line(f"{out.store} = np.empty((_scan_length({entry.ring!r}, 0, {room}),) + {tuple(shape)!r}, "
                 f"dtype={dtype!r})")
    else:
        gen.line(f"{out.store} = None")  # allocated at the first step, when a row's shape is known


def _loop_body(loop: _Loop, n: str, views, outputs: list[_Output], shared: list[str], steps: str) -> None:
    gen, args = loop.gen, loop.args
    t = loop.name("t")
    names = {}
    heads = [loop.array_name(f"x{k}") for k in range(len(views))]
    for (_, inner), head in zip(views, heads):
        names[inner] = head
    slots = _plan_slots(loop, outputs, t)
    growing = _growing_buffers(loop, outputs)
    chunks = Chunks(loop.name(""), loop.room, n, steps) if growing else None
    _open_steps(loop, n, [v for v, _ in views], heads, t, chunks)
    for out in outputs[:len(args.recurrent)]:
        for tap, inner in zip(out.entry.taps, out.entry.inner_in):
            if out.window:
                names[inner] = out.window[out.history + tap]
            else:
                names[inner] = loop.array_name(f"r{len(names)}")
                gen.line(f"{names[inner]} = {out.store}_taps[{out.history + tap} + {t}]")
    for entry, name in zip(args.shared, shared):
        names[entry.inner_in] = name
    for entry in args.non_seqs:
        names[entry.inner] = loop.outer[entry.outer]
    for out, (slot, row) in slots.items():
        gen.line(f"{slot} = {row}")
        gen.out_slots[out.entry.inner_out] = slot
    results = gen.graph(loop.node.op.inner, names)
    loop.arrays += [names[v] for v in loop.node.op.inner.outputs if v.owner is not None]  # the last step's
    for out in slots:
        gen.out_slots.pop(out.entry.inner_out, None)
    for out, value in zip(outputs, results):
        _write(loop, out, value, t, slots[out][0] if out in slots else None)
    shifts = [(w, w_next) for out, value in zip(outputs, results) if out.window
              for w, w_next in zip(out.window, out.window[1:] + [value])]
    first = len(outputs)
    shifts += list(zip(shared, results[first:first + len(shared)]))
    if len(shifts) == 1:
        gen.line(f"{shifts[0][0]} = {shifts[0][1]}")
    elif shifts:  # all at once: one output may read another's previous values
        gen.line(f"{', '.join(a for a, _ in shifts)} = {', '.join(b for _, b in shifts)}")
    if args.until is not None:
        gen.line(f"if {results[-1]}:")
        gen.line(f"    {steps} = {t} + 1")
        gen.line("    break")
    gen.indent -= 1
    if chunks is not None:
        _grow(loop, n, chunks, growing)


def _growing_buffers(loop: _Loop, outputs: list[_Output]) -> list[tuple[str, int | None, int]]:
    """A loop with until: the buffers more room can lengthen, as (name, ring, history)."""
    if loop.args.until is None:
        return []
    return [(out.store if kind == "store" else f"{out.store}_taps", ring, history)
            for out in outputs for kind, ring, history in out.growing_buffers()]


def _open_steps(loop: _Loop, n: str, views: list[str], heads: list[str], t: str, chunks: Chunks | None) -> None:
    """The ``for`` over the steps (in a chunk of them, with ``chunks``), the body's level after it."""
    gen, steps = loop.gen, f"range({n})"
    if chunks is not None:
        for line in chunks.head:
            gen.line(line)
        gen.indent += 1
        steps, views = chunks.steps, [f"{v}[{chunks.start}:{chunks.stop}]" for v in views]
    if views:
        gen.line(f"for {', '.join([t] + heads)} in zip({steps}, {', '.join(views)}):")
    else:
        gen.line(f"for {t} in {steps}:")
    gen.indent += 1


def _grow(loop: _Loop, n: str, chunks: Chunks, buffers: list) -> None:
    """After a chunk of steps: the end of the loop, or more room in every buffer that can use
    it; then the chunk loop is closed."""
    gen, room = loop.gen, loop.room
    for line in chunks.tail:
        gen.line(line)
    gen.line(f"{room} = _scan_more_room({room}, {n})")
    for store, ring, history in buffers:
        gen.line(f"{store} = _scan_grown({store}, {ring!r}, {history}, {room})")
    gen.indent -= 1


def _plan_slots(loop: _Loop, outputs: list[_Output], t: str) -> dict:
    """Buffer rows that a body node (marked ``into_buffer`` by the inplace rewrite) may compute
    its result into, saving the copy: only rows nothing still reads (every row of a full
    buffer, or a ring longer than the taps reach back), and only rows large enough to be
    worth it, decided once per call (emitted here, before the loop) from the row shape."""
    gen, slots = loop.gen, {}
    for i, out in enumerate(outputs):
        node, entry = out.entry.inner_out.owner, out.entry
        if (node is None or not node.tag.get("into_buffer") or out.keeps_last_only or entry.inner_out.ndim == 0
                or not isinstance(node.op, (Elemwise, Composite))
                or (not out.recurrent and None in entry.inner_out.type.shape)
                or (entry.ring is not None and entry.ring <= out.history)):
            continue
        slot, big = loop.array_name(f"slot{i}"), loop.name(f"big{i}")
        row = (f"{out.store}[{t} % {out.store}.shape[0]]" if entry.ring is not None
               else f"{out.store}[{out.history} + {t}]")
        gen.line(f"{big} = np.prod({out.store}.shape[1:]) >= {IN_PLACE_MIN_SIZE}")
        slots[out] = (slot, f"{row} if {big} else None")
    return slots


def _write(loop: _Loop, out: _Output, value: str, t: str, slot: str | None = None) -> None:
    """Store one step's value, checking its shape where the types do not fix it (on every
    step, or only the first when the loop is shape-stable); nothing to store when the value
    was computed into its row (``slot``)."""
    gen, entry = loop.gen, out.entry
    checks = _checks(loop, out, value, t)
    if checks and loop.stable:
        gen.line(f"if {t} == 0:")
        for line in checks:
            gen.line("    " + line)
    else:
        for line in checks:
            gen.line(line)
    guard = ""
    if slot is not None:
        gen.line(f"if {value} is not {slot}:")
        guard = "    "
    if out.keeps_last_only:
        if not out.window:
            gen.line(f"{out.last} = {value}")
    elif entry.ring is not None:
        gen.line(f"{guard}{out.store}[{t} % {out.store}.shape[0]] = {value}")
    else:
        gen.line(f"{guard}{out.store}[{out.history} + {t}] = {value}")
    if not out.window and out.recurrent:
        gen.line(f"{out.store}_taps[{out.history} + {t}] = {value}")


def _checks(loop: _Loop, out: _Output, value: str, t: str) -> list[str]:
    entry, lines = out.entry, []
    shape_of = f"{value}.shape" if entry.inner_out.type.ndim else f"np.shape({value})"
    if not out.recurrent and out.keeps_last_only and None in entry.inner_out.type.shape:
        lines += [f"if {t} == 0:", f"    {out.row_shape} = {shape_of}"]  # the shape later steps must keep
    elif not out.recurrent and None in entry.inner_out.type.shape:
        lines += [f"if {out.store} is None:",
                  f"    {out.row_shape} = {shape_of}",
                  f"    {out.store} = np.empty((_scan_length({entry.ring!r}, 0, {loop.room}),) + "
                  f"{out.row_shape}, dtype={entry.inner_out.type.dtype!r})"]
    if _shape_needs_check(loop, out):
        expected = out.row_shape if out.recurrent or None in entry.inner_out.type.shape \
            else repr(tuple(entry.inner_out.type.shape))
        lines += [f"if {shape_of} != {expected}:",
                  f"    raise _scan_shape_error({loop.a}, {out.label}, {expected}, {shape_of}, {t})"]
    return lines


def _shape_needs_check(loop: _Loop, out: _Output) -> bool:
    """A row's shape must be checked unless the types fix it (numpy would broadcast silently)."""
    produced = out.entry.inner_out.type.shape
    if None in produced:
        return True
    if out.recurrent:
        return produced != loop.args.state_type(out.entry).shape or None in produced
    return False


def _result(loop: _Loop, out: _Output, steps: str) -> str:
    entry, dtype = out.entry, out.entry.inner_out.type.dtype
    if not out.keeps_last_only:  # a ring store holds steps only; a full one the history first
        history = 0 if entry.ring is not None else out.history
        return f"_scan_result({out.store}, {history}, {steps}, {entry.ring!r})"
    if out.recurrent:  # the latest value is the newest window local; no step: empty rows
        last = out.window[-1] if out.window else out.last
        return (f"(np.asarray([{last}], dtype={dtype!r}) if {steps} else "
                f"np.empty((0,) + {out.row_shape}, dtype={dtype!r}))")
    return f"np.asarray([{out.last}], dtype={dtype!r})"  # no step: replaced by _empty_nit_sots


def _empty_nit_sots(loop: _Loop, outputs: list[_Output], results: list[str], shared: list[str], steps: str) -> None:
    """When no step ran, a nit-sot's per-step shape comes from its type (or a shape probe)."""
    gen, args = loop.gen, loop.args
    shapes = loop.name("nit_shapes")
    probe = gen.bind(ReferenceEvaluator(loop.node.op.inner), "body")
    sequences = "[" + ", ".join(loop.outer[s.outer] for s in args.sequences) + "]"
    first_rows = "[" + ", ".join(out.rows for out in outputs if out.recurrent) + "]"
    rest = "[" + ", ".join(shared + [loop.outer[e.outer] for e in args.non_seqs]) + "]"
    gen.line(f"{shapes} = _scan_unrun({loop.a}, {sequences}, {first_rows}, {rest}, {probe}) if {steps} == 0 "
             "else None")
    first = len(args.recurrent)
    for i, out in enumerate(outputs[first:]):
        dtype = out.entry.inner_out.type.dtype
        results[first + i] = (f"(np.empty((0,) + {shapes}[{i}], dtype={dtype!r}) if {steps} == 0 "
                              f"else {results[first + i]})")


def _profile_record(gen: Codegen, node):
    profile = gen.namespace.setdefault("_profile", {})
    key = node.op.info.name or "scan"
    if key in profile:
        key = f"{key} #{sum(1 for k in profile if k.split(' #')[0] == key) + 1}"
    profile[key] = {"calls": 0, "seconds": 0.0}

    def record(seconds: float, entry=profile[key]) -> None:
        entry["calls"] += 1
        entry["seconds"] += seconds

    return record
