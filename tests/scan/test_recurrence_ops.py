"""The ops the vectorize rules put where a loop was (``Accumulate``, ``LinearRecurrence``) and
the loop's run-time checks as ops (``StepCount``, ``InitialRows``, ``CheckRowShape``), built
directly and checked against plain Python loops: the numbers (floats within rtol 1e-9, ints
wrapping exactly like the loop's), the errors (the scan's own messages), the inferred types,
and each op's ``expand`` (the scan it stands for, as ONNX lowers it)."""

from __future__ import annotations

import itertools
import operator
import re

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.graph.traversal import ancestors
from symscan.scan import Scan, ScanArgs
from symscan.scan.checks import CheckRowShape, InitialRows, StepCount
from symscan.scan.recurrences import ACCUMULATING_OPS, Accumulate, LinearRecurrence

pytestmark = pytest.mark.usefixtures("quiet_numpy")  # integer wrap-around is what is checked

BACKENDS = pytest.mark.parametrize("mode", ["py", "fast"])
"""For graphs without a Scan: the "fast-without-<rule>" modes of tests/scan are all "fast" there."""

STEPS = [0, 1, 2, 3, 7, 5000]
ROWS = [(), (3,), (2, 3)]
LABEL, NAME = "outputs_info[0] (initial 's0')", "loop"


def tensor(dtype: str, ndim: int, name: str):
    return T.tensor(dtype, shape=(None,) * ndim, name=name)


def assert_like_loop(got, expected, what: str = "") -> None:
    """Same dtype and shape; floats within rtol 1e-9, ints and bools exact."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape), what
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12, err_msg=what)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=what)


def message(error: BaseException) -> str:
    """An error's own message, without where the interpreter met it."""
    return str(error).split(" (while evaluating")[0]


def scan_node(out):
    return next(v.owner for v in ancestors([out]) if v.owner is not None and isinstance(v.owner.op, Scan))


# ---------------------------------------------------------------------------- Accumulate
FOLDS = {"add": operator.add, "mul": operator.mul, "maximum": np.maximum, "minimum": np.minimum,
         "logaddexp": np.logaddexp, "and_": operator.and_, "or_": operator.or_}
assert set(FOLDS) == set(ACCUMULATING_OPS)

OPS_OF_DTYPE = {"float64": ("add", "mul", "maximum", "minimum", "logaddexp"),
                "float32": ("add", "mul", "maximum", "minimum", "logaddexp"),
                "int32": ("add", "mul", "maximum", "minimum", "and_", "or_"),
                "bool": ("add", "mul", "maximum", "minimum", "and_", "or_")}


def accumulate_loop(op: str, initial, values, steps: int, per_step: bool, last: bool) -> np.ndarray:
    """The loop ``s = s ⊕ g`` in the state's dtype: every row, or only the last."""
    state = np.asarray(initial)
    rows = [state]
    for t in range(steps):
        state = np.asarray(FOLDS[op](state, values[t] if per_step else values)).astype(state.dtype)
        rows.append(state)
    return rows[-1] if last else np.stack(rows)


