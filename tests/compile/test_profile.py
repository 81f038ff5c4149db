"""scan(profile=True): per-scan calls and seconds in the compiled function's ``profile``, in
mode "py" and mode "fast" (the ``mode`` fixture)."""

import numpy as np

import symscan as ss
import symscan.tensor as T


def running_sum(x, **kwargs):
    out, _ = ss.scan(lambda a, s: s + a, sequences=x, outputs_info=T.constant(0.0), **kwargs)
    return out


def test_profiled_scan_counts_calls_and_time(mode):
    x = T.vector("x")
    f = ss.function([x], running_sum(x, profile=True, name="s"), mode=mode)
    np.testing.assert_array_equal(f(np.arange(4.0)), np.cumsum(np.arange(4.0)))
    assert isinstance(f.profile, dict) and set(f.profile) == {"s"}
    assert f.profile["s"]["calls"] == 1
    f(np.arange(3.0))
    f(np.arange(0.0))
    record = f.profile["s"]
    assert record["calls"] == 3
    assert isinstance(record["seconds"], float) and record["seconds"] >= 0.0


def test_without_profile_there_is_no_profile(mode):
    x = T.vector("x")
    f = ss.function([x], running_sum(x, name="s"), mode=mode)
    f(np.arange(3.0))
    assert f.profile is None
    assert ss.function([x], x * 2.0, mode=mode).profile is None


def test_only_profiled_scans_are_recorded(mode):
    x = T.vector("x")
    # the untimed loop runs one step fewer: loops of the same steps would merge into one
    f = ss.function([x], [running_sum(x, profile=True, name="timed"), running_sum(x[1:] * 2.0, name="untimed")],
                    mode=mode)
    f(np.arange(3.0))
    assert set(f.profile) == {"timed"} and f.profile["timed"]["calls"] == 1


def test_each_function_has_its_own_profile(mode):
    x = T.vector("x")
    out = running_sum(x, profile=True, name="s")
    f, g = ss.function([x], out, mode=mode), ss.function([x], out, mode=mode)
    f(np.arange(3.0))
    f(np.arange(3.0))
    g(np.arange(3.0))
    assert f.profile["s"]["calls"] == 2 and g.profile["s"]["calls"] == 1


def test_two_profiled_scans_with_one_name_get_two_records(mode):
    x = T.vector("x")
    f = ss.function([x], [running_sum(x, profile=True, name="s"), running_sum(x[1:] * 2.0, profile=True, name="s")],
                    mode=mode)
    f(np.arange(3.0))
    assert len(f.profile) == 2 and "s" in f.profile
    assert [record["calls"] for record in f.profile.values()] == [1, 1]


def test_unnamed_profiled_scans_get_a_record_each(mode):
    x = T.vector("x")
    f = ss.function([x], [running_sum(x, profile=True), running_sum(x[1:] * 2.0, profile=True)], mode=mode)
    f(np.arange(3.0))
    assert len(f.profile) == 2
    assert [record["calls"] for record in f.profile.values()] == [1, 1]


def test_nested_profiled_scan_counts_each_inner_run(mode):
    m = T.matrix("m")

    def row(r):
        return running_sum(r, profile=True, name="inner")[-1]

    out, _ = ss.scan(row, sequences=m, profile=True, name="outer")
    f = ss.function([m], out, mode=mode)
    np.testing.assert_array_equal(f(np.arange(6.0).reshape(3, 2)), [1.0, 5.0, 9.0])
    assert f.profile["outer"]["calls"] == 1
    assert f.profile["inner"]["calls"] == 3
    assert f.profile["outer"]["seconds"] >= f.profile["inner"]["seconds"] >= 0.0
