"""Large arrays from the heap while a compiled function runs.

glibc serves an allocation above its mmap threshold (32 MiB at most) with a fresh ``mmap`` and
returns it to the system when freed, so every call of a function with large traces faults
their pages in again: about 20-40 ms a call for an LSTM gradient's 50 MB recorded trace, on top
of writing it. XLA's allocator keeps its buffers from call to call. Here, while a compiled
function runs, glibc takes no new ``mmap`` for arrays (``M_MMAP_MAX`` 0): they come from the
heap, and up to ``config.heap_keep`` bytes of freed heap stay with the process
(``M_TRIM_THRESHOLD``), so the next call reuses pages already faulted in.

Outside calls, the process keeps glibc's behaviour, with the mmap threshold at glibc's own
ceiling (32 MiB on 64-bit, where its adaptive threshold ends up for large arrays anyway).
Other C libraries (macOS, Windows, musl): nothing changes. ``config.heap_keep = 0``
(``$SYMSCAN_HEAP_KEEP=0``) turns it off.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import threading
from contextlib import contextmanager

from symscan.config import config

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_MMAP_MAX = -1, -3, -4
GLIBC_MMAP_MAX = 65536  # glibc's default number of simultaneous mmap'd chunks
GLIBC_MMAP_THRESHOLD_MAX = 32 * 1024 * 1024  # its ceiling on 64-bit systems


class _Heap:
    """The nesting count of running calls (threads share the setting) and the set-up done once."""

    def __init__(self):
        self.lock = threading.Lock()
        self.running = 0
        self.mallopt = _glibc_mallopt()
        self.kept: int | None = None

    def enter(self) -> bool:
        keep = config.heap_keep
        if self.mallopt is None or keep <= 0:
            return False
        with self.lock:
            if self.kept != keep:
                self.mallopt(M_MMAP_THRESHOLD, GLIBC_MMAP_THRESHOLD_MAX)
                self.mallopt(M_TRIM_THRESHOLD, min(keep, 2**31 - 1))
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
    """glibc's ``mallopt`` (None elsewhere)."""
    if not sys.platform.startswith("linux"):
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
def heap_arrays():
    """Within: large arrays come from the heap and freed ones stay for the next call."""
    entered = _HEAP.enter()
    try:
        yield
    finally:
        if entered:
            _HEAP.exit()
