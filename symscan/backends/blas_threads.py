"""How many threads numpy's and scipy's OpenBLAS give each matrix product (``config.blas_threads``).

OpenBLAS splits a product over its threads (its default: one per core) and waits for all of
them. Where another process keeps a core busy, the second thread waits for a time slice on
every call, and a product takes 10-300x longer (measured on 2 cores with one busy process:
110x110 @ 110x110 65 us on one thread, 24 ms on two; 64x16000 @ 16000x128 7.7 ms against
338 ms; G4's gradient in mode fast 0.28 s against 1.78 s). After a threaded call its threads
also spin for ~0.13 s, taking a core.
So symscan decides per product ("auto"):

- a loop whose body multiplies matrices runs with one thread (many small products), set once
  around the loop (``LoopThreads``), kernels of mode numba included, unless its steps hold
  products as large as those that get threads outside loops (G10's LSTM: 32x256 @ 256x1024
  per step): a loop's steps are timed on one thread first, a step too short for a product of
  ``SMALL_PRODUCT`` multiply-adds keeps one thread, a longer one is tried on the idle cores
  and keeps them while that is faster (``loop_threads``; a kernel multiplying through the
  private AVX-512 instance of ``numba/blas.py`` keeps that instance's one thread);
- a product outside loops below ``SMALL_PRODUCT`` multiply-adds gets one thread;
- a larger one as many threads as there are idle cores (at most the library's setting), from
  the count of running tasks in /proc/loadavg (read at most every ``LOAD_SECONDS``), and one
  for a second after a threaded product ran slower than one thread would have.

It only ever lowers the count, and restores what it found: OPENBLAS_NUM_THREADS,
OMP_NUM_THREADS and threadpoolctl limits the user set stay ceilings. The libraries are found
once with threadpoolctl (without it nothing changes); a switch is then a direct ctypes call
(measured: 0.23 us to read, 0.5 us to set; lowering and restoring around a loop or a product
3-5 us with the bookkeeping, where threadpoolctl's ``threadpool_limits`` takes 140-600 us: it
scans the loaded libraries on each use).
"""

from __future__ import annotations

import ctypes
import itertools
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from symscan.config import config

SCIPY_BLAS = "scipy.linalg.cython_blas"

LIBRARY_ONE_THREAD = 262_144
"""OpenBLAS runs a gemm of at most this many multiply-adds on one thread by itself
(``SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD``): nothing to decide below it. (Above it
some shapes go threaded, some not: 64x64 @ 64x128, 5.2e5, does; 100x100 @ 100x100, 1e6, not.)"""

SMALL_PRODUCT = 2_000_000
"""Below this many multiply-adds a second thread does not pay on a quiet machine; such products
get one thread. (Measured on 2 cores, quiet: 100x100 @ 100x100, 1e6, 28 us on one thread or
two; 1000x50 @ 50x50, 2.5e6, 140 us on one, 93 us on two.)"""

LOAD_SECONDS = 0.1
"""How long an estimate of the idle cores is reused (reading /proc/loadavg costs ~30 us)."""

BACKOFF_SECONDS = 1.0
"""How long products get one thread after one on several threads ran ``SLOWER`` times slower
than one thread would have: the load estimate missed a busy core (a wrong guess costs a
product 10-100x, a cautious one at most the threads' speed-up)."""

SLOWER = 2.0

SPIN_SECONDS = 0.15
"""How long OpenBLAS's threads keep running (spinning for work) after a threaded product: the
load they add then is symscan's own, not another process's."""


class _Library:
    """One loaded OpenBLAS: its get/set-threads functions, called directly."""

    def __init__(self, path: str) -> None:
        lib = ctypes.CDLL(path)  # the loaded instance: the same handle
        for prefix, suffix in itertools.product(("", "scipy_"), ("", "64_", "_64")):
            if hasattr(lib, f"{prefix}openblas_get_num_threads{suffix}"):
                break
        else:
            raise OSError(f"{path} has no openblas_get_num_threads")
        self.path = path
        self.get = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}")
        self.get.restype, self.get.argtypes = ctypes.c_int, []
        self.set = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}")
        self.set.restype, self.set.argtypes = None, [ctypes.c_int]


