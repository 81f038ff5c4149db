"""The fuzzer's own oracle: a numpy interpreter of a program's expressions and a plain loop
implementing scan's documented semantics (API.md), written without symscan so that a bug
shared by every symscan mode still shows.

The loop: taps read ``x[tap - min(taps, 0) + step]`` (from the end when going backwards);
without ``n_steps`` the step count is the shortest sequence's length minus its taps' span;
a negative ``n_steps`` walks backwards; ``until`` is evaluated after the step's outputs and the
step that makes it true is kept; a sequence or initial value too short is an error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from fuzz_program import Loop, Program, input_value, out_name, seq_name, span_of_sequence


class ExpectedError(Exception):
    """The program must fail: scan's documented errors, or ``[-1]`` of an empty output."""


@dataclass
class Outcome:
    """What a program computes: the returned values, then each updated shared variable's
    new value (by name). ``may_fail`` says why a mode may raise instead (see ``initial_histories``)."""

    values: list
    shared: dict
    may_fail: str | None = None


NUMPY_UNARY = {"neg": np.negative, "tanh": np.tanh, "sin": np.sin, "exp": np.exp, "sum": np.sum}
NUMPY_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
                "minimum": np.minimum, "dot": np.dot, "gt": np.greater}

BRANCH_HOOK = None
"""When set, ``evaluate`` calls ``BRANCH_HOOK(op, operands, result)`` after each ``maximum``,
``minimum``, ``gt`` and ``cast``: the discrete choices a program makes (fuzz_grad.py uses them
to tell where finite differences cross a kink or change an ``until``'s step count)."""
BRANCHING = ("maximum", "minimum", "gt", "cast")


def run_program(program: Program) -> Outcome:
    """The program's values, or ``ExpectedError``."""
    env = {spec.name: input_value(program, i) for i, spec in enumerate(program.inputs)}
    loops = LoopResults(program, env)
    with np.errstate(all="ignore"):
        values = [np.asarray(evaluate(read, env, loops)) for read in program.reads]
        shared = {}
        for i, loop in enumerate(program.loops):
            if loop.updates:
                shared.update(loops.run(i)[1])
    return Outcome(values, shared, "; ".join(loops.notes) or None)


class LoopResults:
    """The top-level loops' outputs, each loop run when first read, as a compiled function
    runs only what its outputs need (a loop read only by an initial value nothing reads may
    not run at all; see ``initial_histories``). ``loops[i]`` is loop i's list of outputs."""

    def __init__(self, program: Program, env: dict):
        self.program, self.env = program, env
        self.results: dict = {}
        self.notes: list[str] = []

    def __getitem__(self, index: int) -> list:
        return self.run(index)[0]

    def run(self, index: int) -> tuple[list, dict]:
        """(outputs, shared variables' new values) of loop ``index``, or its error (every time)."""
        if index not in self.results:
            loop = self.program.loops[index]
            read = {k for k in range(len(loop.outputs)) if _reads_output(self.program, index, k)}
            try:
                self.results[index] = run_loop(loop, self.env, self, nested=False,
                                               needed=needed_outputs(loop, read), notes=self.notes)
            except ExpectedError as err:
                self.results[index] = err
        if isinstance(self.results[index], ExpectedError):
            raise self.results[index]
        return self.results[index]


def _reads_output(program: Program, index: int, output: int) -> bool:
    return f"('loop', {index}, {output})" in repr((program.reads, program.loops))


def needed_outputs(loop: Loop, read: set) -> set:
    """The outputs whose past values the program needs: those read by the expressions of the
    outputs it needs (those read from outside, and what they read), of ``until`` and of the
    shared updates. Only their initial values must be computed."""
    def reads_past(k: int, exprs) -> bool:
        return f"'o{k}@" in repr(exprs)

    needed = set(read) | {k for k in range(len(loop.outputs))
                          if reads_past(k, (loop.until, loop.updates)) or f"('new', {k})" in repr(loop.until)}
    grown = True
    while grown:
        more = {k for k in range(len(loop.outputs)) if reads_past(k, [loop.outputs[j].expr for j in needed])}
        grown = not more <= needed
        needed |= more
    return {k for k in needed if reads_past(k, [loop.outputs[j].expr for j in needed] + [loop.until, loop.updates])}


def evaluate(expr: tuple, env: dict, loop_outputs):
    """The value of ``expr``; Python scalars stay Python scalars, as numpy's NEP 50 wants."""
    op, args = expr[0], expr[1:]
    if op in ("v", "new"):
        return env[args[0] if op == "v" else f"new:{args[0]}"]
    if op == "c":
        return args[0]
    if op == "cvec":
        return np.array(args[0], dtype="float64")
    if op == "loop":
        return loop_outputs[args[0]][args[1]]
    if op == "scan":
        return run_loop(args[0], env, loop_outputs, nested=True)[0][args[1]]
    if op == "ifelse":  # lazy: the branch not taken is not evaluated (nor a loop only it reads run)
        return evaluate(args[1] if bool(evaluate(args[0], env, loop_outputs)) else args[2], env, loop_outputs)
    value = evaluate(args[0], env, loop_outputs)
    if op == "last":
        if len(value) == 0:
            raise ExpectedError("[-1] of an empty output")
        return value[-1]
    if op == "tail":
        return value[-args[1]:]
    if op == "take":
        index = int(evaluate(args[1], env, loop_outputs))
        if not -len(value) <= index < len(value):
            raise ExpectedError(f"index {index} is out of range for {len(value)} rows")
        return value[index]
    if op == "cast":
        result = np.asarray(value).astype(args[1])
        if BRANCH_HOOK is not None:
            BRANCH_HOOK(op, (value,), result)
        return result
    if op in NUMPY_UNARY:
        return NUMPY_UNARY[op](value)
    other = evaluate(args[1], env, loop_outputs)
    result = NUMPY_BINARY[op](value, other)
    if BRANCH_HOOK is not None and op in BRANCHING:
        BRANCH_HOOK(op, (value, other), result)
    return result


