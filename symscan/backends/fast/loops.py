"""The Scan emitter: each loop becomes a Python ``for`` over preallocated buffers.

The body's nodes are emitted inline (nested loops nest). Sequences are read through views
already in step order; a sit-sot's previous value stays in a local; rows are written in
place (ring positions after save_mem); the ``until`` test breaks the loop. The checks and
result slicing are the reference loop's own functions (``symscan.backends.scan_loop``).
"""

from __future__ import annotations

import time

import numpy as np

from symscan.backends import scan_loop
from symscan.backends.fast.codegen import Codegen, emits
from symscan.backends.reference import ReferenceEvaluator
from symscan.scan.args import ScanArgs
from symscan.scan.op import Scan


def new_buffer(rows: np.ndarray, length: int, dtype) -> np.ndarray:
    """A buffer of ``length`` rows holding the initial rows at their ring positions."""
    buf = np.empty((length,) + rows.shape[1:], dtype=dtype)
    for v in range(rows.shape[0]):
        buf[v % length] = rows[v]
    return buf


def check_row(args: ScanArgs, label: str, row_shape: tuple, value, step: int) -> None:
    if np.shape(value) != row_shape:
        raise scan_loop.shape_error(args, label, row_shape, np.shape(value), step)


HELPERS = {"_scan_direction": scan_loop.direction_and_steps, "_scan_check": scan_loop.check_sequences,
           "_scan_initial": scan_loop.initial_rows, "_scan_length": scan_loop.buffer_length,
           "_scan_result": scan_loop.result_rows, "_scan_unrun": scan_loop.unrun_nit_sot_shapes,
           "_scan_new_buffer": new_buffer, "_scan_check_row": check_row, "_perf": time.perf_counter}


class _Loop:
    """The names of one loop's pieces while it is being written."""

    def __init__(self, gen: Codegen, node, ins: list[str]):
        self.gen, self.node = gen, node
        self.args = ScanArgs.from_node(node)
        self.a = gen.bind(self.args, "scan")
        self.outer = dict(zip(node.inputs, ins))
        self.p = gen.fresh("L")  # prefix for this loop's locals

    def name(self, what: str) -> str:
        return f"{self.p}_{what}"


