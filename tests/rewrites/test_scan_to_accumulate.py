"""scan_to_accumulate and scan_invariant_update: a state folded as ``s_t = s_{t-1} ⊕ g_t``
needs no loop.

Tests compile with one or both rules (plus ``save_mem`` where only the last step is read, so
that the fold becomes a reduce), or with the default selection of mode "fast", and check the
structure (Scan nodes left, ``Accumulate`` nodes and their props), the report (fired, or
declined with the reason) and the numbers against mode "py" (rtol 1e-9) for 0, 1, 2, a few
and many steps.
"""

import functools
import operator

import numpy as np
import pytest
from fused_graphs import unfused_nodes

import symscan as ss
import symscan.tensor as T
from symscan.scan.op import Scan
from symscan.scan.recurrences import Accumulate

ACC = ["scan_to_accumulate"]
ACC_LAST = ["save_mem", "scan_to_accumulate"]
BOTH = ["save_mem", "scan_invariant_update", "scan_to_accumulate"]
LENGTHS = [0, 1, 2, 9, 10_000]
STEPS = [0, 1, 2, 3, 50, -3]  # n_steps given at run time; a negative count runs |n_steps| steps
RTOL = 1e-9

OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "maximum": T.maximum,
       "minimum": T.minimum, "logaddexp": T.logaddexp, "and_": T.and_, "or_": T.or_,
       "radd": lambda s, g: g + s, "rmaximum": lambda s, g: T.maximum(g, s)}
"""The state update ``s ⊕ g`` by name ("r...": the operand first)."""


def _op(name: str) -> str:
    """The ufunc an update of that name accumulates (``s - g`` is ``s + (-g)``)."""
    return {"sub": "add", "radd": "add", "rmaximum": "maximum"}.get(name, name)


def _draw(rng, op: str, shape, dtype="float64"):
    """Operands or states for ``op``: near 1 for products, nonzero integers, mostly True for and."""
    if dtype == "bool":
        return rng.random(shape) < (0.95 if op == "and_" else 0.05)
    if dtype[0] in "iu":
        choices = [2, 3, -3, -2] if op == "mul" else range(-5, 6)
        return np.abs(rng.choice(choices, size=shape)).astype(dtype) if dtype[0] == "u" else \
            rng.choice(choices, size=shape).astype(dtype)
    return (rng.uniform(0.9, 1.1, shape) if op == "mul" else rng.normal(size=shape)).astype(dtype)


def _accumulates(f) -> list:
    return [n for n in f.fgraph.apply_nodes if isinstance(n.op, Accumulate)]


def _detail(scan_rw, f, rule: str, fired: bool = True) -> str:
    """The report's one record of ``rule`` (fired, or declined) on ``f``'s scan."""
    (record,) = scan_rw.records(f, rule, fired)
    return record.detail


def _fold(op: str, dtype="float64", row=(), operand=lambda xt, w: xt * w, **scan_kwargs):
    """``s_t = s_{t-1} ⊕ operand(x_t, w)`` over a sequence ``x`` of rows ``row``: inputs, output."""
    x, s0 = T.tensor(dtype, shape=(None,) + row, name="x"), T.tensor(dtype, shape=row, name="s0")
    w = T.scalar("w", dtype=dtype)
    out, _ = ss.scan(lambda xt, s, w: OPS[op](s, operand(xt, w)), sequences=x, outputs_info=s0,
                     non_sequences=w, **scan_kwargs)
    return [x, s0, w], out


def _fold_values(rng, op, n, dtype="float64", row=()):
    one = np.asarray(True if dtype == "bool" else 1, dtype=dtype)
    return [_draw(rng, op, (n,) + row, dtype), _draw(rng, op, row, dtype), one]


# ---------------------------------------------------------------------------- folds over sequences
@pytest.mark.parametrize("op", ["add", "sub", "radd", "mul", "maximum", "rmaximum", "minimum", "logaddexp"])
@pytest.mark.parametrize("rewrites", [ACC, None], ids=["alone", "default"])
def test_fold_over_a_sequence_is_one_accumulate(scan_rw, rng, op, rewrites):
    inputs, out = _fold(op)
    f = scan_rw.check(inputs, out, rewrites, *[_fold_values(rng, op, n) for n in LENGTHS], rtol=RTOL)
    assert scan_rw.scans(f) == []
    (node,) = _accumulates(f)
    assert (node.op.op, node.op.per_step, node.op.last) == (_op(op), True, False)
    detail = _detail(scan_rw, f, "scan_to_accumulate")
    assert f"accumulate of {_op(op)} over the stacked operand" in detail and "the loop is gone" in detail


