"""A loop with until takes n_steps as a bound (2**63 - 1 for a while loop with no trip count):
its buffers start with room for ``GROWTH_START`` steps and double whenever the steps fill them. In
every mode, against a numpy loop: huge and symbolic bounds, bounds the until never reaches,
step counts on both sides of each growth point, every kind of buffer, nested loops; the same
errors as before; numba runs the plain cases compiled; loops without until are unchanged."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.backends.fast.loops import MAX_WINDOW
from symscan.backends.scan_loop import GROWTH_START, grown, may_grow, more_room, start_room

from modes_tested import NUMBA

INT64_MAX = 2**63 - 1
BOUNDS = [2**62, INT64_MAX, "symbolic"]
"""n_steps of a while loop: constants, or an int64 input fed INT64_MAX (as torch.onnx writes)."""
LOOPS = ["-push_out_seq", "-scan_to_accumulate", "-scan_to_linear_recurrence"]
"""Keep inner loops as loops (numba compiles a loop, not the array operations a rewrite makes)."""
STEPS = [1, GROWTH_START - 1, GROWTH_START, GROWTH_START + 1, 3 * GROWTH_START + 5]
"""Steps the until lets run: before, at and after the first growth, and after the third."""


# ---------------------------------------------------------------------------- helpers
def n_steps_of(bound) -> tuple:
    """(n_steps for scan, extra inputs, extra values): a constant, or an int64 input."""
    if bound == "symbolic":
        n = T.lscalar("n")
        return n, [n], [np.int64(INT64_MAX)]
    return bound, [], []


def assert_rows(got, want, what: str = "the result") -> None:
    """Same dtype and shape as the numpy loop's, values to 1e-12."""
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape), f"{what}: {got.dtype}{got.shape} " \
                                                                 f"instead of {want.dtype}{want.shape}"
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=what)


def runs_in_numba(f) -> bool:
    report = f.backend_report()
    return bool(report) and all(line.endswith(": numba") for line in report)


def check(f, values: list, expected: list, mode: str, compiled: bool = True) -> None:
    got = f(*values)
    got = got if isinstance(got, list) else [got]
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        assert_rows(g, e, f"mode {mode}, output {i}")
    if mode == "numba" and compiled:
        assert runs_in_numba(f), f.backend_report()


def counter_step(c, lim):
    """The counter every case stops with: 1, 2, ... until it reaches ``lim``."""
    new_c = c + 1.0
    return new_c, ss.until(new_c >= lim)


# ---------------------------------------------------------------------------- the cases
def sit_sot(bound):
    """A full vector sit-sot (the counter only decides when to stop)."""
    x0, lim = T.vector("x0"), T.scalar("lim")
    n_steps, extra, extra_values = n_steps_of(bound)

    def step(x, c, lim):
        new_c, stop = counter_step(c, lim)
        return [0.5 * x + new_c, new_c], stop

    (xs, _), _ = ss.scan(step, outputs_info=[x0, T.constant(0.0)], non_sequences=lim, n_steps=n_steps)
    start = np.array([1.0, -2.0])

    def expected(steps):
        x, rows = start, []
        for t in range(steps):
            x = 0.5 * x + (t + 1.0)
            rows.append(x)
        return [np.array(rows).reshape(steps, 2)]

    return [x0, lim] + extra, [xs], lambda steps: [start, float(steps)] + extra_values, expected


def mit_sot(bound, taps=(-3, -1)):
    """A mit-sot (x_t = 0.5 x_(t-1) - 0.25 x_(t-far) + c_t) and the full counter."""
    x0, lim = T.matrix("x0"), T.scalar("lim")
    n_steps, extra, extra_values = n_steps_of(bound)
    far = -taps[0]

    def step(x_far, x_1, c, lim):
        new_c, stop = counter_step(c, lim)
        return [0.5 * x_1 - 0.25 * x_far + new_c, new_c], stop

    (xs, cs), _ = ss.scan(step, outputs_info=[dict(initial=x0, taps=list(taps)), T.constant(0.0)],
                          non_sequences=lim, n_steps=n_steps)
    start = np.arange(2.0 * far).reshape(far, 2)

    def expected(steps):
        rows = list(start)
        for t in range(steps):
            rows.append(0.5 * rows[-1] - 0.25 * rows[-far] + (t + 1.0))
        return [np.array(rows[far:]).reshape(steps, 2), np.arange(1.0, steps + 1)]

    return [x0, lim] + extra, [xs, cs], lambda steps: [start, float(steps)] + extra_values, expected


