"""BLAS threads per product (symscan/backends/blas_threads.py): one thread for small products
and for loops of small steps, threads for loops whose steps hold large products, never more
than the library had, the library's setting restored afterwards."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.backends import blas_threads

pytest.importorskip("threadpoolctl")


@pytest.fixture
def libraries():
    """numpy's OpenBLAS on at least two threads for the test (its count restored afterwards)."""
    libs = blas_threads.libraries()
    if not libs:
        pytest.skip("no OpenBLAS with a pthreads pool is loaded")
    saved = [lib.get() for lib in libs]
    for lib in libs:
        lib.set(max(2, lib.get()))
    yield libs
    for lib, count in zip(libs, saved):
        lib.set(count)


@pytest.fixture
def dot_threads(monkeypatch, libraries):
    """The BLAS thread counts each np.dot / np.matmul of the generated code ran with."""
    seen = []
    for name in ("dot", "matmul"):
        original = getattr(np, name)

        def recording(a, b, original=original):
            seen.append(max(lib.get() for lib in libraries))
            return original(a, b)

        monkeypatch.setattr(np, name, recording)
    return seen


def elman(steps=5):
    X, W, h0 = T.tensor3("X"), T.matrix("W"), T.matrix("h0")
    hs, _ = ss.scan(lambda x, h, W: T.tanh(x + T.dot(h, W)), sequences=X, outputs_info=h0, non_sequences=W)
    return [X, W, h0], hs


def test_a_loop_with_products_runs_on_one_thread_and_restores_the_count(rng, libraries, dot_threads):
    inputs, hs = elman()
    f = ss.function(inputs, [hs, T.dot(hs[-1].T, hs[-1])], mode="fast")
    assert f.source.count("_blas_loop") == 2 and f.source.count(".start()") == 1  # started, ended
    values = [rng.normal(size=(5, 4, 3)), rng.normal(size=(3, 3)), rng.normal(size=(4, 3))]
    dot_threads.clear()
    got = f(*values)
    assert dot_threads[:5] == [1] * 5  # the steps' products
    assert [lib.get() for lib in libraries] == [max(2, lib.get()) for lib in libraries]
    expected = ss.function(inputs, [hs, T.dot(hs[-1].T, hs[-1])], mode="py")(*values)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_a_loop_without_products_leaves_blas_alone(rng):
    X, h0 = T.matrix("X"), T.vector("h0")
    hs, _ = ss.scan(lambda x, h: T.tanh(x + h), sequences=X, outputs_info=h0)
    assert "_blas" not in ss.function([X, h0], hs, mode="fast").source


def test_nested_loops_switch_once_around_the_outer_loop(rng, libraries, dot_threads):
    X, W = T.tensor3("X"), T.matrix("W")

    def outer(x_rows, W):
        inner, _ = ss.scan(lambda x, h, W: T.tanh(x + T.dot(h, W)), sequences=x_rows,
                           outputs_info=T.zeros_like(x_rows[0]), non_sequences=W)
        return inner[-1]

    ys, _ = ss.scan(outer, sequences=X, non_sequences=W)
    f = ss.function([X, W], ys, mode="fast")
    assert f.source.count(".start()") == 1
    values = [rng.normal(size=(3, 4, 2)), rng.normal(size=(2, 2))]
    expected = ss.function([X, W], ys, mode="py")(*values)
    dot_threads.clear()
    np.testing.assert_allclose(f(*values), expected, rtol=1e-12)
    assert dot_threads and set(dot_threads) == {1}


def test_products_outside_loops_get_threads_by_size(rng, libraries, dot_threads, monkeypatch):
    a, b = T.matrix("a"), T.matrix("b")
    f = ss.function([a, b], [T.dot(a, b), a @ b], mode="fast")
    assert "_blas_dot(" in f.source and "_blas_matmul(" in f.source
    small = [rng.normal(size=(20, 20)), rng.normal(size=(20, 20))]  # OpenBLAS's own single thread
    middle = [rng.normal(size=(100, 100)), rng.normal(size=(100, 100))]  # 1e6 multiply-adds: one thread
    default = max(lib.get() for lib in libraries)
    dot_threads.clear()
    f(*small)
    f(*middle)
    assert dot_threads == [default, default, 1, 1]
    monkeypatch.setattr(ss.config, "blas_threads", 1)
    monkeypatch.setattr(blas_threads, "SMALL_PRODUCT", 10_000)
    got = f(*middle)
    assert dot_threads[-2:] == [1, 1]
    np.testing.assert_allclose(got[0], middle[0] @ middle[1], rtol=1e-12)


