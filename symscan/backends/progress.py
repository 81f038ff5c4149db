"""Messages about long compiles: never a silent wait (``config.compile_messages``).

A compile that runs longer than ``config.compile_message_after`` seconds shows a status that
says what compiles and for how long so far, updated about every second from a watcher thread
(numba's compile releases the GIL often enough: measured, a thread waking every 0.25 s during
the 44 s cold compile of an LSTM gradient never waited more than 0.4 s), and a last line when
it ends. In a notebook the status is one display updated in place (an indeterminate progress
bar and the text); on a terminal one line of stderr rewritten in place; elsewhere (a log, CI) a
line when it starts to show, one every ``PLAIN_EVERY`` seconds, and the last one.
"""

from __future__ import annotations

import html
import sys
import threading
import time
from collections.abc import Callable

from symscan.config import config

PLAIN_EVERY = 10.0
"""Seconds between the lines of a status written to a stderr that is not a terminal."""


def quiet() -> bool:
    return not config.compile_messages


def note(text: str) -> None:
    """One line of news (the default mode's hand-over), unless quiet."""
    if not quiet():
        print(f"symscan: {text}", file=sys.stderr, flush=True)


def _notebook_display():
    """IPython's ``display`` when running in a notebook kernel, else None."""
    shell_module = sys.modules.get("IPython")
    if shell_module is None:
        return None
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        return None
    shell = get_ipython()
    return display if shell is not None and hasattr(shell, "kernel") else None


class StatusLine:
    """One status shown and updated in place, then finished with a last text."""

    def __init__(self) -> None:
        self._display = _notebook_display()
        self._handle = None
        self._terminal = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
        self._width = 0
        self._plain_at = -PLAIN_EVERY

    def show(self, text: str) -> None:
        if self._display is not None:
            self._show_html(text, running=True)
        elif self._terminal:
            self._rewrite(text)
        elif time.monotonic() - self._plain_at >= PLAIN_EVERY:
            self._plain_at = time.monotonic()
            print(f"symscan: {text}", file=sys.stderr, flush=True)

    def finish(self, text: str) -> None:
        if self._display is not None:
            self._show_html(text, running=False)
        elif self._terminal:
            self._rewrite(text)
            print(file=sys.stderr, flush=True)
        else:
            print(f"symscan: {text}", file=sys.stderr, flush=True)

    def _rewrite(self, text: str) -> None:
        line = f"symscan: {text}"
        print("\r" + line.ljust(self._width), end="", file=sys.stderr, flush=True)
        self._width = len(line)

    def _show_html(self, text: str, running: bool) -> None:
        from IPython.display import HTML

        bar = "<progress style='width:8em;vertical-align:middle'></progress> " if running else ""
        content = HTML(f"<div style='font-family:monospace'>{bar}symscan: {html.escape(text)}</div>")
        if self._handle is None:
            self._handle = self._display(content, display_id=True)
        else:
            self._handle.update(content)


class CompileWatch:
    """From ``start`` to ``stop``: after ``config.compile_message_after`` seconds, the status
    ``describe(elapsed)`` every second; at ``stop``, ``finished(elapsed)`` if it was shown."""

    def __init__(self, describe: Callable[[float], str], finished: Callable[[float], str]) -> None:
        self.describe, self.finished = describe, finished
        self.start_time = time.monotonic()
        self._done = threading.Event()
        self._line: StatusLine | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> CompileWatch:
        if not quiet():
            self._thread = threading.Thread(target=self._watch, name="symscan compile status", daemon=True)
            self._thread.start()
        return self

    def _watch(self) -> None:
        if self._done.wait(config.compile_message_after):
            return
        self._line = StatusLine()
        while True:
            self._line.show(self.describe(time.monotonic() - self.start_time))
            if self._done.wait(1.0):
                return

    def stop(self) -> float:
        """Ends the status (its last line, if it showed); returns the seconds it ran."""
        elapsed = time.monotonic() - self.start_time
        self._done.set()
        if self._thread is not None:
            self._thread.join()
            if self._line is None and elapsed >= config.compile_message_after:
                self._line = StatusLine()  # it ended before the watcher looked: still said
        if self._line is not None:
            self._line.finish(self.finished(elapsed))
        return elapsed
