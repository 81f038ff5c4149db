"""A kernel's step allocates nothing (backends/numba/step_arrays.py): products, joins and
elementwise chains write into the value's buffer row, into arrays the kernel keeps for a
carried state (one per window slot, used in turn) or into scratch arrays for values that die in
the step; the results stay mode py's."""

from __future__ import annotations

import re

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from benchmarks import grad_workloads

pytest.importorskip("numba")

ALLOCATING = ("np.empty(", "np.zeros(", "np.concatenate(", ".copy()")
NEW_PRODUCT = re.compile(r"= (np\.dot|_small\.\w+)\([^,()]+, [^,()]+\)$")  # a product without its out array


def kernel_sources(monkeypatch) -> list[str]:
    import symscan.backends.numba.evaluator as evaluator

    sources, load = [], evaluator.load_kernel
    monkeypatch.setattr(evaluator, "load_kernel", lambda source, *a: sources.append(source) or load(source, *a))
    return sources


def step_allocations(source: str) -> list[str]:
    """Lines of the kernel's step loop that make a new array at every step (an allocation
    guarded by a shape check or by ``t == 0`` happens once)."""
    body = source[source.index("    for t in range("):].splitlines()
    found = []
    for before, line in zip(body, body[1:]):
        guarded = before.strip().startswith("if ") and (".shape" in before or "t == 0" in before)
        if (any(a in line for a in ALLOCATING) and not guarded) or NEW_PRODUCT.search(line.strip()):
            found.append(line.strip())
    return found


def taps_rnn_gradient(mode: str, steps: int, size: int):
    """G5 (benchmarks/grad_workloads.py: W5's taps RNN and its gradient) at a small size: the
    function and its argument values."""
    work = grad_workloads.taps_rnn(steps, size)
    return ss.function(work.inputs, work.outputs, mode=mode), work.values


@pytest.mark.parametrize("size", [4, 40])  # products looped in the kernel; BLAS's
def test_taps_rnn_gradient_allocates_nothing_per_step(monkeypatch, size):
    sources = kernel_sources(monkeypatch)
    f, values = taps_rnn_gradient("numba", 9, size)
    assert f.backend_report() == ["scan: numba", "grad_of_scan: numba"]
    for got, want in zip(f(*values), taps_rnn_gradient("py", 9, size)[0](*values)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)
    assert len(sources) == 2
    for source in sources:
        assert step_allocations(source) == []
    reverse = next(s for s in sources if "carried" in s)
    assert "np.concatenate" not in reverse  # the carried window of x's cotangents, joined in place


def last_state(step, initial, sequences, non_sequences, mode: str, taps=None):
    outputs_info = initial if taps is None else dict(initial=initial, taps=taps)
    out, _ = ss.scan(step, sequences=sequences, outputs_info=outputs_info, non_sequences=non_sequences)
    return out[-1]


def test_carried_product_uses_two_arrays_in_turn(monkeypatch):
    sources = kernel_sources(monkeypatch)
    xs, h0, W = T.matrix("xs"), T.vector("h0"), T.matrix("W")
    rng = np.random.default_rng(1)
    values = [rng.normal(size=(7, 30)), rng.normal(size=40), rng.normal(size=(40, 40)) * 0.2]
    results = {}
    for mode in ("py", "numba"):
        out = last_state(lambda x, h, W: T.dot(h, W) + T.sum(x), h0, xs, W, mode)
        results[mode] = ss.function([xs, h0, W], out, mode=mode)(*values)
    np.testing.assert_allclose(results["numba"], results["py"], rtol=1e-12)
    (source,) = sources
    assert "carried0[t % 2]" in source and step_allocations(source) == []


def test_carried_window_of_two_uses_three_arrays(monkeypatch):
    """A state read at taps -2 and -1 stays in the window two steps: step t's array must not be
    one of the two the step reads."""
    sources = kernel_sources(monkeypatch)
    x0, W = T.matrix("x0"), T.matrix("W")
    rng = np.random.default_rng(2)
    values = [rng.normal(size=(2, 40)), rng.normal(size=(40, 40)) * 0.2]
    results = {}
    for mode in ("py", "numba"):
        out, _ = ss.scan(lambda a, b, W: T.tanh(T.dot(b, W)) - 0.5 * a, outputs_info=dict(initial=x0, taps=[-2, -1]),
                         non_sequences=W, n_steps=9)
        results[mode] = ss.function([x0, W], out[-1], mode=mode)(*values)
    np.testing.assert_allclose(results["numba"], results["py"], rtol=1e-12)
    (source,) = sources
    assert "% 3]" in source and step_allocations(source) == []