def test_never_more_threads_than_the_library_has(libraries, monkeypatch):
    """A user's limit (threadpoolctl, OPENBLAS_NUM_THREADS) is a ceiling: asked for more, the
    library keeps its count; the count found is restored, not a remembered default."""
    for lib in libraries:
        lib.set(1)
    monkeypatch.setattr(ss.config, "blas_threads", 8)
    seen = []
    blas_threads.product(lambda: seen.append([lib.get() for lib in libraries]), 10**9)
    loop = blas_threads.LoopThreads()
    loop.one_step = 1.0  # steps of a second: large products
    run = loop.start()
    seen.append([lib.get() for lib in libraries])
    loop.end(run)
    assert seen == [[1] * len(libraries)] * 2 and run.threads == 1
    assert [lib.get() for lib in libraries] == [1] * len(libraries)


def test_requests_nest_and_the_last_one_out_restores(libraries):
    default = [lib.get() for lib in libraries]
    loop = blas_threads.LoopThreads()
    outer = loop.start()  # not timed yet: one thread
    with blas_threads.one_thread():
        assert [lib.get() for lib in libraries] == [1] * len(libraries)
    assert [lib.get() for lib in libraries] == [1] * len(libraries)  # the loop still runs
    loop.end(outer)
    assert [lib.get() for lib in libraries] == default


def test_blas_threads_off_changes_nothing(rng, libraries, dot_threads, monkeypatch):
    monkeypatch.setattr(ss.config, "blas_threads", "off")
    inputs, hs = elman()
    f = ss.function(inputs, hs, mode="fast")
    dot_threads.clear()
    f(rng.normal(size=(5, 4, 3)), rng.normal(size=(3, 3)), rng.normal(size=(4, 3)))
    assert set(dot_threads) == {max(lib.get() for lib in libraries)} != {1}


def test_large_products_get_the_idle_cores(libraries, monkeypatch):
    monkeypatch.setattr(blas_threads._STATE, "backoff_until", -1.0)
    monkeypatch.setattr(blas_threads, "_idle_cores", lambda: 1)
    assert blas_threads.threads_for(10**9) == 1  # a busy machine: one thread waits for no core
    monkeypatch.setattr(blas_threads, "_idle_cores", lambda: 2)
    assert blas_threads.threads_for(10**9) == 2
    assert blas_threads.threads_for(blas_threads.SMALL_PRODUCT - 1) == 1
    assert blas_threads.threads_for(blas_threads.LIBRARY_ONE_THREAD) is None


def test_a_threaded_product_slower_than_one_thread_means_one_thread_for_a_while(libraries, monkeypatch):
    monkeypatch.setattr(blas_threads._STATE, "backoff_until", -1.0)
    monkeypatch.setattr(blas_threads, "_idle_cores", lambda: 2)
    rate = blas_threads._one_thread_rate()
    assert 1e-12 < rate < 1e-8  # seconds per multiply-add: 0.1-1000 GFlop/s
    blas_threads._after_threaded(10**8, 0.5 * 10**8 * rate, 2)  # twice as fast: fine
    assert blas_threads.threads_for(10**8) == 2
    blas_threads._after_threaded(10**8, 20 * 10**8 * rate, 2)  # a thread waited for a core
    assert blas_threads.threads_for(10**8) == 1
    monkeypatch.setattr(blas_threads._STATE, "backoff_until", -1.0)
    assert blas_threads.threads_for(10**8) == 2


def test_the_idle_cores_estimate_counts_other_tasks_only():
    blas_threads._STATE.idle = (-1.0, 0)
    assert 1 <= blas_threads._idle_cores() <= blas_threads._STATE.cores


def test_product_sizes():
    a, b, v = np.ones((3, 4)), np.ones((4, 5)), np.ones(4)
    assert blas_threads.dot_size(a, b) == 60 and blas_threads.dot_size(a, v) == 12
    assert blas_threads.dot_size(np.ones((2, 3, 4)), b) == 120 and blas_threads.dot_size(v, v) == 4
    assert blas_threads.matmul_size(np.ones((7, 3, 4)), b) == 60


