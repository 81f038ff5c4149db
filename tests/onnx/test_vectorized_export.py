"""Scans whose loops the vectorize rules removed (scan_to_accumulate, scan_invariant_update,
scan_to_linear_recurrence), compiled in mode "fast" and exported: the ops that replace the
loop (Accumulate, LinearRecurrence and the loop's checks) lower to ONNX and give mode "py"'s
numbers in onnxruntime and in onnx's reference evaluator, for several sequence lengths and
step counts (0, 1 and 2 included)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.scan import Scan
from symscan.scan.recurrences import Accumulate, LinearRecurrence

pytestmark = pytest.mark.usefixtures("quiet_numpy")  # integer wrap-around is what some cases check

LENGTHS = (0, 1, 2, 7)
"""Sequence lengths (or step counts) of each case's value sets."""


@dataclass(frozen=True)
class Case:
    """``build(rng)`` gives (inputs, outputs, value sets) of a scan; in mode "fast" ``rule`` fires
    on it with ``note`` in its detail, leaving ``loops_left`` Scan nodes and an ``op`` node."""

    build: Callable
    rule: str
    note: str
    op: type | None = None
    loops_left: int = 0


CASES: dict[str, Case] = {}


def case(rule: str, note: str, op: type | None = None, loops_left: int = 0):
    def register(build):
        CASES[build.__name__.replace("_", " ")] = Case(build, rule, note, op, loops_left)
        return build

    return register


def ints(rng, shape, dtype="int32"):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def bools(rng, shape):
    return rng.random(shape) < 0.7


# ---------------------------------------------------------------------------- accumulations
ACCUMULATE = "scan_to_accumulate"


@case(ACCUMULATE, "accumulate of", Accumulate)
def running_sum(rng):
    x, s0 = T.vector("x"), T.scalar("s0")
    out, _ = ss.scan(lambda v, s: s + v, sequences=x, outputs_info=s0)
    return [x, s0], out, [[rng.normal(size=n), rng.normal()] for n in LENGTHS]


@case(ACCUMULATE, "accumulate of", Accumulate)
def running_difference_of_a_computed_operand(rng):
    x, s0 = T.matrix("x"), T.vector("s0")
    out, _ = ss.scan(lambda v, s: s - T.exp(v) * 0.5, sequences=x, outputs_info=s0)
    return [x, s0], out, [[rng.normal(size=(n, 3)), rng.normal(size=3)] for n in LENGTHS]


@case(ACCUMULATE, "accumulate of", Accumulate)
def cumulative_product(rng):
    x, s0 = T.matrix("x"), T.vector("s0")
    out, _ = ss.scan(lambda v, s: s * v, sequences=x, outputs_info=s0)
    return [x, s0], out, [[1 + 0.1 * rng.normal(size=(n, 3)), rng.normal(size=3)] for n in LENGTHS]


@case(ACCUMULATE, "accumulate of", Accumulate)
def running_max_and_min(rng):
    x, a0, b0 = T.vector("x"), T.scalar("a0"), T.scalar("b0")
    out, _ = ss.scan(lambda v, a, b: [T.maximum(a, v), T.minimum(v, b)], sequences=x, outputs_info=[a0, b0])
    return [x, a0, b0], out, [[rng.normal(size=n), rng.normal(), rng.normal()] for n in LENGTHS]


@case(ACCUMULATE, "accumulate of", Accumulate)
def running_logaddexp(rng):
    x, s0 = T.vector("x"), T.scalar("s0")
    out, _ = ss.scan(lambda v, s: T.logaddexp(s, v), sequences=x, outputs_info=s0)
    return [x, s0], out, [[rng.normal(size=n), rng.normal()] for n in LENGTHS]


@case(ACCUMULATE, "accumulate of", Accumulate)
def all_and_any_of_bools(rng):
    x, a0, b0 = T.tensor("bool", (None, 2), "x"), T.tensor("bool", (2,), "a0"), T.tensor("bool", (2,), "b0")
    out, _ = ss.scan(lambda v, a, b: [a & v, b | v], sequences=x, outputs_info=[a0, b0])
    return [x, a0, b0], out, [[bools(rng, (n, 2)), bools(rng, 2), bools(rng, 2)] for n in LENGTHS]