def test_carried_join_reads_the_previous_array():
    """A shift register: the new state is the old one's last rows and a new row, written into
    the other carried array (never over the rows it copies)."""
    x0, W = T.matrix("x0"), T.matrix("W")
    rng = np.random.default_rng(3)
    values = [rng.normal(size=(3, 40)), rng.normal(size=(40, 40)) * 0.2]
    results = {}
    for mode in ("py", "fast", "numba"):
        out, _ = ss.scan(lambda x, W: T.concatenate([x[1:], T.dot(x[-1], W)[None, :]], axis=0), outputs_info=x0,
                         non_sequences=W, n_steps=6)
        results[mode] = ss.function([x0, W], out[-1], mode=mode)(*values)
    np.testing.assert_allclose(results["numba"], results["py"], rtol=1e-12)
    np.testing.assert_allclose(results["fast"], results["py"], rtol=1e-12)


def test_join_into_its_buffer_row(monkeypatch):
    sources = kernel_sources(monkeypatch)
    xs, W = T.matrix("xs"), T.matrix("W")
    out, _ = ss.scan(lambda x, W: T.concatenate([T.dot(x, W), x * 2.0]), sequences=xs, non_sequences=W)
    rng = np.random.default_rng(4)
    values = [rng.normal(size=(5, 3)), rng.normal(size=(3, 2))]
    got = ss.function([xs, W], out, mode="numba")(*values)
    np.testing.assert_allclose(got, ss.function([xs, W], out, mode="py")(*values), rtol=1e-12)
    (source,) = sources
    assert "np.concatenate" not in source and step_allocations(source) == []


def test_join_of_pieces_that_differ_off_its_axis_raises_mode_fast_error():
    xs, ys = T.matrix("xs"), T.tensor3("ys")
    out, _ = ss.scan(lambda x, y: T.concatenate([x[None, :], y], axis=0).sum(axis=0), sequences=[xs, ys])
    values = [np.ones((3, 4)), np.ones((3, 2, 5))]
    with pytest.raises(ValueError) as fast_error:
        ss.function([xs, ys], out, mode="fast")(*values)
    with pytest.raises(ValueError) as numba_error:
        ss.function([xs, ys], out, mode="numba")(*values)
    assert str(numba_error.value) == str(fast_error.value)


def test_a_view_kept_longer_deepens_the_carried_arrays(monkeypatch):
    """A state whose view is another state kept two steps (taps -2, -1) goes into three arrays
    used in turn, not two: step t would write over what step t - 2's view still shows."""
    sources = kernel_sources(monkeypatch)
    xs, h0, g0, W = T.matrix("xs"), T.vector("h0"), T.matrix("g0"), T.matrix("W")

    def step(x, h, g_tm2, g_tm1, W):
        new = T.tanh(T.dot(h, W) + 0.5 * g_tm2 + x.sum())
        return new, new[::-1]

    rng = np.random.default_rng(5)
    values = [rng.normal(size=(6, 2)), rng.normal(size=40), rng.normal(size=(2, 40)), rng.normal(size=(40, 40)) * 0.2]
    results = {}
    for mode in ("py", "numba"):
        (hs, gs), _ = ss.scan(step, sequences=xs, outputs_info=[h0, dict(initial=g0, taps=[-2, -1])],
                              non_sequences=W)
        results[mode] = ss.function([xs, h0, g0, W], [hs[-1], gs[-1]], mode=mode)(*values)
    for got, want in zip(results["numba"], results["py"]):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    (source,) = sources
    assert "% 3]" in source and "% 2]" not in source


def test_lstm_gradient_allocates_nothing_per_step(monkeypatch):
    """The gate slices' inc_subtensors copy into kept arrays, the bias gradient's batch sum
    goes into a scratch array and the cell state's cotangent (a sum_to of a chain) into
    carried ones."""
    from tests.backends.test_numba_fused import lstm_gradient, lstm_values

    sources = kernel_sources(monkeypatch)
    f = lstm_gradient("numba")
    values = lstm_values()
    for got, want in zip(f(*values), lstm_gradient("py")(*values)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-15)
    assert len(sources) == 2
    for source in sources:
        assert step_allocations(source) == []


def same_as_py(build, values: list) -> None:
    """``build(mode)`` (a compiled function) gives mode py's numbers in mode numba."""
    for got, want in zip(build("numba")(*values), build("py")(*values)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)


def ring_values() -> list:
    rng = np.random.default_rng(0)
    return [rng.normal(size=(3, 20)), rng.normal(size=(20, 20)) * 0.3]


def ring_and_window(step, last: int = -2):
    """A nit-sot kept in a ring of two rows (only ys[-2] read; ``last``) whose value (or a view
    of it) is also a state read three steps later (taps -3, -1): step t + 2 rewrites the ring row."""
    def build(mode):
        x0, Wi = T.matrix("x0"), T.matrix("Wi")
        (xs, ys), _ = ss.scan(step, outputs_info=[dict(initial=x0, taps=[-3, -1]), None],
                              non_sequences=T.specify_shape(Wi, (20, 20)), n_steps=8)
        return ss.function([x0, Wi], [xs[-1], ys[last]], mode=mode)
    return build


def test_product_kept_longer_than_its_ring_is_not_computed_into_its_row(monkeypatch):
    sources = kernel_sources(monkeypatch)

    def step(a, b, W):
        new = T.dot(b - 0.5 * a, W)
        return [new[::-1], new]

    same_as_py(ring_and_window(step), ring_values())
    (source,) = sources
    assert "% 4]" in source  # four carried arrays: the window keeps it three steps