@pytest.mark.parametrize("op", ["add", "sub", "mul", "maximum", "logaddexp"])
@pytest.mark.parametrize("read", ["last", "last three"])
@pytest.mark.parametrize("rewrites", [ACC_LAST, None], ids=["alone", "default"])
def test_reading_only_the_last_steps(scan_rw, same_as_py, rng, op, read, rewrites):
    """Only out[-1] read: save_mem keeps one step and the fold is a reduce; out[-3:]: an
    accumulate of which the last rows are taken. 0 steps: out[-1] fails as in mode "py"."""
    inputs, out = _fold(op)
    f = scan_rw.compile(inputs, out[-1] if read == "last" else out[-3:], rewrites)
    for n in LENGTHS:
        same_as_py(f, *_fold_values(rng, op, n), rtol=RTOL)
    assert scan_rw.scans(f) == []
    (node,) = _accumulates(f)
    assert node.op.op == _op(op) and node.op.last == (read == "last")
    kind = "reduce" if read == "last" else "accumulate"
    assert f"{kind} of {_op(op)} over the stacked operand" in _detail(scan_rw, f, "scan_to_accumulate")


@pytest.mark.parametrize("state, row", [((), ()), ((3,), (3,)), ((3,), ()), ((2, 3), (2, 3)), ((2, 3), (3,))],
                         ids=["scalar", "vector", "vector+scalar", "matrix", "matrix+row"])
@pytest.mark.parametrize("op", ["add", "mul", "minimum"])
@pytest.mark.parametrize("read", ["all", "last"])
def test_state_shapes_and_broadcast_operands(scan_rw, same_as_py, rng, state, row, op, read):
    x, s0 = T.tensor("float64", shape=(None,) + row, name="x"), T.tensor("float64", shape=state, name="s0")
    out, _ = ss.scan(lambda xt, s: OPS[op](s, T.exp(xt) if op == "mul" else xt), sequences=x, outputs_info=s0)
    f = scan_rw.compile([x, s0], out if read == "all" else out[-1], BOTH)
    for n in [0, 1, 2, 7, 500] if read == "all" else [1, 2, 7, 500]:
        same_as_py(f, 0.01 * rng.normal(size=(n,) + row), rng.normal(size=state), rtol=RTOL)
    assert scan_rw.scans(f) == []
    (node,) = _accumulates(f)
    assert node.op.last == (read == "last")


DTYPE_CASES = [("float32", "add"), ("float32", "mul"), ("float32", "maximum"), ("float16", "add"),
               ("float16", "logaddexp"), ("int32", "add"), ("int32", "mul"), ("int64", "sub"), ("int64", "minimum"),
               ("int8", "mul"), ("uint8", "add"), ("bool", "and_"), ("bool", "or_"), ("bool", "add"),
               ("bool", "maximum")]


@pytest.mark.parametrize("dtype, op, read", [(d, op, read) for d, op in DTYPE_CASES for read in ("all", "last")])
def test_float32_integer_and_bool_states(scan_rw, same_as_py, rng, quiet_numpy, dtype, op, read):
    """The accumulation computes in the state's dtype: small floats round, integers wrap around
    (products of +-2, +-3 over many steps overflow) like the loop's steps."""
    inputs, out = _fold(op, dtype, operand=lambda xt, w: xt)
    f = scan_rw.compile(inputs, out if read == "all" else out[-1], BOTH)
    for n in LENGTHS if read == "all" else LENGTHS[1:]:
        same_as_py(f, *_fold_values(rng, op, n, dtype), rtol=RTOL)
    assert scan_rw.scans(f) == []
    (node,) = _accumulates(f)
    assert node.op.op == _op(op) and node.op.last == (read == "last") and node.outputs[0].dtype == dtype