def sample(rng, dtype: str, op: str, shape: tuple) -> np.ndarray:
    """Operands that keep 5000 steps finite (floats) and make ints wrap."""
    if dtype == "bool":
        return rng.random(shape) < (0.999 if op in ("mul", "minimum", "and_") else 0.001)
    if np.dtype(dtype).kind == "i":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True) | (op == "mul")
    if op == "mul":
        return (1 + 0.01 * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def accumulate_cases():
    for (dtype, ops), row, per_step, last in itertools.product(OPS_OF_DTYPE.items(), ROWS, [True, False],
                                                                [False, True]):
        for op in ops:
            yield pytest.param(dtype, op, row, per_step, last,
                               id=f"{dtype}-{op}-row{list(row)}-{'per_step' if per_step else 'invariant'}"
                                  f"-{'last' if last else 'rows'}")


@BACKENDS
@pytest.mark.parametrize("dtype, op, row, per_step, last", list(accumulate_cases()))
def test_accumulate_matches_loop(mode, rng, dtype, op, row, per_step, last):
    initial, values, steps = tensor(dtype, len(row), "s0"), tensor(dtype, len(row) + per_step, "g"), T.lscalar("n")
    out = Accumulate(op, per_step, last, LABEL, NAME)(initial, values, steps)
    f = ss.function([initial, values, steps], out, mode=mode)
    for n in STEPS:
        s0, g = sample(rng, dtype, op, row), sample(rng, dtype, op, (n,) * per_step + row)
        assert_like_loop(f(s0, g, n), accumulate_loop(op, s0, g, n, per_step, last), f"{n} steps")


@BACKENDS
@pytest.mark.parametrize("op", ["add", "maximum"])
@pytest.mark.parametrize("per_step, operand", [(True, (1, 3)), (True, (2, 1)), (True, (1, 1)),
                                               (False, (3,)), (False, ()), (False, (2, 1))])
def test_accumulate_broadcasts_operand_to_row(mode, rng, op, per_step, operand):
    initial, values, steps = T.matrix("s0"), tensor("float64", len(operand) + per_step, "g"), T.lscalar("n")
    for last in (False, True):
        f = ss.function([initial, values, steps], Accumulate(op, per_step, last)(initial, values, steps), mode=mode)
        for n in (0, 1, 5):
            s0, g = rng.standard_normal((2, 3)), rng.standard_normal((n,) * per_step + operand)
            assert_like_loop(f(s0, g, n), accumulate_loop(op, s0, g, n, per_step, last))


@BACKENDS
@pytest.mark.parametrize("per_step", [True, False], ids=["per_step", "invariant"])
@pytest.mark.parametrize("row, operand", [((3,), (2,)), ((1,), (3,)), ((3,), (2, 3))],
                         ids=["no-broadcast", "row-grows", "rank-grows"])
def test_accumulate_row_shape_error_is_the_loop_error(mode, per_step, row, operand):
    """An operand that would change the state's shape: the loop's error, as CheckRowShape gives it."""
    initial, values, steps = tensor("float64", len(row), "s0"), tensor("float64", len(operand) + per_step, "g"), \
        T.lscalar("n")
    out = Accumulate("add", per_step, False, LABEL, NAME)(initial, values, steps)
    check = CheckRowShape(LABEL, NAME)(values[0] if per_step else values, initial, steps)
    f, f_check = ss.function([initial, values, steps], out, mode=mode), ss.function([initial, values, steps], check)
    s0, g = np.zeros(row), np.ones((2,) * per_step + operand)
    with pytest.raises(ValueError) as expected:
        f_check(s0, g, 2)
    with pytest.raises(ValueError) as got:
        f(s0, g, 2)
    assert message(got.value) == message(expected.value)
    assert message(got.value).startswith(f"scan {NAME!r}: {LABEL} has shape {row} per step")


IDENTITIES = {("add", "float64"): 0.0, ("add", "int32"): 0, ("mul", "float64"): 1.0, ("mul", "int32"): 1,
              ("maximum", "float64"): -np.inf, ("maximum", "int32"): np.iinfo("int32").min,
              ("minimum", "float64"): np.inf, ("minimum", "int32"): np.iinfo("int32").max,
              ("logaddexp", "float64"): -np.inf, ("and_", "bool"): True, ("or_", "bool"): False}


@BACKENDS
@pytest.mark.parametrize("op, dtype", list(IDENTITIES))
@pytest.mark.parametrize("row", [(), (3,)], ids=["row[]", "row[3]"])
def test_accumulate_from_the_identity_is_the_loop_bit_for_bit(mode, rng, op, dtype, row):
    """An initial value that ⊕ leaves unchanged (0, 1, ±inf, the int extremes, True/False) lets
    the op accumulate the operand directly; the rows are the loop's exactly, specials included
    (nan, ±inf, and -0.0 first: the loop's 0.0 + -0.0 is +0.0)."""
    initial, values, steps = tensor(dtype, len(row), "s0"), tensor(dtype, 1 + len(row), "g"), T.lscalar("n")
    f = ss.function([initial, values, steps], Accumulate(op, True, False)(initial, values, steps), mode=mode)
    operand = sample(rng, dtype, op, (50, *row))
    if dtype == "float64":
        operand[[3, 17, 30]] = [np.nan, np.inf, -np.inf]
    cases = [operand] + ([np.concatenate([np.full((2, *row), -0.0), operand])] if dtype == "float64" else [])
    s0 = np.full(row, IDENTITIES[op, dtype], dtype=dtype)
    for values_ in cases:
        got = f(s0, values_, len(values_))
        expected = accumulate_loop(op, s0, values_, len(values_), True, False)
        np.testing.assert_array_equal(got, expected)
        assert np.array_equal(np.signbit(got), np.signbit(expected))


@BACKENDS
@pytest.mark.parametrize("per_step", [True, False], ids=["per_step", "invariant"])
def test_accumulate_zero_steps_ignores_row_shape(mode, per_step):
    initial, values, steps = T.vector("s0"), tensor("float64", 1 + per_step, "g"), T.lscalar("n")
    f = ss.function([initial, values, steps], Accumulate("add", per_step, False)(initial, values, steps), mode=mode)
    s0, g = np.arange(3.0), np.ones((0, 2) if per_step else (2,))
    assert_like_loop(f(s0, g, 0), accumulate_loop("add", s0, g, 0, per_step, False))


def test_accumulate_rejects_other_ops():
    with pytest.raises(ValueError, match="'sub' is not one of"):
        Accumulate("sub")(T.vector(), T.matrix(), T.lscalar())


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
@pytest.mark.parametrize("steps, rows", [(4, 5), (0, 1), (None, None)])
@pytest.mark.parametrize("last", [False, True])
def test_accumulate_type(dtype, steps, rows, last):
    initial, values = T.tensor(dtype, (2, 3), "s0"), T.tensor(dtype, (None, 2, 3), "g")
    out = Accumulate("maximum", True, last)(initial, values, T.lscalar("n") if steps is None else steps)
    assert out.dtype == dtype
    assert out.type.shape == ((2, 3) if last else (rows, 2, 3))


# ---------------------------------------------------------------------------- LinearRecurrence
def linear_loop(history, lags: tuple, coefficients: list, flags: tuple, forcing, steps: int) -> np.ndarray:
    """``x_t = Σ_j a_j x_{t - lag_j} + b_t`` step by step in the state's dtype, after the
    ``max(lags)`` rows of ``history``."""
    history = np.asarray(history)
    span, dtype = max(lags), history.dtype
    rows = list(history[:span])
    for t in range(steps):
        operands = [v[t] if flag else v for v, flag in zip([*coefficients, forcing], flags)]
        total = np.asarray(operands[-1], dtype)
        for lag, a in zip(lags, operands[:-1]):
            total = (np.asarray(a, dtype) * rows[-lag] + total).astype(dtype)
        rows.append(np.broadcast_to(total, history.shape[1:]))
    return np.stack(rows).astype(dtype)


def operand_shape(kind: str, row: tuple, steps: int) -> tuple:
    """A coefficient or forcing term: one row per step, a row, or a scalar for every element."""
    return {"per_step": (steps,) + row, "invariant": row, "scalar": ()}[kind]


KINDS = ["per_step", "invariant", "scalar"]


FIRST_ORDER = [(row, a, b) for row, a, b in itertools.product(ROWS, KINDS, KINDS)
               if row or "scalar" not in (a, b)]  # a scalar row: "scalar" is "invariant"


STABLE = {(1, 2): (0.5, -0.3), (2,): (-0.8,), (1, 2, 3): (0.4, 0.2, -0.1), (1, 3): (0.3, 0.5)}
"""Fixed coefficients whose characteristic roots lie inside the unit circle."""


def build_linear(dtype: str, lags: tuple, row: tuple, kinds: list[str]):
    """(inputs, output, op) of a LinearRecurrence with history, coefficients, forcing and steps
    as inputs; ``kinds``: of each coefficient, then of the forcing (see ``operand_shape``)."""
    history = tensor(dtype, 1 + len(row), "history")
    operands = [tensor(dtype, len(operand_shape(kind, row, 0)), f"operand{i}") for i, kind in enumerate(kinds)]
    op = LinearRecurrence(lags, tuple(kind == "per_step" for kind in kinds), LABEL, NAME)
    inputs = [history, *operands, T.lscalar("n")]
    return inputs, op(*inputs), op


def linear_values(rng, dtype: str, lags: tuple, row: tuple, kinds: list[str], steps: int) -> list:
    """History (a row more than needed), coefficients and forcing for ``steps`` steps: floats
    stable (|a| < 0.95, ``STABLE`` past one lag); ints over their whole range (they wrap)."""
    shapes = [operand_shape(kind, row, steps) for kind in kinds]
    span = max(lags)
    if np.dtype(dtype).kind == "f":
        coefficients = list(STABLE[lags]) if span > 1 else [rng.uniform(-0.95, 0.95, shapes[0])]
        return [rng.standard_normal((span + 1,) + row), *coefficients, rng.standard_normal(shapes[-1])]
    info = np.iinfo(dtype)
    coefficients = [rng.integers(-5, 6, shape, dtype=dtype) for shape in shapes[:-1]]
    history, forcing = (rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
                        for shape in [(span + 1,) + row, shapes[-1]])
    return [history, *coefficients, forcing]


def check_linear_recurrence(dtype: str, lags: tuple, row: tuple, kinds: list[str], mode, rng) -> None:
    """The op agrees with ``linear_loop`` for each of ``STEPS``."""
    inputs, out, op = build_linear(dtype, lags, row, kinds)
    f = ss.function(inputs, out, mode=mode)
    for n in STEPS:
        history, *coefficients, forcing = linear_values(rng, dtype, lags, row, kinds, n)
        assert_like_loop(f(history, *coefficients, forcing, n),
                         linear_loop(history, lags, coefficients, op.per_step, forcing, n), f"{n} steps")


@BACKENDS
@pytest.mark.parametrize("row, a_kind, b_kind", FIRST_ORDER,
                         ids=[f"row{list(row)}-a_{a}-b_{b}" for row, a, b in FIRST_ORDER])
def test_first_order_matches_loop(mode, rng, row, a_kind, b_kind):
    check_linear_recurrence("float64", (1,), row, [a_kind, b_kind], mode, rng)


def test_stable_coefficients_are_stable():
    for lags, coefficients in STABLE.items():
        characteristic = np.zeros(max(lags) + 1)
        characteristic[0] = 1
        characteristic[list(lags)] = [-a for a in coefficients]
        assert np.abs(np.roots(characteristic)).max() < 0.95


HIGHER_ORDER = [(lags, row, b_kind) for lags in STABLE for row in ROWS for b_kind in KINDS
                if row or b_kind != "scalar"]


@BACKENDS
@pytest.mark.parametrize("lags, row, b_kind", HIGHER_ORDER,
                         ids=[f"lags{list(lags)}-row{list(row)}-b_{b}" for lags, row, b in HIGHER_ORDER])
def test_higher_order_matches_loop(mode, rng, lags, row, b_kind):
    """Fixed scalar coefficients: the companion matrix's powers by doubling."""
    check_linear_recurrence("float64", lags, row, ["scalar"] * len(lags) + [b_kind], mode, rng)


INT_CASES = [((1,), ["per_step", "per_step"]), ((1,), ["invariant", "per_step"]), ((1,), ["scalar", "invariant"]),
             ((1, 2), ["scalar", "scalar", "per_step"]), ((1, 2, 3), ["scalar", "scalar", "scalar", "invariant"]),
             ((2,), ["scalar", "per_step"])]


@BACKENDS
@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("lags, kinds", INT_CASES, ids=[f"lags{list(lags)}-{'-'.join(k)}" for lags, k in INT_CASES])
def test_integer_recurrence_wraps_like_the_loop(mode, rng, dtype, lags, kinds):
    """Any coefficients (no stability needed): modular arithmetic is exact in any order."""
    check_linear_recurrence(dtype, lags, (3,), kinds, mode, rng)


@BACKENDS
@pytest.mark.parametrize("lags, kinds", [((1,), ["per_step", "per_step"]), ((1, 2), ["scalar", "scalar", "per_step"])])
def test_linear_recurrence_row_shape_error(mode, lags, kinds):
    """A forcing term that would change the state's shape: the loop's error, from the first step."""
    inputs, out, _ = build_linear("float64", lags, (3,), kinds)
    f = ss.function(inputs, out, mode=mode)
    span = max(lags)
    coefficients = [np.full((4, 3) if kind == "per_step" else (), 0.5) for kind in kinds[:-1]]
    expected = rf"^scan {NAME!r}: {re.escape(LABEL)} has shape \(3,\) per step but .* \(2,\)"
    with pytest.raises(ValueError, match=expected):
        f(np.zeros((span, 3)), *coefficients, np.ones((4, 2)), 4)
    zero = [c[:0] if c.ndim else c for c in coefficients]
    assert_like_loop(f(np.zeros((span, 3)), *zero, np.ones((0, 2)), 0), np.zeros((span, 3)))


def test_linear_recurrence_needs_fixed_scalar_coefficients_past_one_lag():
    history, b, n = T.matrix("h"), T.matrix("b"), T.lscalar("n")
    with pytest.raises(TypeError, match="must be scalars"):
        LinearRecurrence((1, 2), (False, False, True))(history, T.vector("a1"), T.scalar("a2"), b, n)
    with pytest.raises(TypeError, match="must be scalars"):
        LinearRecurrence((1, 2), (True, False, True))(history, T.vector("a1"), T.scalar("a2"), b, n)
    LinearRecurrence((1,), (True, True))(history, T.matrix("a"), b, n)  # one lag: anything goes


@pytest.mark.parametrize("dtype", ["float64", "int32"])
@pytest.mark.parametrize("lags", [(1,), (1, 2), (1, 2, 3)], ids=str)
@pytest.mark.parametrize("steps, rows", [(5, 5), (0, 0), (None, None)])
def test_linear_recurrence_type(dtype, lags, steps, rows):
    history = T.tensor(dtype, (4, 2), "h")
    coefficients = [T.tensor(dtype, (), f"a{i}") for i in range(len(lags))]
    out = LinearRecurrence(lags, (False,) * len(lags) + (True,))(
        history, *coefficients, T.tensor(dtype, (None, 2), "b"), T.lscalar("n") if steps is None else steps)
    assert out.dtype == dtype
    assert out.type.shape == (None if rows is None else rows + max(lags), 2)


# ---------------------------------------------------------------------------- expand
EXPAND_ACCUMULATE = [("float64", op) for op in OPS_OF_DTYPE["float64"]] + [("int32", "mul"), ("int32", "and_"),
                                                                          ("bool", "or_"), ("bool", "add")]


@pytest.mark.parametrize("last", [False, True], ids=["rows", "last"])
@pytest.mark.parametrize("per_step", [True, False], ids=["per_step", "invariant"])
@pytest.mark.parametrize("dtype, op", EXPAND_ACCUMULATE, ids=[f"{d}-{o}" for d, o in EXPAND_ACCUMULATE])
def test_accumulate_expand_is_the_same(mode, rng, dtype, op, per_step, last):
    """The scan ``expand`` builds (compiled in every mode, so also vectorised again) gives perform's rows."""
    initial, values, steps = T.tensor(dtype, (None,), "s0"), tensor(dtype, 1 + per_step, "g"), T.lscalar("n")
    accumulate = Accumulate(op, per_step, last, LABEL, NAME)
    out, expanded = accumulate(initial, values, steps), accumulate.expand(initial, values, steps)
    assert (expanded.dtype, expanded.ndim) == (out.dtype, out.ndim)
    f, f_expanded = (ss.function([initial, values, steps], v, mode=m) for v, m in ((out, "py"), (expanded, mode)))
    for n in (0, 1, 2, 9):
        s0, g = sample(rng, dtype, op, (3,)), sample(rng, dtype, op, (n,) * per_step + (3,))
        assert_like_loop(f_expanded(s0, g, n), f(s0, g, n), f"{n} steps")


EXPAND_LINEAR = [("float64", (1,), ["per_step", "per_step"]), ("float64", (1,), ["invariant", "per_step"]),
                 ("float64", (1,), ["per_step", "invariant"]), ("float64", (1,), ["scalar", "scalar"]),
                 ("float64", (1, 2), ["scalar", "scalar", "per_step"]),
                 ("float64", (1, 3), ["scalar", "scalar", "invariant"]), ("float64", (2,), ["scalar", "per_step"]),
                 ("int32", (1, 2, 3), ["scalar", "scalar", "scalar", "per_step"]),
                 ("int32", (1,), ["per_step", "per_step"])]


@pytest.mark.parametrize("dtype, lags, kinds", EXPAND_LINEAR,
                         ids=[f"{d}-lags{list(lags)}-{'-'.join(k)}" for d, lags, k in EXPAND_LINEAR])
def test_linear_recurrence_expand_is_the_same(mode, rng, dtype, lags, kinds):
    inputs, out, op = build_linear(dtype, lags, (3,), kinds)
    expanded = op.expand(*inputs)
    assert (expanded.dtype, expanded.ndim) == (out.dtype, out.ndim)
    f, f_expanded = ss.function(inputs, out, mode="py"), ss.function(inputs, expanded, mode=mode)
    for n in (0, 1, 2, 9):
        values = linear_values(rng, dtype, lags, (3,), kinds, n)
        assert_like_loop(f_expanded(*values, n), f(*values, n), f"{n} steps")


# ---------------------------------------------------------------------------- StepCount
def _two_sequences(n_steps):
    """Taps [-1, 1] of a vector and a matrix; enough, too short (each), none, negative n_steps."""
    x, y = T.vector("x"), T.matrix("y")
    out, _ = ss.scan(lambda a, b, c, s: s + a + b + c, sequences=[dict(input=x, taps=[-1, 1]), y],
                     outputs_info=T.zeros((2,)), n_steps=n_steps, name=NAME)
    lengths = [(5, 5), (5, 2), (2, 5), (1, 1), (3, 0), (0, 0), (6, 9)]
    if n_steps is None:
        return [x, y], out, [(np.zeros(a), np.zeros((b, 2))) for a, b in lengths]
    return [x, y, n_steps], out, [(np.zeros(a), np.zeros((b, 2)), k) for a, b in lengths for k in (0, 1, 3, 4, -3, -5)]


def _constant_n_steps(n_steps):
    """An unnamed scan of one sequence, a constant (maybe negative) n_steps."""
    x = T.vector("x")
    out, _ = ss.scan(lambda a, s: s + a, sequences=x, outputs_info=T.zeros(()), n_steps=n_steps)
    return [x], out, [(np.zeros(k),) for k in (0, 2, 3, 9)]


STEP_COUNT_SCANS = {"symbolic-n": lambda: _two_sequences(T.lscalar("n")),
                    "from-sequences": lambda: _two_sequences(None),
                    "constant-n": lambda: _constant_n_steps(3),
                    "constant-negative-n": lambda: _constant_n_steps(-3)}


@pytest.mark.parametrize("name", list(STEP_COUNT_SCANS))
def test_step_count_is_the_loops(mode, name):
    """StepCount of a scan gives the loop's step count, or raises the scan's own error (mode "py")."""
    inputs, out, value_sets = STEP_COUNT_SCANS[name]()
    loop = ss.function(inputs, out, mode="py")
    count = ss.function(inputs, StepCount.of(ScanArgs.from_node(scan_node(out))), mode=mode)
    errors = 0
    for values in value_sets:
        try:
            expected = len(loop(*values))
        except ValueError as error:
            errors += 1
            with pytest.raises(ValueError) as got:
                count(*values)
            assert message(got.value) == message(error)
            continue
        got = count(*values)
        assert np.asarray(got).dtype == np.int64 and got == expected
    assert 0 < errors < len(value_sets)


def test_step_count_type():
    out = StepCount(((LABEL, (0,)),), False, NAME)(T.iscalar("n"), T.vector("x"))
    assert (out.dtype, out.type.shape) == ("int64", ())


# ---------------------------------------------------------------------------- InitialRows and CheckRowShape
@BACKENDS
@pytest.mark.parametrize("taps", [(-1,), (-3, -1), (-2,)], ids=str)
def test_initial_rows_are_the_loops(mode, taps):
    """The rows a recurrent output starts from, or the scan's error when there are too few."""
    sit_sot = taps == (-1,)
    initial = T.vector("s0") if sit_sot else T.matrix("s0")
    out, _ = ss.scan(lambda *past: sum(past[1:], past[0]) * 0.5, outputs_info=initial if sit_sot else
                     dict(initial=initial, taps=list(taps)), n_steps=2, name=NAME)
    label = ScanArgs.from_node(scan_node(out)).recurrent[0].label
    rows = InitialRows(label, taps, sit_sot, NAME)(initial)
    assert rows.type.shape == (-min(taps), None)
    loop, f = ss.function([initial], out, mode="py"), ss.function([initial], rows, mode=mode)
    for count in ([None] if sit_sot else [0, 1, 2, 3, 4]):
        value = np.arange(3.0) if sit_sot else np.arange(3.0 * count).reshape(count, 3)
        if sit_sot or count >= -min(taps):
            loop(value)
            assert_like_loop(f(value), value[None] if sit_sot else value[:-min(taps)])
            continue
        with pytest.raises(ValueError) as expected:
            loop(value)
        with pytest.raises(ValueError) as got:
            f(value)
        assert message(got.value) == message(expected.value)


def test_initial_rows_type():
    assert InitialRows("s", (-1,), True)(T.tensor("int32", (2, 3))).type.shape == (1, 2, 3)
    assert InitialRows("s", (-4, -1), False)(T.tensor("int32", (None, 3))).dtype == "int32"
    assert InitialRows("s", (-4, -1), False)(T.tensor("int32", (None, 3))).type.shape == (4, 3)


def _fits(value: tuple, row: tuple) -> bool:
    try:
        return np.broadcast_shapes(row, value) == row
    except ValueError:
        return False


@BACKENDS
@pytest.mark.parametrize("row, value, steps, fails", [
    ((3,), (3,), 2, False), ((3,), (), 2, False), ((2, 3), (1, 3), 1, False), ((3,), (2,), 0, False),
    ((3,), (2,), 1, "does not broadcast"), ((1,), (3,), 2, "produced shape"), ((3,), (2, 3), 5, "produced shape"),
])
def test_check_row_shape(mode, row, value, steps, fails):
    v, state, n = tensor("float64", len(value), "v"), tensor("float64", len(row), "s"), T.lscalar("n")
    checked = CheckRowShape(LABEL, NAME)(v, state, n)
    assert checked.type == v.type
    f = ss.function([v, state, n], checked, mode=mode)
    operand = np.arange(np.prod(value, dtype=int), dtype=float).reshape(value)
    if not fails and steps == 0 and not _fits(value, row):
        # no step combines them: zeros that fit the row stand for the value
        assert_like_loop(f(operand, np.zeros(row), steps), np.zeros(row[len(row) - len(value):]))
        return
    if not fails:
        assert_like_loop(f(operand, np.zeros(row), steps), operand)
        return
    with pytest.raises(ValueError, match=f"^scan {NAME!r}: .*{fails}") as got:
        f(operand, np.zeros(row), steps)
    if fails == "produced shape" and len(value) == len(row):  # the scan's own error (a scan refuses a rank change)
        s0 = tensor("float64", len(row), "s0")  # the scan labels it LABEL
        out, _ = ss.scan(lambda s, c: s + c, outputs_info=s0, non_sequences=v, n_steps=n, name=NAME)
        with pytest.raises(ValueError) as expected:
            ss.function([s0, v, n], out, mode="py")(np.zeros(row), operand, steps)
        assert message(got.value) == message(expected.value)
