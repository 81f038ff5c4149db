"""The benchmark workloads compute what their numpy loops compute (the check every timed
system must pass), and the runner's table is produced; no timing is asserted."""

import json

import numpy as np
import pytest

from benchmarks import cold_compile, grad_workloads, lstm, node_counts, sections, under_load, workloads
from benchmarks.__main__ import check, main, markdown, run_workload

from modes_tested import MODES_TESTED

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
    """G5 (taps), G7 (mit-sot) and a tiny G10 (LSTM) only, and PyTensor with its Python linker:
    Numba and XLA compilation of all of them would take long (the benchmark run checks every peer anyway)."""
    pytest.importorskip(peer)
    from benchmarks import grad_peers

    for work in (GRAD_BY_NAME["G5"], GRAD_BY_NAME["G7"], grad_workloads.lstm_rnn(4, 2, 3, 5)):
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
    section, heading = grad_workloads.markdown(rows, quick=True), grad_workloads.HEADING
    assert section.startswith(heading) and "| G7 " in section and "ss.function ms" in section
    readme = sections.replace_section("# Benchmarks\n\n| W1 | 1 |\n", section, heading)
    assert readme.startswith("# Benchmarks\n\n| W1 | 1 |\n\n")
    assert sections.section_of(readme, heading) == "\n" + section
    assert sections.replace_section(readme, section, heading) == readme
    later = readme + "\n## Drawing\n\nkept\n"  # a section after G survives both kinds of run
    assert sections.replace_section(later, section, heading) == later
    assert sections.section_of(later, heading) == "\n" + section
    assert sections.sections_after_tables(later).endswith("## Drawing\n\nkept\n")
    assert sections.sections_after_tables(later).startswith("\n" + heading)


def test_every_section_survives_the_others_rewrites():
    """The forward tables, the G section, both under-load sections, cold compile and node counts
    live in one README: rewriting any one keeps the others word for word."""
    headings = [grad_workloads.HEADING + " G3", under_load.HEADINGS[False], under_load.HEADINGS[True],
                cold_compile.HEADING, node_counts.HEADING, "## Drawing"]
    readme = "# Benchmarks\n\nforward tables\n"
    for heading in headings:
        readme = sections.replace_section(readme, f"{heading}\n\nold {heading}\n", heading.split(" G3")[0])
    for heading in headings:
        key = heading.split(" G3")[0]
        new = sections.replace_section(readme, f"{heading}\n\nnew\n", key)
        assert sections.section_of(new, key) == f"\n{heading}\n\nnew\n"
        assert new.replace(f"{heading}\n\nnew", f"{heading}\n\nold {heading}") == readme
    assert sections.sections_after_tables(readme) == readme[len("# Benchmarks\n\nforward tables\n"):]
    # the G heading is a prefix of no other heading at a line's start: an under-load section alone is not it
    alone = sections.replace_section("# Benchmarks\n", f"{under_load.HEADINGS[True]}\n\nx\n", under_load.HEADINGS[True])
    assert sections.section_of(alone, grad_workloads.HEADING) == ""


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
        numeric = central_differences(lambda vals: forward(*vals)[0], values, position, grad.shape)
        np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7 * np.abs(grad).max())


def central_differences(cost, values: list, position: int, shape: tuple) -> np.ndarray:
    """d cost / d values[position], entry by entry (step 1e-6)."""
    numeric = np.zeros(shape)
    for index in np.ndindex(*shape):
        up, down = [v.copy() for v in values], [v.copy() for v in values]
        up[position][index] += 1e-6
        down[position][index] -= 1e-6
        numeric[index] = (cost(up) - cost(down)) / 2e-6
    return numeric


def test_drawing_benchmark_graph_has_about_500_nodes():
    """benchmarks/drawing.py times ss.draw on a real graph of the issue's size (no timing here)."""
    from benchmarks.drawing import node_count, stacked_rnn_gradient

    outer, inner = node_count(stacked_rnn_gradient())
    assert inner > 0 and 450 <= outer + inner <= 650, (outer, inner)


# ---------------------------------------------------------------------------- G10, the LSTM
def test_lstm_bptt_matches_central_differences():
    """The numpy BPTT is the reference every system's G10 gradient is checked against: it must be
    the derivative of sum(h**2) over the numpy forward loop, w.r.t. W, U, b, h0 and c0."""
    work = grad_workloads.lstm_rnn(3, 2, 3, 4)
    values = work.values

    def cost(vals):
        return float((lstm.lstm_loop(*vals)[0] ** 2).sum())

    for grad, position in zip(work.numpy_loop(*values), work.wrt):
        numeric = central_differences(cost, values, position, grad.shape)
        np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8 * np.abs(grad).max())


def test_lstm_gates_stay_out_of_saturation():
    """G10's values (weights at 0.1 scale) keep every gate's pre-activation small, so the gradient
    does not vanish into saturated sigmoids."""
    X, W, U, b, h0, c0 = lstm.lstm_values(20, 4, 64, 256)  # G10's weights; fewer steps and rows
    hs, _, _ = lstm.lstm_trace(X, W, U, b, h0, c0)
    pre = X[1:] @ W + hs[:-1] @ U + b
    assert np.abs(pre).max() < 6 and 0.3 < pre.std() < 2


def test_lstm_forward_matches_its_numpy_loop():
    rows = run_workload(workloads.lstm_rnn(5, 2, 3, 4), ["fast", "numpy"], repeats=1, budget=0.0)
    assert {r["system"] for r in rows} == {"fast", "numpy"}