@pytest.mark.parametrize("operand", ["sequence", "invariant"])
def test_float32_sum_of_which_only_the_last_value_is_read(scan_rw, same_as_py, rng, operand):
    x, s0 = T.fvector("x"), T.fscalar("s0")
    if operand == "sequence":
        out, _ = ss.scan(lambda xt, s: s + xt, sequences=x, outputs_info=s0)
    else:
        out, _ = ss.scan(lambda s, c: s + c, outputs_info=s0, non_sequences=x[0], n_steps=x.shape[0])
    f = scan_rw.compile([x, s0], out[-1], None)
    assert [n.op.last for n in _accumulates(f)] == [True]
    same_as_py(f, rng.normal(size=10_000).astype("float32"), np.float32(0.5), rtol=RTOL)


# ---------------------------------------------------------------------------- taps, direction, n_steps
@pytest.mark.parametrize("taps", [[0], [-1, 0], [-2, 1]])
@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("read", ["all", "last"])
def test_sequence_taps_and_direction(scan_rw, same_as_py, rng, taps, go_backwards, read):
    """Sequences too short for the taps (0 elements, or 2 for [-2, 1]) fail as in mode "py"."""
    x, s0 = T.vector("x"), T.scalar("s0")
    out, _ = ss.scan(lambda *a: T.maximum(a[-1], functools.reduce(operator.mul, a[:-1])),
                     sequences=[dict(input=x, taps=taps)], outputs_info=s0, go_backwards=go_backwards)
    lengths = [0, 2, 3, 4, 10, 1000]
    f = scan_rw.compile([x, s0], out if read == "all" else out[-1], BOTH)
    for n in lengths:  # out[-1] after 0 steps: an IndexError in both
        same_as_py(f, rng.normal(size=n), rng.normal(), rtol=RTOL)
    assert scan_rw.scans(f) == []
    (node,) = _accumulates(f)
    assert node.op.last == (read == "last")


@pytest.mark.parametrize("steps", [0, 2])
@pytest.mark.parametrize("operand", ["sequence", "invariant"])
@pytest.mark.parametrize("read", ["all", "last three"])
def test_operand_rows_that_do_not_fit_the_state(scan_rw, steps, operand, read):
    """A step that would turn a state of shape (1,) into (3,) raises the loop's error; 0 steps
    run none, and the loop gives an empty output."""
    s0 = T.vector("s0")
    if operand == "sequence":
        inputs = [T.matrix("X"), s0]
        out, _ = ss.scan(lambda xt, s: s + xt, sequences=inputs[0], outputs_info=s0)
        values = [np.ones((steps, 3)), np.ones(1)]
    else:
        inputs = [T.vector("c"), s0, T.iscalar("k")]
        out, _ = ss.scan(lambda s, c: s + c, outputs_info=s0, non_sequences=inputs[0], n_steps=inputs[2])
        values = [np.ones(3), np.ones(1), steps]
    f = scan_rw.compile(inputs, out if read == "all" else out[-3:], None)
    assert scan_rw.scans(f) == []
    scan_rw.same_as_py(f, inputs, out if read == "all" else out[-3:], values)


@pytest.mark.parametrize("n_steps", [0, 1, 2, 5])
def test_constant_n_steps_with_a_longer_or_too_short_sequence(scan_rw, rng, n_steps):
    inputs, out = _fold("add", n_steps=n_steps)
    f = scan_rw.check(inputs, out, ACC, *[_fold_values(rng, "add", n) for n in (5, 8, 3, 0)], rtol=RTOL)
    assert scan_rw.scans(f) == [] and len(_accumulates(f)) == (n_steps != 1)  # n_steps=1 builds no loop


def test_too_short_sequences_raise_the_loops_error(scan_rw, rng):
    x, s0 = T.vector("x"), T.scalar("s0")
    taps, _ = ss.scan(lambda a, b, s: s + a * b, sequences=[dict(input=x, taps=[-2, 0])], outputs_info=s0)
    steps, _ = ss.scan(lambda a, s: s * a, sequences=x, outputs_info=s0, n_steps=6)
    for out, short in [(taps, 1), (taps[-1], 1), (steps, 3), (steps[-1], 5)]:
        f = scan_rw.check([x, s0], out, BOTH, [rng.normal(size=8), 1.0], [rng.normal(size=short), 1.0])
        assert scan_rw.scans(f) == [] and len(_accumulates(f)) == 1
        with pytest.raises(ValueError, match="scan: "):
            f(np.ones(short), 1.0)


