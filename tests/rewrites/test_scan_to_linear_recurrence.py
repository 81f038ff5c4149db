"""scan_to_linear_recurrence: an output affine in its own past values needs no loop.

``x_t = a_t x_{t-1} + b_t`` (any shape, coefficients from sequences or non-sequences) and
mit-sots with fixed numeric coefficients become a closed form over the steps or a parallel
prefix (``LinearRecurrence``). Each test compiles with the rule alone (``RULE``) unless it
says otherwise, checks the structure and the report (the rule's record names the path taken,
or why it declined) and the numbers against mode "py" within rtol 1e-9.
"""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.scan.recurrences import LinearRecurrence

NAME = "scan_to_linear_recurrence"
RULE = [NAME]
RTOL = 1e-9
CLOSED, PREFIX = "closed form", "parallel prefix"
STEPS = (0, 1, 2, 3, 17, -1, -4)  # symbolic n_steps: negative ones run the loop reversed


def _var(name, ndim, dtype="float64"):
    return T.tensor(dtype, (None,) * ndim, name)


def _check(scan_rw, inputs, outputs, value_sets, rewrites=RULE):
    return scan_rw.check(inputs, outputs, rewrites, *value_sets, rtol=RTOL)


def _assert_gone(scan_rw, f, path):
    """No loop left, one firing of the rule naming ``path``, a LinearRecurrence iff prefix."""
    assert scan_rw.scans(f) == []
    (record,) = scan_rw.records(f, NAME)
    assert path in record.detail and "the loop is gone" in record.detail
    assert bool(scan_rw.nodes(f, LinearRecurrence)) == (path == PREFIX)


def _assert_declined(scan_rw, f, reason):
    assert len(scan_rw.scans(f)) == 1 and scan_rw.nodes(f, LinearRecurrence) == []
    assert scan_rw.records(f, NAME) == []
    (record,) = scan_rw.records(f, NAME, fired=False)
    assert reason in record.detail


def _mit_sot(coefficients, taps, init, forcing, n_steps, sequences=None):
    """``x_t = Σ c_j x_{t+tap_j} + forcing`` (forcing: a non-sequence, or the sequence's element)."""

    def step(*args):
        total = args[0] if sequences is not None else forcing
        for c, x in zip(coefficients, args[-len(taps):]):
            total = c * x + total
        return total

    y, _ = ss.scan(step, sequences=sequences, outputs_info=[dict(initial=init, taps=taps)], n_steps=n_steps)
    return y


# ---------------------------------------------------------------------------- first order, per-step coefficients
SHAPES = {  # state row shape, coefficient row shape (per step)
    "scalar": ((), ()),
    "vector": ((3,), (3,)),
    "vector, scalar coefficient per step": ((3,), ()),
    "matrix": ((2, 3), (2, 3)),
    "matrix, row coefficient per step": ((2, 3), (3,)),
}


@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_per_step_coefficients_become_a_parallel_prefix(scan_rw, rng, shape, go_backwards):
    row, coef_row = SHAPES[shape]
    A = _var("A", len(coef_row) + 1)
    U = _var("U", len(row) + 1)
    x0 = _var("x0", len(row))
    y, _ = ss.scan(lambda a, u, x: a * x + u, sequences=[A, U], outputs_info=x0, go_backwards=go_backwards)
    values = [[rng.uniform(-0.99, 0.99, (n, *coef_row)), rng.normal(size=(n, *row)), rng.normal(size=row)]
              for n in (0, 1, 2, 37)]
    f = _check(scan_rw, [A, U, x0], y, values)
    _assert_gone(scan_rw, f, PREFIX)


