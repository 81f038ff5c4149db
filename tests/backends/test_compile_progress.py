"""A long compile says so while it runs (symscan/backends/progress.py): which function, which
loop, how long so far; nothing when quiet."""

import re
import time

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.backends import progress

pytest.importorskip("numba")


def unique_loop(seed: float):
    """A loop whose kernel source no other test has (so its compile is a real one)."""
    x = T.vector("x")
    ys, _ = ss.scan(lambda a, acc: T.tanh(acc * seed + a), sequences=x, outputs_info=T.zeros_like(x[0]),
                    name="smoothing")
    return ss.function([x], ys, mode="numba", name="status_probe")


def test_a_compile_longer_than_the_delay_names_function_loop_and_time(capfd, tmp_path, monkeypatch):
    monkeypatch.setenv("SYMSCAN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(ss.config, "compile_message_after", 0.0)
    f = unique_loop(0.4137)
    np.testing.assert_allclose(f(np.arange(3.0)), [0.0, np.tanh(1.0), np.tanh(0.4137 * np.tanh(1.0) + 2)])
    err = capfd.readouterr().err
    assert re.search(r"symscan: numba compiled function 'status_probe', loop 'smoothing' in \d+\.\d s", err), err
    capfd.readouterr()
    f(np.arange(3.0))  # compiled: nothing more to say
    assert capfd.readouterr().err == ""


def test_quiet_says_nothing(capfd, tmp_path, monkeypatch):
    monkeypatch.setenv("SYMSCAN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(ss.config, "compile_message_after", 0.0)
    monkeypatch.setattr(ss.config, "compile_messages", False)
    unique_loop(0.2719)(np.arange(3.0))
    assert capfd.readouterr().err == ""


def test_a_short_compile_says_nothing(capfd, tmp_path, monkeypatch):
    monkeypatch.setenv("SYMSCAN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(ss.config, "compile_message_after", 600.0)
    unique_loop(0.3301)(np.arange(3.0))
    assert capfd.readouterr().err == ""


def test_the_status_updates_while_it_runs_and_ends_with_a_last_line(capsys, monkeypatch):
    monkeypatch.setattr(ss.config, "compile_message_after", 0.0)
    monkeypatch.setattr(progress, "PLAIN_EVERY", 0.0)  # stderr is no terminal here: a line per update
    watch = progress.CompileWatch(lambda s: f"compiling, {s:.0f} s", lambda s: f"compiled in {s:.1f} s").start()
    time.sleep(1.3)
    watch.stop()
    lines = capsys.readouterr().err.splitlines()
    assert lines[:2] == ["symscan: compiling, 0 s", "symscan: compiling, 1 s"]
    assert re.fullmatch(r"symscan: compiled in 1\.\d s", lines[-1])


def test_in_a_notebook_one_display_is_updated_in_place(monkeypatch):
    """(IPython's display handle, faked: ipywidgets is not needed.)"""
    shown = []

    class Handle:
        def update(self, content):
            shown.append(("update", content.data))

    def display(content, display_id):
        shown.append(("display", content.data))
        return Handle()

    monkeypatch.setattr(progress, "_notebook_display", lambda: display)
    monkeypatch.setattr(ss.config, "compile_message_after", 0.0)
    watch = progress.CompileWatch(lambda s: "compiling <f>", lambda s: "compiled").start()
    time.sleep(0.1)
    watch.stop()
    assert [kind for kind, _ in shown] == ["display", "update"]
    assert "<progress" in shown[0][1] and "compiling &lt;f&gt;" in shown[0][1]
    assert "<progress" not in shown[1][1] and "compiled" in shown[1][1]