def far_mit_sot(bound):
    """A tap further back than the fast evaluator's window locals: its taps history buffer."""
    return mit_sot(bound, taps=(-(MAX_WINDOW + 2), -1))


def nit_sot_static(bound):
    """A nit-sot whose row shape (3,) the types fix; the counter is not an output."""
    lim = T.scalar("lim")
    n_steps, extra, extra_values = n_steps_of(bound)
    row = T.constant(np.array([1.0, -2.0, 0.5]))

    def step(c, lim):
        new_c, stop = counter_step(c, lim)
        return [new_c, row * new_c], stop

    (_, rows), _ = ss.scan(step, outputs_info=[T.constant(0.0), None], non_sequences=lim, n_steps=n_steps)
    assert rows.type.shape[1:] == (3,)

    def expected(steps):
        return [np.arange(1.0, steps + 1)[:, None] * np.array([1.0, -2.0, 0.5])]

    return [lim] + extra, [rows], lambda steps: [float(steps)] + extra_values, expected


def nit_sot_unknown(bound):
    """A nit-sot whose row shape is only known at run time (a row of the input's length)."""
    v, lim = T.vector("v"), T.scalar("lim")
    n_steps, extra, extra_values = n_steps_of(bound)

    def step(c, v, lim):
        new_c, stop = counter_step(c, lim)
        return [new_c, v * new_c], stop

    (_, rows), _ = ss.scan(step, outputs_info=[T.constant(0.0), None], non_sequences=[v, lim], n_steps=n_steps)
    assert rows.type.shape[1:] == (None,)
    start = np.array([1.0, -2.0, 0.5, 4.0])

    def expected(steps):
        return [np.arange(1.0, steps + 1)[:, None] * start]

    return [v, lim] + extra, [rows], lambda steps: [start, float(steps)] + extra_values, expected


def shared_updates(bound):
    """Shared variables updated each step (their new values are checked by the test)."""
    lim = T.scalar("lim")
    n_steps, extra, extra_values = n_steps_of(bound)
    total, calls = ss.shared(np.float64(0.0), name="total"), ss.shared(np.int64(0), name="calls")

    def step(c, lim):
        new_c, stop = counter_step(c, lim)
        return new_c, {total: total + new_c, calls: calls + 1}, stop

    cs, updates = ss.scan(step, outputs_info=T.constant(0.0), non_sequences=lim, n_steps=n_steps)

    def expected(steps):
        return [np.arange(1.0, steps + 1)]

    return [lim] + extra, [cs], lambda steps: [float(steps)] + extra_values, expected, updates, (total, calls)


PLAIN_CASES = {"sit-sot": sit_sot, "mit-sot": mit_sot, "nit-sot static": nit_sot_static,
               "nit-sot unknown": nit_sot_unknown}
CASES = {**PLAIN_CASES, "mit-sot beyond the window": far_mit_sot}


# ---------------------------------------------------------------------------- huge bounds
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("bound", BOUNDS)
def test_a_while_loop_with_a_huge_bound(mode, case, bound):
    inputs, outputs, values, expected = CASES[case](bound)
    f = ss.function(inputs, outputs, mode=mode)
    for steps in STEPS:
        check(f, values(steps), expected(steps), mode)


@pytest.mark.parametrize("bound", BOUNDS)
def test_the_last_step_of_a_huge_while_loop(mode, bound):
    """Only ``xs[-1]``: a ring of one row after save_mem, no buffer at all to grow."""
    inputs, outputs, values, expected = sit_sot(bound)
    f = ss.function(inputs, outputs[0][-1], mode=mode)
    for steps in STEPS:
        check(f, values(steps), [expected(steps)[0][-1]], mode)


