"""The default mode's tier as a script meets it: a program that ends while its numba version is
being compiled ends at once, with status 0 (a compile left in a daemon thread crashed the
interpreter's teardown with LLVM assertions, SIGABRT or SIGSEGV)."""

import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.backends import tiered

pytest.importorskip("numba")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = """
    import sys, time
    import numpy as np
    import symscan as ss
    import symscan.tensor as T

    ss.config.numba_after = 0.0
    X, h0, c0 = T.tensor3("X"), T.matrix("h0"), T.matrix("c0")
    weights = [T.matrix(name) for name in ("Wi", "Wf", "Wo", "Wc", "Ui", "Uf", "Uo", "Uc")]

    def step(x, h, c, Wi, Wf, Wo, Wc, Ui, Uf, Uo, Uc):
        i = T.sigmoid(T.dot(x, Wi) + T.dot(h, Ui))
        f = T.sigmoid(T.dot(x, Wf) + T.dot(h, Uf))
        o = T.sigmoid(T.dot(x, Wo) + T.dot(h, Uo))
        c = f * c + i * T.tanh(T.dot(x, Wc) + T.dot(h, Uc))
        return o * T.tanh(c), c

    (hs, cs), _ = ss.scan(step, sequences=X, outputs_info=[h0, c0], non_sequences=weights)
    loss = (hs ** 2).sum()
    train_step = ss.function([X, h0, c0] + weights, [loss] + ss.grad(loss, weights))
    rng = np.random.default_rng(0)
    values = [rng.normal(size=(20, 4, 8)), np.zeros((4, 8)), np.zeros((4, 8))]
    values += [0.3 * rng.normal(size=(8, 8)) for _ in weights]
    while train_step.backend_report()[-1] != "tier: compiling":
        loss_value = train_step(*values)[0]
    time.sleep(float(sys.argv[1]))  # the compile goes on (LSTM training steps compile for ~30-80 s)
    print(train_step.backend_report()[-1])
    print(f"loss {loss_value:.6f}")
    print(train_step._evaluate._child.process.pid)  # the compile process
"""


@pytest.mark.parametrize("pause", [4.0, 10.0, 16.0])
def test_a_script_that_ends_while_the_tier_compiles_exits_at_once_with_status_0(tmp_path, pause):
    """Cold kernel cache, so the compile (~25-80 s) is still running when the script returns.
    With the compile in a daemon thread, 5 of 24 such runs with pauses of 2-24 s crashed at exit,
    all with pauses of 12-24 s (LLVM's longest passes): the pauses sample those phases."""
    env = dict(os.environ, SYMSCAN_CACHE_DIR=str(tmp_path), SYMSCAN_MODE="")
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT), str(pause)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    took = time.perf_counter() - start
    assert result.returncode == 0, result.stderr[-2000:]
    state, loss, compile_pid = result.stdout.splitlines()
    assert (state, loss) == ("tier: compiling", "loss 14.427722")
    assert "LLVM" not in result.stderr and "Assertion" not in result.stderr and "Traceback" not in result.stderr
    assert took < pause + 8  # the script did not wait for the compile
    with pytest.raises(ProcessLookupError):  # nor left it running
        os.kill(int(compile_pid), 0)


def _wait_for_handover(f, values: list, first) -> None:
    """Call ``f`` (each call giving ``first``) until its numba version takes over (at most 2 min),
    then once more."""
    deadline = time.monotonic() + 120
    while f._evaluate.compiled is None and time.monotonic() < deadline:
        np.testing.assert_array_equal(f(*values), first)
        time.sleep(0.05)
    assert f.backend_report()[-1] == "tier: numba"
    np.testing.assert_array_equal(f(*values), first)