@emits(Scan)
def emit_scan(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    loop = _Loop(gen, node, ins)
    args, n, back = loop.args, loop.name("n"), loop.name("back")
    profiled = node.op.info.profile
    if profiled:
        gen.line(f"{loop.name('t0')} = _perf()")
    gen.line(f"{back}, {n} = _scan_direction({loop.a}, int({loop.outer[args.n_steps]}))")
    views = _sequence_views(loop, n, back)
    buffers = _recurrent_buffers(loop, n)
    nit_buffers = _nit_sot_buffers(loop, n)
    shared = []
    for i, entry in enumerate(args.shared):
        shared.append(loop.name(f"sh{i}"))
        gen.line(f"{shared[-1]} = {loop.outer[entry.outer]}")
    steps = loop.name("steps")
    gen.line(f"{steps} = {n}")
    _loop_body(loop, n, views, buffers, nit_buffers, shared, steps)
    results = [f"_scan_result({buf}, {entry.span}, {steps}, {entry.ring!r})"
               for entry, (buf, _, _) in zip(args.recurrent, buffers)]
    results += _nit_sot_results(loop, nit_buffers, buffers, views, shared, steps)
    results += [f"np.asarray({s})" if hasattr(e.outer.type, "dtype") else s for e, s in zip(args.shared, shared)]
    for out, expr in zip(outs, results):
        gen.line(f"{out} = {expr}")
    if profiled:
        record = gen.bind(_profile_record(gen, node), "record")
        gen.line(f"{record}(_perf() - {loop.name('t0')})")


def _sequence_views(loop: _Loop, n: str, back: str) -> list[tuple[str, object]]:
    """One view per sequence tap whose row t is what the body reads at step t."""
    gen, args = loop.gen, loop.args
    lengths, views = [], []
    for i, seq in enumerate(args.sequences):
        data = loop.outer[seq.outer]
        lengths.append(loop.name(f"len{i}"))
        gen.line(f"{lengths[-1]} = {data}.shape[0]")
    gen.line(f"_scan_check({loop.a}, [{', '.join(lengths)}], {n})")
    for i, (seq, length) in enumerate(zip(args.sequences, lengths)):
        data = loop.outer[seq.outer]
        for tap, inner in zip(seq.taps, seq.inner):
            view, off = loop.name(f"seq{i}_{len(views)}"), seq.offset(tap)
            end = f"{length} - {seq.span} + {off}"
            gen.line(f"{view} = {data}[{end} - {n}:{end}][::-1] if {back} else {data}[{off}:{off} + {n}]")
            views.append((view, inner))
    return views


def _recurrent_buffers(loop: _Loop, n: str) -> list[tuple[str, str, str]]:
    """(buffer, buffer length, previous-value local) per mit-sot/sit-sot."""
    gen, args, buffers = loop.gen, loop.args, []
    for i, entry in enumerate(args.recurrent):
        rows, length, buf = loop.name(f"init{i}"), loop.name(f"blen{i}"), loop.name(f"buf{i}")
        gen.line(f"{rows} = _scan_initial({loop.a}, {gen.bind(entry, 'entry')}, {loop.outer[entry.outer_init]})")
        gen.line(f"{length} = _scan_length({entry.ring!r}, {entry.span}, {n})")
        gen.line(f"{buf} = _scan_new_buffer({rows}, {length}, {entry.inner_out.type.dtype!r})")
        prev = ""
        if entry.taps == (-1,):
            prev = loop.name(f"prev{i}")
            gen.line(f"{prev} = {rows}[-1]")
        buffers.append((buf, length, prev))
    return buffers


def _nit_sot_buffers(loop: _Loop, n: str) -> list[tuple[str, str, bool]]:
    """(buffer, length, allocated-up-front) per nit-sot; unknown row shapes allocate at step 0."""
    gen, result = loop.gen, []
    for i, entry in enumerate(loop.args.nit_sot):
        buf, length = loop.name(f"nbuf{i}"), loop.name(f"nlen{i}")
        gen.line(f"{length} = _scan_length({entry.ring!r}, 0, {n})")
        shape = entry.inner_out.type.shape
        known = None not in shape
        if known:
            gen.line(f"{buf} = np.empty(({length},) + {tuple(shape)!r}, dtype={entry.inner_out.type.dtype!r})")
        else:
            gen.line(f"{buf} = None")
        result.append((buf, length, known))
    return result


def _loop_body(loop: _Loop, n: str, views, buffers, nit_buffers, shared, steps) -> None:
    gen, args = loop.gen, loop.args
    t = loop.name("t")
    names = {}
    heads = [t] + [loop.name(f"x{k}") for k in range(len(views))]
    for (_, inner), head in zip(views, heads[1:]):
        names[inner] = head
    iterables = [f"range({n})"] + [view for view, _ in views]
    gen.line(f"for {', '.join(heads)} in zip({', '.join(iterables)}):" if views else f"for {t} in range({n}):")
    gen.indent += 1
    for entry, (buf, length, prev) in zip(args.recurrent, buffers):
        if prev:
            names[entry.inner_in[0]] = prev
            continue
        for tap, inner in zip(entry.taps, entry.inner_in):
            names[inner] = loop.name(f"r{len(names)}")
            gen.line(f"{names[inner]} = {buf}[({entry.span + tap} + {t}) % {length}]")
    for entry, name in zip(args.shared, shared):
        names[entry.inner_in] = name
    for entry in args.non_seqs:
        names[entry.inner] = loop.outer[entry.outer]
    results = gen.graph(node_inner(loop.node), names)
    _write_rows(loop, t, results, buffers, nit_buffers)
    first = len(args.recurrent) + len(args.nit_sot)
    if shared:
        gen.line(f"{', '.join(shared)}, = {', '.join(results[first:first + len(shared)])},")
    if args.until is not None:
        gen.line(f"if {results[-1]}:")
        gen.line(f"    {steps} = {t} + 1")
        gen.line("    break")
    gen.indent -= 1


def node_inner(node):
    return node.op.inner


def _write_rows(loop: _Loop, t: str, results: list[str], buffers, nit_buffers) -> None:
    """Store each step's outputs in their rows (checking shapes the types do not fix)."""
    gen, args = loop.gen, loop.args
    label = lambda entry: gen.bind(entry.label, "label")  # noqa: E731
    prevs = []
    for entry, (buf, length, prev), value in zip(args.recurrent, buffers, results):
        if None in entry.inner_out.type.shape or entry.inner_out.type.shape != _state_shape(args, entry):
            gen.line(f"_scan_check_row({loop.a}, {label(entry)}, {buf}.shape[1:], {value}, {t})")
        gen.line(f"{buf}[({entry.span} + {t}) % {length}] = {value}")
        if prev:
            prevs.append((prev, value))
    for entry, (buf, length, known), value in zip(args.nit_sot, nit_buffers, results[len(buffers):]):
        if not known:
            gen.line(f"if {buf} is None:")
            gen.line(f"    {buf} = np.empty(({length},) + np.shape({value}), dtype={entry.inner_out.type.dtype!r})")
            gen.line(f"_scan_check_row({loop.a}, {label(entry)}, {buf}.shape[1:], {value}, {t})")
        gen.line(f"{buf}[{t} % {length}] = {value}")
    if prevs:  # all at once: one output may read another's previous value
        gen.line(f"{', '.join(p for p, _ in prevs)}, = {', '.join(v for _, v in prevs)},")


def _state_shape(args: ScanArgs, entry) -> tuple:
    return args.state_type(entry).shape


def _nit_sot_results(loop: _Loop, nit_buffers, buffers, views, shared, steps) -> list[str]:
    """Nit-sot outputs; when no step ran, their per-step shape comes from the types (or a probe)."""
    gen, args = loop.gen, loop.args
    if not args.nit_sot:
        return []
    empty = loop.name("nit_shapes")
    probe = gen.bind(ReferenceEvaluator(loop.node.op.inner), "body")
    sequences = "[" + ", ".join(loop.outer[s.outer] for s in args.sequences) + "]"
    first_rows = "[" + ", ".join(f"{loop.name(f'init{i}')}" for i in range(len(buffers))) + "]"
    rest = "[" + ", ".join(shared + [loop.outer[e.outer] for e in args.non_seqs]) + "]"
    gen.line(f"{empty} = _scan_unrun({loop.a}, {sequences}, {first_rows}, {rest}, {probe}) if {steps} == 0 "
             "else None")
    results = []
    for i, (entry, (buf, _, _)) in enumerate(zip(args.nit_sot, nit_buffers)):
        dtype = entry.inner_out.type.dtype
        results.append(f"(np.empty((0,) + {empty}[{i}], dtype={dtype!r}) if {steps} == 0 "
                       f"else _scan_result({buf}, 0, {steps}, {entry.ring!r}))")
    return results


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