@pytest.mark.parametrize("bound", BOUNDS)
def test_a_ring_longer_than_the_start(mode, bound):
    """``xs[-k:]`` for a k past ``GROWTH_START``: a ring that grows until it has k rows, then wraps."""
    inputs, outputs, values, expected = sit_sot(bound)
    keep = GROWTH_START + 7
    f = ss.function(inputs, outputs[0][-keep:], mode=mode)
    for steps in STEPS + [keep, 4 * GROWTH_START]:
        check(f, values(steps), [expected(steps)[0][-keep:]], mode)


@pytest.mark.parametrize("bound", BOUNDS)
def test_shared_updates(mode, bound):
    inputs, outputs, values, expected, updates, (total, calls) = shared_updates(bound)
    f = ss.function(inputs, outputs, updates=updates, mode=mode)
    for steps in STEPS:
        total.set_value(np.float64(0.0))
        calls.set_value(np.int64(0))
        check(f, values(steps), expected(steps), mode)
        assert_rows(total.get_value(), np.float64(steps * (steps + 1) / 2), "the new total")
        assert_rows(calls.get_value(), np.int64(steps), "the new count")


@pytest.mark.parametrize("go_backwards", [False, True], ids=["forwards", "backwards"])
@pytest.mark.parametrize("steps", STEPS)
def test_a_sequence_bounds_the_steps(mode, steps, go_backwards):
    """No n_steps: the sequence's length is the bound; the until stops first, or not."""
    x, lim = T.vector("x"), T.scalar("lim")
    outs, _ = ss.scan(lambda v, acc, lim: ([acc + v, 2.0 * v], ss.until(acc + v >= lim)), sequences=x,
                      outputs_info=[T.constant(0.0), None], non_sequences=lim, go_backwards=go_backwards)
    f = ss.function([x, lim], outs, mode=mode)
    data = np.linspace(1.0, 2.0, 3 * GROWTH_START + 10)
    order = data[::-1] if go_backwards else data
    sums = np.cumsum(order)
    for limit in (sums[steps - 1], np.inf):
        run = steps if np.isfinite(limit) else len(data)
        check(f, [data, limit], [sums[:run], 2.0 * order[:run]], mode)


@pytest.mark.parametrize("bound", BOUNDS)
def test_integer_and_bool_rows_keep_their_dtype(mode, bound):
    """An int64 state and a bool nit-sot: a grown buffer has its buffer's dtype."""
    lim = T.lscalar("lim")
    n_steps, extra, extra_values = n_steps_of(bound)

    def step(c, lim):
        new_c = c + np.int64(1)
        return [new_c, T.eq(new_c % 3, 0)], ss.until(new_c >= lim)

    (cs, thirds), _ = ss.scan(step, outputs_info=[T.constant(np.int64(0)), None], non_sequences=lim,
                              n_steps=n_steps)
    f = ss.function([lim] + extra, [cs, thirds], mode=mode)
    for steps in STEPS:
        counts = np.arange(1, steps + 1, dtype="int64")
        check(f, [np.int64(steps)] + extra_values, [counts, counts % 3 == 0], mode)


# ---------------------------------------------------------------------------- bounds the until never reaches
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("n_steps", [0, 1, 2, GROWTH_START - 1, GROWTH_START, GROWTH_START + 1,
                                     3 * GROWTH_START + 5])
def test_the_bound_ends_the_loop(mode, case, n_steps):
    """A small constant bound (0; 1, which unrolls): the loop runs all of it when the until never
    fires, and stops at it when the until fires on the last step."""
    inputs, outputs, values, expected = CASES[case](n_steps)
    f = ss.function(inputs, outputs, mode=mode)
    check(f, values(10**9), expected(n_steps), mode, compiled=n_steps > 1)
    if n_steps:
        check(f, values(n_steps), expected(n_steps), mode, compiled=n_steps > 1)


@pytest.mark.parametrize("case", list(PLAIN_CASES))
def test_a_symbolic_bound_the_until_never_reaches(mode, case):
    inputs, outputs, values, expected = CASES[case]("symbolic")
    f = ss.function(inputs, outputs, mode=mode)
    for n_steps in (0, 1, GROWTH_START, 2 * GROWTH_START + 1):
        check(f, values(10**9)[:-1] + [np.int64(n_steps)], expected(n_steps), mode)