def step_count(loop: Loop, env: dict, sequences: list) -> tuple[int, bool]:
    """(steps, backwards) after checking every sequence is long enough."""
    spans = [span_of_sequence(s.taps) for s in loop.sequences]
    if loop.n_steps is None:
        for i, (x, span) in enumerate(zip(sequences, spans)):
            if len(x) < span:
                raise ExpectedError(f"sequences[{i}] has {len(x)} elements, its taps span {span}")
        return min(len(x) - span for x, span in zip(sequences, spans)), loop.go_backwards
    kind, value = loop.n_steps
    k = int(value if kind == "const" else env[value])
    steps = abs(k)
    for i, (x, span) in enumerate(zip(sequences, spans)):
        if len(x) < steps + span:
            raise ExpectedError(f"sequences[{i}] has {len(x)} elements, {steps} steps need {steps + span}")
    return steps, loop.go_backwards != (k < 0)


def initial_histories(loop: Loop, env: dict, loop_outputs, needed: set | None, notes: list) -> list:
    """Per output, its past rows (oldest first) as its taps read them; None for a nit-sot.

    An initial value whose expression fails (``[-1]`` of an empty output) but which nothing reads
    (not ``needed``) may fail or not: mode "py" computes it for a loop and not for an unrolled
    step, the rewrites drop it. It becomes zeros and a note that a mode may raise instead.
    """
    histories = []
    for i, out in enumerate(loop.outputs):
        if out.kind == "nit":
            histories.append(None)
            continue
        try:
            init = np.asarray(evaluate(out.init, env, loop_outputs))
        except ExpectedError as err:
            if needed is None or i in needed:
                raise
            notes.append(f"{err} in the initial value of outputs_info[{i}], which nothing reads")
            rows = (-min(out.taps),) if out.kind == "mit" else ()
            init = np.zeros(rows + out.shape, out.dtype)
        if out.kind == "sit":
            histories.append([init])
            continue
        span = -min(out.taps)
        if init.ndim == 0 or init.shape[0] < span:
            raise ExpectedError(f"outputs_info[{i}] has too few initial rows for taps {out.taps}")
        histories.append(list(init[:span]))
    return histories


def _note_second_error(loop: Loop, env: dict, loop_outputs, needed: set | None, notes: list) -> None:
    """A loop whose step count fails may have a failing initial value too (``[-1]`` of an empty
    output): a mode may find that one first, so it goes in the notes."""
    try:
        initial_histories(loop, env, loop_outputs, needed, notes)
    except ExpectedError as err:
        notes.append(f"{err} in an initial value, beside the step count's error")


def run_loop(loop: Loop, env: dict, loop_outputs, nested: bool, needed: set | None = None,
             notes: list | None = None) -> tuple[list, dict]:
    """The loop's outputs (initial taps excluded) and its shared variables' new values;
    ``needed``: the outputs whose past values are read (None: all), see ``initial_histories``."""
    notes = notes if notes is not None else []
    sequences = [np.asarray(evaluate(s.source, env, loop_outputs)) for s in loop.sequences]
    try:
        steps, backwards = step_count(loop, env, sequences)
    except ExpectedError:
        _note_second_error(loop, env, loop_outputs, needed, notes)
        raise
    histories = initial_histories(loop, env, loop_outputs, needed, notes)
    shared = {name: env[name] for name, _ in loop.updates}
    rows = [[] for _ in loop.outputs]
    for step in range(steps):
        body = dict(env)
        for i, (seq, x) in enumerate(zip(loop.sequences, sequences)):
            usable, first = len(x) - span_of_sequence(seq.taps), min(min(seq.taps), 0)
            base = usable - 1 - step if backwards else step
            for tap in seq.taps:
                body[seq_name(i, tap, nested)] = x[tap - first + base]
        for i, (out, history) in enumerate(zip(loop.outputs, histories)):
            for tap in out.taps:
                body[out_name(i, tap, nested)] = history[tap]
        body.update(shared)
        new = [np.asarray(evaluate(out.expr, body, loop_outputs)) for out in loop.outputs]
        for out, value in zip(loop.outputs, new):
            assert value.shape == out.shape and value.dtype == out.dtype, \
                f"fuzzer bug: {out.expr} gives {value.dtype}{value.shape}, declared {out.dtype}{out.shape}"
        shared = {name: np.asarray(evaluate(e, body, loop_outputs)) for name, e in loop.updates}
        for i, (value, history) in enumerate(zip(new, histories)):
            rows[i].append(value)
            body[f"new:{i}"] = value
            if history is not None:
                history.append(value)
                history.pop(0)
        if loop.until is not None and bool(evaluate(loop.until, body, loop_outputs)):
            break
    outputs = [np.array(r, dtype=out.dtype) if r else np.empty((0,) + out.shape, dtype=out.dtype)
               for out, r in zip(loop.outputs, rows)]
    return outputs, shared
