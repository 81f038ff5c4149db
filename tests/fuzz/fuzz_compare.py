"""Run a fuzz program in every mode and compare each with the fuzzer's own reference.

Agreement means: the same values (floats within ``RTOL``, with an absolute tolerance scaled to
the largest expected magnitude; NaN and inf in the same places; integers and booleans exact),
shapes and dtypes, the same new values of the shared variables, inputs left untouched; or an
error where the reference has one. An error counts wherever it happens: in ``scan()`` (static
lengths are checked when the loop is built), in ``ss.function()`` or in the call.

Errors: symscan's own modes must raise ``ERROR_TYPES`` (scan's ``ValueError``/``TypeError``,
numpy's ``IndexError`` for ``out[-1]`` of an empty output); anything else (``NameError``,
``KeyError``...) is a crash and a disagreement even where an error was due. In onnxruntime a
loop's checks raise scan's ``ValueError`` (README, "ONNX export"), but ``out[-1]`` of an empty
output fails inside the model with onnxruntime's own error, so there any exception agrees
with an expected error.

One error may or may not happen: ``[-1]`` of an empty output in the initial value of an output
nothing reads (mode "py" computes it for a loop, not for an unrolled step; rewrites drop it).
There a mode may raise (an ``ERROR_TYPES`` error) or return the reference's values.

Mode "jax" refuses what it cannot lower yet (a few ops, and uses such as an ``until`` loop
inside another loop) with ``NotLowerable``: there the program is skipped for that mode
(``skipped``, counted in ``stats``), neither an agreement nor a disagreement.
"""

from __future__ import annotations

import importlib.util
import re
import warnings
from collections import Counter
from dataclasses import dataclass

import numpy as np
from fuzz_build import Graph, build_program
from fuzz_program import Program
from fuzz_reference import ExpectedError, Outcome, run_program

import symscan as ss

NUMBA = importlib.util.find_spec("numba") is not None
"""Whether mode "numba" can run (numba is an optional extra)."""
JAX = importlib.util.find_spec("jax") is not None
"""Whether mode "jax" can run (jax is an optional extra)."""

try:  # the class only: symscan.backends.jax imports jax when a function is built in mode jax
    from symscan.backends.jax.graph import NotLowerable
except ImportError:  # pragma: no cover - a symscan without mode jax
    class NotLowerable(NotImplementedError):  # never raised
        pass

MODES: dict[str, dict] = {
    "py": dict(mode="py"),
    "fast": dict(mode="fast"),
    **{f"fast-{tag}": dict(mode="fast", rewrites=[f"-{tag}"])
       for tag in ("canonicalize", "push_out", "merge", "save_mem", "vectorize", "fusion", "inplace")},
    "onnxruntime": dict(mode="onnxruntime"),
    **({"numba": dict(mode="numba")} if NUMBA else {}),
    **({"jax": dict(mode="jax")} if JAX else {}),
}
"""Each mode by the name the summary uses: its ``ss.function`` arguments. ``fast-TAG`` is mode
"fast" with the rewrites tagged TAG off (``-merge`` is the whole merge tag, see README). Mode
"numba" only where numba is installed, mode "jax" only where jax is."""

SLOW_MODES = ("numba", "jax")
"""Modes that compile each new program: numba each new loop into a kernel (0.1-3 s, about fifty
times what one of the other modes takes per program), jax each program into one XLA executable
(~0.1 s, about five times; see README's measurements). Ask for them with ``--modes``."""

DEFAULT_MODES = [mode for mode in MODES if mode not in SLOW_MODES]
"""The modes the CLI and the pytest profiles run unless told otherwise: all but ``SLOW_MODES``.
``--modes numba`` (or ``--modes py jax``...) adds them; test_fuzz.py has small profiles of their
own."""

ERROR_TYPES = (ValueError, TypeError, IndexError)
RTOL = 1e-7
ATOL_PER_MAGNITUDE = 1e-8


@dataclass
class Disagreement:
    """One mode (or "build": ``scan()`` itself) disagreeing with the reference."""

    mode: str
    kind: str
    detail: str

    def problem(self) -> str:
        """The disagreement without its mode, numbers and names: the same problem in several
        programs (or modes) is probably one bug."""
        text = self.detail.split(" (while evaluating")[0]
        if self.kind == "result instead of error":
            text = text.split("), got")[0]
        elif self.kind == "wrong value":
            text = text.split(": got")[0]
        text = re.sub(r"'[^']*'", "'…'", text)
        text = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", text)
        return f"{self.kind}: {text[:110]}"

    def signature(self) -> str:
        return f"{self.mode}: {self.problem()}"


