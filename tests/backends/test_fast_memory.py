"""The fast evaluator's memory: an intermediate array is deleted after its last reader, a
loop's locals let go of the arrays they view, and the plain gradient of A**k (W1's loop)
peaks near its forward trace. Peaks are tracemalloc's (it sees numpy's buffers) of one call
after a warm-up call; numbers are compared with mode "py"."""

import re
import tracemalloc

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from benchmarks.checkpoint_memory import TRACE_TARGET, gradient_function, values
from symscan.backends.fast import FastEvaluator
from symscan.graph.fg import FunctionGraph

from modes_tested import NUMBA

SIZE = 200_000  # elements of the big arrays below (1.6 MB each)


def peak_of_call(f, *inputs) -> int:
    """Peak bytes allocated during one call of ``f`` (after a warm-up call)."""
    f(*inputs)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        f(*inputs)
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def deleted_names(source: str) -> list[tuple[int, str]]:
    """(line number, name) of every name a ``del`` statement removes."""
    found = []
    for number, line in enumerate(source.splitlines()):
        if line.strip().startswith("del "):
            found += [(number, name.strip()) for name in line.strip()[4:].split(",")]
    return found


def test_dead_intermediates_are_deleted_after_their_last_reader_and_never_read_again():
    x = T.vector("x")
    big = T.exp(x) * 2
    out = [big.sum() + T.sin(x).sum(), x * 3]
    fgraph = FunctionGraph([x], out)
    evaluator = FastEvaluator(fgraph)
    source, lines = evaluator.source, evaluator.source.splitlines()
    deleted = deleted_names(source)
    assert deleted, source
    returned = re.search(r"return \[(.*)\]", source).group(1).split(", ")
    for number, name in deleted:
        assert not name.startswith("in") and name not in returned, source  # the caller's, or a result
        assert any(re.match(rf"\s*{name}\b.* = ", line) for line in lines[:number]), source
        assert not any(re.search(rf"\b{name}\b", line) for line in lines[number + 1:]), source
    want = ss.function([x], out, mode="py")(np.linspace(0, 1, 7))
    got = evaluator([np.linspace(0, 1, 7)])
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_a_freed_intermediate_gives_its_memory_back_before_the_next_one():
    """exp(x)*2 is summed and dead before sin(x)*3 is made: one big array at a time."""
    x = T.vector("x")
    cost = (T.exp(x) * 2).sum() + (T.sin(x) * 3).sum()
    f = ss.function([x], cost, mode="fast")
    data = np.linspace(0, 1, SIZE)
    assert peak_of_call(f, data) < 1.5 * data.nbytes
    np.testing.assert_allclose(f(data), ss.function([x], cost, mode="py")(data), rtol=1e-12)


def test_a_loop_lets_go_of_the_sequence_it_read():
    """After the loop, its views of exp(X) (the sequence, a step's row) are released, so
    exp(X) is freed before X * s is made."""
    X = T.matrix("X")
    s, _ = ss.scan(lambda row, s: s + (row * s).sum() * 1e-6, sequences=T.exp(X), outputs_info=T.constant(1.0))
    cost = T.sin(X * s[-1]).sum()
    f = ss.function([X], cost, mode="fast", rewrites=["-vectorize"])
    assert f.source.count("for ") == 1 and "= None" in f.source.split("for ", 1)[1]
    data = np.linspace(0, 1, SIZE).reshape(400, -1)
    assert peak_of_call(f, data) < 1.5 * data.nbytes
    np.testing.assert_allclose(f(data), ss.function([X], cost, mode="py")(data), rtol=1e-12)


def test_error_lines_still_name_their_node_after_deletions():
    x, i = T.vector("x"), T.lscalar("i")
    out = (T.exp(x) * 2)[i] + T.sin(x).sum()
    f = ss.function([x, i], out, mode="fast")
    assert "del " in f.source
    with pytest.raises(IndexError, match="Subtensor"):
        f(np.ones(3), 5)


MEMORY_MODES = ["fast"] + (["numba"] if NUMBA else [])


@pytest.mark.parametrize("mode", MEMORY_MODES)
@pytest.mark.parametrize("rewrites", [None, ["-vectorize"]], ids=["closed form", "loop"])
def test_plain_gradient_of_a_power_peaks_within_twice_its_trace(mode, rewrites, monkeypatch, tmp_path):
    """W1's gradient (n=200, k=2000): within the target (twice the trace), and in fact one
    trace-sized array (the forward buffer, read in place): no dense cotangent of the states,
    no copy of the closed form's rows, no dead array kept."""
    monkeypatch.setenv("SYMSCAN_CACHE_DIR", str(tmp_path))
    n, k = 200, 2000
    A, steps = T.vector("A"), T.lscalar("k")
    states, _ = ss.scan(lambda h, A: h * A, outputs_info=T.ones_like(A), non_sequences=A, n_steps=steps)
    grad = ss.grad(states[-1].sum(), A)
    f = ss.function([A, steps], grad, mode=mode, rewrites=rewrites)
    inputs = values(n, k)
    trace = n * k * 8
    peak = peak_of_call(f, *inputs)
    assert peak <= 1.1 * TRACE_TARGET * trace
    assert peak < 1.5 * trace, f"a second trace-sized array: peak {peak / trace:.2f}x the trace\n{f.source}"
    got = f(*inputs)
    np.testing.assert_allclose(got, ss.function([A, steps], grad, mode="py")(*inputs), rtol=1e-12)
    np.testing.assert_allclose(got, k * inputs[0] ** (k - 1), rtol=1e-9)


def test_the_benchmark_function_is_the_one_measured_here():
    """benchmarks/checkpoint_memory.py's plain gradient, in process: within the target."""
    f = gradient_function("plain", 100, "fast")
    inputs = values(200, 2000)
    assert peak_of_call(f, *inputs) <= 1.1 * TRACE_TARGET * 200 * 2000 * 8
