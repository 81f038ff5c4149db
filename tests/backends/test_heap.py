"""heap_arrays: while a long compiled call runs, glibc takes no new mmaps (large arrays from the
heap) and keeps freed heap for the next call; after it, glibc's own mmap count is back."""

import sys

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.backends import heap
from symscan.config import config


@pytest.fixture
def calls(monkeypatch):
    """The mallopt calls made, recorded instead of made; a fresh nesting state."""
    made = []
    state = heap._Heap()
    state.mallopt = lambda option, value: made.append((option, value)) or 1
    monkeypatch.setattr(heap, "_HEAP", state)
    monkeypatch.setattr(config, "heap_keep", 2**30)
    return made


def test_a_call_takes_no_mmaps_and_gives_them_back_after(calls):
    with heap.heap_arrays(1.0):
        assert (heap.M_MMAP_MAX, 0) in calls
        assert (heap.M_TRIM_THRESHOLD, 2**30) in calls
    assert calls[-1] == (heap.M_MMAP_MAX, heap.GLIBC_MMAP_MAX)


def test_nested_and_failing_calls_restore_once_at_the_outermost_exit(calls):
    with pytest.raises(ValueError):
        with heap.heap_arrays(1.0):
            with heap.heap_arrays(1.0):
                pass
            assert calls[-1] == (heap.M_MMAP_MAX, 0)  # the inner exit left mmaps off
            raise ValueError("a failing call")
    assert calls.count((heap.M_MMAP_MAX, 0)) == 1
    assert calls[-1] == (heap.M_MMAP_MAX, heap.GLIBC_MMAP_MAX)


def test_heap_keep_zero_changes_nothing(calls, monkeypatch):
    monkeypatch.setattr(config, "heap_keep", "off")
    assert config.heap_keep == 0
    with heap.heap_arrays(1.0):
        pass
    assert calls == []


def test_short_calls_change_nothing(calls):
    """The settings cost about 20 us: a call whose previous one took under a millisecond skips them."""
    with heap.heap_arrays(heap.WORTH_SECONDS / 2):
        pass
    assert calls == []


def test_a_compiled_function_runs_inside_after_a_long_call(calls):
    x = T.dvector("x")
    f = ss.function([x], (x ** 2).sum(), mode="fast")
    assert float(f(np.arange(3.0))) == 5.0
    assert calls == []  # no previous call
    f._last_call_seconds = 1.0
    f(np.arange(3.0))
    assert calls[-2:] == [(heap.M_MMAP_MAX, 0), (heap.M_MMAP_MAX, heap.GLIBC_MMAP_MAX)]
    assert f._last_call_seconds < 1.0


def test_turned_off_after_calls_it_gives_the_kept_heap_back(calls, monkeypatch):
    with heap.heap_arrays(1.0):
        pass
    monkeypatch.setattr(config, "heap_keep", 0)
    with heap.heap_arrays(1.0):
        pass
    assert calls[-1] == (heap.M_TRIM_THRESHOLD, heap.GLIBC_TRIM_THRESHOLD)


def test_a_process_tuning_malloc_itself_is_left_alone(monkeypatch):
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "1000000")
    assert heap._glibc_mallopt() is None


@pytest.mark.parametrize("bad", ["lots", 2**31])
def test_a_bad_heap_keep_names_the_setting(bad):
    with pytest.raises(ValueError, match=f"heap_keep.*SYMSCAN_HEAP_KEEP.*{bad!r}"):
        config.heap_keep = bad


@pytest.mark.skipif(heap._glibc_mallopt() is None, reason="glibc only")
def test_glibc_takes_the_settings():
    """The real mallopt accepts each value (it returns 1 on success)."""
    mallopt = heap._glibc_mallopt()
    assert mallopt(heap.M_MMAP_MAX, 0) == 1
    assert mallopt(heap.M_MMAP_MAX, heap.GLIBC_MMAP_MAX) == 1
    assert mallopt(heap.M_MMAP_THRESHOLD, heap.GLIBC_MMAP_THRESHOLD_MAX) == 1
    assert sys.platform.startswith("linux")