def test_non_sequence_vector_coefficient_and_sequence_taps(scan_rw, rng):
    U, a, x0 = T.matrix("U"), T.vector("a"), T.vector("x0")
    y, _ = ss.scan(lambda u1, u0, x, a: a * x + u1 * u0, sequences=dict(input=U, taps=[-1, 0]),
                   outputs_info=x0, non_sequences=a)
    values = [[rng.normal(size=(n, 3)), rng.uniform(-1, 1, 3), rng.normal(size=3)] for n in (1, 2, 3, 30)]
    _assert_gone(scan_rw, _check(scan_rw, [U, a, x0], y, values), PREFIX)


@pytest.mark.parametrize("rewrites", [None, RULE])
@pytest.mark.parametrize("kind", ["ema", "per-step a_t", "AR(2) with a sequence forcing"])
def test_ten_thousand_steps(scan_rw, rng, kind, rewrites):
    u, x0, alpha, A = T.vector("u"), T.vector("x0"), T.scalar("alpha"), T.vector("A")
    if kind == "ema":  # x_t = (1-α) x_{t-1} + α u_t, the mode's default rewrites included
        y, _ = ss.scan(lambda u, x, alpha: (1 - alpha) * x + alpha * u, sequences=u, outputs_info=x0[0],
                       non_sequences=alpha)
    elif kind == "per-step a_t":
        y, _ = ss.scan(lambda a, u, x: a * x + u, sequences=[A, u], outputs_info=x0[0])
    else:
        y = _mit_sot([1.8, -0.9], [-1, -2], x0, None, None, sequences=u)
    values = [[rng.normal(size=n), rng.normal(size=2), 0.05, rng.uniform(-0.99, 0.99, n)] for n in (0, 1, 2, 10_000)]
    f = _check(scan_rw, [u, x0, alpha, A], y, values, rewrites)
    _assert_gone(scan_rw, f, PREFIX)
    assert scan_rw.records(f, "scan_to_accumulate") == []


# ---------------------------------------------------------------------------- fixed numeric coefficients
LINEAR = {  # taps, coefficients, path: loop-invariant forcing, float64
    "x/2 + d": ([-1], [0.5], CLOSED),
    "-0.999 x + d": ([-1], [-0.999], CLOSED),
    "x + d (root 1)": ([-1], [1.0], CLOSED),
    "1.5 x1 - 0.5 x2 + d (roots 1, 1/2)": ([-1, -2], [1.5, -0.5], CLOSED),
    "-0.5 x1 + 0.3 x2 + d (irrational roots)": ([-1, -2], [-0.5, 0.3], PREFIX),
    "2 x1 - x2 + d (double root 1)": ([-1, -2], [2.0, -1.0], CLOSED),
    "x2 + d (roots ±1)": ([-2], [1.0], CLOSED),
    "0.5 x1 + 0.2 x2 - 0.1 x3 + d (third order)": ([-1, -2, -3], [0.5, 0.2, -0.1], PREFIX),
    "AR(2) 1.8 x1 - 0.9 x2 + d (complex roots)": ([-1, -2], [1.8, -0.9], PREFIX),
    "0.5 x1 + 0.3 x3 + d (gap, third order)": ([-1, -3], [0.5, 0.3], PREFIX),
}


@pytest.mark.parametrize("rows", ["scalar", "matrix"])
@pytest.mark.parametrize("case", list(LINEAR))
def test_fixed_coefficients_with_symbolic_n_steps(scan_rw, rng, case, rows):
    """Irrational or complex roots (whose rounded powers would leave integer-valued sequences
    off by an ulp), and more than two past values (sympy is too slow) take the prefix."""
    taps, coefficients, path = LINEAR[case]
    span, row = -min(taps), (() if rows == "scalar" else (2, 3))
    init, d, k = _var("init", 1 + len(row)), _var("d", len(row)), T.iscalar("k")
    y = _mit_sot(coefficients, taps, init if taps != [-1] else init[0], d, k)
    values = [[rng.normal(size=(span, *row)), rng.normal(size=row), n] for n in (*STEPS, 3000)]
    f = _check(scan_rw, [init, d, k], y, values)
    _assert_gone(scan_rw, f, path)


