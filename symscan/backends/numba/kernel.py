"""One loop as a numba kernel: the ``for`` over steps, its body, its buffer writes.

The code around the loop (direction, sequence checks, views, buffers, results) is the fast
evaluator's (``loops.write_scan``); only the loop itself is handed to numba. The kernel takes
everything it reads as parameters (views, window values, buffers, non-sequences, array
constants) and returns the step count and every value it changed, so its source depends only
on the loop's structure and types: the on-disk cache key. A failed check raises a plain error
in the kernel; the evaluator then reruns the call in the fast evaluator for the full message.
A loop with ``until`` gets buffers with room for some steps (``scan_loop.start_room``) and runs
in chunks up to the room (``loops.Chunks``); between chunks the kernel allocates longer buffers
(``_grown``), which it returns as it returns every buffer.
"""

from __future__ import annotations

import numpy as np

from symscan.backends.fast.codegen import Codegen
from symscan.backends.fast.loops import Chunks, _shape_needs_check
from symscan.backends.numba import fused
from symscan.backends.numba.ops import NUMBA_EMITTERS, NotCompilable, as_dtype, refuse
from symscan.config import config
from symscan.graph.basic import describe
from symscan.graph.type import TensorType
from symscan.tensor.elemwise import Elemwise
from symscan.tensor.random import GeneratorType

GROWN_SOURCE = ["@numba.njit(cache=True, nogil=True)",
                "def _grown(data, length):",
                "    if length == data.shape[0]:",
                "        return data",
                "    bigger = np.empty((length,) + data.shape[1:], dtype=data.dtype)",
                "    bigger[:data.shape[0]] = data",
                "    return bigger",
                ""]
"""``scan_loop.grown`` in numba, defined in a kernel's module when its loop can grow."""


class KernelCodegen(Codegen):
    """The body's code in numba's table; array constants become parameters, scalar constants
    module-level literals (so the module's source holds everything the kernel computes)."""

    def __init__(self, outer: Codegen) -> None:
        super().__init__(NUMBA_EMITTERS, refuse)
        self.outer = outer
        self.params: list[str] = []
        self.args: list[str] = []  # the outer expression for each parameter
        self.module_lines: list[str] = []
        self.bounds_checked = False
        self.written_into: set[str] = set()  # values computed straight into their buffer row
        self.preamble: list[str] = []  # kernel lines before the loop (arrays reused across steps)
        self.step_indent = 2  # the indent of the top loop's body
        self.step_counter = "t"
        self.step_outputs: list[int] | None = None  # per loop output, the steps its window keeps it (step_arrays)
        self.step_taps: list[list] = []  # per loop output, its window's (-tap, inner input) pairs (step_arrays)
        self.ring_rows: dict[str, int] = {}  # ring buffer rows in ``out_slots`` -> the ring's length

    def fresh(self, prefix: str = "b") -> str:
        return super().fresh(prefix)

    def graph(self, fgraph, names):
        """(A nested loop's body is emitted in the middle of its outer body's.)"""
        outer = getattr(self, "body", None), getattr(self, "inlined", {}), getattr(self, "groups", {})
        fgraph, stand_ins = fused.expand_composites(fgraph)  # the fusion rewrite's nodes, as loops of ours
        for old, new in stand_ins.items():
            if old in self.out_slots:
                self.out_slots.setdefault(new, self.out_slots[old])
        self.body, self.inlined, self.groups = fgraph, {}, fused.find_groups(fgraph)
        try:
            return super().graph(fgraph, names)
        finally:
            self.body, self.inlined, self.groups = outer

    def node(self, node, names) -> None:
        group = self.groups.get(node)
        if group is not None:  # a chain of elementwise ops: one loop, written at its root
            names[node.outputs[0]] = out = self.fresh()
            if node is group.root:
                outer, self.current = self.current, node
                fused.emit_group(self, group, names, out)
                self.current = outer
            return
        super().node(node, names)
        for var in node.outputs:
            if names[var] in self.inlined:
                names[var] = self.inlined.pop(names[var])

    def assign(self, node, out: str, expr: str) -> None:
        """``out = expr``; or, for an array read once by an elementwise op, the expression
        itself in its reader's: numba fuses one statement's array expressions into one loop,
        without the temporary."""
        var = node.outputs[0]
        readers = self.body.clients.get(var, [])
        if var.ndim and len(readers) == 1 and readers[0][0] != "output" and readers[0][0] not in self.groups and \
                isinstance(getattr(readers[0][0], "op", None), Elemwise) and readers[0][0].outputs[0].ndim:
            self.inlined[out] = expr
        else:
            self.line(f"{out} = {expr}")

    def param(self, prefix: str, outer_expr: str) -> str:
        """A parameter fed by ``outer_expr`` (one parameter per distinct expression)."""
        if outer_expr in self.args and prefix in ("p", "c"):
            return self.params[self.args.index(outer_expr)]
        name = self.fresh(prefix)
        self.params.append(name)
        self.args.append(outer_expr)
        return name

    def constant(self, var) -> str:
        data = np.asarray(var.data)
        if data.ndim:
            return self.param("c", self.outer.constant(var))
        name = self.fresh("_k")
        self.module_lines.append(f"{name} = {scalar_literal(data[()])}")
        return name