@pytest.mark.parametrize("value, expected", [("auto", "auto"), ("off", 0), ("3", 3), (2, 2), (" AUTO ", "auto")])
def test_the_setting_takes_auto_off_or_a_count(value, expected, monkeypatch):
    monkeypatch.setattr(ss.config, "blas_threads", value)
    assert ss.config.blas_threads == expected


def test_a_bad_setting_says_what_is_accepted():
    with pytest.raises(ValueError, match=r"blas_threads .*'auto', 'off' or a number of threads.*got 'many'"):
        ss.config.blas_threads = "many"


def test_matmul_outside_and_inside_loops(rng):
    A, B = T.tensor3("A"), T.matrix("B")
    ys, _ = ss.scan(lambda a, B: a @ B, sequences=A, non_sequences=B)
    out = [ys, A @ B, A[0, 0] @ B[:, 0]]
    values = [rng.normal(size=(3, 4, 5)), rng.normal(size=(5, 2))]
    expected_values = ss.function([A, B], out, mode="py")(*values)
    for got, expected in zip(ss.function([A, B], out, mode="fast")(*values), expected_values):
        np.testing.assert_allclose(got, expected, rtol=1e-12)
        assert np.ndim(got) == np.ndim(expected)


def test_a_numba_kernel_runs_inside_the_one_thread_switch(rng):
    pytest.importorskip("numba")
    inputs, hs = elman()
    f = ss.function(inputs, hs, mode="numba")
    lines = f.source.splitlines()
    start = next(i for i, line in enumerate(lines) if ".start()" in line)
    kernel = next(i for i, line in enumerate(lines) if "_kernel" in line and "(" in line)
    end = next(i for i, line in enumerate(lines) if ".end(" in line)
    assert start < kernel < end
    values = [rng.normal(size=(5, 4, 3)), rng.normal(size=(3, 3)), rng.normal(size=(4, 3))]
    np.testing.assert_allclose(f(*values), ss.function(inputs, hs, mode="py")(*values), rtol=1e-12)


@pytest.mark.parametrize("size, idle, backing_off, chosen, expected", [
    (blas_threads.LIBRARY_ONE_THREAD, 2, False, None, None),  # OpenBLAS runs it on one thread itself
    (blas_threads.SMALL_PRODUCT - 1, 2, False, None, 1),
    (blas_threads.SMALL_PRODUCT, 2, False, None, 2),
    (blas_threads.SMALL_PRODUCT, 1, False, None, 1),  # another process keeps a core busy
    (10**9, 2, True, None, 1),  # a threaded product ran slow a moment ago
    (10**9, 1, False, 3, 3)])  # the user's count
def test_the_policy_of_one_product(size, idle, backing_off, chosen, expected):
    assert blas_threads.product_threads(size, idle, backing_off, chosen) == expected


def test_the_policy_of_a_loop():
    product_step, large, small = 1e-4, 1e-3, 1e-5  # seconds: one SMALL_PRODUCT, G10's step, G4's
    assert blas_threads.loop_threads(None, None, 2, product_step) == 1  # not timed on one thread yet
    assert blas_threads.loop_threads(large, None, 2, product_step) == 2
    assert blas_threads.loop_threads(large, None, 1, product_step) == 1  # no idle core
    assert blas_threads.loop_threads(small, None, 2, product_step) == 1  # no product worth threads
    assert blas_threads.loop_threads(large, 0.6 * large, 2, product_step) == 2  # threads paid
    assert blas_threads.loop_threads(large, 1.1 * large, 2, product_step) == 1  # they did not


def test_idle_cores_from_the_running_tasks():
    assert blas_threads.idle_cores(1, 2, 1) == 2  # only the caller runs
    assert blas_threads.idle_cores(2, 2, 1) == 1  # one busy process
    assert blas_threads.idle_cores(2, 2, 2) == 2  # the other is our own BLAS thread, still spinning
    assert blas_threads.idle_cores(9, 2, 1) == 1


def run_loop(loop, seconds_per_step: float, libraries, steps: int = 100) -> tuple[int, int]:
    """One run of ``loop`` taking ``seconds_per_step``: (the threads it got, the library's count in it)."""
    run = loop.start()
    inside = max(lib.get() for lib in libraries)
    run.steps, run.start = steps, run.start - seconds_per_step * steps
    loop.end(run)
    return run.threads, inside


