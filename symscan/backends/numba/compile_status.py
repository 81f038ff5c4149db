"""Which kernel numba compiles, and for how long: the status of a long compile (progress.py).

A kernel compiles on its first call (or when new argument layouts need another version), inside
``run_kernel``, which records the kernel's place (function, loop) for its thread while it runs.
Numba announces each compile it really does (not a load from its disk cache) as a
``numba:compile`` event; the outermost one in a thread with a place set starts a
``CompileWatch``, which speaks only if the compile runs longer than
``config.compile_message_after`` seconds.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from numba.core import event

from symscan.backends.progress import CompileWatch


@dataclass(frozen=True)
class KernelPlace:
    """A kernel's place: its function, its loop's name, the loop's position among the function's."""

    function: str
    loop: str
    index: int
    count: int

    def describe(self, elapsed: float) -> str:
        return f"numba is compiling {self._what()}: {elapsed:.0f} s"

    def finished(self, elapsed: float) -> str:
        return f"numba compiled {self._what()} in {elapsed:.1f} s"

    def _what(self) -> str:
        of = f" ({self.index} of {self.count})" if self.count > 1 else ""
        return f"function {self.function!r}, loop {self.loop!r}{of}"


class _CompileStatus(threading.local):
    """Per thread: the kernel being called, and the compile being watched (with its depth:
    numba compiles the functions a kernel calls inside the kernel's own compile)."""

    def __init__(self) -> None:
        self.place: KernelPlace | None = None
        self.watch: CompileWatch | None = None
        self.depth = 0


compile_status = _CompileStatus()


class _KernelCompiles(event.Listener):
    def on_start(self, ev) -> None:
        status = compile_status
        if status.depth == 0 and status.place is None:
            return
        status.depth += 1
        if status.depth == 1:
            place = status.place
            status.watch = CompileWatch(place.describe, place.finished).start()

    def on_end(self, ev) -> None:
        status = compile_status
        if status.depth == 0:
            return
        status.depth -= 1
        if status.depth == 0 and status.watch is not None:
            status.watch.stop()
            status.watch = None


_LISTENER: list[_KernelCompiles] = []
_LOCK = threading.Lock()


def listen_to_compiles() -> None:
    """Install the listener once per process."""
    with _LOCK:
        if not _LISTENER:
            _LISTENER.append(_KernelCompiles())
            event.register("numba:compile", _LISTENER[0])