# ---------------------------------------------------------------------------- nested loops
@pytest.mark.parametrize("bound", BOUNDS)
def test_a_while_loop_inside_a_scan(mode, bound):
    """Each row's limit stops an inner while loop (a full sit-sot, and a nit-sot whose rows
    have the run-time length of ``v``); the outer loop has no until."""
    lims, v = T.vector("lims"), T.vector("v")
    n_steps, extra, extra_values = n_steps_of(bound)

    def inner_step(c, v, lim):  # the state is read off the row: no rewrite takes it out of the loop
        row = v * (c + 1.0)
        return [row[0], row], ss.until(row[0] >= lim)  # row[0] is c + 1 for this v

    def row(lim, v, *n):
        (cs, rows), _ = ss.scan(inner_step, outputs_info=[T.constant(0.0), None], non_sequences=[v, lim],
                                n_steps=n[0] if n else n_steps)
        return [cs.sum(), cs.shape[0], rows.sum(axis=0)]

    outs, _ = ss.scan(row, sequences=lims, non_sequences=[v] + extra)
    f = ss.function([lims, v] + extra, outs, mode=mode, rewrites=LOOPS)
    limits, data = np.array(STEPS, dtype=float), np.array([1.0, -0.5])
    sums = limits * (limits + 1) / 2
    check(f, [limits, data] + extra_values, [sums, limits.astype("int64"), sums[:, None] * data], mode)


@pytest.mark.parametrize("bound", BOUNDS)
def test_a_scan_inside_a_while_loop(mode, bound):
    """Each step of the while loop runs a scan over a vector (a row of run-time length)."""
    v, lim = T.vector("v"), T.scalar("lim")
    n_steps, extra, extra_values = n_steps_of(bound)

    def step(c, v, lim):
        new_c, stop = counter_step(c, lim)
        partial, _ = ss.scan(lambda a, acc: acc + a, sequences=v * new_c, outputs_info=T.constant(0.0))
        return [new_c, partial], stop

    (cs, rows), _ = ss.scan(step, outputs_info=[T.constant(0.0), None], non_sequences=[v, lim], n_steps=n_steps)
    f = ss.function([v, lim] + extra, [cs, rows], mode=mode, rewrites=LOOPS)
    data = np.array([0.5, 1.0, -3.0])
    for steps in STEPS:
        counts = np.arange(1.0, steps + 1)
        check(f, [data, float(steps)] + extra_values, [counts, counts[:, None] * np.cumsum(data)], mode)


# ---------------------------------------------------------------------------- errors as before
def _changing_row(n_steps, nit_sot: bool):
    """A step whose row gets one element longer from step ``GROWTH_START + 3`` on (after the
    first growth): as a sit-sot's new state, or as a nit-sot's row."""
    v, lim = T.vector("v"), T.scalar("lim")
    longer_from = GROWTH_START + 3

    def step(x, c, v, lim):
        new_c, stop = counter_step(c, lim)
        source = v if nit_sot else x
        grown_row = T.concatenate([source, source])[: source.shape[0] + T.cast(new_c > longer_from, "int64")]
        return [x if nit_sot else grown_row, new_c, 2.0 * grown_row if nit_sot else c], stop

    outs, _ = ss.scan(step, outputs_info=[v, T.constant(0.0), None], non_sequences=[v, lim], n_steps=n_steps)
    return [v, lim], outs[2] if nit_sot else outs[0], longer_from


@pytest.mark.parametrize("nit_sot", [False, True], ids=["sit-sot", "nit-sot"])
def test_a_row_of_another_shape_raises_as_before(mode, nit_sot):
    """The message of a bounded loop (preallocated before this change) is the message with a
    huge bound, in every mode: which output, its shape, the step and the shape it produced."""
    messages = []
    for n_steps in (3 * GROWTH_START, 2**62):
        inputs, out, longer_from = _changing_row(n_steps, nit_sot)
        f = ss.function(inputs, out, mode=mode)
        assert f(np.ones(3), float(longer_from)).shape == (longer_from, 3)
        with pytest.raises(ValueError) as error:
            f(np.ones(3), 1e9)
        messages.append(str(error.value).split(" (while evaluating")[0])
    expected = (f"has shape (3,) per step but step {longer_from} produced shape (4,); fn must return the same "
                "shape at every step")
    assert messages[0] == messages[1] and messages[0].startswith("scan: ") and messages[0].endswith(expected)