@pytest.mark.parametrize("read_inside", [False, True])
def test_symbolic_n_steps_keeps_a_fold_over_sequences_in_the_loop(scan_rw, rng, read_inside):
    """A negative n_steps reverses the loop at run time: the fold over x stays (declined); the
    invariant update beside it leaves, unless the loop reads it (h below)."""
    x, s0, c, k = T.vector("x"), T.scalar("s0"), T.scalar("c"), T.iscalar("k")

    def step(xt, s, t, *h_c):
        h, c = h_c if read_inside else (None, h_c[0])
        new = (s + xt, t * c)
        return new + (T.tanh(0.5 * h + t),) if read_inside else new

    outs, _ = ss.scan(step, sequences=x, outputs_info=[s0, s0] + [s0] * read_inside, non_sequences=c, n_steps=k)
    f = scan_rw.check([x, s0, c, k], outs, BOTH,
                      *[[rng.normal(size=6), rng.normal(), rng.uniform(0.5, 1.5), n] for n in (0, 1, 2, 6, -2, 7)],
                      rtol=RTOL)
    node, args = scan_rw.only_scan(f)
    assert len(args.sit_sot) == 1 + 2 * read_inside and _accumulates(f) == []
    assert "n_steps may be negative" in _detail(scan_rw, f, "scan_to_accumulate", fired=False)
    if read_inside:
        reason = "the loop reads its values and n_steps may be negative at run time"
        assert reason in _detail(scan_rw, f, "scan_invariant_update", fired=False)
    else:
        assert "closed form of s_t = s_(t-1) mul c" in _detail(scan_rw, f, "scan_invariant_update")


# ---------------------------------------------------------------------------- several outputs
@pytest.mark.parametrize("read", ["all", "last sum"])
def test_a_running_sum_and_a_running_max_in_one_step(scan_rw, same_as_py, rng, read):
    X, s0, m0 = T.matrix("X"), T.vector("s0"), T.vector("m0")
    (S, M), _ = ss.scan(lambda xt, s, m: (s - xt, T.maximum(m, xt)), sequences=X, outputs_info=[s0, m0])
    f = scan_rw.compile([X, s0, m0], [S if read == "all" else S[-1], M], None)
    for n in [1, 2, 9, 10_000] + ([0] if read == "all" else []):
        same_as_py(f, rng.normal(size=(n, 3)), rng.normal(size=3), rng.normal(size=3), rtol=RTOL)
    assert scan_rw.scans(f) == []
    assert sorted((n.op.op, n.op.last) for n in _accumulates(f)) == [("add", read != "all"), ("maximum", False)]
    assert "the loop is gone" in _detail(scan_rw, f, "scan_to_accumulate")


def test_two_scans_merged_by_scan_merge_become_two_accumulations(scan_rw, rng):
    x, s0 = T.vector("x"), T.scalar("s0")
    total, _ = ss.scan(lambda xt, s: s + xt, sequences=x, outputs_info=s0)
    peak, _ = ss.scan(lambda xt, m: T.maximum(m, xt), sequences=x, outputs_info=s0)
    f = scan_rw.check([x, s0], [total, peak], None, *[[rng.normal(size=n), rng.normal()] for n in LENGTHS],
                      rtol=RTOL)
    assert scan_rw.records(f, "scan_merge")
    assert scan_rw.scans(f) == []
    assert sorted(n.op.op for n in _accumulates(f)) == ["add", "maximum"]