@pytest.mark.parametrize("taps, coefficients", [([-1, -2], [1.8, -0.9]), ([-1, -3], [0.5, 0.3]), ([-1], [0.5])])
def test_fixed_coefficients_with_a_sequence_forcing_take_the_prefix(scan_rw, rng, taps, coefficients):
    u, init = T.vector("u"), T.vector("init")
    y = _mit_sot(coefficients, taps, init if taps != [-1] else init[0], None, None, sequences=u)
    values = [[rng.normal(size=n), rng.normal(size=-min(taps))] for n in (0, 1, 2, 3, 40)]
    _assert_gone(scan_rw, _check(scan_rw, [u, init], y, values), PREFIX)


@pytest.mark.parametrize("coefficients, n_steps, fires", [
    ([1.0, 1.0], 20, True),  # Fibonacci: 1.618^20 ≈ 1.5e4
    ([1.0, 1.0], "symbolic", False),
    ([2.5, -1.0], 10, True),  # roots 2 and 1/2: 2^10 ≈ 1e3
    ([2.5, -1.0], 30, False),  # 2^30 > 1e6
    ([2.5, -1.0], "symbolic", False),
])
def test_roots_above_one_need_a_small_constant_n_steps(scan_rw, rng, coefficients, n_steps, fires):
    init, k = T.vector("init"), T.iscalar("k")
    y = _mit_sot(coefficients, [-1, -2], init, 0, k if n_steps == "symbolic" else n_steps)
    values = [[rng.normal(size=2), n] for n in ((0, 1, 2, 25) if n_steps == "symbolic" else (0,))]
    f = _check(scan_rw, [init, k], y, values)
    if fires:  # (by the prefix: the closed form's terms would grow and cancel)
        _assert_gone(scan_rw, f, PREFIX)
    else:
        _assert_declined(scan_rw, f, "a characteristic root has modulus")


def _from_fixed_point(path):
    """A single root above 1 started at the fixed point, where the loop stays: x_t = 2.5 x_{t-1}
    - 0.15 from 0.1 (closed form, symbolic n_steps), x_t = 2 x_{t-1} + u_t with u = -1 from 1
    (prefix, steps from the sequence)."""
    x0, k, u = T.scalar("x0"), T.iscalar("k"), T.vector("u")
    if path == CLOSED:
        y, _ = ss.scan(lambda x: 2.5 * x - 0.15, outputs_info=x0, n_steps=k)
        return [x0, k], y, [[0.1, n] for n in (5, 60)]
    y, _ = ss.scan(lambda u, x: 2 * x + u, sequences=u, outputs_info=x0)
    return [x0, u], y, [[1.0, -np.ones(n)] for n in (5, 100)]


@pytest.mark.parametrize("path", [CLOSED, PREFIX])
def test_a_single_root_above_one_needs_a_small_constant_n_steps(scan_rw, path):
    inputs, y, values = _from_fixed_point(path)
    f = _check(scan_rw, inputs, y, values)
    _assert_declined(scan_rw, f, "a characteristic root has modulus")


# ---------------------------------------------------------------------------- steps, direction, save_mem
def test_runtime_coefficient_and_symbolic_n_steps(scan_rw, rng):
    a, x0, k = T.scalar("a"), T.vector("x0"), T.iscalar("k")
    y, _ = ss.scan(lambda x, a: a * x + 1.0, outputs_info=x0, non_sequences=a, n_steps=k)
    values = [[rng.uniform(-1, 1), rng.normal(size=3), n] for n in STEPS]
    _assert_gone(scan_rw, _check(scan_rw, [a, x0, k], y, values), PREFIX)