@case(ACCUMULATE, "reduce of add", Accumulate)
def bools_added_and_multiplied(rng):
    """On bools add and mul are or and and (not counts): the last any, and every all."""
    x, a0, b0 = T.tensor("bool", (None, 2), "x"), T.tensor("bool", (2,), "a0"), T.tensor("bool", (2,), "b0")
    (any_, all_), _ = ss.scan(lambda v, a, b: [a + v, b * v], sequences=x, outputs_info=[a0, b0])
    return [x, a0, b0], [any_[-1], all_], [[bools(rng, (n, 2)), bools(rng, 2), bools(rng, 2)] for n in LENGTHS if n]


@case(ACCUMULATE, "reduce of add", Accumulate)
def reduce_reads_only_the_last_step(rng):
    x, s0 = T.matrix("x"), T.vector("s0")
    out, _ = ss.scan(lambda v, s: s + v * v, sequences=x, outputs_info=s0)
    return [x, s0], out[-1], [[rng.normal(size=(n, 3)), rng.normal(size=3)] for n in LENGTHS if n]


@case(ACCUMULATE, "accumulate of", Accumulate)
def last_two_steps(rng):
    x, s0 = T.matrix("x"), T.vector("s0")
    out, _ = ss.scan(lambda v, s: s * v, sequences=x, outputs_info=s0)
    return [x, s0], out[-2:], [[1 + 0.1 * rng.normal(size=(n, 3)), rng.normal(size=3)] for n in LENGTHS]


@case(ACCUMULATE, "a loop-invariant operand", Accumulate)
def float32_plus_a_constant(rng):
    """No closed form in float32 (it would round differently): an accumulate of the constant."""
    s0, c, k = T.fvector("s0"), T.fscalar("c"), T.lscalar("k")
    out, _ = ss.scan(lambda s, c: s + c, outputs_info=s0, non_sequences=c, n_steps=k)
    return [s0, c, k], out, [[rng.normal(size=3).astype("float32"), np.float32(rng.normal()), k]
                             for k in (*LENGTHS, -3)]


@case(ACCUMULATE, "accumulate of", Accumulate)
def go_backwards(rng):
    x, s0 = T.vector("x"), T.scalar("s0")
    out, _ = ss.scan(lambda v, s: s + v, sequences=x, outputs_info=s0, go_backwards=True)
    return [x, s0], out, [[rng.normal(size=n), rng.normal()] for n in LENGTHS]


@case(ACCUMULATE, "accumulate of", Accumulate)
def matrix_state(rng):
    x, s0 = T.tensor("float64", (None, 2, 3), "x"), T.matrix("s0")
    out, _ = ss.scan(lambda v, s: T.maximum(s, v), sequences=x, outputs_info=s0)
    return [x, s0], out, [[rng.normal(size=(n, 2, 3)), rng.normal(size=(2, 3))] for n in LENGTHS]


@case(ACCUMULATE, "accumulate of", Accumulate)
def int32_sum_wraps(rng):
    x, s0 = T.ivector("x"), T.iscalar("s0")
    out, _ = ss.scan(lambda v, s: s + v, sequences=x, outputs_info=s0)
    return [x, s0], out, [[ints(rng, n), ints(rng, ())] for n in LENGTHS]


@case(ACCUMULATE, "accumulate of", Accumulate)
def symbolic_n_steps_over_a_sequence(rng):
    """An unsigned n_steps: never negative, so the loop never runs backwards."""
    x, s0, k = T.vector("x"), T.scalar("s0"), T.tensor("uint32", (), "k")
    out, _ = ss.scan(lambda v, s: s + v, sequences=x, outputs_info=s0, n_steps=k)
    return [x, s0, k], out, [[rng.normal(size=7), rng.normal(), np.uint32(k)] for k in LENGTHS]


# ---------------------------------------------------------------------------- closed forms
INVARIANT = "scan_invariant_update"


@case(INVARIANT, "closed form")
def plus_a_constant(rng):
    s0, c, k = T.vector("s0"), T.vector("c"), T.lscalar("k")
    out, _ = ss.scan(lambda s, c: s + c, outputs_info=s0, non_sequences=c, n_steps=k)
    return [s0, c, k], out, [[rng.normal(size=3), rng.normal(size=3), k] for k in (*LENGTHS, -3)]