def check_program(program: Program, modes: list[str], stats: Counter | None = None) -> list[Disagreement]:
    """Every disagreement of ``modes`` with the reference on ``program``; ``stats`` counts the
    modes that skip it (``"skipped MODE"``: mode jax cannot lower it)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            expected: Outcome | ExpectedError = run_program(program)
        except ExpectedError as err:
            expected = err
        try:
            graph = build_program(program)
        except Exception as err:  # scan() itself raised: the same for every mode
            problem = _judge_error(err, expected, strict_type=True)
            return [Disagreement("build", *problem)] if problem else []
        found = []
        for mode in modes:
            problem = _check_mode(graph, mode, expected)
            if problem is SKIPPED:
                if stats is not None:
                    stats[f"skipped {mode}"] += 1
            elif problem:
                found.append(Disagreement(mode, *problem))
        return found


SKIPPED = ("skipped", "")
"""What ``_check_mode`` returns for a program the mode cannot run (``skipped``)."""


def skipped(mode: str, err: Exception) -> bool:
    """Whether ``err``, raised in ``mode``, says the mode cannot run the program at all (mode
    jax's ``NotLowerable``) rather than that it ran it wrong: the program is skipped there."""
    return MODES[mode]["mode"] == "jax" and isinstance(err, NotLowerable)


def run_mode(graph: Graph, mode: str) -> tuple[list, dict]:
    """Compile ``graph`` in ``mode`` and call it once: the outputs and every shared variable's
    value after the call. Each call starts from the shared variables' initial values."""
    for var, value in graph.shared.values():
        var.set_value(value.copy())
    f = ss.function(graph.inputs, graph.outputs, updates=graph.updates or None, **MODES[mode])
    arguments = [value.copy() for value in graph.values]
    outputs = f(*arguments)
    for i, (argument, value) in enumerate(zip(arguments, graph.values)):
        if not _same_array(argument, value):
            raise _ModifiedInput(f"input {graph.inputs[i].name!r} was modified by the call")
    return list(outputs), {name: var.get_value() for name, (var, _) in graph.shared.items()}


class _ModifiedInput(Exception):
    pass


def _check_mode(graph: Graph, mode: str, expected) -> tuple[str, str] | None:
    """(kind, detail) of the disagreement of ``mode``, or None."""
    try:
        outputs, shared = run_mode(graph, mode)
    except _ModifiedInput as err:
        return "modified input", str(err)
    except Exception as err:
        if skipped(mode, err):
            return SKIPPED
        return _judge_error(err, expected, strict_type=mode != "onnxruntime")
    if isinstance(expected, ExpectedError):
        return "result instead of error", f"expected an error ({expected}), got {_short(outputs)}"
    for i, (got, want) in enumerate(zip(outputs, expected.values)):
        problem = compare_values(got, want)
        if problem:
            return "wrong value", f"output {i}: {problem}"
    for name, (_, initial) in graph.shared.items():
        problem = compare_values(shared[name], expected.shared.get(name, initial))
        if problem:
            return "wrong value", f"shared {name!r}: {problem}"
    return None


def _judge_error(err: Exception, expected, strict_type: bool) -> tuple[str, str] | None:
    detail = f"{type(err).__name__}: {str(err)[:600]}"
    if not isinstance(expected, ExpectedError) and not expected.may_fail:
        return "error instead of result", detail
    if strict_type and not isinstance(err, ERROR_TYPES):
        return "unexpected error type", detail
    return None


def compare_values(got, expected: np.ndarray) -> str | None:
    """Why ``got`` is not ``expected`` (shape, dtype, values), or None."""
    got = np.asarray(got)
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return f"{got.dtype}{got.shape} instead of {expected.dtype}{expected.shape}"
    if _same_array(got, expected, tolerant=True):
        return None
    return f"got {_short(got)}, expected {_short(expected)}"


def _same_array(got: np.ndarray, expected: np.ndarray, tolerant: bool = False) -> bool:
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return False
    if expected.dtype.kind != "f":
        return bool(np.array_equal(got, expected))
    if not np.array_equal(np.isnan(got), np.isnan(expected)):
        return False
    infinite = np.isinf(expected)
    if not np.array_equal(np.isinf(got), infinite) or not np.array_equal(got[infinite], expected[infinite]):
        return False
    finite = np.isfinite(expected)
    if not tolerant:
        return bool(np.array_equal(got[finite], expected[finite]))
    scale = max(1.0, float(np.max(np.abs(expected[finite]), initial=0.0)))
    return bool(np.allclose(got[finite], expected[finite], rtol=RTOL, atol=ATOL_PER_MAGNITUDE * scale))


def _short(value) -> str:
    text = np.array2string(np.asarray(value), precision=6, threshold=20) if not isinstance(value, list) \
        else "[" + ", ".join(_short(v) for v in value) + "]"
    return text.replace("\n", " ")[:300]
