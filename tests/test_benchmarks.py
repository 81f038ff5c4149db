"""The benchmark workloads compute what their numpy loops compute (the check every timed
system must pass), and the runner's table is produced; no timing is asserted."""

import numpy as np
import pytest

from benchmarks import grad_workloads, workloads
from benchmarks.__main__ import check, markdown, run_workload

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


GRAD_QUICK = grad_workloads.all_workloads(quick=True)
GRAD_BY_NAME = {w.name: w for w in GRAD_QUICK}


@pytest.mark.parametrize("work", GRAD_QUICK, ids=[w.name for w in GRAD_QUICK])
def test_gradient_workload_matches_its_numpy_bptt(work):
    rows = run_workload(work, ["fast", "numpy"], repeats=1, budget=0.0)
    assert {r["system"] for r in rows} == {"fast", "numpy"}
    fast = next(r for r in rows if r["system"] == "fast")
    assert fast["grad_s"] > 0 and fast["function_s"] > 0


@pytest.mark.parametrize("peer", ["pytensor", "jax"])
def test_gradient_peers_match_the_numpy_bptt(peer):
    """G5 (taps) and G7 (mit-sot) only, and PyTensor with its Python linker: Numba and XLA
    compilation of all four would take seconds (the benchmark run checks every peer anyway)."""
    pytest.importorskip(peer)
    from benchmarks import grad_peers

    for work in (GRAD_BY_NAME["G5"], GRAD_BY_NAME["G7"]):
        params = work.forward.params or {}
        if peer == "pytensor":
            from pytensor.compile.mode import Mode

            mode = Mode(linker="py", optimizer="fast_compile")
            fn = grad_peers.pytensor_grad_function(work.forward.name, work.wrt, params, mode=mode)
        else:
            fn = grad_peers.jax_grad_function(work.forward.name, work.wrt, params)
        check(peer, work, fn(*work.values), work.numpy_loop(*work.values))


def test_gradient_section_replaces_only_itself():
    rows = run_workload(GRAD_BY_NAME["G7"], ["fast", "numpy"], repeats=1, budget=0.0)
    section = grad_workloads.markdown(rows, quick=True)
    assert section.startswith(grad_workloads.HEADING) and "| G7 " in section and "ss.function ms" in section
    readme = grad_workloads.replace_section("# Benchmarks\n\n| W1 | 1 |\n", section)
    assert readme.startswith("# Benchmarks\n\n| W1 | 1 |\n\n") and grad_workloads.section_of(readme) == "\n" + section
    assert grad_workloads.replace_section(readme, section) == readme
    later = readme + "\n## Drawing\n\nkept\n"  # a section after G survives both kinds of run
    assert grad_workloads.replace_section(later, section) == later
    assert grad_workloads.section_of(later) == "\n" + section
    assert grad_workloads.sections_from_gradients(later).endswith("## Drawing\n\nkept\n")


def test_the_suite_has_the_filters_forward_and_gradient():
    """K1 (Kalman filter) and H1 (HMM) run in both suites, each checked against its numpy loop above."""
    assert {"K1", "H1"} <= {w.name for w in QUICK} and {"K1", "H1"} <= set(GRAD_BY_NAME)


@pytest.mark.parametrize("name", ["K1", "H1"])
def test_filter_reverse_loops_match_central_differences(name):
    """The hand-written reverse loops are the reference every system's K1/H1 gradient is checked
    against: they must be the derivative of the forward loops."""
    work = grad_workloads.kalman(8) if name == "K1" else grad_workloads.hmm(8)
    values, forward = work.values, work.forward.numpy_loop
    for grad, position in zip(work.numpy_loop(*values), work.wrt):
        numeric = np.zeros_like(grad)
        for index in np.ndindex(*grad.shape):
            up, down = [v.copy() for v in values], [v.copy() for v in values]
            up[position][index] += 1e-6
            down[position][index] -= 1e-6
            numeric[index] = (forward(*up)[0] - forward(*down)[0]) / 2e-6
        np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7 * np.abs(grad).max())


def test_drawing_benchmark_graph_has_about_500_nodes():
    """benchmarks/drawing.py times ss.draw on a real graph of the issue's size (no timing here)."""
    from benchmarks.drawing import node_count, stacked_rnn_gradient

    outer, inner = node_count(stacked_rnn_gradient())
    assert inner > 0 and 450 <= outer + inner <= 650, (outer, inner)