def test_sequences_and_symbolic_n_steps_decline(scan_rw, rng):
    """A negative n_steps would reverse the loop over the sequences: the rule keeps it."""
    A, u, x0, k = T.vector("A"), T.vector("u"), T.scalar("x0"), T.iscalar("k")
    y, _ = ss.scan(lambda a, u, x: a * x + u, sequences=[A, u], outputs_info=x0, n_steps=k)
    values = [[rng.uniform(-1, 1, 5), rng.normal(size=5), 0.3, n] for n in (0, 1, 2, 5, 6, -1, -3)]
    f = _check(scan_rw, [A, u, x0, k], y, values)  # 6 steps: the loop's "too short" error
    _assert_declined(scan_rw, f, "n_steps may be negative")


@pytest.mark.parametrize("go_backwards", [False, True])
def test_go_backwards_with_fewer_steps_than_the_sequence(scan_rw, rng, go_backwards):
    u, init = T.vector("u"), T.vector("init")
    y, _ = ss.scan(lambda u, x1, x2: 1.8 * x1 - 0.9 * x2 + u, sequences=u,
                   outputs_info=[dict(initial=init, taps=[-1, -2])], n_steps=3, go_backwards=go_backwards)
    values = [[rng.normal(size=n), rng.normal(size=2)] for n in (2, 3, 7)]  # 2: too short
    _assert_gone(scan_rw, _check(scan_rw, [u, init], y, values), PREFIX)


@pytest.mark.parametrize("read", ["last", "last three"])
@pytest.mark.parametrize("path", [CLOSED, PREFIX])
def test_save_mem_reads_only_the_end(scan_rw, rng, path, read):
    u, init, d, k = T.vector("u"), T.vector("init"), T.scalar("d"), T.iscalar("k")
    if path == CLOSED:
        inputs, y = [init, d, k], _mit_sot([1.5, -0.5], [-1, -2], init, d, k)
        values = [[rng.normal(size=2), rng.normal(), n] for n in (0, 1, 2, 3, 50, -2)]
    else:
        inputs, y = [u, init], _mit_sot([1.8, -0.9], [-1, -2], init, None, None, sequences=u)
        values = [[rng.normal(size=n), rng.normal(size=2)] for n in (0, 1, 2, 3, 50)]
    if read == "last":  # no step: y[-1] is an IndexError in mode "py" too
        y, values = y[-1], values[1:]
    else:
        y = y[-3:]
    f = _check(scan_rw, inputs, y, values, ["save_mem", NAME])
    assert scan_rw.records(f, "save_mem")
    _assert_gone(scan_rw, f, path)


# ---------------------------------------------------------------------------- integers wrap like the loop
@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint32"])
@pytest.mark.parametrize("form", ["3 x + u", "a_t x + u", "u - 2 x", "x1 + x2 (Fibonacci)", "3 x1 + 5 x3 + c"])
def test_integer_recurrences_wrap_like_the_loop(scan_rw, rng, quiet_numpy, dtype, form):
    u, A, c, k = _var("u", 1, dtype), _var("A", 1, dtype), _var("c", 0, dtype), T.iscalar("k")
    init = _var("init", 1, dtype)
    if form == "3 x + u":
        y, _ = ss.scan(lambda u, x: 3 * x + u, sequences=u, outputs_info=init[0])
    elif form == "a_t x + u":
        y, _ = ss.scan(lambda a, u, x: a * x + u, sequences=[A, u], outputs_info=init[0])
    elif form == "u - 2 x":
        y, _ = ss.scan(lambda u, x: u - 2 * x, sequences=u, outputs_info=init[0])
    elif form == "x1 + x2 (Fibonacci)":
        y = _mit_sot([1, 1], [-1, -2], init, 0, k)
    else:
        y = _mit_sot([3, 5], [-1, -3], init, c, k)
    ints = lambda low, high, size: rng.integers(low, high, size).astype(dtype)  # noqa: E731
    values = [[ints(0, 10, n), ints(1, 10, n), ints(0, 10, ()), ints(1, 10, 3), n] for n in (0, 1, 2, 300)]
    f = _check(scan_rw, [u, A, c, init, k], y, values)
    _assert_gone(scan_rw, f, PREFIX)
    if "-" not in form:  # non-negative terms: without wrapping around the values would never decrease
        assert (np.diff(f(*values[-1]).astype(object)) < 0).any()
    if form.startswith(("x1", "3 x1")):  # the mit-sots run n_steps=k
        _check(scan_rw, [u, A, c, init, k], y, [values[-1][:4] + [-5]])  # negative n_steps