@pytest.mark.parametrize("reads", ["old", "new"])
@pytest.mark.parametrize("read", ["all", "last"])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_a_state_read_by_another_output_leaves_a_smaller_loop(scan_rw, same_as_py, rng, reads, read, go_backwards):
    """h reads s (s_{t-1}, or the new s_t) and needs the loop: s is accumulated and the loop
    reads it as a sequence. A reduce would not do, even when only S[-1] is read outside."""
    x, s0, h0 = T.vector("x"), T.scalar("s0"), T.scalar("h0")

    def step(xt, s, h):
        new = s + xt
        return new, T.tanh(0.5 * h + (s if reads == "old" else new))

    (S, H), _ = ss.scan(step, sequences=x, outputs_info=[s0, h0], go_backwards=go_backwards)
    outputs = [S, H] if read == "all" else [S[-1], H[-1]]
    for rewrites in (ACC_LAST, None):
        f = scan_rw.compile([x, s0, h0], outputs, rewrites)
        for n in [1, 2, 9, 2000] + ([0] if read == "all" else []):
            same_as_py(f, rng.normal(size=n), rng.normal(), rng.normal(), rtol=RTOL)
        node, args = scan_rw.only_scan(f)
        assert len(args.sit_sot) == 1 and not args.mit_sot and not args.nit_sot
        tap = -1 if reads == "old" else 0
        assert [s.label for s in args.sequences if s.label.endswith(f"at tap {tap}")]
        (acc,) = _accumulates(f)
        assert not acc.op.last
        assert "the loop is gone" not in _detail(scan_rw, f, "scan_to_accumulate")


def test_a_fold_beside_a_nit_sot(scan_rw, rng):
    x, s0 = T.vector("x"), T.scalar("s0")
    (S, Y), _ = ss.scan(lambda xt, s: (s + xt, T.sin(s) * xt), sequences=x, outputs_info=[s0, None])
    values = [[rng.normal(size=n), rng.normal()] for n in LENGTHS]
    f = scan_rw.check([x, s0], [S, Y], ACC, *values, rtol=RTOL)
    node, args = scan_rw.only_scan(f)
    assert not args.sit_sot and len(args.nit_sot) == 1 and len(_accumulates(f)) == 1
    g = scan_rw.check([x, s0], [S, Y], None, *values, rtol=RTOL)  # then the map leaves too
    assert scan_rw.scans(g) == [] and len(_accumulates(g)) == 1


def test_a_fold_in_the_body_of_an_outer_scan(scan_rw, same_as_py, rng):
    """Bodies are rewritten first: the inner running sum, of which the outer step reads the last
    value, is a reduce inside the outer loop."""
    X, s0 = T.matrix("X"), T.scalar("s0")
    out, _ = ss.scan(lambda row, acc: ss.scan(lambda xt, s: s + xt, sequences=row, outputs_info=acc)[0][-1],
                     sequences=X, outputs_info=s0)
    f = scan_rw.compile([X, s0], out, None)
    for shape in [(0, 4), (1, 1), (3, 4), (3, 0), (50, 200)]:  # rows of 0 elements: an IndexError in both
        same_as_py(f, rng.normal(size=shape), rng.normal(), rtol=RTOL)
    node, _ = scan_rw.only_scan(f)
    assert [n.op.last for n in scan_rw.nodes(node, Accumulate)] == [True] and scan_rw.nodes(node, Scan) == []
    assert "reduce of add" in _detail(scan_rw, f, "scan_to_accumulate")


# ---------------------------------------------------------------------------- loop-invariant updates
@pytest.mark.parametrize("dtype, op, c", [
    ("float64", "add", "input"), ("float64", "sub", "input"), ("float64", "mul", "input"),
    ("float64", "mul", "constant"), ("float64", "maximum", "constant"), ("float64", "minimum", "input"),
    ("float64", "logaddexp", "input"), ("int32", "maximum", "input"), ("bool", "and_", "input"),
    ("bool", "or_", "constant"),
])
@pytest.mark.parametrize("read", ["all", "last"])
def test_invariant_update_has_a_closed_form(scan_rw, same_as_py, rng, dtype, op, c, read):
    s0, k = T.tensor(dtype, shape=(3,), name="s0"), T.iscalar("k")
    value = _draw(rng, op, (), dtype)
    if c == "constant":
        out, _ = ss.scan(lambda s: OPS[op](s, T.constant(value)), outputs_info=s0, n_steps=k)
        inputs, extra = [s0, k], []
    else:
        c_var = T.scalar("c", dtype=dtype)
        out, _ = ss.scan(lambda s, c: OPS[op](s, c), outputs_info=s0, non_sequences=c_var, n_steps=k)
        inputs, extra = [s0, c_var, k], [value]
    f = scan_rw.compile(inputs, out if read == "all" else out[-1], None)
    for steps in STEPS:  # out[-1] after 0 steps: an IndexError in both
        same_as_py(f, _draw(rng, op, (3,), dtype), *extra, steps, rtol=RTOL)
    assert scan_rw.scans(f) == [] and _accumulates(f) == []
    assert f"closed form of s_t = s_(t-1) {op} c" in _detail(scan_rw, f, "scan_invariant_update")