class _State:
    """The process-wide lowering: requests from loops and products (any thread), the counts
    found before the first of them (restored after the last) and the count applied."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.libraries: list[_Library] | None = None  # found on first use
        self.saw_scipy = False  # scipy's BLAS was loaded when they were found
        self.requests: list[int] = []
        self.saved: list[int] = []
        self.applied: int | None = None
        self.cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        self.idle: tuple[float, int] = (-1.0, self.cores)  # (when estimated, idle cores)
        self.last_threaded: tuple[float, int] = (-1.0, 1)  # (when a threaded product ended, its threads)
        self.backoff_until = -1.0
        self.rate: float | None = None  # seconds per multiply-add on one thread


_STATE = _State()


def libraries() -> list[_Library]:
    """The OpenBLAS instances loaded now: found once, and again once scipy's BLAS has loaded
    (mode numba's kernels call it) if it had not then."""
    if _STATE.libraries is None or (not _STATE.saw_scipy and SCIPY_BLAS in sys.modules):
        with _STATE.lock:
            if not _STATE.requests:  # never while counts are lowered: their saved values
                _STATE.saw_scipy = SCIPY_BLAS in sys.modules
                _STATE.libraries = _find()
    return _STATE.libraries or []


def _find() -> list[_Library]:
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # optional: without it the libraries keep their own settings
        return []
    found = []
    for info in ThreadpoolController().info():
        if info.get("internal_api") == "openblas" and info.get("threading_layer") != "openmp":
            try:
                found.append(_Library(info["filepath"]))
            except OSError:
                continue
    return found


def setting() -> int | None:
    """``config.blas_threads`` as a number of threads for large products (None: auto), or 0 (off)."""
    value = config.blas_threads
    return None if value == "auto" else value


def _request(threads: int) -> bool:
    """Lower every library to ``threads`` (never above what it had); False: nothing to do."""
    if not libraries() or config.blas_threads == 0:
        return False
    state = _STATE
    with state.lock:
        requests = state.requests
        requests.append(threads)
        if len(requests) == 1:
            state.saved = [lib.get() for lib in state.libraries]
            state.applied = None
        if state.applied is None or threads < state.applied:
            _apply(threads)
    return True


def _release(threads: int) -> None:
    state = _STATE
    with state.lock:
        requests = state.requests
        requests.remove(threads)
        if requests:
            _apply(min(requests))
            return
        for lib, count in zip(state.libraries, state.saved):
            if count > state.applied:
                lib.set(count)
        state.applied = None


def _apply(threads: int) -> None:
    """(Under the lock.) Every library at ``threads``, or at what it had if that was fewer."""
    state = _STATE
    if threads != state.applied:
        for lib, count in zip(state.libraries, state.saved):
            if min(threads, count) != min(state.applied or count, count):
                lib.set(min(threads, count))
        state.applied = threads


RETRY_SECONDS = 10.0
"""How long a loop whose steps ran no faster on several threads keeps one thread before it tries
them again (the machine may have been busy while it tried)."""


def loop_threads(one_step: float | None, threaded_step: float | None, allowed: int, product_step: float) -> int:
    """The threads a loop's next run gets (the policy, pure). ``one_step``, ``threaded_step``:
    its best seconds per step so far on one thread and on several (None: not timed yet);
    ``allowed``: what a large product outside loops would get now (``product_threads``);
    ``product_step``: the seconds one thread takes for ``SMALL_PRODUCT`` multiply-adds.
    A step that one thread runs in less than that holds no product worth threads; a loop
    whose threaded steps were no faster keeps one thread; a loop not timed on one thread yet
    starts there."""
    if allowed <= 1 or one_step is None or one_step < product_step:
        return 1
    if threaded_step is not None and threaded_step >= one_step:
        return 1
    return allowed


class LoopRun:
    """One run of a loop: the threads it asked for and got, its start, and its step count
    (set at the end of the loop's ``try``: None when the loop raised, so it is not timed)."""

    __slots__ = ("asked", "threads", "start", "steps")

    def __init__(self, asked: int, threads: int) -> None:
        self.asked, self.threads, self.steps = asked, threads, None
        self.start = time.perf_counter()


class LoopThreads:
    """The BLAS threads of one loop of the generated code (``start`` before it, ``end`` after):
    its best seconds per step on one thread and on several, from which ``loop_threads``
    decides each run. Its first run is not timed (numba compiles or loads the kernel in it).
    A threaded run slower than ``SLOWER`` times its one-thread steps (a core taken for idle
    was not) gives every product one thread for ``BACKOFF_SECONDS``, as a product's does."""

    def __init__(self) -> None:
        self.runs = 0
        self.one_step: float | None = None
        self.threaded_step: float | None = None
        self.threaded_since = -1.0  # when threaded_step was first set (time.monotonic)

    def start(self) -> LoopRun | None:
        """Lower the libraries for this run (None: no library to set, or the setting is off)."""
        threads = 1
        if self.one_step is not None:
            if self.threaded_step is not None and time.monotonic() - self.threaded_since > RETRY_SECONDS:
                self.threaded_step = None  # a fresh verdict: the load may have changed
            allowed = threads_for(SMALL_PRODUCT) or 1
            if allowed > 1:
                product_step = SMALL_PRODUCT * _one_thread_rate()
                threads = loop_threads(self.one_step, self.threaded_step, allowed, product_step)
        if not _request(threads):
            return None
        got = 1 if threads == 1 else min(threads, max(lib.get() for lib in libraries()))
        return LoopRun(threads, got)

    def end(self, run: LoopRun | None) -> None:
        if run is None:
            return
        seconds = time.perf_counter() - run.start
        _release(run.asked)
        self.runs += 1
        if run.steps is None or self.runs == 1:
            return
        step = seconds / max(run.steps, 1)
        if run.threads == 1:
            self.one_step = step if self.one_step is None else min(self.one_step, step)
            return
        now = time.monotonic()
        _STATE.last_threaded = (now, run.threads)
        if self.threaded_step is None:
            self.threaded_step, self.threaded_since = step, now
        else:
            self.threaded_step = min(self.threaded_step, step)
        if step > SLOWER * self.one_step:
            _STATE.backoff_until = now + BACKOFF_SECONDS


@contextmanager
def one_thread() -> Iterator[None]:
    """One BLAS thread inside (the default mode while its numba version compiles beside it)."""
    started = _request(1)
    try:
        yield
    finally:
        if started:
            _release(1)


def threads_for(multiply_adds: int) -> int | None:
    """The threads a product outside loops gets, or None: the library's own choice."""
    backing_off = time.monotonic() < _STATE.backoff_until
    chosen = setting()
    asks_idle = multiply_adds >= SMALL_PRODUCT and not backing_off and chosen is None
    return product_threads(multiply_adds, _idle_cores() if asks_idle else 1, backing_off, chosen)


def product_threads(multiply_adds: int, idle_cores: int, backing_off: bool, chosen: int | None) -> int | None:
    """The policy for one product (None: the library's own choice, which is one thread for
    these sizes): one thread below ``SMALL_PRODUCT`` or while backing off after a slow
    threaded product, else the setting's count or the idle cores."""
    if multiply_adds <= LIBRARY_ONE_THREAD:
        return None
    if multiply_adds < SMALL_PRODUCT or backing_off:
        return 1
    return idle_cores if chosen is None else chosen


def _idle_cores() -> int:
    """The cores no other task is running on now (ours included), estimated from the running
    tasks in /proc/loadavg less this process's own (the caller, and BLAS threads still
    spinning after a threaded product)."""
    now = time.monotonic()
    when, idle = _STATE.idle
    if now - when < LOAD_SECONDS:
        return idle
    try:
        with open("/proc/loadavg") as handle:
            running = int(handle.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):  # not Linux: no estimate, the library decides
        running = 1
    ended, threads = _STATE.last_threaded
    ours = 1 + (threads - 1 if now - ended < SPIN_SECONDS else 0)
    idle = idle_cores(running, _STATE.cores, ours)
    _STATE.idle = (now, idle)
    return idle


def idle_cores(running: int, cores: int, ours: int) -> int:
    """The cores left idle by ``running`` tasks of which ``ours`` are this process's (at least
    one: the caller's own)."""
    return max(1, cores - max(0, running - ours))


def product(fn: Callable, multiply_adds: int, *args):
    """``fn(*args)``, a product of ``multiply_adds`` multiply-adds, on the threads it gets."""
    threads = threads_for(multiply_adds)
    libs = libraries() if threads is not None and setting() != 0 else []
    if not libs:
        return fn(*args)
    most = max(lib.get() for lib in libs)
    lower = most > threads and _request(threads)
    start = time.perf_counter()
    try:
        result = fn(*args)
    finally:
        if lower:
            _release(threads)
    if min(threads, most) > 1:
        _after_threaded(multiply_adds, time.perf_counter() - start, min(threads, most))
    return result


def _after_threaded(multiply_adds: int, seconds: float, threads: int) -> None:
    """Its threads spin a while; and if it ran slower than one thread would have (a core taken
    for idle was not), the next products get one thread for ``BACKOFF_SECONDS``."""
    now = time.monotonic()
    _STATE.last_threaded = (now, threads)
    if seconds > SLOWER * multiply_adds * _one_thread_rate():
        _STATE.backoff_until = now + BACKOFF_SECONDS


def _one_thread_rate() -> float:
    """Seconds per multiply-add of one thread: a 128x128 product's best of three, measured once."""
    if _STATE.rate is None:
        a = np.full((128, 128), 0.5)
        with one_thread():
            best = min(_timed(np.dot, a, a) for _ in range(3))
        _STATE.rate = best / 128**3
    return _STATE.rate


def _timed(fn: Callable, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def uses_blas(fgraph) -> bool:
    """Some node of ``fgraph`` (or of a graph inside one of its nodes) multiplies matrices or
    runs LAPACK: a loop over it is worth running on one thread."""
    from symscan.tensor.math import Dot, MatMul

    for node in fgraph.apply_nodes:
        op = node.op
        if isinstance(op, (Dot, MatMul)) or type(op).__module__.startswith("symscan.tensor.linalg"):
            return True
        if any(uses_blas(inner) for inner in op.inner_graphs()):
            return True
    return False


def dot_size(a: np.ndarray, b: np.ndarray) -> int:
    """The multiply-adds of the one BLAS call ``np.dot(a, b)`` makes (0: no BLAS call)."""
    a_ndim, b_ndim = a.ndim, b.ndim
    if a_ndim == 0 or b_ndim == 0 or b_ndim > 2:
        return 0
    return a.size * (b.shape[1] if b_ndim == 2 else 1)


def matmul_size(a: np.ndarray, b: np.ndarray) -> int:
    """The multiply-adds of each BLAS call ``np.matmul(a, b)`` makes (one per batch entry)."""
    m = a.shape[-2] if a.ndim >= 2 else 1
    n = b.shape[-1] if b.ndim >= 2 else 1
    return m * a.shape[-1] * n


def dot(a, b):
    """``np.dot(a, b)`` outside loops, on the threads its size gets."""
    return product(np.dot, dot_size(a, b), a, b)


def matmul(a, b):
    """``np.matmul(a, b)`` outside loops, on the threads each product's size gets."""
    return product(np.matmul, matmul_size(a, b), a, b)
