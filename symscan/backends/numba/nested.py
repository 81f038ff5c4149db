"""A loop inside a kernel's loop: written inline in numba code, with what the fast evaluator
does around a loop in Python (direction, sequence checks, initial rows, buffers, results)
written here for numba. A failed check raises a plain error; the evaluator then runs the call
in mode fast, whose error has the full message (``NumbaEvaluator.__call__``).
"""

from __future__ import annotations

from symscan.backends.fast.loops import Chunks, _Loop, _Output
from symscan.backends.numba.kernel import LoopKernel, check_loop_values
from symscan.backends.numba.ops import NotCompilable, numba_emits
from symscan.backends.scan_loop import GROWTH_START
from symscan.scan.op import Scan

RERUN = "raise ValueError('symscan: a nested loop check failed (rerun in mode fast)')"


@numba_emits(Scan)
def emit_nested_scan(gen, node, ins: list[str], outs: list[str]) -> None:
    NestedLoop(gen, node, ins, outs)


class NestedLoop(LoopKernel):
    """The lines of one nested loop, written into the enclosing kernel's code."""

    def __init__(self, gen, node, ins: list[str], outs: list[str]) -> None:
        loop = _Loop(gen, node, ins)
        if node.op.info.profile:
            raise NotCompilable("a profiled loop inside a loop")
        check_loop_values(loop)
        args = loop.args
        self.loop, self.gen, self.names, self.returned = loop, gen, {}, []
        self.t, self.steps_local = loop.name("t"), loop.name("steps")
        self.outputs = [_Output(loop, e, i, True) for i, e in enumerate(args.recurrent)]
        self.outputs += [_Output(loop, e, len(self.outputs) + i, False) for i, e in enumerate(args.nit_sot)]
        if any(out.recurrent and not out.window for out in self.outputs):
            raise NotCompilable("a loop inside a loop whose taps reach further back than its window")
        self.n, self.room = loop.name("n"), loop.room
        self._direction()
        if args.until is not None:  # scan_loop.start_room
            self.line(f"{self.room} = min({self.n}, {GROWTH_START})")
        self.views, self.rows = self._sequences(), {}
        self.windows = [self._start(out) for out in self.outputs]
        self.shared_locals = []
        for entry in args.shared:
            local = self.names[entry.inner_in] = loop.name(f"sh{len(self.shared_locals)}")
            gen.line(f"{local} = {loop.outer[entry.outer]}")
            self.shared_locals.append(local)
        for entry in args.non_seqs:
            self.names[entry.inner] = loop.outer[entry.outer]
        growing = self.growing_buffers()
        self.chunks = Chunks(loop.name(""), self.room, self.n, self.steps_local) if growing else None
        indent = gen.indent
        self.indent = indent + (2 if growing else 1)  # the body's
        gen.line(f"{self.steps_local} = {self.n}")
        self._body()
        gen.indent = indent
        results = [self._result(out, state) for out, state in zip(self.outputs, self.windows)]
        for out, value in zip(outs, results + self.shared_locals):
            gen.line(f"{out} = {value}")

    def line(self, text: str) -> None:
        self.gen.line(text)

    def _direction(self) -> None:
        args, n, back = self.loop.args, self.n, self.loop.name("back")
        self.line(f"{n} = int({self.loop.outer[args.n_steps]})")
        self.line(f"{back} = {args.go_backwards}")
        if not args.steps_from_sequences:
            self.line(f"if {n} < 0:")
            self.line(f"    {back} = {not args.go_backwards}")
            self.line(f"    {n} = -{n}")
        self.line(f"if {n} < 0:")
        self.line(f"    {RERUN}")
        self.back = back

    def _sequences(self) -> list:
        """Each tap's row at step t is ``data[base + sign * t]``: base and sign per direction."""
        loop, views = self.loop, []
        sign = loop.name("sign")
        self.line(f"{sign} = -1 if {self.back} else 1")
        for i, seq in enumerate(loop.args.sequences):
            data, length = loop.outer[seq.outer], loop.name(f"len{i}")
            self.line(f"{length} = {data}.shape[0]")
            self.line(f"if {length} < {self.n} + {seq.span}:")
            self.line(f"    {RERUN}")
            for tap, inner in zip(seq.taps, seq.inner):
                base = loop.name(f"base{len(views)}")
                off = seq.offset(tap)
                self.line(f"{base} = {length} - {seq.span} + {off} - 1 if {self.back} else {off}")
                views.append((f"{data}[{base} + {sign} * {self.t}]", inner))
        return views

    def row_of(self, view: str) -> str:
        return view

    def _start(self, out) -> dict:
        """Window values, the expected row shape and the buffer of one output."""
        loop, entry, dtype = self.loop, out.entry, f"np.{out.entry.inner_out.type.dtype}"
        ndim, state = entry.inner_out.type.ndim, {"window": out.window}
        if out.recurrent:
            init = loop.outer[entry.outer_init]
            sit_sot = entry in loop.args.sit_sot
            if not sit_sot:
                self.line(f"if {init}.shape[0] < {entry.span}:")
                self.line(f"    {RERUN}")
            for j, local in enumerate(out.window):
                self.line(f"{local} = {init if sit_sot else f'{init}[{j}]'}")
            state["row_shape"] = out.row_shape
            self.line(f"{out.row_shape} = {init}.shape{'' if sit_sot else '[1:]'}" if ndim else f"{out.row_shape} = ()")
            shape = out.row_shape
        else:
            shape = repr(tuple(entry.inner_out.type.shape)) if None not in entry.inner_out.type.shape else None
        if out.recurrent and out.keeps_last_only:
            return state
        rows = "1" if out.keeps_last_only else (f"{out.history} + {self.room}" if entry.ring is None
                                                else f"min(max({entry.ring}, 0), {self.room})")
        state["store"] = out.store
        if shape is None:  # allocated at step 0, when the row's shape is known
            self.line(f"{out.store} = np.empty({(0,) * (ndim + 1)!r}, dtype={dtype})")
            state["rows"] = loop.name(f"rows{len(self.rows)}")
            self.rows[out] = state["rows"]
            self.line(f"{state['rows']} = {rows}")
            return state
        self.line(f"{out.store} = np.empty(({rows},) + {shape}, dtype={dtype})")
        if out.recurrent and entry.ring is None:
            init = loop.outer[entry.outer_init]
            self.line(f"{out.store}[0] = {init}" if entry in loop.args.sit_sot
                      else f"{out.store}[:{entry.span}] = {init}[:{entry.span}]")
        return state

    def _result(self, out, state: dict) -> str:
        """The output's rows in time order (the fast evaluator's ``result_rows``), as a local."""
        entry, steps, dtype = out.entry, self.steps_local, f"np.{out.entry.inner_out.type.dtype}"
        result, store = self.loop.name(f"out{self.outputs.index(out)}"), state.get("store")
        shape = out.row_shape if out.recurrent else (
            repr(tuple(entry.inner_out.type.shape)) if None not in entry.inner_out.type.shape else None)
        if out.keeps_last_only:
            self.line(f"if {steps} == 0:")
            if shape is None:
                self.line(f"    {RERUN}")
            else:
                self.line(f"    {result} = np.empty((0,) + {shape}, dtype={dtype})")
            self.line("else:")
            if out.recurrent:
                self.line(f"    {result} = np.empty((1,) + {shape}, dtype={dtype})")
                self.line(f"    {result}[0] = {out.window[-1]}")
            else:
                self.line(f"    {result} = {store}")
            return result
        if shape is None:
            self.line(f"if {steps} == 0:")
            self.line(f"    {RERUN}")
        history = out.history if entry.ring is None else 0
        length, start = self.loop.name("length"), self.loop.name("start")
        self.line(f"{length} = {store}.shape[0]")
        first = "0" if entry.ring is None else f"max({history}, {history} + {steps} - {entry.ring})"
        self.line(f"{start} = {first}")
        self.line(f"if {history} + {steps} > {length}:")
        self.line(f"    {result} = {store}[np.arange({start}, {history} + {steps}) % {length}]")
        self.line(f"elif {start} == 0 and {history} + {steps} == {length}:")
        self.line(f"    {result} = {store}")
        self.line("else:")
        self.line(f"    {result} = {store}[{start}:{history} + {steps}].copy()")
        return result
