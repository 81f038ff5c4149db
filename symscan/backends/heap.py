"""Large arrays from the heap while a compiled function runs.

glibc serves an allocation above its mmap threshold (32 MiB at most) with a fresh ``mmap`` and
returns it to the system when freed, so every call of a function with large traces faults
their pages in again: about 20-40 ms a call for an LSTM gradient's 50 MB recorded trace, on top
of writing it. XLA's allocator keeps its buffers from call to call. Here, while a call that
takes long enough to be worth it runs (the function's previous call took over a millisecond:
the two ``mallopt`` calls cost about 20 us), glibc takes no new ``mmap`` (``M_MMAP_MAX`` 0, for
every thread of the process while it runs): arrays come from the heap, and up to
``config.heap_keep`` bytes of freed heap stay with the process (``M_TRIM_THRESHOLD``), so the
next call reuses pages already faulted in.

Effects beyond calls, once the first such call ran: glibc's adaptive mmap threshold is off (any
``mallopt`` turns it off); the threshold is set to its ceiling, 32 MiB, where the adaptive one
ends up for large arrays; freed heap up to ``heap_keep`` is kept. ``config.heap_keep = 0``
(``$SYMSCAN_HEAP_KEEP=0``) turns it all off; set after calls ran, it gives the kept heap back
from the next call on. A process that tunes malloc itself (any ``MALLOC_*_`` environment
variable of glibc's) and other C libraries (macOS, Windows, musl) are left alone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading
from contextlib import contextmanager

from symscan.config import config

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_MMAP_MAX = -1, -3, -4
GLIBC_MMAP_MAX = 65536  # glibc's default number of simultaneous mmap'd chunks
GLIBC_MMAP_THRESHOLD_MAX = 32 * 1024 * 1024  # its ceiling on 64-bit systems
GLIBC_TRIM_THRESHOLD = 128 * 1024  # its default
WORTH_SECONDS = 1e-3  # a call at least this long pays for the settings' cost (about 20 us)
MALLOC_TUNING = ("MALLOC_MMAP_MAX_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_",
                 "GLIBC_TUNABLES")


class _Heap:
    """The nesting count of running calls (threads share the setting) and the set-up done once."""

    def __init__(self):
        self.lock = threading.Lock()
        self.running = 0
        self.mallopt = _glibc_mallopt()
        self.kept: int | None = None

    def enter(self) -> bool:
        keep = config.heap_keep
        if self.mallopt is None:
            return False
        with self.lock:
            if keep <= 0:
                if self.kept is not None:  # turned off after calls ran: give the kept heap back
                    self.mallopt(M_TRIM_THRESHOLD, GLIBC_TRIM_THRESHOLD)
                    self.kept = None
                return False
            if self.kept != keep:
                self.mallopt(M_MMAP_THRESHOLD, GLIBC_MMAP_THRESHOLD_MAX)
                self.mallopt(M_TRIM_THRESHOLD, keep)
                self.kept = keep
            if self.running == 0:
                self.mallopt(M_MMAP_MAX, 0)
            self.running += 1
        return True

    def exit(self) -> None:
        with self.lock:
            self.running -= 1
            if self.running == 0:
                self.mallopt(M_MMAP_MAX, GLIBC_MMAP_MAX)


def _glibc_mallopt():
    """glibc's ``mallopt`` (None elsewhere, or where the process tunes malloc itself)."""
    if not sys.platform.startswith("linux") or any(name in os.environ for name in MALLOC_TUNING):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # noqa: B018 - present in glibc only
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return None
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt


_HEAP = _Heap()


@contextmanager
def heap_arrays(previous_seconds: float):
    """Within: large arrays come from the heap and freed ones stay for the next call, if the
    previous call took ``previous_seconds`` long enough for it to pay."""
    entered = previous_seconds >= WORTH_SECONDS and _HEAP.enter()
    try:
        yield
    finally:
        if entered:
            _HEAP.exit()