def test_power_a_to_the_k_is_one_power(scan_rw, same_as_py, rng):
    """The guide's A**k with only the last step read: no loop, no accumulation."""
    A, k = T.vector("A"), T.iscalar("k")
    result, _ = ss.scan(lambda prior, A: prior * A, outputs_info=T.ones_like(A), non_sequences=A, n_steps=k)
    f = scan_rw.compile([A, k], result[-1], None)
    a = rng.uniform(0.5, 1.5, size=4)
    for steps in (1, 2, 7, 300, -4):
        np.testing.assert_allclose(same_as_py(f, a, steps), a ** abs(steps), rtol=RTOL)
    assert isinstance(same_as_py(f, a, 0), IndexError)
    assert scan_rw.scans(f) == [] and _accumulates(f) == []
    assert any(n.op.__class__.__name__ == "Elemwise" and n.op.name == "pow" for n in unfused_nodes(f.fgraph))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint64"])
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_integer_invariant_updates_wrap_around_like_the_loop(scan_rw, same_as_py, quiet_numpy, dtype, op):
    s0, c, k = T.scalar("s0", dtype=dtype), T.scalar("c", dtype=dtype), T.iscalar("k")
    out, _ = ss.scan(lambda s, c: OPS[op](s, c), outputs_info=s0, non_sequences=c, n_steps=k)
    f = scan_rw.compile([s0, c, k], [out, out[-1]], None)
    big = np.iinfo(dtype).max // 3
    for s, c_value, steps in [(1, 3, 1), (1, 3, 2), (5, 7, 45), (-2 if dtype[0] == "i" else 2, 3, 300),
                              (big, big, 100), (3, 5, -41)]:
        same_as_py(f, np.asarray(s).astype(dtype), np.asarray(c_value).astype(dtype), steps)
    assert scan_rw.scans(f) == [] and _accumulates(f) == []
    assert scan_rw.records(f, "scan_invariant_update")


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("op", ["add", "mul", "logaddexp"])
def test_small_float_invariant_updates_are_left_to_scan_to_accumulate(scan_rw, same_as_py, rng, dtype, op):
    """float64: scan_to_accumulate alone (no closed form asked for) also does it."""
    s0, c, k = T.tensor(dtype, shape=(2,), name="s0"), T.scalar("c", dtype=dtype), T.iscalar("k")
    out, _ = ss.scan(lambda s, c: OPS[op](s, c), outputs_info=s0, non_sequences=c, n_steps=k)
    f = scan_rw.compile([s0, c, k], out, ACC if dtype == "float64" else None)
    for steps in STEPS + [2000]:
        same_as_py(f, _draw(rng, op, (2,), dtype), _draw(rng, op, (), dtype), steps, rtol=RTOL)
    assert scan_rw.scans(f) == []
    if dtype != "float64":
        reason = f"in {dtype} the loop rounds at every step"
        assert reason in _detail(scan_rw, f, "scan_invariant_update", fired=False)
    assert f"accumulate of {op} over a loop-invariant operand" in _detail(scan_rw, f, "scan_to_accumulate")
    (node,) = _accumulates(f)
    assert not node.op.per_step and not node.op.last


# ---------------------------------------------------------------------------- declines
DECLINES = {
    "until": (lambda xt, s: (s + xt, ss.until(s > 2.0)), "a while loop (until)"),
    "state-dependent operand": (lambda xt, s: s + s * xt, "its operand of add needs the loop: it reads the state"),
    "division": (lambda xt, s: s / xt, "is not an associative update"),
    "operand minus state": (lambda xt, s: xt - s, "s_t = sub(...) of the state is not an associative update"),
    "power": (lambda xt, s: s ** xt, "is not an associative update"),
}


