"""The benchmark workloads compute what their numpy loops compute (the check every timed
system must pass), and the runner's table is produced; no timing is asserted."""

import pytest

from benchmarks import workloads
from benchmarks.__main__ import markdown, run_workload

QUICK = workloads.all_workloads(quick=True)


@pytest.mark.parametrize("work", QUICK, ids=[w.name for w in QUICK])
def test_workload_matches_its_numpy_loop(work):
    rows = run_workload(work, ["fast", "numpy"], repeats=1, budget=0.0)
    assert {r["system"] for r in rows} == {"fast", "numpy"}
    assert all(r["median_s"] > 0 and r["first_result_s"] >= r["build_s"] for r in rows)


def test_a_wrong_result_is_refused():
    work = workloads.running_sum(50)
    broken = workloads.Workload(work.name, work.description, work.inputs, [work.outputs[0] * 2], work.values,
                                work.numpy_loop)
    with pytest.raises(AssertionError, match="differs from the numpy loop"):
        run_workload(broken, ["fast"], repeats=1, budget=0.0)


def test_markdown_table_lists_every_workload_and_system():
    rows = run_workload(workloads.mit_sot(100), ["fast", "numpy"], repeats=1, budget=0.0)
    text = markdown(rows, {"fast": 0.5, "numpy": None}, quick=True)
    assert "| W7 " in text and "fast/numpy" in text and "| fast | numpy |" in text