@case(INVARIANT, "closed form")
def times_a_constant_last_step(rng):
    s0, c, k = T.scalar("s0"), T.scalar("c"), T.lscalar("k")
    out, _ = ss.scan(lambda s, c: s * c, outputs_info=s0, non_sequences=c, n_steps=k)
    return [s0, c, k], out[-1], [[rng.normal(), rng.uniform(0.5, 1.5), k] for k in (1, 2, 7, -4)]


@case(INVARIANT, "closed form")
def int32_times_a_constant_wraps(rng):
    s0, c = T.ivector("s0"), T.iscalar("c")
    out, _ = ss.scan(lambda s, c: s * c, outputs_info=s0, non_sequences=c, n_steps=40)
    return [s0, c], out, [[ints(rng, 3), np.int32(c)] for c in (3, -7, 12345)]


@case(INVARIANT, "closed form")
def running_max_of_a_constant(rng):
    s0, c, k = T.vector("s0"), T.scalar("c"), T.lscalar("k")
    out, _ = ss.scan(lambda s, c: T.maximum(s, c), outputs_info=s0, non_sequences=c, n_steps=k)
    return [s0, c, k], out, [[rng.normal(size=3), rng.normal(), k] for k in LENGTHS]


# ---------------------------------------------------------------------------- linear recurrences
LINEAR = "scan_to_linear_recurrence"


@case(LINEAR, "parallel prefix", LinearRecurrence)
def first_order_sequence_coefficient(rng):
    a, b, s0 = T.matrix("a"), T.matrix("b"), T.vector("s0")
    out, _ = ss.scan(lambda a, b, s: a * s + b, sequences=[a, b], outputs_info=s0)
    return [a, b, s0], out, [[rng.uniform(-0.9, 0.9, (n, 3)), rng.normal(size=(n, 3)), rng.normal(size=3)]
                             for n in LENGTHS]


@case(LINEAR, "parallel prefix", LinearRecurrence)
def first_order_backwards(rng):
    a, b, s0 = T.vector("a"), T.vector("b"), T.scalar("s0")
    out, _ = ss.scan(lambda a, b, s: s * a - b, sequences=[a, b], outputs_info=s0, go_backwards=True)
    return [a, b, s0], out, [[rng.uniform(-0.9, 0.9, n), rng.normal(size=n), rng.normal()] for n in LENGTHS]


@case(LINEAR, "parallel prefix", LinearRecurrence)
def int32_first_order_wraps(rng):
    a, s0 = T.ivector("a"), T.iscalar("s0")
    out, _ = ss.scan(lambda a, s: a * s + np.int32(12345), sequences=a, outputs_info=s0)
    return [a, s0], out, [[rng.integers(-9, 10, n, dtype="int32"), ints(rng, ())] for n in (*LENGTHS, 40)]


@case(LINEAR, "parallel prefix", LinearRecurrence)
def int32_fibonacci_wraps(rng):
    """Integers take the prefix (exact modular arithmetic in any order), roots above 1 or not."""
    x0, k = T.ivector("x0"), T.tensor("uint8", (), "k")
    out, _ = ss.scan(lambda x3, x1: x1 + x3 * np.int32(2), outputs_info=dict(initial=x0, taps=[-3, -1]), n_steps=k)
    return [x0, k], out, [[ints(rng, 3), np.uint8(k)] for k in (*LENGTHS, 90)]


@case(LINEAR, "parallel prefix", LinearRecurrence)
def second_order_forced_by_a_sequence(rng):
    b, x0 = T.vector("b"), T.vector("x0")
    out, _ = ss.scan(lambda b, x2, x1: 0.5 * x1 - 0.3 * x2 + b, sequences=b,
                     outputs_info=dict(initial=x0, taps=[-2, -1]))
    return [b, x0], out, [[rng.normal(size=n), rng.normal(size=2)] for n in LENGTHS]