# ---------------------------------------------------------------------------- another output reads it
@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("taps", [[-1], [-1, -2]])
def test_an_output_read_by_the_rest_of_the_body_leaves_a_smaller_loop(scan_rw, rng, taps, go_backwards):
    u, init, z0 = T.vector("u"), T.vector("init"), T.scalar("z0")

    def step(u, *args):
        *past, z = args
        x = 0.5 * past[0] + u if len(past) == 1 else 1.8 * past[0] - 0.9 * past[1] + u
        return x, T.tanh(z + past[-1]) * x

    outputs_info = [init[0] if taps == [-1] else dict(initial=init, taps=taps), z0]
    (xs, zs), _ = ss.scan(step, sequences=u, outputs_info=outputs_info, go_backwards=go_backwards)
    values = [[rng.normal(size=n), rng.normal(size=2), rng.normal()] for n in (0, 1, 2, 40)]
    f = _check(scan_rw, [u, init, z0], [xs, zs], values)
    node, args = scan_rw.only_scan(f)
    assert len(args.buffered) == 1 and "z0" in args.buffered[0].label
    (record,) = scan_rw.records(f, NAME)
    assert PREFIX in record.detail and "kept in the loop" in record.detail
    assert "the loop is gone" not in record.detail and scan_rw.nodes(f, LinearRecurrence)


def test_an_output_read_inside_with_symbolic_n_steps_stays(scan_rw, rng):
    a, x0, z0, k = T.scalar("a"), T.scalar("x0"), T.scalar("z0"), T.iscalar("k")
    (xs, zs), _ = ss.scan(lambda x, z, a: (a * x + 1.0, T.tanh(z) * x), outputs_info=[x0, z0], non_sequences=a,
                          n_steps=k)
    values = [[0.7, rng.normal(), rng.normal(), n] for n in STEPS]
    f = _check(scan_rw, [a, x0, z0, k], [xs, zs], values)
    _assert_declined(scan_rw, f, "the loop reads its values and n_steps may be negative")


# ---------------------------------------------------------------------------- affine forms written unusually
FORMS = {
    "(x + b) * a": lambda u, x, a, b: (x + b) * a,
    "a * x - b": lambda u, x, a, b: a * x - b,
    "x / 2 + u": lambda u, x, a, b: x / 2 + u,
    "-(x - u)": lambda u, x, a, b: -(x - u),
    "x / a + u": lambda u, x, a, b: x / a + u,
    "u * (x - b) / 3": lambda u, x, a, b: u * (x - b) / 3,
    "a * (x + u) - (x - u) * b": lambda u, x, a, b: a * (x + u) - (x - u) * b,
}


@pytest.mark.parametrize("form", list(FORMS))
def test_affine_forms_written_unusually(scan_rw, rng, form):
    u, x0, a, b = T.vector("u"), T.vector("x0"), T.scalar("a"), T.scalar("b")
    y, _ = ss.scan(FORMS[form], sequences=u, outputs_info=x0, non_sequences=[a, b])
    values = [[rng.normal(size=n), rng.normal(size=3), rng.uniform(0.5, 0.9), rng.normal()] for n in (0, 1, 2, 30)]
    _assert_gone(scan_rw, _check(scan_rw, [u, x0, a, b], y, values), PREFIX)