def test_chain_kept_longer_than_its_ring_is_not_computed_into_its_row():
    def step(a, b, W):
        new = T.tanh(T.dot(b, W)) + 0.5 * a
        return [new[::-1], new]

    same_as_py(ring_and_window(step), ring_values())


def test_same_value_as_state_and_ring_output():
    def step(a, b, W):
        new = T.tanh(T.dot(b, W)) + 0.5 * a
        return [new, new]

    same_as_py(ring_and_window(step), ring_values())


def passed_on(extra=None, full: bool = False):
    """step(a, b): x = tanh(a @ W); returns [x, a, x * b]: a window value of hs (x of step
    t - 1) returned as gs, so gs's window keeps x one step longer than hs's does; ``extra``
    (a, b) -> a shared update or an until condition reading the passed-on value."""
    def build(mode):
        h0, W = T.vector("h0"), T.matrix("W")
        shared = ss.shared(np.zeros(20), name="s")

        def step(a, b, W):
            x = T.tanh(T.dot(a, W))
            outputs = [x, a, x * b]
            if extra == "shared":
                return outputs, {shared: b[::-1]}
            if extra == "until":
                return outputs, ss.until(b[0] > 0.99)
            return outputs

        (hs, gs, ys), updates = ss.scan(step, outputs_info=[h0, h0 * 0.5, None], non_sequences=W, n_steps=6)
        outputs = [hs, gs, ys] if full else [hs[-1], gs[-1], ys]
        return ss.function([h0, W], outputs + ([updates[shared]] if extra == "shared" else []), mode=mode)
    return build


@pytest.mark.parametrize("extra, full", [(None, False), (None, True), ("shared", False), ("until", False)])
def test_window_value_passed_on_keeps_the_carried_array(monkeypatch, extra, full):
    sources = kernel_sources(monkeypatch)
    rng = np.random.default_rng(0)
    same_as_py(passed_on(extra, full), [rng.normal(size=20), rng.normal(size=(20, 20)) * 0.3])
    if extra is None and not full:
        (source,) = sources
        assert "% 3]" in source  # x: in hs's window one step, then in gs's one more


def test_window_value_passed_on_twice_keeps_the_carried_array_longer(monkeypatch):
    """x in hs's window, then gs's, then cs's: read three steps later."""
    sources = kernel_sources(monkeypatch)

    def build(mode):
        h0, W = T.vector("h0"), T.matrix("W")

        def step(a, b, c, W):
            x = T.tanh(T.dot(a, W))
            return [x, a, b, x * c]

        (hs, gs, cs, ys), _ = ss.scan(step, outputs_info=[h0, h0 * 0.5, h0 * 0.25, None], non_sequences=W,
                                      n_steps=7)
        return ss.function([h0, W], [hs[-1], gs[-1], cs[-1], ys], mode=mode)

    rng = np.random.default_rng(1)
    same_as_py(build, [rng.normal(size=20), rng.normal(size=(20, 20)) * 0.3])
    (source,) = sources
    assert "% 4]" in source


@pytest.mark.parametrize("last, into_row", [(-2, False), (-4, True)])  # a ring of 2 rows; of 4
def test_unfused_ufunc_into_its_ring_row_only_where_the_ring_outlives_its_readers(monkeypatch, last, into_row):
    """The elementwise emitter's own write into a buffer row (for an op outside any fused
    chain) follows the same rule."""
    from symscan.backends.numba import fused

    monkeypatch.setattr(fused, "find_groups", lambda fgraph: {})
    sources = kernel_sources(monkeypatch)

    def step(a, b, W):
        new = T.tanh(T.dot(b, W) - 0.5 * a)
        return [new[::-1], new]

    same_as_py(ring_and_window(step, last), ring_values())
    (source,) = sources
    assert ("_npy_tanh_float64_into(" in source) == into_row


def test_increments_the_inplace_rewrite_marked_write_into_their_base(monkeypatch):
    """An LSTM gradient's gate slices are increments of one zeros array that nothing else
    reads: in the kernel they write into it, with no copy of the base per increment."""
    from tests.backends.test_numba_fused import lstm_gradient, lstm_values

    sources = kernel_sources(monkeypatch)
    f = lstm_gradient("numba")
    values = lstm_values()
    for got, want in zip(f(*values), lstm_gradient("py")(*values)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-15)
    reverse = next(s for s in sources if "carried" in s)
    lines = [line.strip() for line in reverse[reverse.index("    for t in range("):].splitlines()]
    bases = [re.match(r"view\d+ = (b\d+)\[", line) for line in lines]
    increments = [(lines[i - 1], m.group(1)) for i, m in enumerate(bases) if m]
    assert len(increments) == 4  # the four gates
    for before, base in increments:  # the base is the array itself, not a copy written into it
        assert re.fullmatch(rf"{base} = b\d+", before), before
        assert not any(line.startswith("_fassign_") and f"({base}, " in line for line in lines)