@pytest.mark.parametrize("case", list(DECLINES))
def test_updates_that_need_the_loop_are_declined_with_a_reason(scan_rw, rng, case):
    step, reason = DECLINES[case]
    x, s0 = T.vector("x"), T.scalar("s0")
    out, _ = ss.scan(step, sequences=x, outputs_info=s0)
    values = [[rng.uniform(0.5, 1.5, size=n), rng.uniform(0.5, 1.5)] for n in (0, 1, 2, 9, 200)]
    f = scan_rw.check([x, s0], out, BOTH, *values, rtol=RTOL)
    scan_rw.only_scan(f)
    assert _accumulates(f) == [] and not scan_rw.records(f, "scan_to_accumulate")
    assert reason in _detail(scan_rw, f, "scan_to_accumulate", fired=False)
    if case == "until":
        assert reason in _detail(scan_rw, f, "scan_invariant_update", fired=False)
    scan_rw.check([x, s0], out, None, *values, rtol=RTOL)  # other rules may take some of them


@pytest.mark.parametrize("graph", ["fold", "invariant"])
def test_without_vectorize_the_loop_stays(scan_rw, rng, graph):
    x, s0 = T.vector("x"), T.scalar("s0")
    if graph == "fold":
        out, _ = ss.scan(lambda xt, s: T.maximum(s, 2 * xt), sequences=x, outputs_info=s0)
    else:
        out, _ = ss.scan(lambda s, c: s * c, outputs_info=s0, non_sequences=x[0], n_steps=x.shape[0])
    values = [[rng.uniform(0.5, 1.5, size=n), rng.normal()] for n in (1, 2, 9, 1000)]
    f = scan_rw.check([x, s0], [out, out[-1]], ["-vectorize"], *values, rtol=RTOL)
    scan_rw.only_scan(f)
    assert _accumulates(f) == []
    assert not [r for r in f.rewrite_report() if r.rule in ("scan_to_accumulate", "scan_invariant_update")]
    g = scan_rw.check([x, s0], [out, out[-1]], None, *values, rtol=RTOL)
    assert scan_rw.scans(g) == []


def test_a_fold_beside_a_shared_variable_update(scan_rw, rng):
    """The loop stays for the update of the shared counter; the fold leaves it."""
    x, s0 = T.vector("x"), T.scalar("s0")
    counter = ss.shared(np.int64(0), name="counter")
    out, updates = ss.scan(lambda xt, s: (s * xt, {counter: counter + 1}), sequences=x, outputs_info=s0)
    values = [[rng.uniform(0.9, 1.1, size=n), rng.normal()] for n in LENGTHS]
    f = scan_rw.check([x, s0], out, ACC, *values, rtol=RTOL, updates=updates)
    node, args = scan_rw.only_scan(f)
    assert not args.sit_sot and len(args.shared) == 1 and len(_accumulates(f)) == 1
    counter.set_value(np.int64(0))
    f(*values[3])
    assert counter.get_value() == 9


# ---------------------------------------------------------------------------- operands of other dtypes
@pytest.mark.parametrize("state, operand, op", [
    ("float64", "int32", "add"), ("float64", "int64", "mul"), ("float32", "int16", "add"), ("int32", "int8", "maximum"),
    ("int64", "bool", "add"), ("float64", "float32", "sub"), ("float64", "float32", "logaddexp"),
    ("float64", "int32", "sub"), ("int32", "int16", "sub"),
    ("float64", "uint8", "sub"), ("int64", "uint32", "sub"),
    ("int16", "int8", "sub"), ("int32", "bool", "sub"),
])
def test_operands_of_a_narrower_dtype_are_cast_to_the_states(scan_rw, rng, quiet_numpy, state, operand, op):
    x, s0 = T.vector("x", dtype=operand), T.scalar("s0", dtype=state)
    out, _ = ss.scan(lambda xt, s: OPS[op](s, xt), sequences=x, outputs_info=s0)
    assert out.dtype == state

    def draw(n):
        if operand[0] in "bf":
            return rng.random(n) < 0.5 if operand == "bool" else rng.normal(size=n).astype(operand)
        info = np.iinfo(operand)  # the extremes too: -(-128) does not fit int8
        return np.concatenate([[info.min, info.max], rng.integers(info.min, info.max, n, endpoint=True)])[:n] \
            .astype(operand)

    f = scan_rw.check([x, s0], out, ACC, *[[draw(n), np.asarray(3, state)] for n in LENGTHS], rtol=RTOL)
    assert scan_rw.scans(f) == []
    (node,) = _accumulates(f)
    assert node.op.op == _op(op) and node.outputs[0].dtype == state