@pytest.fixture
def two_idle_cores(monkeypatch):
    """A quiet machine of two cores whatever the test machine's load, one thread doing
    SMALL_PRODUCT multiply-adds in 1e-4 s."""
    monkeypatch.setattr(blas_threads._STATE, "backoff_until", -1.0)
    monkeypatch.setattr(blas_threads._STATE, "last_threaded", (-1.0, 1))
    monkeypatch.setattr(blas_threads, "_idle_cores", lambda: 2)
    monkeypatch.setattr(blas_threads._STATE, "rate", 1e-4 / blas_threads.SMALL_PRODUCT)


def test_a_loop_of_large_steps_gets_the_idle_cores_while_they_pay(libraries, two_idle_cores, monkeypatch):
    loop, default = blas_threads.LoopThreads(), [lib.get() for lib in libraries]
    assert run_loop(loop, 1e-3, libraries) == (1, 1)  # the first run (a kernel compiles): not timed
    assert loop.one_step is None
    assert run_loop(loop, 1e-3, libraries) == (1, 1)  # timed on one thread
    assert run_loop(loop, 6e-4, libraries) == (2, 2)  # tried on two: faster
    assert run_loop(loop, 6e-4, libraries) == (2, 2)
    assert [lib.get() for lib in libraries] == default
    monkeypatch.setattr(blas_threads, "_idle_cores", lambda: 1)  # another process took a core
    assert run_loop(loop, 1e-3, libraries) == (1, 1)
    monkeypatch.setattr(blas_threads, "_idle_cores", lambda: 2)
    assert run_loop(loop, 5e-3, libraries) == (2, 2)  # a core taken for idle was not: 5x slower
    assert blas_threads._STATE.backoff_until > blas_threads.time.monotonic()
    assert run_loop(loop, 1e-3, libraries) == (1, 1)  # every product on one thread for a while
    assert blas_threads.threads_for(10**9) == 1


def test_a_loop_of_small_steps_keeps_one_thread(libraries, two_idle_cores):
    loop = blas_threads.LoopThreads()
    assert [run_loop(loop, 2e-5, libraries)[0] for _ in range(5)] == [1] * 5  # G4: 16x128 @ 128x128 per step


def test_threads_that_did_not_pay_are_tried_again_later(libraries, two_idle_cores):
    loop = blas_threads.LoopThreads()
    run_loop(loop, 1e-3, libraries)
    run_loop(loop, 1e-3, libraries)
    assert run_loop(loop, 1.2e-3, libraries)[0] == 2  # no faster on two threads
    assert run_loop(loop, 1e-3, libraries)[0] == 1
    loop.threaded_since -= blas_threads.RETRY_SECONDS + 1
    assert run_loop(loop, 1e-3, libraries)[0] == 2


def test_a_threaded_numba_loop_computes_what_mode_fast_does(rng, libraries, two_idle_cores, monkeypatch):
    """An Elman RNN with 16x512 @ 512x512 products per step (4.2e6 multiply-adds), and its
    gradient's reverse loop, run on two BLAS threads once timed on one."""
    pytest.importorskip("numba")
    monkeypatch.setattr(blas_threads, "SLOWER", 1e9)  # the test machine's load must not back off
    monkeypatch.setattr(blas_threads._STATE, "rate", 1e-7 / blas_threads.SMALL_PRODUCT)  # every step is large
    threads, end = [], blas_threads.LoopThreads.end

    def recording(self, run):
        threads.append(run.threads)
        end(self, run)

    monkeypatch.setattr(blas_threads.LoopThreads, "end", recording)
    inputs, hs = elman()
    outputs = [hs, ss.grad(T.sum(hs ** 2), inputs[1])]
    f = ss.function(inputs, outputs, mode="numba")
    values = [rng.normal(size=(6, 16, 512)), rng.normal(size=(512, 512)) * 0.04, rng.normal(size=(16, 512))]
    expected = ss.function(inputs, outputs, mode="fast")(*values)
    for _ in range(4):
        for got, want in zip(f(*values), expected):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12 * np.abs(want).max())
    assert 2 in threads and [lib.get() for lib in libraries] == [max(2, lib.get()) for lib in libraries]