# ---------------------------------------------------------------------------- declines
def _declining(case):
    x0, init, a, k = T.scalar("x0"), T.vector("init"), T.scalar("a"), T.iscalar("k")
    if case == "x * x":
        y, _ = ss.scan(lambda x: x * x, outputs_info=x0, n_steps=k)
    elif case == "x * tanh(x)":
        y, _ = ss.scan(lambda x: x * T.tanh(x), outputs_info=x0, n_steps=k)
    elif case == "a x1 x2":
        y, _ = ss.scan(lambda x1, x2, a: a * x1 * x2, outputs_info=[dict(initial=init, taps=[-1, -2])],
                       non_sequences=a, n_steps=k)
    elif case == "runtime coefficient with two lags":
        y, _ = ss.scan(lambda x1, x2, a: a * x1 + 0.1 * x2, outputs_info=[dict(initial=init, taps=[-1, -2])],
                       non_sequences=a, n_steps=k)
    elif case == "float32":
        y, _ = ss.scan(lambda x: np.float32(0.5) * x + T.cast(a, "float32"), outputs_info=T.cast(x0, "float32"),
                       n_steps=k)
    elif case == "until":
        y, _ = ss.scan(lambda x, a: (0.5 * x + a, ss.until(x > 1.5)), outputs_info=x0, non_sequences=a, n_steps=k)
    else:  # coupled: each reads the other's state
        (y, z), _ = ss.scan(lambda x, z: (0.5 * x + 0.1 * z, 0.2 * x + 0.3 * z), outputs_info=[x0, init[0]],
                            n_steps=k)
        y = y + z
    return [x0, init, a, k], y


DECLINES = {
    "x * x": "Elemwise{mul} of values that both depend on the state",
    "x * tanh(x)": "the state goes through Elemwise{tanh}",
    "a x1 x2": "both depend on the state",
    "runtime coefficient with two lags": "with more than one past value the coefficients must be numbers",
    "float32": "in float32 the loop rounds at every step",
    "until": "a while loop (until)",
    "coupled": "it reads the state of",
}


@pytest.mark.parametrize("case", list(DECLINES))
def test_declines_with_the_reason(scan_rw, rng, case):
    inputs, y = _declining(case)
    values = [[rng.uniform(0.1, 0.9), rng.uniform(0.1, 0.9, 2), rng.uniform(0.5, 0.9), n] for n in (0, 1, 2, 12)]
    f = _check(scan_rw, inputs, y, values)
    _assert_declined(scan_rw, f, DECLINES[case])


@pytest.mark.parametrize("path", [CLOSED, PREFIX])
def test_without_vectorize_the_loop_stays(scan_rw, rng, path):
    u, init, d, k = T.vector("u"), T.vector("init"), T.scalar("d"), T.iscalar("k")
    y = _mit_sot([1.5, -0.5], [-1, -2], init, d, k) if path == CLOSED else \
        _mit_sot([1.8, -0.9], [-1, -2], init, None, None, sequences=u)
    values = [[rng.normal(size=n), rng.normal(size=2), rng.normal(), n] for n in (0, 1, 2, 40)]
    f = _check(scan_rw, [u, init, d, k], y, values, ["-vectorize"])
    assert len(scan_rw.scans(f)) == 1 and scan_rw.nodes(f, LinearRecurrence) == []
    assert not [r for r in f.rewrite_report() if r.rule == NAME]
    _assert_gone(scan_rw, _check(scan_rw, [u, init, d, k], y, values, None), path)


# ---------------------------------------------------------------------------- shape errors
def test_a_forcing_of_another_shape_fails_like_the_loop(scan_rw):
    init, v, k = T.vector("init"), T.vector("v"), T.iscalar("k")
    y, _ = ss.scan(lambda x, v: 0.5 * x + v, outputs_info=init, non_sequences=v, n_steps=k)
    f = _check(scan_rw, [init, v, k], y, [[np.ones(1), np.ones(3), n] for n in (2, 0)])
    _assert_gone(scan_rw, f, CLOSED)


