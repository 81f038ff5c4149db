"""Random fuzz programs, drawn through a ``Chooser`` (seeded ``random.Random`` or hypothesis).

Programs stay small (lengths 0-6, element shapes () or (d,) with d <= 3, matrices (d, d)) and
their values bounded (tanh, coefficients below 1) so that different rounding orders stay
within the comparison's tolerance. Besides random expression trees, step functions take the
shapes the vectorize rewrites look for: running sum/product/max/min of a sequence expression,
``s * c`` / ``s + c`` with ``c`` loop-invariant, ``x_t = a_t x_(t-1) + b_t``, mit-sot
``x_t = c1 x_(t-2) + c2 x_(t-1) + d`` (sometimes ignoring a tap), maps returning a sequence tap,
an output returned twice, a sequence fn never reads that sets the step count. Now and then a
sequence or initial value is too short, so that the errors are compared too.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np
from fuzz_choosers import Chooser
from fuzz_program import Input, Loop, Out, Program, Seq, out_name, seq_name, span_of_sequence, unread_loops
from fuzz_reference import NUMPY_BINARY, NUMPY_UNARY

FLOAT = "float64"
SEQUENCE_TAPS = [(0,), (0,), (-1,), (-1, 0), (1,), (0, 1), (-2, 0), (-1, 1), (2, 0, -1)]
MIT_SOT_TAPS = [(-2, -1), (-2,), (-3, -1), (-1, -2), (-3, -2, -1), (-4, -1)]
COEFFICIENTS = [0.5, -0.5, 0.9, 0.25, -0.8]
IFELSE_CHANCE = 0.06
"""How often an expression (not a leaf) is an ``ss.ifelse``: rare, so other shapes stay common."""


@dataclass(frozen=True)
class Typed:
    """An expression with its shape and dtype ("pyint"/"pyfloat" for a Python scalar)."""

    expr: tuple
    shape: tuple
    dtype: str


def _renamed(expr, names: dict):
    """``expr`` with the variables ``names`` maps renamed (nested loops included)."""
    if isinstance(expr, tuple):
        if len(expr) == 2 and expr[0] == "v" and expr[1] in names:
            return ("v", names[expr[1]])
        return tuple(_renamed(part, names) for part in expr)
    if isinstance(expr, Loop):
        return dataclasses.replace(expr, **{f.name: _renamed(getattr(expr, f.name), names)
                                            for f in dataclasses.fields(expr)})
    if isinstance(expr, (Seq, Out)):
        return dataclasses.replace(expr, **{f.name: _renamed(getattr(expr, f.name), names)
                                            for f in dataclasses.fields(expr)})
    return expr


@functools.cache
def result_dtype(op: str, *operands: str) -> str:
    """The dtype numpy gives ``op`` on operands of these dtypes (NEP 50 for Python scalars)."""
    dummies = [1 if t == "pyint" else 0.5 if t == "pyfloat" else np.ones((), t) for t in operands]
    function = NUMPY_UNARY.get(op) or NUMPY_BINARY[op]
    return str(np.asarray(function(*dummies)).dtype)


def apply(op: str, *operands: Typed, shape: tuple) -> Typed:
    """``op`` of ``operands``; of Python scalars only, the first (numpy would turn the result
    into a numpy scalar, which NEP 50 no longer treats as weak, while the builder's Python
    arithmetic keeps it a Python scalar)."""
    if all(o.dtype.startswith("py") for o in operands):
        return operands[0]
    return Typed((op,) + tuple(o.expr for o in operands), shape, result_dtype(op, *(o.dtype for o in operands)))


def coerce(typed: Typed, dtype: str) -> Typed:
    """``typed`` with exactly ``dtype`` (a cast when numpy's rules give another)."""
    return typed if typed.dtype == dtype else Typed(("cast", typed.expr, dtype), typed.shape, dtype)


class Scope:
    """What a step function can read: sequence taps, past outputs, invariant values."""

    def __init__(self, sequences=(), states=(), invariants=()):
        self.sequences, self.states, self.invariants = list(sequences), list(states), list(invariants)

    def all(self) -> list[Typed]:
        return self.sequences + self.states + self.invariants

    def without_states(self) -> Scope:
        return Scope(self.sequences, (), self.invariants)


class ProgramGenerator:
    """Draws one program; ``Program.seed`` is the seed of its input values."""

    def __init__(self, chooser: Chooser):
        self.c = chooser
        self.inputs: list[Input] = []
        self.params: list[Typed] = []  # top-level values a later loop may read too
        self.nests_left = 0

    def program(self, seed: int = 0) -> Program:
        self.d = self.c.integer(1, 3)
        loops: list[Loop] = []
        for _ in range(self.c.choice([1, 1, 2, 1, 2, 3])):
            loops.append(self.top_loop(loops))
        return Program(self.d, tuple(self.inputs), tuple(loops), tuple(self.reads(loops)), seed)

    # ------------------------------------------------------------------ inputs and types
    def new_input(self, prefix: str, shape: tuple, dtype: str, kind: str = "input", value=None) -> Typed:
        name = f"{prefix}{sum(i.name.startswith(prefix) for i in self.inputs)}"
        static = kind == "input" and self.c.chance(0.2)
        self.inputs.append(Input(name, tuple(shape), dtype, kind, static, value))
        return Typed(("v", name), tuple(shape), dtype)

    def dtype(self) -> str:
        return self.c.choice(["int64", "int32"]) if self.c.chance(0.1) else FLOAT

    def element_shape(self) -> tuple:
        return self.c.choice([(), (self.d,)])

    # ------------------------------------------------------------------ top-level loops
    def top_loop(self, loops: list[Loop]) -> Loop:
        """A loop of the program; sometimes a sibling of an earlier one (the same sequences,
        n_steps and direction: what scan_merge fuses)."""
        c = self.c
        sibling = c.choice(loops) if loops and c.chance(0.25) else None
        scope = Scope(invariants=self.loop_params())
        unread = None
        if sibling is None:
            steps = c.choice([3, 2, 1, 4, 5, 0])
            n_steps, backwards = self.n_steps(steps), c.chance(0.25)
            sequences = [self.top_sequence(loops, steps) for _ in range(c.integer(1 if n_steps is None else 0, 3))]
            if n_steps is None and c.chance(0.2):
                # fn never reads it and it often allows a step fewer: rewrites drop it, its count stays
                unread = c.integer(0, len(sequences))
                sequences.insert(unread, self.top_sequence(loops, max(steps - 1, 0)))
        else:
            n_steps, backwards = sibling.n_steps, sibling.go_backwards
            sequences = [(seq, self.element_type(seq.source, loops)) for seq in sibling.sequences]
        for i, (seq, element) in enumerate(sequences):
            if i != unread:
                scope.sequences += [Typed(("v", seq_name(i, tap)), element.shape, element.dtype) for tap in seq.taps]
        outputs = self.declare_outputs(loops, scope, nested=False)
        updates = self.shared_updates(scope) if c.chance(0.15) else ()
        self.nests_left = 1 if c.chance(0.3) else 0
        outputs = self.step_outputs(outputs, scope, nested=False)
        until = self.until(scope, outputs) if sibling is None and c.chance(0.15) else None
        non_seqs = tuple(p.expr[1] for p in scope.invariants
                         if p.expr[0] == "v" and p.expr[1] not in dict(updates) and c.chance(0.6))
        updates = tuple((name, self.bounded(self.expr(scope, shape, "f", 2)).expr) for name, shape in updates)
        return Loop(tuple(seq for seq, _ in sequences), tuple(outputs), non_seqs, n_steps, backwards, until, updates,
                    return_list=c.chance(0.7))

    def element_type(self, source: tuple, loops: list[Loop]) -> Typed:
        """The type of one element of a top-level sequence source."""
        if source[0] == "loop":
            out = loops[source[1]].outputs[source[2]]
            return Typed((), out.shape, out.dtype)
        spec = next(i for i in self.inputs if i.name == source[1])
        return Typed((), spec.shape[1:], spec.dtype)

    def n_steps(self, steps: int) -> tuple | None:
        c = self.c
        kind = c.choice(["none", "const", "sym"])
        if kind == "none":
            return None
        k = c.choice([steps, -steps, steps, steps, 0, 1, -1])
        if kind == "const":
            return ("const", k)
        return ("sym", self.new_input("n", (), c.choice(["int64", "int32"]), value=k).expr[1])

    def top_sequence(self, loops: list[Loop], steps: int) -> tuple[Seq, Typed]:
        """A sequence (a new input, or an earlier loop's output) and its element's type."""
        c = self.c
        taps = c.choice(SEQUENCE_TAPS)
        earlier = [(j, k) for j, loop in enumerate(loops) for k in range(len(loop.outputs))]
        if earlier and c.chance(0.35):
            source = ("loop",) + c.choice(earlier)
            return Seq(source, taps, c.chance(0.3)), self.element_type(source, loops)
        element, dtype = self.element_shape(), self.dtype()
        need = steps + span_of_sequence(taps)
        length = max(0, need - c.integer(1, 2)) if c.chance(0.04) else need + c.choice([0, 1, 0, 2])
        source = self.new_input("x", (length,) + element, dtype)
        return Seq(source.expr, taps, c.chance(0.3)), Typed((), element, dtype)

    def loop_params(self) -> list[Typed]:
        """Invariant values of a loop: new inputs, constants or shared variables, and some
        values earlier loops read."""
        c, d = self.c, self.d
        params = [p for p in self.params if c.chance(0.3)]
        for _ in range(c.integer(0, 3)):
            shape = c.choice([(), (d,), (d, d)])
            dtype = self.dtype() if len(shape) < 2 else FLOAT
            kind = c.choice(["input", "input", "constant", "shared"])
            prefix = "W" if len(shape) == 2 else "w"
            params.append(self.new_input(prefix, shape, dtype, kind))
        self.params += [p for p in params if p not in self.params]
        return params

    def shared_updates(self, scope: Scope) -> tuple:
        """(name, shape) of a shared variable this loop updates; its state joins the scope."""
        state = self.new_input("sh", self.element_shape(), FLOAT, "shared")
        scope.states.append(state)
        return ((state.expr[1], state.shape),)

    # ------------------------------------------------------------------ outputs
    def declare_outputs(self, loops: list[Loop], scope: Scope, nested: bool, outer: Scope | None = None) -> list:
        """Each output's kind, type, taps and initial value; past values join the scope.
        Returns Out records with a placeholder expression (see ``step_outputs``)."""
        c = self.c
        outputs = []
        for i in range(c.integer(1, 3)):
            if outputs and c.chance(0.12):  # declared like the one before: a candidate twin
                twin = outputs[-1]
                outputs.append(twin)
                scope.states += [Typed(("v", out_name(i, tap, nested)), twin.shape, twin.dtype) for tap in twin.taps]
                continue
            kind = c.choice(["nit", "sit", "mit"])
            shape, dtype = self.element_shape(), FLOAT if nested else self.dtype()
            taps = () if kind == "nit" else (-1,) if kind == "sit" else c.choice(MIT_SOT_TAPS)
            init = None
            if kind != "nit":
                init = (self.nested_init(outer, shape, taps) if nested
                        else self.top_init(loops, kind, shape, dtype, taps))
                if init is None:
                    kind, taps = "nit", ()
            outputs.append(Out(kind, ("c", 0), shape, dtype, init, taps, c.chance(0.3)))
            scope.states += [Typed(("v", out_name(i, tap, nested)), shape, dtype) for tap in taps]
        return outputs

    def top_init(self, loops: list[Loop], kind: str, shape: tuple, dtype: str, taps: tuple) -> tuple:
        c = self.c
        if kind == "sit":
            earlier = [(j, k) for j, loop in enumerate(loops) for k, out in enumerate(loop.outputs)
                       if (out.shape, out.dtype) == (shape, dtype)]
            if earlier and c.chance(0.2):
                return ("last", ("loop",) + c.choice(earlier))
            return self.new_input("h", shape, dtype, c.choice(["input", "input", "constant", "shared"])).expr
        span = -min(taps)
        rows = span - 1 if c.chance(0.04) else span + c.choice([0, 0, 1])
        return self.new_input("h", (rows,) + shape, dtype, c.choice(["input", "input", "constant"])).expr

    def step_outputs(self, outputs: list, scope: Scope, nested: bool) -> list:
        """Each output with the expression fn returns for it."""
        done: list[Out] = []
        for i, out in enumerate(outputs):
            done.append(Out(out.kind, self.output_expr(i, out, scope, done, nested).expr, out.shape, out.dtype,
                            out.init, out.taps, out.as_dict))
        return done

    def output_expr(self, index: int, out: Out, scope: Scope, done: list, nested: bool) -> Typed:
        c = self.c
        kind = "f" if out.dtype == FLOAT else "i"
        states = [Typed(("v", out_name(index, tap, nested)), out.shape, out.dtype) for tap in out.taps]
        pattern = c.choice(["random", "random", "fold", "fold", "invariant", "affine", "seq", "twin", "linear",
                            "of_output"])
        if pattern == "twin":
            twin = self.twin(index, out, done, nested)
            if twin is not None:
                return twin
        if pattern == "seq":
            taps = [s for s in scope.sequences if (s.shape, s.dtype) == (out.shape, out.dtype)]
            if taps:
                return c.choice(taps)
        if pattern == "of_output" and out.kind == "nit" and kind == "f" and done:
            # computed from another output's new value: what push_out_output moves after the loop
            source = c.choice(done)
            value = Typed(source.expr, source.shape, source.dtype)
            if source.shape != out.shape:
                value = apply("sum", value, shape=()) if out.shape == () else value
            if value.shape == out.shape:
                return coerce(apply(c.choice(["tanh", "neg", "sin"]), value, shape=out.shape), out.dtype)
        if out.kind == "sit" and pattern in ("fold", "invariant", "affine"):
            return coerce(getattr(self, pattern)(states[0], scope.without_states(), kind), out.dtype)
        if out.kind == "mit" and pattern in ("linear", "affine") and kind == "f":
            return coerce(self.linear(states, scope.without_states()), out.dtype)
        typed = self.expr(scope, out.shape, kind, c.integer(1, 3))
        if out.kind != "nit" and kind == "f" and c.chance(0.7):
            typed = self.bounded(typed)
        return coerce(typed, out.dtype)

    def twin(self, index: int, out: Out, done: list, nested: bool) -> Typed | None:
        """An earlier output's expression: for one declared alike (kind, initial value, taps),
        with its own past values in place of the other's (what merge_inouts merges)."""
        alike = [(j, o) for j, o in enumerate(done) if (o.kind, o.init, o.taps) == (out.kind, out.init, out.taps)
                 and (o.shape, o.dtype) == (out.shape, out.dtype)]
        if alike:
            j, other = self.c.choice(alike)
            mine = {out_name(j, tap, nested): out_name(index, tap, nested) for tap in out.taps}
            return Typed(_renamed(other.expr, mine), out.shape, out.dtype)
        same_type = [o for o in done if (o.shape, o.dtype) == (out.shape, out.dtype)]
        return Typed(self.c.choice(same_type).expr, out.shape, out.dtype) if same_type else None

    # ------------------------------------------------------------------ the vectorize patterns
    def fold(self, state: Typed, scope: Scope, kind: str) -> Typed:
        """A running sum/product/max/min of an expression of the sequences."""
        c = self.c
        op = c.choice(["add", "mul", "maximum", "minimum"])
        term = self.expr(scope, state.shape, kind, c.integer(0, 2))
        if op == "mul" and kind == "f":
            term = self.bounded(term)
        pair = (state, term) if c.chance(0.6) else (term, state)
        return apply(op, *pair, shape=state.shape)

    def invariant(self, state: Typed, scope: Scope, kind: str) -> Typed:
        """``s * c`` or ``s + c`` with ``c`` the same at every step."""
        c = self.c
        invariant = self.expr(Scope(invariants=scope.invariants), c.choice([(), state.shape]), kind, c.integer(0, 1))
        pair = (state, invariant) if c.chance(0.6) else (invariant, state)
        return apply(c.choice(["mul", "add"]), *pair, shape=state.shape)

    def affine(self, state: Typed, scope: Scope, kind: str) -> Typed:
        """``a_t * s + b_t`` with |a_t| < 1."""
        c = self.c
        if kind != "f":
            return self.fold(state, scope, kind)
        if c.chance(0.5):
            a = Typed(("c", c.choice(COEFFICIENTS)), (), "pyfloat")
        else:
            varying = self.bounded(self.expr(scope, c.choice([(), state.shape]), "f", 1))
            a = apply("mul", Typed(("c", 0.9), (), "pyfloat"), varying, shape=state.shape)
        b = self.expr(scope, c.choice([(), state.shape]), "f", c.integer(0, 2))
        return apply("add", apply("mul", a, state, shape=state.shape), b, shape=state.shape)

    def linear(self, states: list[Typed], scope: Scope) -> Typed:
        """``sum(c_k x_(t+tap_k)) + d`` over some of a mit-sot's taps (others ignored)."""
        c = self.c
        used = [s for s in states if c.chance(0.7)] or [c.choice(states)]
        total = None
        for state in used:
            term = apply("mul", Typed(("c", c.choice(COEFFICIENTS + [1.0])), (), "pyfloat"), state, shape=state.shape)
            total = term if total is None else apply("add", total, term, shape=state.shape)
        if c.chance(0.7):
            total = apply("add", total, self.expr(scope, c.choice([(), total.shape]), "f", c.integer(0, 1)),
                          shape=total.shape)
        return total

    # ------------------------------------------------------------------ expressions
    def bounded(self, typed: Typed) -> Typed:
        return apply(self.c.choice(["tanh", "sin"]), typed, shape=typed.shape)

    def expr(self, scope: Scope, shape: tuple, kind: str, depth: int) -> Typed:
        """A random expression of exactly ``shape``; ``kind`` "f" (float) or "i" (integer only)."""
        c = self.c
        if depth <= 0 or c.chance(0.25):
            return self.leaf(scope, shape, kind)
        forms = ["binary", "binary", "unary", "scale"] + (["sum"] if shape == () else [])
        if kind == "f":
            has_matrix = any(p.shape == (self.d, self.d) for p in scope.all())
            forms += ["dot"] * has_matrix + ["nested"] * (self.nests_left > 0)
        form = "ifelse" if c.chance(IFELSE_CHANCE) else c.choice(forms)
        if form == "ifelse":
            return self.ifelse(scope, shape, kind, depth)
        if form == "nested":
            nested = self.nested_scan(scope, shape)
            if nested is not None:
                return nested
            form = "binary"
        if form == "binary":
            ops = ["add", "sub", "maximum", "minimum"] + ["mul"] * (kind == "f")
            a = self.expr(scope, shape, kind, depth - 1)
            b = self.expr(scope, c.choice([shape, ()]), kind, depth - 1)
            return apply(c.choice(ops), *((a, b) if c.chance(0.5) else (b, a)), shape=shape)
        if form == "unary":
            operand = self.expr(scope, shape, kind, depth - 1)
            if kind == "i":
                return apply("neg", operand, shape=shape)
            op = c.choice(["tanh", "sin", "neg", "exp"])
            return apply("exp", self.bounded(operand), shape=shape) if op == "exp" else apply(op, operand, shape=shape)
        if form == "scale":
            factor = Typed(("c", c.choice(COEFFICIENTS if kind == "f" else [2, -1, 3])), (), "pyfloat")
            if kind == "i":
                factor = Typed(factor.expr, (), "pyint")
            return apply("mul", factor, self.expr(scope, shape, kind, depth - 1), shape=shape)
        if form == "sum":
            return apply("sum", self.expr(scope, (self.d,), kind, depth - 1), shape=())
        return self.dot(scope, shape, depth)

    def ifelse(self, scope: Scope, shape: tuple, kind: str, depth: int) -> Typed:
        """``ss.ifelse(value > threshold, then, else)``: both branches cast to one dtype."""
        c = self.c
        value = self.expr(scope, (), "f", depth - 1)
        condition = ("gt", value.expr, ("c", c.choice([0.0, 0.3, -0.3])))
        then, other = self.expr(scope, shape, kind, depth - 1), self.expr(scope, shape, kind, depth - 1)
        dtype = result_dtype("add", then.dtype, other.dtype)
        return Typed(("ifelse", condition, coerce(then, dtype).expr, coerce(other, dtype).expr), shape, dtype)

    def dot(self, scope: Scope, shape: tuple, depth: int) -> Typed:
        c, d = self.c, self.d
        matrix = c.choice([p for p in scope.all() if p.shape == (d, d)])
        if shape == ():
            left, right = self.expr(scope, (d,), "f", depth - 1), self.expr(scope, (d,), "f", depth - 1)
            return apply("dot", left, right, shape=())
        vector = self.expr(scope, (d,), "f", depth - 1)
        return apply("dot", *((vector, matrix) if c.chance(0.5) else (matrix, vector)), shape=(d,))

    def leaf(self, scope: Scope, shape: tuple, kind: str) -> Typed:
        c = self.c
        found = [t for t in scope.all() if t.shape == shape and (kind == "f" or t.dtype.startswith("int"))]
        if found and not c.chance(0.08):
            return c.choice(found)
        if shape == () and kind == "f":
            return Typed(("c", c.choice([0.5, -0.3, 1.0])), (), "pyfloat")
        if shape == ():
            return Typed(("c", c.choice([1, 2, -1])), (), "pyint")
        vector = Typed(("cvec", tuple(round(0.5 - 0.3 * i, 2) for i in range(self.d))), shape, FLOAT)
        return vector if kind == "f" else coerce(vector, "int64")

    def until(self, scope: Scope, outputs: list) -> tuple:
        """``until(value > threshold)``, the value reading this step's outputs or the scope."""
        c = self.c
        candidates = [Typed(("new", k), out.shape, out.dtype) for k, out in enumerate(outputs)]
        value = self.expr(scope, (), "f", 1) if c.chance(0.3) else c.choice(candidates)
        if value.dtype.startswith("py"):
            value = c.choice(candidates)
        if value.shape != ():
            value = apply("sum", value, shape=())
        threshold = c.choice([0.0, 0.3, -0.3, 0.8]) if value.dtype != "int32" and value.dtype != "int64" else 0
        return ("gt", value.expr, ("c", threshold))

    # ------------------------------------------------------------------ nested loops
    def nested_scan(self, outer: Scope, shape: tuple) -> Typed | None:
        """The last value (or the sum) of an output of a loop inside fn. It never fails: its
        sequences are vectors of length d with taps that fit, its steps at most what they allow."""
        c, d = self.c, self.d
        self.nests_left -= 1
        scope = Scope(invariants=[t for t in outer.all() if t.expr[0] == "v"])
        sequences, allowed = [], []
        for i in range(c.integer(0, 2)):
            taps = c.choice([(0,), (-1, 0), (1,)])
            if span_of_sequence(taps) >= d:
                taps = (0,)
            source = self.bounded(self.expr(outer, (d,), "f", 1))
            sequences.append(Seq(source.expr, taps, c.chance(0.3)))
            allowed.append(d - span_of_sequence(taps))
            scope.sequences += [Typed(("v", seq_name(i, tap, True)), (), FLOAT) for tap in taps]
        if not sequences:
            n_steps = ("const", c.integer(0 if shape == () else 1, 3))
        else:
            n_steps = None if c.chance(0.5) else ("const", c.integer(0 if shape == () else 1, min(allowed)))
        steps = min(allowed) if n_steps is None else n_steps[1]
        outputs = self.declare_outputs([], scope, nested=True, outer=outer)
        outputs = self.step_outputs(outputs, scope, nested=True)
        until = self.until(scope, outputs) if c.chance(0.15) else None
        non_seqs = tuple(t.expr[1] for t in outer.all() if t.expr[0] == "v" and c.chance(0.3))
        read = next((k for k, out in enumerate(outputs) if out.shape == shape), None)
        if steps == 0 or read is None or c.chance(0.3):
            if shape != ():
                return None
            read = c.integer(0, len(outputs) - 1)
            way = "sum"
        else:
            way = "last"
        loop = Loop(tuple(sequences), tuple(outputs), non_seqs, n_steps, c.chance(0.25), until,
                    return_list=c.chance(0.7))
        return Typed((way, ("scan", loop, read)), shape, FLOAT)

    def nested_init(self, outer: Scope, shape: tuple, taps: tuple) -> tuple | None:
        """A nested output's initial value, an expression of the enclosing step (None: the
        output becomes a map, when no expression has the rows its taps need)."""
        d = self.d
        if len(taps) == 1 and taps[0] == -1:
            return self.bounded(self.expr(outer, shape, "f", 1)).expr
        if -min(taps) > d:
            return None
        if shape == ():
            return self.bounded(self.expr(outer, (d,), "f", 1)).expr
        matrices = [t for t in outer.all() if t.shape == (d, d)]
        return self.c.choice(matrices).expr if matrices else None

    # ------------------------------------------------------------------ what the function returns
    def reads(self, loops: list[Loop]) -> list[tuple]:
        """Reads of the loops' outputs (whole, [-1], [-k:], .sum()); every loop is read, directly
        or through a later loop, or updates a shared variable."""
        c = self.c
        reads = []
        for j, loop in enumerate(loops):
            for k in range(len(loop.outputs)):
                for _ in range(c.choice([1, 0, 1, 2])):
                    reads.append(self.read(("loop", j, k)))
        for j in unread_loops(loops, reads):
            reads.append(self.read(("loop", j, c.integer(0, len(loops[j].outputs) - 1))))
        return reads

    def read(self, whole: tuple) -> tuple:
        how = self.c.choice(["whole", "last", "tail", "sum"])
        if how == "whole":
            return whole
        if how == "tail":
            return ("tail", whole, self.c.integer(1, 3))
        return (how, whole)


def generate(chooser: Chooser, seed: int = 0) -> Program:
    """A random program whose input values come from ``seed``."""
    return ProgramGenerator(chooser).program(seed)