@case(LINEAR, "parallel prefix", LinearRecurrence)
def fibonacci_fixed_n_steps(rng):
    """Roots of modulus above 1: rewritten only for a constant n_steps that keeps them small,
    by the prefix (irrational roots have no closed form that keeps the loop's numbers)."""
    x0, c = T.vector("x0"), T.scalar("c")
    out, _ = ss.scan(lambda x2, x1, c: x1 + x2 + c, outputs_info=dict(initial=x0, taps=[-2, -1]),
                     non_sequences=c, n_steps=12)
    return [x0, c], out, [[rng.normal(size=2), rng.normal()] for _ in range(3)]


@case(LINEAR, "closed form")
def second_order_closed_form_symbolic_n_steps(rng):
    x0, k = T.matrix("x0"), T.lscalar("k")
    out, _ = ss.scan(lambda x2, x1: 0.5 * x1 + 0.14 * x2, outputs_info=dict(initial=x0, taps=[-2, -1]), n_steps=k)
    return [x0, k], out, [[rng.normal(size=(2, 3)), k] for k in (*LENGTHS, -3)]


# ---------------------------------------------------------------------------- part of a loop
def _feeds_the_loop_left(rng, go_backwards: bool):
    """The running sum leaves the loop; the nonlinear state reads its old and new values as
    new sequences (reversed when the loop runs backwards)."""
    x, s0, y0 = T.vector("x"), T.scalar("s0"), T.scalar("y0")

    def step(v, s, y):
        new = s + v
        return [new, T.sin(y) + s * 0.1 + new * 0.01]

    out, _ = ss.scan(step, sequences=x, outputs_info=[s0, y0], go_backwards=go_backwards)
    return [x, s0, y0], out, [[rng.normal(size=n), rng.normal(), rng.normal()] for n in LENGTHS]


@case(ACCUMULATE, "accumulate of add", Accumulate, loops_left=1)
def removed_output_feeds_the_loop_left(rng):
    return _feeds_the_loop_left(rng, go_backwards=False)


@case(ACCUMULATE, "accumulate of add", Accumulate, loops_left=1)
def removed_output_feeds_a_backwards_loop(rng):
    return _feeds_the_loop_left(rng, go_backwards=True)


# ---------------------------------------------------------------------------- the tests
@pytest.mark.parametrize("name", list(CASES))
def test_vectorized_scan_exports_like_py(export_check, rng, name):
    spec = CASES[name]
    inputs, outputs, value_sets = spec.build(rng)
    f = ss.function(inputs, outputs, mode="fast")
    fired = [record.detail for record in f.rewrite_report() if record.fired and record.rule == spec.rule]
    assert any(spec.note in detail for detail in fired), f"{spec.rule} should fire ({spec.note}), it gave {fired}"
    nodes = f.fgraph.apply_nodes
    assert sum(isinstance(node.op, Scan) for node in nodes) == spec.loops_left
    assert spec.op is None or any(isinstance(node.op, spec.op) for node in nodes), f.fgraph.toposort()
    export_check(f, *value_sets)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "int64"])
@pytest.mark.parametrize("read", ["all", "last"])
def test_a_running_sum_exports_as_one_cumsum(export_check, rng, dtype, read):
    """No loop in the model: ONNX's CumSum over the initial row and the operand (broadcast to
    the rows' shape), the last row gathered when only it is read."""
    x, s0 = T.tensor(dtype, shape=(None, None), name="x"), T.tensor(dtype, shape=(None,), name="s0")
    out, _ = ss.scan(lambda v, s: s + v, sequences=x, outputs_info=s0)
    f = ss.function([x, s0], out[-1] if read == "last" else out, mode="fast")
    draw = (lambda *shape: rng.normal(size=shape).astype(dtype)) if dtype[0] == "f" else \
        (lambda *shape: rng.integers(-2**31, 2**31 - 1, size=shape).astype(dtype))  # int32 sums wrap
    values = [[draw(n, 3), draw(3)] for n in (0, 1, 2, 50)] + [[draw(4, 1), draw(3)]]
    model = export_check(f, *(values[1:] if read == "last" else values))  # (out[-1] of no step fails)
    assert export_check.loop_kinds(model.graph) == []
    assert [n.op_type for n in model.graph.node].count("CumSum") == 1
