"""Gradients in the differential fuzzer: ``ss.grad`` of a scalar cost of each generated program,
compared between modes, with central finite differences of the fuzzer's numpy reference, and on
errors (``python -m tests.fuzz --grad``; the ``test_grad_*`` tests of test_fuzz.py).

A program qualifies when it builds (``scan()`` does not raise) and returns at least one float
value, and has a float input or a float shared variable. Its cost is ``sum(W_i * read_i)`` over
its float reads, ``W_i`` fixed weights in [0.5, 1.5) of the read's shape drawn from the
program's seed; ``ss.grad(cost, wrt, disconnected_inputs="ignore")`` with ``wrt`` every float
input and float shared variable (constants are baked into the graph, integers are not
differentiated). Then:

1. every mode (``MODES``: py, fast, fast with each rewrite tag off, onnxruntime, numba and jax
   where installed) computes the gradients mode py does (``RTOL`` 1e-7, the forward fuzzer's
   tolerance), or an error where it must (mode py's gradients are computed as the baseline even
   when py is not among the modes checked);
2. those gradients agree, entry by entry, with central finite differences of the reference's
   cost in float64 (step ``FD_EPS``; ``FD_RTOL``/``FD_ATOL`` 1e-5 scaled to the input's largest
   difference; a mismatch counts only if a second step, ``FD_CONFIRM_EPS``, confirms it). An
   entry is compared only where the program is differentiable along it: neither step may change
   a discrete choice of the reference (which operand a ``maximum``/``minimum`` takes, a
   comparison, and so the step an ``until`` stops at, a float-to-int cast; see
   ``fuzz_reference.BRANCH_HOOK``), nor may a ``maximum``/``minimum`` tie on operands that move
   with the entry (Theano's rule sends the gradient to both). Programs whose ``until`` sits
   within a step of its threshold are so skipped entry by entry, not guessed at;
3. a program whose forward raises raises when its gradient is evaluated, in every mode, with
   the class of error that mode's forward raises (onnxruntime's too) or of an error the
   reference finds (``IndexError`` for ``[-1]`` of an empty output, else ``ValueError``: a
   program with two errors may show either first), and never returns a result. ``grad``
   builds the backward pass only from the values that depend on a differentiated input
   through float values (the "connected" reads, see
   ``connected_reads``): an error in those must show; an error only in the other reads (or in
   an initial value nothing reads, as in the forward fuzzer) may or may not. Where an error
   may or may not show, a mode that returns is compared with mode py, not with differences.

Mode jax skips a program whose gradient (or forward) it cannot lower (``NotLowerable``, as in
the forward fuzzer): counted in ``stats`` as ``"skipped jax"``, compared with nothing.

Disagreements use the forward fuzzer's ``Disagreement`` (mode "grad": ``ss.grad`` itself
raised), so the CLI, the shrinker and the regression list (fuzz_grad_regressions.py) treat them
alike.
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass, field

import fuzz_reference
import numpy as np
from fuzz_build import Graph, build_program
from fuzz_compare import ERROR_TYPES, MODES, Disagreement, _same_array, _short, compare_values, skipped
from fuzz_program import Loop, Program, input_value, out_name, seq_name
from fuzz_reference import ExpectedError, LoopResults, evaluate

import symscan as ss
import symscan.tensor as T

FD_EPS = 1e-6
"""Central differences (f(x + h) - f(x - h)) / 2h: inputs are in [-1, 1] and the programs'
values bounded, so truncation (~h^2 f''') and rounding (~1e-16 |f| / h) both stay near 1e-10."""
FD_CONFIRM_EPS = 1e-5
"""A gradient that misses the differences at ``FD_EPS`` is wrong only if it misses them at this
step too (with the same discrete choices): a kink or a rounding accident does not repeat."""
FD_RTOL = 1e-5
FD_ATOL = 1e-5
"""Absolute tolerance per unit of the input's largest difference (at least 1)."""

VALUE_KINDS = ("wrong gradient", "differs from py")


class GradDisagreement(Disagreement):
    def problem(self) -> str:
        if self.kind in VALUE_KINDS:  # the same problem whatever the numbers
            return Disagreement(self.mode, "wrong value", self.detail).problem().replace("wrong value", self.kind, 1)
        return super().problem()


class _ModifiedInput(Exception):
    pass


@dataclass
class GradCase:
    """A program's gradient check: its graph, the cost's terms and what is differentiated."""

    program: Program
    graph: Graph
    reads: list  # positions in program.reads of the float reads: the cost's terms
    connected: list  # of those, the reads the backward pass is built from
    wrt: list  # positions in program.inputs of the differentiated inputs
    wrt_vars: list
    weights: list  # per cost term, its weights (shape () where the read fails)
    cost: object = None
    grads: list = field(default_factory=list)


# ---------------------------------------------------------------------------- the reference's cost
def reference_env(program: Program) -> dict:
    return {spec.name: input_value(program, i) for i, spec in enumerate(program.inputs)}


def reference_reads(program: Program, reads: list, env: dict | None = None) -> tuple[list, list]:
    """The values of ``program.reads[i]`` for i in ``reads`` (only the loops they need run, as
    a compiled function of those reads does), and the reference's notes (an error that may or
    may not happen); ``ExpectedError`` when they fail."""
    sub = Program(program.d, program.inputs, program.loops, tuple(program.reads[i] for i in reads), program.seed)
    env = reference_env(program) if env is None else env
    loops = LoopResults(sub, env)
    with np.errstate(all="ignore"):
        try:
            values = [np.asarray(evaluate(read, env, loops)) for read in sub.reads]
        except ExpectedError as err:
            err.notes = list(loops.notes)  # the optional errors met before it
            raise
    return values, loops.notes


class BranchTrace:
    """The discrete choices one evaluation makes on floats, in order (``fuzz_reference.BRANCH_HOOK``)."""

    def __init__(self):
        self.records: list = []

    def __call__(self, op: str, operands: tuple, result) -> None:
        if op == "cast":
            value = np.asarray(operands[0])
            if value.dtype.kind == "f" and np.asarray(result).dtype.kind != "f":
                self.records.append(("cast", np.array(result)))
            return
        a, b = (np.asarray(o) for o in operands)
        if a.dtype.kind != "f" and b.dtype.kind != "f":
            return
        a, b = np.broadcast_arrays(a.astype(np.float64), b.astype(np.float64))
        self.records.append((op, a.copy(), b.copy()))

    def same_choices(self, other: BranchTrace) -> bool:
        """Whether ``other`` (a perturbed evaluation) made every choice this one made, and no
        tie here moved there (a tie that stays put is a constant as far as the entry goes)."""
        if len(self.records) != len(other.records):
            return False
        for mine, theirs in zip(self.records, other.records):
            if mine[0] != theirs[0] or mine[1].shape != theirs[1].shape:
                return False
            if mine[0] == "cast":
                if not np.array_equal(mine[1], theirs[1]):
                    return False
                continue
            (_, a, b), (_, a2, b2) = mine, theirs
            sign = np.sign(a - b)
            if not np.array_equal(sign, np.sign(a2 - b2)):  # NaN never equals: not compared
                return False
            tie = sign == 0
            if tie.any() and not (np.array_equal(a[tie], a2[tie]) and np.array_equal(b[tie], b2[tie])):
                return False
        return True


def reference_cost(case: GradCase, env: dict) -> tuple[float | None, BranchTrace]:
    """The cost at ``env`` (None if it fails or is not finite) and the choices made."""
    trace = BranchTrace()
    fuzz_reference.BRANCH_HOOK = trace
    try:
        values, _ = reference_reads(case.program, case.reads, env)
    except ExpectedError:
        return None, trace
    finally:
        fuzz_reference.BRANCH_HOOK = None
    cost = float(sum(np.sum(w * v) for w, v in zip(case.weights, values)))
    return (cost if np.isfinite(cost) else None), trace


@dataclass
class FiniteDifferences:
    """Per differentiated input: the differences and where they may be compared."""

    values: list
    valid: list
    case: GradCase
    base_env: dict
    base_trace: BranchTrace
    confirmed: dict = field(default_factory=dict)

    def at(self, j: int, k: int, eps: float) -> float | None:
        """The central difference of entry ``k`` of input ``j`` with step ``eps``, or None where
        a step changes a discrete choice."""
        name = self.case.program.inputs[self.case.wrt[j]].name
        x = self.base_env[name]
        costs = []
        for step in (eps, -eps):
            moved = np.array(x, dtype=np.float64, copy=True)
            moved.flat[k] += step
            cost, trace = reference_cost(self.case, {**self.base_env, name: moved})
            if cost is None or not self.base_trace.same_choices(trace):
                return None
            costs.append(cost)
        return (costs[0] - costs[1]) / (2 * eps)

    def confirm(self, j: int, k: int) -> float | None:
        if (j, k) not in self.confirmed:
            self.confirmed[(j, k)] = self.at(j, k, FD_CONFIRM_EPS)
        return self.confirmed[(j, k)]


def finite_differences(case: GradCase) -> FiniteDifferences | None:
    """Central differences of the reference's cost for every entry of every differentiated
    input (None when the cost itself is not finite)."""
    env = reference_env(case.program)
    cost, trace = reference_cost(case, env)
    if cost is None:
        return None
    fd = FiniteDifferences([], [], case, env, trace)
    for j, position in enumerate(case.wrt):
        shape = np.shape(env[case.program.inputs[position].name])
        values, valid = np.zeros(shape), np.zeros(shape, dtype=bool)
        for k in range(values.size):
            d = fd.at(j, k, FD_EPS)
            if d is not None:
                values.flat[k], valid.flat[k] = d, True
        fd.values.append(values)
        fd.valid.append(valid)
    return fd


def compare_with_differences(got: list, fd: FiniteDifferences) -> str | None:
    """Why the gradients ``got`` miss the finite differences, or None."""
    for j, (g, d, valid) in enumerate(zip(got, fd.values, fd.valid)):
        name = fd.case.program.inputs[fd.case.wrt[j]].name
        g = np.asarray(g)
        if g.shape != d.shape or g.dtype != np.float64:
            return f"wrt {name!r}: {g.dtype}{g.shape} instead of float64{d.shape}"
        scale = max(1.0, float(np.max(np.abs(d[valid]), initial=0.0)))
        tolerance = FD_ATOL * scale + FD_RTOL * np.abs(d)
        missed = valid & ~(np.abs(g - d) <= tolerance)
        for k in np.flatnonzero(missed):
            again = fd.confirm(j, int(k))
            if again is None or abs(again - d.flat[k]) > FD_ATOL * scale + FD_RTOL * abs(again):
                continue  # the differences disagree with themselves: not differentiable enough here
            if abs(g.flat[k] - again) > FD_ATOL * scale + FD_RTOL * abs(again):
                return (f"wrt {name!r} entry {int(k)}: got {g.flat[k]:.9g}, finite differences "
                        f"{d.flat[k]:.9g} (gradient {_short(g)}, differences {_short(np.where(valid, d, np.nan))})")
    return None


# ---------------------------------------------------------------------------- the symbolic side
def connected_reads(program: Program, wrt: list) -> list:
    """The reads (positions) whose values depend on a differentiated input through float values.
    ``grad`` sends nothing through an integer, a comparison or a constant, so an error in the
    other reads need not show in the gradient (``disconnected_inputs="ignore"`` gives zeros
    without computing them). Decided on the program's data, not on the graph: a loop output's
    rows depend on what its step expression reads (its initial value only through a tap that
    reads it; a one-step loop, which ``scan()`` unrolls, only its initial values), which
    ``grad``'s connection patterns only bound from above."""
    names = {program.inputs[i].name for i in wrt}
    scope = {spec.name: spec.name in names for spec in program.inputs}
    loops: list = []
    for loop in program.loops:
        loops.append(_loop_dependence(loop, scope, loops, nested=False))
    return [i for i, read in enumerate(program.reads) if _depends(read, scope, loops)]


def _depends(expr: tuple, scope: dict, loops: list) -> bool:
    op, args = expr[0], expr[1:]
    if op == "v":
        return scope.get(args[0], False)
    if op in ("c", "cvec", "new", "gt"):
        return False
    if op == "cast":
        return np.dtype(args[1]).kind == "f" and _depends(args[0], scope, loops)
    if op == "loop":
        return loops[args[0]][args[1]]
    if op == "scan":
        return _loop_dependence(args[0], scope, loops, nested=True)[args[1]]
    return any(_depends(a, scope, loops) for a in args if isinstance(a, tuple))


def _loop_dependence(loop: Loop, scope: dict, loops: list, nested: bool) -> list:
    """Per output of ``loop``: whether its rows depend on a differentiated input (a fixpoint
    over the past values and shared states the step reads)."""
    body = dict(scope)
    for i, seq in enumerate(loop.sequences):
        body.update((seq_name(i, tap, nested), _depends(seq.source, scope, loops)) for tap in seq.taps)
    init = [out.init is not None and _depends(out.init, scope, loops) for out in loop.outputs]
    steps = [False] * len(loop.outputs)
    shared = {name: scope.get(name, False) for name, _ in loop.updates}
    one_step = loop.n_steps is not None and loop.n_steps[0] == "const" and abs(loop.n_steps[1]) == 1
    while True:
        for k, out in enumerate(loop.outputs):
            body.update((out_name(k, tap, nested), init[k] or steps[k]) for tap in out.taps)
        body.update(shared)
        new_steps = [np.dtype(out.dtype).kind == "f" and _depends(out.expr, body, loops) for out in loop.outputs]
        if one_step:  # scan() unrolls it: the step reads the initial values, nothing else
            return new_steps
        new_shared = {name: scope.get(name, False) or _depends(e, body, loops) for name, e in loop.updates}
        if new_steps == steps and new_shared == shared:
            return steps
        steps, shared = new_steps, new_shared


def _is_float(var) -> bool:
    return np.dtype(getattr(var.type, "dtype", "int8")).kind == "f"


def prepare(program: Program) -> GradCase | None:
    """The program's gradient check, or None when it has none (it does not build, or has no
    float read or no float input). ``scan()`` errors are the forward fuzzer's."""
    try:
        graph = build_program(program)
    except Exception:
        return None
    reads = [i for i, out in enumerate(graph.outputs) if _is_float(out)]
    wrt = [i for i, spec in enumerate(program.inputs)
           if spec.kind in ("input", "shared") and np.dtype(spec.dtype).kind == "f"]
    if not reads or not wrt:
        return None
    by_name = {v.name: v for v in graph.inputs}
    by_name.update({name: var for name, (var, _) in graph.shared.items()})
    wrt_vars = [by_name[program.inputs[i].name] for i in wrt]
    rng = np.random.default_rng([program.seed, 20261125])
    weights = []
    for i in reads:
        try:
            shape = reference_reads(program, [i])[0][0].shape
        except ExpectedError:
            shape = ()
        weights.append(rng.uniform(0.5, 1.5, size=shape))
    connected = [i for i in connected_reads(program, wrt) if i in reads]
    case = GradCase(program, graph, reads, connected, wrt, wrt_vars, weights)
    terms = [(T.constant(w) * graph.outputs[i]).sum() for i, w in zip(reads, weights)]
    case.cost = terms[0]
    for term in terms[1:]:
        case.cost = case.cost + term
    return case


def run_gradient(case: GradCase, mode: str) -> list:
    """Compile the gradients in ``mode`` and call once; inputs and shared variables must be
    left as they were."""
    graph = case.graph
    for var, value in graph.shared.values():
        var.set_value(value.copy())
    f = ss.function(graph.inputs, list(case.grads), **MODES[mode])
    arguments = [value.copy() for value in graph.values]
    outputs = f(*arguments)
    for i, (argument, value) in enumerate(zip(arguments, graph.values)):
        if not _same_array(argument, value):
            raise _ModifiedInput(f"input {graph.inputs[i].name!r} was modified by the call")
    for name, (var, value) in graph.shared.items():
        if not _same_array(var.get_value(), value):
            raise _ModifiedInput(f"shared variable {name!r} was modified by a call without updates")
    return [np.asarray(o) for o in outputs]


def forward_errors(case: GradCase, mode: str) -> set:
    """The classes of error the connected reads raise in ``mode``: of all of them together,
    and of each alone (a program with two errors may show either first)."""
    graph = case.graph
    found = set()
    for reads in [case.connected] + ([[i] for i in case.connected] if len(case.connected) > 1 else []):
        for var, value in graph.shared.values():
            var.set_value(value.copy())
        try:
            f = ss.function(graph.inputs, [graph.outputs[i] for i in reads], **MODES[mode])
            f(*[value.copy() for value in graph.values])
        except Exception as err:
            if not skipped(mode, err):  # mode jax cannot lower it: no class to compare with
                found.add(type(err))
    return found


# ---------------------------------------------------------------------------- the check
def check_gradient(program: Program, modes: list[str], stats: Counter | None = None) -> list[Disagreement]:
    """Every disagreement of the gradients of ``program`` in ``modes`` (see the module's doc);
    ``stats`` counts programs, modes run and finite-difference entries."""
    stats = Counter() if stats is None else stats
    modes = [m for m in modes if m in MODES]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        case = prepare(program)
        if case is None:
            stats["no gradient"] += 1
            return []
        stats["gradient programs"] += 1
        try:
            expected = reference_reads(program, case.connected)
        except ExpectedError as err:
            expected = err
        try:
            full = reference_reads(program, case.reads)
        except ExpectedError as err:
            full = err
        must_fail = isinstance(expected, ExpectedError)
        may_fail = not must_fail and (bool(expected[1]) or isinstance(full, ExpectedError))
        stats["must raise" if must_fail else "may raise" if may_fail else "must return"] += 1
        try:
            case.grads = ss.grad(case.cost, case.wrt_vars, disconnected_inputs="ignore")
        except Exception as err:
            if (must_fail or may_fail) and isinstance(err, ERROR_TYPES):
                return []
            return [GradDisagreement("grad", "grad error", f"{type(err).__name__}: {str(err)[:600]}")]
        results = {}
        found = []
        for mode in (["py"] if modes and "py" not in modes else []) + modes:  # py: the baseline
            stats[f"mode {mode}"] += 1
            try:
                results[mode] = run_gradient(case, mode)
            except _ModifiedInput as err:
                found.append(GradDisagreement(mode, "modified input", str(err)))
            except Exception as err:
                if skipped(mode, err):  # mode jax cannot lower it: compared with nothing
                    stats[f"skipped {mode}"] += 1
                else:
                    results[mode] = err
        found = [d for d in found if d.mode in modes]
        fd = None
        if not must_fail and not isinstance(full, ExpectedError) and any(
                not isinstance(r, Exception) for r in results.values()):
            fd = finite_differences(case)
            if fd is not None:
                stats["finite differences"] += 1
                stats["entries compared"] += int(sum(v.sum() for v in fd.valid))
                stats["entries skipped"] += int(sum(v.size - v.sum() for v in fd.valid))
        baseline = results.get("py")
        for mode, result in results.items():
            if mode not in modes:
                continue
            problem = _judge(case, mode, result, expected, must_fail, may_fail, baseline, fd)
            if problem:
                found.append(GradDisagreement(mode, *problem))
        return found


def _judge(case: GradCase, mode: str, result, expected, must_fail: bool, may_fail: bool, baseline,
           fd: FiniteDifferences | None) -> tuple[str, str] | None:
    if isinstance(result, Exception):
        detail = f"{type(result).__name__}: {str(result)[:600]}"
        if not must_fail and not may_fail:
            return "error instead of result", detail
        if mode != "onnxruntime" and not isinstance(result, ERROR_TYPES):
            return "unexpected error type", detail
        if must_fail and not _reference_class(case, mode, result):
            forward = forward_errors(case, mode)
            if forward and type(result) not in forward:
                classes = " or ".join(sorted(c.__name__ for c in forward))
                return ("error differs from the forward",
                        f"{type(result).__name__} where the forward raises {classes}: {detail}")
        return None
    if must_fail:
        return "result instead of error", f"expected an error ({expected}), got {_short(result)}"
    if fd is not None:  # first: who is wrong when a mode and py differ
        problem = compare_with_differences(result, fd)
        if problem:
            return "wrong gradient", problem
    if mode != "py" and baseline is not None and not isinstance(baseline, Exception):
        for j, (got, want) in enumerate(zip(result, baseline)):
            problem = compare_values(got, want)
            if problem and fd is not None and np.shape(got) == np.shape(want):
                # where a step of the differences changes a branch, rounding may take the other
                # side of a near tie: only the differentiable entries must agree
                valid = fd.valid[j]
                problem = compare_values(np.asarray(got)[valid], np.asarray(want)[valid]) and problem
            if problem:
                return "differs from py", f"wrt {case.program.inputs[case.wrt[j]].name!r}: {problem}"
    return None


def _reference_class(case: GradCase, mode: str, err: Exception) -> bool:
    """Whether ``err`` is an error the reference finds in the cost's reads, each read alone
    (a program with two errors may show either first), optional ones included (``[-1]`` of an
    empty initial value nothing reads): ``IndexError`` for ``[-1]`` of an empty output (in
    onnxruntime its own error), else scan's ``ValueError``. Every read counts, connected or
    not: the gradient keeps the run-time checks of the whole cost, so a read the gradient does
    not flow through may still fail first (onnxruntime orders the checks its own way)."""
    messages = []
    for i in case.reads:
        try:
            messages += reference_reads(case.program, [i])[1]
        except ExpectedError as error:
            messages += [str(error)] + error.notes
    for message in messages:
        empty = "[-1] of an empty output" in message
        if mode == "onnxruntime" and empty != isinstance(err, ValueError):
            return True
        if mode != "onnxruntime" and isinstance(err, IndexError if empty else ValueError):
            return True
    return False


def show_gradient(program: Program, modes: list[str]) -> None:
    """The gradient check of one program, mode by mode (the CLI's ``--grad --show``)."""
    from fuzz_program import format_program

    print(format_program(program))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        case = prepare(program)
        if case is None:
            print("no gradient check: the program does not build, or has no float read or float input")
            return
        names = [program.inputs[i].name for i in case.wrt]
        print(f"cost: reads {case.reads} (connected {case.connected}); wrt {names}")
        try:
            print("reference (connected reads):", reference_reads(program, case.connected))
        except ExpectedError as err:
            print("reference (connected reads): error:", err)
        try:
            case.grads = ss.grad(case.cost, case.wrt_vars, disconnected_inputs="ignore")
        except Exception as err:
            print(f"grad: {type(err).__name__}: {err}")
            return
        fd = finite_differences(case)
        if fd is not None:
            for name, values, valid in zip(names, fd.values, fd.valid):
                print(f"finite differences {name}: {_short(np.where(valid, values, np.nan))}")
        for mode in modes:
            try:
                print(f"{mode}:", dict(zip(names, run_gradient(case, mode))))
            except Exception as err:
                print(f"{mode}: {type(err).__name__}: {err}")
    for d in check_gradient(program, modes):
        print(f"DISAGREES {d.mode}: {d.kind}: {d.detail}")