@pytest.mark.parametrize("growing", [False, True])
def test_runtime_coefficients_above_one_run_the_steps_in_order(scan_rw, rng, growing):
    """x_t = a_t x_{t-1} + u_t with a_t known only at run time: coefficients of modulus above 1
    would amplify the prefix's reordered rounding, so those steps run in the loop's order (from
    the fixed point of a = 2, u = -1 the loop stays at 1 exactly, and so must the result)."""
    a, u, x0 = T.vector("a"), T.vector("u"), T.scalar("x0")
    y, _ = ss.scan(lambda a, u, x: a * x + u, sequences=[a, u], outputs_info=x0)
    if growing:
        values = [[np.full(n, 2.0), -np.ones(n), 1.0] for n in (0, 1, 2, 100)]
    else:
        values = [[rng.uniform(-1, 1, n), rng.normal(size=n), rng.normal()] for n in (0, 1, 2, 1000)]
    f = _check(scan_rw, [a, u, x0], y, values)
    _assert_gone(scan_rw, f, PREFIX)
    if growing:
        np.testing.assert_array_equal(f(*values[-1]), np.ones(100))


# ---------------------------------------------------------------------------- taps fn ignores (issue 12, bug 2)
@pytest.mark.parametrize("fn, expected", [
    (lambda x_tm2, x_tm1: 0.5 * x_tm2, [0.5, 1.0, 0.25, 0.5]),
    (lambda x_tm2, x_tm1: x_tm1 + 1, [3.0, 4.0, 5.0, 6.0]),
    (lambda x_tm2, x_tm1: 0 * x_tm1 + 0.5 * x_tm2 + 1, [1.5, 2.0, 1.75, 2.0]),
])
@pytest.mark.parametrize("constant_steps", [True, False])
def test_a_mit_sot_that_ignores_one_of_its_taps(scan_rw, fn, expected, constant_steps):
    """A zero coefficient (the tap is not read) is a zero operand of the prefix; it used to
    become None and fail to compile. The closed form is not tried: sympy would solve a lower
    order than the initial rows given."""
    h, n = T.vector("h"), T.iscalar("n")
    xs, _ = ss.scan(fn, outputs_info=dict(initial=h, taps=[-2, -1]), n_steps=4 if constant_steps else n)
    inputs = [h] if constant_steps else [h, n]
    values = [np.array([1.0, 2.0])] + ([] if constant_steps else [4])
    f = _check(scan_rw, inputs, xs, [values])
    _assert_gone(scan_rw, f, PREFIX)
    np.testing.assert_allclose(f(*values), expected, rtol=RTOL)
    np.testing.assert_allclose(ss.function(inputs, xs)(*values), expected, rtol=RTOL)  # every rewrite on
    if not constant_steps:
        for steps in STEPS:
            scan_rw.same_as_py(f, inputs, xs, [values[0], steps], rtol=RTOL)


def test_mode_numba_keeps_the_loop_where_only_a_prefix_would_remove_it(scan_rw, rng, same_as_py):
    """A kernel's one pass beats the prefix's log2(T) passes: in mode numba the rule declines
    the prefix (saying why) and the loop stays, with mode "py"'s numbers; a closed form still fires."""
    pytest.importorskip("numba")
    u, init = T.vector("u"), T.vector("init")
    y = _mit_sot([0.5, 0.5], [-1, -2], init, None, None, sequences=u)
    f = ss.function([u, init], y, mode="numba", rewrites=RULE)
    _assert_declined(scan_rw, f, "mode numba compiles the loop")
    for n in (0, 1, 40):
        same_as_py(f, rng.normal(size=n), rng.normal(size=2))
    _assert_gone(scan_rw, ss.function([u, init], y, mode="fast", rewrites=RULE), PREFIX)
    closed = _mit_sot([0.5, 0.5], [-1, -2], init, 1.0, 30)
    g = ss.function([init], closed, mode="numba", rewrites=RULE)
    _assert_gone(scan_rw, g, CLOSED)
    same_as_py(g, rng.normal(size=2))