def check_loop_values(loop) -> None:
    """What a kernel can carry: tensors (no float16 scalars), and random generators drawn from
    in place, which is what the body's functional draws (each from a copy) compute only when
    every generator state is read once."""
    args = loop.args
    if any(not hasattr(e.outer.type, "dtype") for e in args.non_seqs):
        raise NotCompilable("a random generator as a non-sequence (each step draws from its same state)")
    if any(not isinstance(e.outer.type, (TensorType, GeneratorType)) for e in args.shared):
        raise NotCompilable("a shared value that is neither a tensor nor a random generator")
    inner = loop.node.op.inner
    for var, clients in inner.clients.items():
        if isinstance(var.type, GeneratorType) and len(clients) > 1:
            raise NotCompilable("a random generator state read twice in one step")
    for var in inner.inputs + inner.outputs:
        if getattr(var.type, "ndim", None) == 0 and var.type.dtype == "float16":
            raise NotCompilable(f"a float16 scalar, {describe(var)}: numba has no float16 scalars")


def scalar_literal(value) -> str:
    """Exact source for a numpy scalar (floats by their hex form: inf and nan included)."""
    dtype = value.dtype
    if dtype.kind == "f":
        return f"np.{dtype.name}(float.fromhex({float(value).hex()!r}))"
    if dtype.kind in "iu":
        return f"np.{dtype.name}({int(value)})"
    if dtype.kind == "b":
        return f"np.bool_({bool(value)})"
    raise NotCompilable(f"a constant of dtype {dtype}")