def test_a_too_short_sequence_raises_as_before(mode):
    x = T.vector("x")
    out, _ = ss.scan(lambda v: (2.0 * v, ss.until(v > 100)), sequences=x, n_steps=2**62)
    f = ss.function([x], out, mode=mode)
    with pytest.raises(ValueError, match=r"has 10 elements but 4611686018427387904 steps with taps \[0\] need "
                                         r"4611686018427387904 \(n_steps \+ 0\)"):
        f(np.ones(10))


# ---------------------------------------------------------------------------- how the loops are written
def test_only_loops_with_until_run_in_chunks():
    """Mode fast: a loop without until allocates every row at once and runs one ``for``; a
    while loop runs in chunks up to its room and grows all its buffers between chunks (no
    step checks anything); a while loop that keeps only its last step has nothing to grow."""
    x0 = T.scalar("x0")
    plain, _ = ss.scan(lambda x: 2.0 * x, outputs_info=x0, n_steps=5)
    source = ss.function([x0], plain, mode="fast").source
    assert "_scan_room" not in source and "while True" not in source
    inputs, outputs, _, _ = mit_sot(2**62)
    source = ss.function(inputs, outputs, mode="fast").source
    assert source.count("while True:") == 1 and source.count("_scan_grown(") == 2
    inputs, outputs, _, _ = sit_sot(2**62)
    source = ss.function(inputs, outputs[0][-1], mode="fast").source
    assert "while True" not in source and "_scan_grown" not in source


@pytest.mark.skipif(not NUMBA, reason="numba is not installed")
def test_numba_kernels_grow_only_in_loops_with_until():
    """The room is a kernel parameter only where the kernel may grow a buffer."""
    x0 = T.scalar("x0")
    plain, _ = ss.scan(lambda x: T.tanh(x) + 1.0, outputs_info=x0, n_steps=5)
    f = ss.function([x0], plain, mode="numba")
    assert runs_in_numba(f) and "_room" not in f.source
    inputs, outputs, _, _ = sit_sot(INT64_MAX)
    f = ss.function(inputs, outputs, mode="numba")
    call = f.source.split("_kernel0(")[1].split("\n")[0]
    assert runs_in_numba(f) and "_room" in call


def test_the_shared_rules():
    assert start_room(INT64_MAX, until=True) == GROWTH_START and start_room(5, until=True) == 5
    assert start_room(INT64_MAX, until=False) == INT64_MAX
    assert more_room(GROWTH_START, INT64_MAX) == 2 * GROWTH_START and more_room(64, 100) == 100
    assert may_grow(None, 3) and may_grow(GROWTH_START + 4, 3) and not may_grow(GROWTH_START + 3, 3)
    data = np.arange(6.0).reshape(3, 2)
    bigger = grown(data, None, 1, 4)
    assert bigger.shape == (5, 2) and bigger.dtype == data.dtype
    np.testing.assert_array_equal(bigger[:3], data)
    assert grown(data, 3, 0, 10) is data  # a ring already at its length


# ---------------------------------------------------------------------------- ONNX
def test_onnx_export_of_a_while_loop_without_a_trip_count():
    """n_steps = INT64_MAX, as torch.onnx writes a while loop: the exported Loop gives the
    numbers of the numpy loop in onnxruntime."""
    pytest.importorskip("onnxruntime")
    inputs, outputs, values, expected = mit_sot(INT64_MAX)
    f = ss.function(inputs, outputs, mode="onnxruntime")
    for steps in (1, GROWTH_START + 1):
        check(f, values(steps), expected(steps), "onnxruntime")


def test_the_exported_while_loop_passes_the_checker_and_runs_in_both_runtimes(onnx_agree):
    inputs, outputs, values, _ = sit_sot(INT64_MAX)
    onnx_agree(inputs, outputs, value_sets=[values(1), values(GROWTH_START + 1)])