def test_a_function_that_keeps_running_hands_over_without_wait(rng, tmp_path, monkeypatch):
    """The compile process ends, a later call starts loading its kernels, and the numba version
    answers from then on with the same results."""
    monkeypatch.setenv("SYMSCAN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(ss.config, "numba_after", 0.0)
    monkeypatch.setattr(tiered, "COMPILE_NICENESS", 0)  # other jobs may keep every core busy: no starving
    X, h0 = T.matrix("X"), T.vector("h0")
    hs, _ = ss.scan(lambda x, h: T.tanh(x + 0.5 * h), sequences=X, outputs_info=h0)
    f = ss.function([X, h0], hs)
    values = [rng.normal(size=(6, 3)), np.zeros(3)]
    first = f(*values)
    _wait_for_handover(f, values, first)
    assert any(p.name.startswith("symscan_kernel_") for p in (tmp_path / "numba").iterdir())


def test_the_compile_process_caches_kernels_at_this_processs_level(rng, tmp_path, monkeypatch):
    """A level set in the program (not in the environment) reaches the compile process, so the
    kernels it caches are the ones this process loads, not compiles again."""
    from symscan.backends.numba import cache

    monkeypatch.setenv("SYMSCAN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(ss.config, "numba_after", 0.0)
    monkeypatch.setattr(ss.config, "numba_kernel_opt", 3)
    monkeypatch.setattr(tiered, "COMPILE_NICENESS", 0)
    X, h0 = T.matrix("X"), T.vector("h0")
    hs, _ = ss.scan(lambda x, h: T.tanh(x + 0.25 * h), sequences=X, outputs_info=h0)
    f = ss.function([X, h0], hs)
    values = [rng.normal(size=(6, 3)), np.zeros(3)]
    first = f(*values)
    _wait_for_handover(f, values, first)
    sources = [p.read_text() for p in (tmp_path / "numba").glob("symscan_kernel_*.py")]
    kernels = [source for source in sources if "def kernel(" in source]
    assert kernels and not any("pipeline_class" in source for source in kernels)  # level 3: numba's own
    loaded = [m["kernel"] for m in cache._LOADED.values() if "kernel" in m and m.get("__file__", "").startswith(
        str(tmp_path))]
    assert loaded and all(not sum(k.stats.cache_misses.values()) for k in loaded)


def test_without_a_writable_kernel_cache_the_function_stays_fast(rng, tmp_path, monkeypatch):
    """A child cannot hand kernels over without files: it says so, and nothing compiles."""
    (tmp_path / "a file").write_text("")
    monkeypatch.setenv("SYMSCAN_CACHE_DIR", str(tmp_path / "a file"))
    monkeypatch.setattr(ss.config, "numba_after", 0.0)
    X, h0 = T.matrix("X"), T.vector("h0")
    hs, _ = ss.scan(lambda x, h: T.tanh(x + h), sequences=X, outputs_info=h0)
    f = ss.function([X, h0], hs)
    f(rng.normal(size=(4, 3)), np.zeros(3))
    assert f._evaluate.wait(60) == f"stays fast (the kernel cache {tmp_path / 'a file' / 'numba'} cannot be written)"


def test_the_compile_process_runs_at_the_lowest_priority(rng, tmp_path, monkeypatch):
    """Nice 19 from its first line on (an absolute value: a niced parent gives the same); the
    test stops it as soon as it is seen."""
    monkeypatch.setenv("SYMSCAN_CACHE_DIR", str(tmp_path))
    X, h0 = T.matrix("X"), T.vector("h0")
    hs, _ = ss.scan(lambda x, h: T.tanh(x + h), sequences=X, outputs_info=h0)
    f = ss.function([X, h0], hs, mode="fast")
    values = [rng.normal(size=(4, 3)), np.zeros(3)]
    child = tiered.CompileProcess((f.fgraph, "f", values, {}, f(*values)))
    try:
        niceness, deadline = None, time.monotonic() + 30
        while niceness != 19 and child.process.poll() is None and time.monotonic() < deadline:
            niceness = os.getpriority(os.PRIO_PROCESS, child.process.pid)
            time.sleep(0.002)
        assert niceness == 19
    finally:
        child.stop()


def test_a_long_background_compile_is_noted_when_it_starts_and_when_it_takes_over(rng, tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("SYMSCAN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(ss.config, "numba_after", 0.0)
    monkeypatch.setattr(ss.config, "compile_message_after", 0.0)
    monkeypatch.setattr(tiered, "COMPILE_NICENESS", 0)
    X, h0 = T.matrix("X"), T.vector("h0")
    hs, _ = ss.scan(lambda x, h: T.tanh(x + 0.25 * h), sequences=X, outputs_info=h0)
    f = ss.function([X, h0], hs, name="noted")
    values = [rng.normal(size=(6, 3)), np.zeros(3)]
    f(*values)
    f(*values)  # sees the compile running
    assert f._evaluate.wait(120) == "numba"
    err = capfd.readouterr().err.splitlines()
    assert err[0] == "symscan: numba is compiling function 'noted' in the background (mode fast answers meanwhile)"
    assert err[-1].startswith("symscan: function 'noted' runs in numba from now on (compiled in ")
    # between them, at most the progress of what this process compiles itself when it loads the
    # numba version (kernels' helpers not yet compiled in this process, in a long test run)
    progress = ("symscan: numba is compiling function 'noted'", "symscan: numba compiled function 'noted'")
    assert all(line.startswith(progress) for line in err[1:-1]), err