class LoopKernel:
    """The kernel's source for one loop, and the outer lines that call it."""

    t, steps_local = "t", "steps"  # the kernel's step counter and step count

    def __init__(self, loop, n: str, views, outputs, shared: list[str], steps: str) -> None:
        self.loop, self.outputs, self.steps = loop, outputs, steps
        args = loop.args
        check_loop_values(loop)
        self.gen = KernelCodegen(loop.gen)
        self.n = self.gen.param("n", n)
        self.before: list[str] = []  # outer lines before the call
        self.after: list[str] = []  # outer lines after it
        self.returned: list[tuple[str, str]] = [("steps", steps)]  # (kernel local, outer name)
        self.scalar_dtypes: dict[str, str] = {}  # outer name -> dtype, for the 0-d values returned
        self.names = {}
        self.views = [(self.gen.param("x", view), inner) for view, inner in views]
        self.windows = [self._state(i, out) for i, out in enumerate(outputs)]
        self.room = self.gen.param("room", loop.room) if self.growing_buffers() else None
        self.chunks = Chunks("", self.room, self.n, "steps") if self.room else None
        self.indent = self.gen.step_indent = 3 if self.chunks else 2
        self.shared_locals = []
        for entry, name in zip(args.shared, shared):
            if isinstance(entry.outer.type, GeneratorType):  # drawn from in place: the loop's copy (write_scan)
                value = name
            else:
                value = f"np.asarray({name})[()]" if entry.outer.type.ndim == 0 else name  # a numba scalar
            self.names[entry.inner_in] = local = self.gen.param("h", value)
            self.shared_locals.append(local)
            self.returned.append((local, name))
            if isinstance(entry.outer.type, TensorType) and entry.outer.type.ndim == 0:
                self.scalar_dtypes[name] = entry.outer.type.dtype
        for entry in args.non_seqs:
            outer = loop.outer[entry.outer]
            expr = f"np.asarray({outer})[()]" if entry.outer.type.ndim == 0 else outer
            self.names[entry.inner] = self.gen.param("p", expr)
        self.gen.step_counter = self.t
        self.gen.step_outputs = [len(state["window"]) for state in self.windows]
        self.gen.step_taps = [[(-tap, inner) for tap, inner in zip(out.entry.taps, out.entry.inner_in)]
                              if out.recurrent else [] for out in outputs]
        self.body_lines = self._body()

    def _state(self, i: int, out) -> dict:
        """Parameters for one output: its window values, buffers and expected row shape."""
        gen, loop, entry = self.gen, self.loop, out.entry
        state = {"window": [gen.param("w", w) for w in out.window]}
        for local, outer in zip(state["window"], out.window):
            self.returned.append((local, outer))
            if entry.inner_out.type.ndim == 0:
                self.scalar_dtypes[outer] = entry.inner_out.type.dtype
        if out.recurrent and not out.window:
            state["taps"] = gen.param("q", f"{out.store}_taps")
            self.returned.append((state["taps"], f"{out.store}_taps"))
            if out.keeps_last_only:  # no window local holds the newest value: its taps buffer row does
                self.after.append(f"{out.last} = {out.store}_taps[{out.history} + {self.steps} - 1] "
                                  f"if {self.steps} else None")
        if out.recurrent:
            state["row_shape"] = gen.param("r", out.row_shape)
        unknown = not out.recurrent and None in entry.inner_out.type.shape
        dtype = entry.inner_out.type.dtype
        if out.keeps_last_only and not out.recurrent:  # a ring of one row; the last value read after
            if unknown:
                self.before.append(f"{out.store} = np.empty({(0,) * (entry.inner_out.ndim + 1)!r}, dtype={dtype!r})")
            else:
                self.before.append(f"{out.store} = np.empty((1,) + {tuple(entry.inner_out.type.shape)!r}, "
                                   f"dtype={dtype!r})")
            self.after.append(f"{out.last} = {out.store}[0] if {self.steps} else None")
        elif unknown:
            self.before.append(f"{out.store} = np.empty({(0,) * (entry.inner_out.ndim + 1)!r}, dtype={dtype!r})")
        if not (out.keeps_last_only and out.recurrent):
            state["store"] = gen.param("s", out.store)
            self.returned.append((state["store"], out.store))
        if unknown:
            rows = "1" if out.keeps_last_only else f"_scan_length({entry.ring!r}, 0, {loop.room})"
            state["rows"] = gen.param("m", rows)
        return state

    def growing_buffers(self) -> list[tuple[str, int | None, int]]:
        """A loop with until: the buffers more room can lengthen, as (name, ring, history)."""
        if self.loop.args.until is None:
            return []
        return [(state[kind], ring, history) for out, state in zip(self.outputs, self.windows)
                for kind, ring, history in out.growing_buffers()]

    def _open_steps(self) -> None:
        """The ``for`` over the steps (in a chunk of them, for a loop that can grow)."""
        gen, chunks = self.gen, self.chunks
        gen.indent = self.indent - (2 if chunks else 1)
        if chunks is not None:
            for line in chunks.head:
                gen.line(line)
            gen.indent += 1
        gen.line(f"for {self.t} in {chunks.steps if chunks else f'range({self.n})'}:")
        gen.indent += 1

    def _grow(self) -> None:
        """After a chunk of steps: the end of the loop, or more room in every buffer that can use
        it (``scan_loop.more_room`` and ``buffer_length`` written out: a kernel calls no Python)."""
        if self.chunks is None:
            return
        gen, room = self.gen, self.room
        if GROWN_SOURCE[1] not in gen.module_lines:
            gen.module_lines += GROWN_SOURCE
        gen.indent = self.indent - 1
        for line in self.chunks.tail:
            gen.line(line)
        gen.line(f"{room} = min(2 * {room}, {self.n})")
        for buffer, ring, history in self.growing_buffers():
            length = f"{history} + {room}" if ring is None else f"min({max(ring, history)}, {history} + {room})"
            gen.line(f"{buffer} = _grown({buffer}, {length})")

    def _body(self) -> list[str]:
        gen, args, t = self.gen, self.loop.args, self.t
        self._open_steps()
        for (view, inner) in self.views:
            self.names[inner] = gen.fresh()
            gen.line(f"{self.names[inner]} = {self.row_of(view)}")
        for out, state in zip(self.outputs, self.windows):
            if not out.recurrent:
                continue
            for tap, inner in zip(out.entry.taps, out.entry.inner_in):
                if state["window"]:
                    self.names[inner] = state["window"][out.history + tap]
                else:
                    self.names[inner] = gen.fresh()
                    gen.line(f"{self.names[inner]} = {state['taps']}[{out.history + tap} + {t}]")
        for out, state in zip(self.outputs, self.windows):
            row = self._row(out, state)
            if row is not None:
                gen.out_slots.setdefault(out.entry.inner_out, row)
                if out.entry.ring is not None:
                    gen.ring_rows[row] = out.entry.ring
        results = gen.graph(self.loop.node.op.inner, self.names)
        for out, state, value in zip(self.outputs, self.windows, results):
            self._write(out, state, value)
        shifts = [(w, w_next) for state, value in zip(self.windows, results) if state["window"]
                  for w, w_next in zip(state["window"], state["window"][1:] + [value])]
        first = len(self.outputs)
        shifts += list(zip(self.shared_locals, results[first:first + len(self.shared_locals)]))
        if shifts:
            gen.line(f"{', '.join(a for a, _ in shifts)} = {', '.join(b for _, b in shifts)}")
        if args.until is not None:
            gen.line(f"if {results[-1]}:")
            gen.line(f"    {self.steps_local} = {t} + 1")
            gen.line("    break")
        self._grow()
        return gen.lines

    def row_of(self, view: str) -> str:
        """Step t's row of a sequence tap (the kernel gets views already in step order)."""
        return f"{view}[{self.t}]"

    def _row(self, out, state: dict) -> str | None:
        """The buffer row step t's value goes to, where the body may compute it in place:
        rows nothing reads any more (a full buffer, or a ring longer than the taps reach)."""
        entry, store = out.entry, state.get("store")
        if store is None or "rows" in state or out.keeps_last_only or entry.inner_out.ndim == 0:
            return None
        if entry.ring is None:
            return f"{store}[{out.history} + {self.t}]"
        return f"{store}[{self.t} % {store}.shape[0]]" if entry.ring > out.history else None

    def _write(self, out, state: dict, value: str) -> None:
        """Check the row's shape (where types do not fix it) and store it."""
        gen, entry, t = self.gen, out.entry, self.t
        store = state.get("store")
        ndim = entry.inner_out.type.ndim
        if "rows" in state:
            gen.line(f"if {t} == 0:")
            gen.line(f"    {store} = np.empty(({state['rows']},) + {value}.shape, dtype=np.{entry.inner_out.dtype})")
        if ndim and _shape_needs_check(self.loop, out):
            expected = state["row_shape"] if out.recurrent else f"{store}.shape[1:]"
            guard = f"{t} == 0 and " if self.loop.stable and out.recurrent else ""
            gen.line(f"if {guard}{value}.shape != {expected}:")
            gen.line("    raise ValueError('scan: a step returned a row of another shape')")
        if out.keeps_last_only and out.recurrent:
            pass  # the newest window value is the result
        elif value in gen.written_into and gen.out_slots.get(entry.inner_out) == self._row(out, state):
            pass  # computed in its row
        else:
            row = f"{t} % {store}.shape[0]" if out.keeps_last_only or entry.ring is not None else f"{out.history} + {t}"
            self._store(store, row, value, ndim)
        if out.recurrent and not state["window"]:
            gen.line(f"{state['taps']}[{out.history} + {t}] = {value}")

    def _store(self, store: str, row: str, value: str, ndim: int) -> None:
        """``store[row] = value``: an array row copied by loops (``fused.emit_assign``)."""
        gen = self.gen
        if ndim:
            target = gen.fresh("row")
            gen.line(f"{target} = {store}[{row}]")
            if fused.emit_assign(gen, target, ndim, value, ndim):
                return
        gen.line(f"{store}[{row}] = {value}")

    def source(self, name: str = "kernel") -> str:
        """The module: imports, scalar constants, the jitted kernel."""
        flags = f"cache=True, error_model='numpy', nogil=True, boundscheck={self.gen.bounds_checked}"
        head = ["import numpy as np", "import numba", ""] + self.gen.module_lines + [""]
        if config.numba_kernel_opt != 3:  # numba's own pipeline at 3 (pipeline.py)
            head[2:2] = ["from symscan.backends.numba.pipeline import kernel_compiler",
                         f"_KernelCompiler = kernel_compiler({config.numba_kernel_opt})"]
            flags += ", pipeline_class=_KernelCompiler"
        returned = ", ".join(local for local, _ in self.returned)
        body = [f"@numba.njit({flags})", f"def {name}({', '.join(self.gen.params)}):",
                f"    steps = {self.n}"] + [f"    {line}" for line in self.gen.preamble]
        return "\n".join(head + body + self.body_lines + [f"    return ({returned},)", ""])

    def call_lines(self, kernel: str) -> list[str]:
        """Outer lines: placeholders, the call, the values read back. Numba returns a 0-d value
        as a Python float, int or complex (numpy would read a float32 back as float64), so each
        gets its dtype again."""
        targets = ", ".join(outer for _, outer in self.returned)
        retyped = [f"{outer} = {as_dtype(outer, dtype)}" for outer, dtype in self.scalar_dtypes.items()]
        return self.before + [f"{targets}, = {kernel}({', '.join(self.gen.args)})"] + retyped + self.after