def test_lstm_gradient_in_every_mode_matches_the_bptt():
    """py, fast and numba (where installed; numba's first compile of the two loops takes seconds)."""
    work = grad_workloads.lstm_rnn(4, 2, 3, 5)
    rows = run_workload(work, MODES_TESTED, repeats=1, budget=0.0)
    assert {r["system"] for r in rows} == set(MODES_TESTED)
    assert "G10" in GRAD_BY_NAME and {"G10", "K1"} <= {w.name for w in grad_workloads.all_workloads()}


def test_the_default_mode_is_a_gradient_system():
    rows = run_workload(GRAD_BY_NAME["G7"], ["default", "numpy"], repeats=1, budget=0.0)
    default = next(r for r in rows if r["system"] == "default")
    assert default["median_s"] > 0 and default["function_s"] > 0
    assert "default" in grad_workloads.SYSTEMS and ("default", "jax") in grad_workloads.RATIOS


# ---------------------------------------------------------------------------- under load
def test_the_competing_process_is_killed_on_an_error():
    with pytest.raises(KeyboardInterrupt):
        with under_load.competing_process() as busy:
            assert busy.poll() is None  # running
            raise KeyboardInterrupt
    assert busy.poll() is not None


def test_slowdowns_compare_only_the_same_sizes():
    quiet = [{"workload": "G4", "description": "T=1000", "system": "numba", "median_s": 2.0},
             {"workload": "G4", "description": "T=1000", "system": "jax", "median_s": 1.0},
             {"workload": "G5", "description": "T=20", "system": "numba", "median_s": 1.0}]
    loaded = [{"workload": "G4", "description": "T=1000", "system": "numba", "median_s": 3.0},
              {"workload": "G4", "description": "T=1000", "system": "jax", "median_s": 3.0},
              {"workload": "G5", "description": "T=1000", "system": "numba", "median_s": 5.0}]
    assert under_load.slowdowns(loaded, quiet) == {("G4", "numba"): 1.5, ("G4", "jax"): 3.0}
    table = under_load.slowdown_table(loaded, quiet, ["numba", "jax"])
    assert "| G4 | 1.50 | 3.00 | 0.50 |" in table and "| G5 | - | - | - |" in table


def test_a_run_under_load_keeps_the_quiet_section(tmp_path):
    readme, quiet, loaded = tmp_path / "README.md", tmp_path / "quiet.jsonl", tmp_path / "loaded.jsonl"
    common = ["--grad", "--quick", "--only", "G7", "--systems", "fast,numpy", "--markdown", str(readme)]
    main(common + ["--jsonl", str(quiet)])
    quiet_section = sections.section_of(readme.read_text(), grad_workloads.HEADING)
    main(common + ["--jsonl", str(loaded), "--under-load", "--quiet-jsonl", str(quiet)])
    text = readme.read_text()
    assert sections.section_of(text, grad_workloads.HEADING) == quiet_section
    section = sections.section_of(text, under_load.HEADINGS[True])
    assert "| G7 mit-sot" in section and "Slowdown under load" in section
    slowdown = [line for line in section.splitlines() if line.startswith("| G7 | ")][-1]  # the last table's
    fast, numpy, numba_over_jax = (cell.strip() for cell in slowdown.strip("|").split("|")[1:])
    assert float(fast) > 0 and float(numpy) > 0 and numba_over_jax == "-"  # no numba nor jax in this run
    assert all(json.loads(line)["under_load"] for line in loaded.read_text().splitlines())


# ---------------------------------------------------------------------------- cold compile, node counts
def test_cold_compile_runs_fresh_processes_and_writes_its_section(tmp_path):
    """The quick path's child processes, once for symscan (mode fast: no numba compile here)."""
    rows = cold_compile.measure(cold_compile.QUICK_SIZES, mode="fast", systems=("symscan",))
    assert [(r["system"], r["cache"]) for r in rows] == [("symscan", "cold"), ("symscan", "warm")]
    assert all(r["first_result_s"] > 0 and r["max_relative_error"] < 1e-12 for r in rows)
    section = cold_compile.markdown(rows, "fast")
    assert section.startswith(cold_compile.HEADING)
    line = next(x for x in section.splitlines() if x.startswith("| LSTM T=5"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert len(cells) == 7 and cells[3:6] == ["-", "-", "-"] and float(cells[1]) > 0
    readme = tmp_path / "README.md"
    readme.write_text("# Benchmarks\n\n## Drawing\n\nkept\n")
    readme.write_text(sections.replace_section(readme.read_text(), section, cold_compile.HEADING))
    assert "## Drawing\n\nkept\n" in readme.read_text() and cold_compile.HEADING in readme.read_text()


def test_node_counts_of_the_gradients():
    rows = dict(node_counts.measure(quick=True, with_pytensor=False, workloads=("G4",)))
    assert len(rows) == 3
    logistic = rows[next(name for name in rows if name.startswith("logistic"))]
    assert logistic["fast"][0] > 5 and logistic["fast"][1] == 0  # no loop
    elman = rows[next(name for name in rows if name.startswith("G4"))]
    assert elman["numba"][1] > 0  # the loop bodies are counted apart
    section = node_counts.markdown(list(rows.items()), quick=True)
    assert section.startswith(node_counts.HEADING) and "| G4 Elman RNN" in section
    assert f"| {logistic['fast'][0]} | {logistic['numba'][0]} | - |" in section


def test_node_counts_of_pytensor():
    pytest.importorskip("pytensor")
    import pytensor
    import pytensor.tensor as pt

    inputs, grads = node_counts.logistic_regression_pytensor(pt, pytensor)
    outer, inner = node_counts.pytensor_count(pytensor.function(inputs, grads))
    assert 5 < outer < 60 and inner == 0
