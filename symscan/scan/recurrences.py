"""Ops that compute a recurrence over all steps without a Python-level loop.

The ``vectorize`` rewrites put them where a scan's output was: an accumulation
``s_t = s_{t-1} ⊕ g_t`` is one ``ufunc.accumulate`` (or ``ufunc.reduce`` when only the last
value is read), and an affine recurrence ``x_t = Σ_j a_j x_{t-j} + b_t`` is a parallel
prefix: log2(T) vectorised passes over whole arrays instead of T small steps.

Each op's output is laid out like the scan buffer it replaces (the initial rows, then one
row per step), and it raises the loop's errors for shapes that the loop would refuse.
``expand`` rebuilds the equivalent scan, for backends (ONNX) that have loops but no such op.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Apply, Op, Variable
from symscan.graph.type import TensorType
from symscan.scan.checks import check_row_shape
from symscan.tensor.basic import as_tensor_variable, static_int
from symscan.tensor.elemwise import ELEMWISE_FUNCTIONS, Elemwise

ACCUMULATING_OPS = ("add", "mul", "maximum", "minimum", "logaddexp", "and_", "or_")
"""Elementwise ops that are associative, so that a loop folding them is a numpy accumulate."""


_LOGICAL = {"add": "or_", "mul": "and_", "maximum": "or_", "minimum": "and_"}
"""On bools these ops are logical or/and (numpy's add.reduce of bools would count them)."""


def _steps_rows(steps: Variable, extra: int) -> int | None:
    value = static_int(steps)
    return None if value is None else value + extra


@dataclass(frozen=True)
class Accumulate(Op):
    """Rows ``s_0 = initial`` and ``s_t = s_{t-1} ⊕ values[t-1]`` for t = 1..steps (``last``:
    only ``s_steps``). ``values`` has a leading time axis (``per_step``) or is the same at
    every step. Inputs: initial, values, steps."""

    op: str
    per_step: bool = True
    last: bool = False
    label: str = ""
    name: str | None = None

    def make_node(self, initial, values, steps) -> Apply:
        if self.op not in ACCUMULATING_OPS:
            raise ValueError(f"Accumulate: {self.op!r} is not one of {ACCUMULATING_OPS}")
        initial, values, steps = (as_tensor_variable(v) for v in (initial, values, steps))
        row = initial.type.shape
        shape = row if self.last else (_steps_rows(steps, 1),) + row
        return Apply(self, [initial, values, steps], [TensorType(initial.dtype, shape)])

    def perform(self, node, inputs):
        initial, values, steps = np.asarray(inputs[0]), np.asarray(inputs[1]), int(inputs[2])
        operand = values.shape[1:] if self.per_step else values.shape
        if steps:
            check_row_shape(self.name, self.label, initial.shape, operand)
        dtype = np.dtype(node.outputs[0].dtype)
        ufunc = ELEMWISE_FUNCTIONS[_LOGICAL.get(self.op, self.op) if dtype.kind == "b" else self.op][1]
        if self.last and self.op == "add" and dtype.kind in "fc":  # numpy sums floats pairwise
            return [_last_of_sum(initial, values, self.per_step, steps, dtype)]
        rows = np.empty((steps + 1,) + initial.shape, dtype)
        rows[0] = initial
        direct = self.per_step and not self.last and values.shape == rows[1:].shape
        if direct and _starts_at_identity(ufunc, initial, values):
            ufunc.accumulate(values, axis=0, out=rows[1:], dtype=dtype)  # one pass: no copy of the operand
            return [rows]
        if steps:
            rows[1:] = values
        if self.last:  # the dtype is explicit: numpy's reductions would widen small ints and bools
            return [ufunc.reduce(rows, axis=0, dtype=dtype)]
        ufunc.accumulate(rows, axis=0, out=rows, dtype=dtype)
        return [rows]

    def expand(self, initial: Variable, values: Variable, steps: Variable) -> Variable:
        """The same rows computed by a scan."""
        from symscan.scan.basic import scan
        from symscan.tensor.shape import concatenate, dimshuffle

        combine = Elemwise(self.op)
        if self.per_step:
            out, _ = scan(lambda g, s: combine(s, g), sequences=values[:steps], outputs_info=initial)
        else:
            out, _ = scan(lambda s, c: combine(s, c), outputs_info=initial, non_sequences=values, n_steps=steps)
        rows = concatenate([dimshuffle(initial, ["x"] + list(range(initial.ndim))), out])
        return rows[-1] if self.last else rows

    def __str__(self) -> str:
        return f"Accumulate{{{self.op}{', last' if self.last else ''}}}"


def _starts_at_identity(ufunc, initial: np.ndarray, values: np.ndarray) -> bool:
    """Whether ``initial ⊕ v`` is exactly ``v`` for every first operand row ``v`` (then the
    accumulation can start from the operand itself). For add and logaddexp, not when a first
    value is -0.0 (0.0 + -0.0 is +0.0)."""
    if initial.size == 0 or values.shape[0] == 0:
        return False
    kind = initial.dtype.kind
    negative_zero_first = kind == "f" and bool(np.any(np.signbit(values[0]) & (values[0] == 0)))
    if ufunc is np.add:
        return bool(np.all(initial == 0)) and not negative_zero_first
    if ufunc is np.multiply:
        return bool(np.all(initial == 1))
    if ufunc in (np.maximum, np.minimum):
        if kind == "f":
            return bool(np.all(initial == (-np.inf if ufunc is np.maximum else np.inf)))
        if kind in "iu":
            info = np.iinfo(initial.dtype)
            return bool(np.all(initial == (info.min if ufunc is np.maximum else info.max)))
        return False
    if ufunc is np.logaddexp:  # logaddexp(-inf, -0.0) is +0.0 too
        return bool(np.all(initial == -np.inf)) and not negative_zero_first
    if ufunc in (np.bitwise_and, np.bitwise_or) and kind == "b":
        return bool(np.all(initial == (ufunc is np.bitwise_and)))
    return False


SUM_CHUNK = 8192
"""Rows summed per pass when only the last sum is kept (the memory stays bounded)."""


def _last_of_sum(initial: np.ndarray, values: np.ndarray, per_step: bool, steps: int, dtype) -> np.ndarray:
    """``initial + values[0] + values[1] + ...`` added in that order, by accumulating chunks."""
    rows = np.empty((min(steps, SUM_CHUNK) + 1,) + initial.shape, dtype)
    rows[0] = initial
    for start in range(0, steps, SUM_CHUNK):
        count = min(SUM_CHUNK, steps - start)
        rows[1:count + 1] = values[start:start + count] if per_step else values
        np.add.accumulate(rows[:count + 1], axis=0, out=rows[:count + 1])
        rows[0] = rows[count]
    return rows[0].copy()


@dataclass(frozen=True)
class LinearRecurrence(Op):
    """Rows ``x_t = Σ_j a_j x_{t - lags[j]} + b_t`` for t = 1..steps after ``span`` initial rows
    (oldest first), computed by a parallel prefix. Inputs: the initial rows, one coefficient
    per lag, the forcing b, steps; ``per_step`` flags (coefficients, then b) mark operands
    with a leading time axis. Past a single lag, coefficients are scalars fixed for all steps.
    A float coefficient of modulus above 1 (known only at run time) makes the steps run in
    sequence: reordered, the loop's rounding would be amplified away from its result."""

    lags: tuple
    per_step: tuple
    label: str = ""
    name: str | None = None

    @property
    def span(self) -> int:
        return max(self.lags)

    def make_node(self, history, *rest) -> Apply:
        history, *rest = (as_tensor_variable(v) for v in (history, *rest))
        coefficients = rest[:len(self.lags)]
        if self.span > 1 and any(c.ndim or flag for c, flag in zip(coefficients, self.per_step)):
            raise TypeError("LinearRecurrence: with more than one lag the coefficients must be scalars "
                            f"that do not change with the step, got {[str(c.type) for c in coefficients]}")
        rows = _steps_rows(rest[-1], self.span)
        return Apply(self, [history, *rest], [TensorType(history.dtype, (rows,) + history.type.shape[1:])])

    def perform(self, node, inputs):
        history, *coefficients, forcing, steps = inputs
        history, steps, k = np.asarray(history), int(steps), self.span
        row, dtype = history.shape[1:], node.outputs[0].dtype
        out = np.empty((k + steps,) + row, dtype)
        out[:k] = history[:k]
        if steps == 0:
            return [out]
        operands = [np.asarray(v) for v in (*coefficients, forcing)]
        for value, flag in zip(operands, self.per_step):
            check_row_shape(self.name, self.label, row, value.shape[1:] if flag else value.shape)
        coefficients, forcing = operands[:-1], operands[-1]
        wraps = np.dtype(dtype).kind in "iu"  # integer products wrap, as in the loop, without a warning
        with np.errstate(over="ignore") if wraps else contextlib.nullcontext():
            if k == 1 and (wraps or not _grows(coefficients[0])):
                _first_order(out, coefficients[0], self.per_step[0], forcing)
            elif k == 1:
                _first_order_in_sequence(out, coefficients[0], forcing, self.per_step)
            else:
                _companion(out, k, dict(zip(self.lags, (c.item() for c in coefficients))), forcing)
        return [out]

    def expand(self, history: Variable, *rest: Variable) -> Variable:
        """The same rows computed by a scan."""
        from symscan.scan.basic import scan
        from symscan.tensor.shape import concatenate

        *operands, steps = rest
        per_step = [v[:steps] for v, flag in zip(operands, self.per_step) if flag]
        fixed = [v for v, flag in zip(operands, self.per_step) if not flag]
        flags, taps = self.per_step, sorted(-lag for lag in set(self.lags))

        def step(*args):
            it_seq, it_past = iter(args[:len(per_step)]), iter(args[len(per_step):len(per_step) + len(taps)])
            it_fixed = iter(args[len(per_step) + len(taps):])
            past = {-tap: next(it_past) for tap in taps}
            values = [next(it_seq) if flag else next(it_fixed) for flag in flags]
            total = values[-1]
            for lag, coefficient in zip(self.lags, values[:-1]):
                total = coefficient * past[lag] + total
            return total.astype(history.dtype)

        initial = history[0] if taps == [-1] else dict(initial=history, taps=taps)  # [-1]: a sit-sot
        out, _ = scan(step, sequences=per_step or None, outputs_info=initial, non_sequences=fixed or None,
                      n_steps=steps)
        return concatenate([history[:self.span], out])

    def __str__(self) -> str:
        return f"LinearRecurrence{{lags={list(self.lags)}}}"


def _grows(a: np.ndarray) -> bool:
    """Whether a coefficient has modulus above 1: then the loop amplifies every rounding
    difference, and only the loop's own order of operations stays within rtol 1e-9 of it."""
    return bool(np.any(np.abs(a) > 1))


def _first_order_in_sequence(out: np.ndarray, a: np.ndarray, b: np.ndarray, per_step: tuple) -> None:
    """``out[t] = a_t out[t-1] + b_t`` step after step, as the loop computes it."""
    steps = out.shape[0] - 1
    a, b = (v if flag else np.broadcast_to(v, (steps,) + v.shape) for v, flag in zip((a, b), per_step))
    for t in range(1, steps + 1):
        out[t] = a[t - 1] * out[t - 1] + b[t - 1]


def _first_order(out: np.ndarray, a: np.ndarray, per_step: bool, b: np.ndarray) -> None:
    """``out[t] = a_t out[t-1] + b_t`` for t >= 1 (out[0] given), by recursive doubling: after
    the pass of offset d, row t holds the sum over its last 2d terms and ``a`` their product."""
    steps = out.shape[0] - 1
    out[1:] = b
    if not per_step:
        power = np.array(a, dtype=out.dtype)
        offset = 1
        while offset <= steps:
            out[offset:] += power * out[:-offset]
            offset *= 2
            if offset <= steps:  # a power past the horizon could overflow for nothing
                power = power * power
        return
    factors = np.empty_like(out)
    factors[0] = 1
    factors[1:] = a
    offset = 1
    while offset <= steps:
        out[offset:] += factors[offset:] * out[:-offset]
        factors[offset:] *= factors[:-offset].copy()
        offset *= 2


def _companion(out: np.ndarray, k: int, coefficients: dict, b: np.ndarray) -> None:
    """Higher order with fixed scalar coefficients: y_t = (x_t, ..., x_{t-k+1}) is
    ``M y_{t-1} + e_1 b_t`` with M the companion matrix, so y_t = Σ_s M^{t-s} u_s with
    u_0 = y_0 and u_s = e_1 b_s, summed by doubling with the powers M^(2^j)."""
    steps, row = out.shape[0] - k, out.shape[1:]
    matrix = np.zeros((k, k), out.dtype)
    for lag, value in coefficients.items():
        matrix[0, lag - 1] = value
    matrix[np.arange(1, k), np.arange(k - 1)] = 1
    size = int(np.prod(row, dtype=np.int64))
    terms = np.zeros((k, steps + 1, size), out.dtype)
    terms[:, 0] = out[k - 1::-1].reshape(k, size)  # most recent first
    terms[0, 1:] = np.broadcast_to(b, (steps,) + row).reshape(steps, size)
    power, offset = matrix, 1
    while offset <= steps:
        shifted = terms[:, :-offset].reshape(k, -1)
        terms[:, offset:] += (power @ shifted).reshape(k, steps + 1 - offset, size)
        offset *= 2
        if offset <= steps:
            power = power @ power
    out[k:] = terms[0, 1:].reshape((steps,) + row)
