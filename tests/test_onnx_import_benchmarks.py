"""The imported-ONNX-loop benchmarks (benchmarks/onnx_import.py) at their --quick sizes: every
model, run by every system, gives its numpy loop's results (the check the benchmark makes before
timing); the table lists them. No timing is asserted."""

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from benchmarks import onnx_import, onnx_models  # noqa: E402

QUICK = onnx_models.all_models(quick=True)
SYSTEMS = ["numpy", "onnxruntime", "onnxruntime opt", "fast"]


@pytest.mark.parametrize("work", QUICK, ids=[w.name for w in QUICK])
def test_model_agrees_with_its_numpy_loop_in_every_system(work):
    functions, rows = onnx_import.prepare(work, SYSTEMS)
    assert list(functions) == SYSTEMS
    report = rows["onnxruntime opt"]["report"]
    assert sum(report.before.values()) > 0 and report.loops(report.before) >= 1


def test_numba_agrees_on_a_loop_that_stays_a_loop():
    """Mode numba on one model whose loop the rewrites keep (a while loop): a kernel is compiled."""
    pytest.importorskip("numba")
    work = next(w for w in QUICK if w.name == "W6 Loop, every step")
    functions, _ = onnx_import.prepare(work, ["numpy", "numba"])
    assert functions["numba"].backend_report() != []


def test_the_onnxscript_models_are_there_with_onnxscript():
    pytest.importorskip("onnxscript")
    names = [w.name for w in QUICK]
    assert [n for n in names if "onnxscript" in n] == [
        "W3 onnxscript for, final", "W4 onnxscript for, final", "W5 onnxscript for, final",
        "W6 onnxscript while, final", "W7 onnxscript for, final", "W8 onnxscript for, final"]


def test_a_wrong_result_is_refused():
    work = next(w for w in QUICK if w.name == "W3 Scan, every step")
    broken = onnx_models.OnnxWorkload(work.name, work.workload, work.description, work.model, work.values,
                                      lambda x: [2 * np.cumsum(x)])
    with pytest.raises(AssertionError, match="differs from the numpy loop"):
        onnx_import.prepare(broken, ["numpy", "fast"])


def test_markdown_table_lists_every_model_and_the_optimize_summary():
    work = next(w for w in QUICK if w.name == "W7 Loop, every step")
    rows = onnx_import.run_model(work, ["numpy", "onnxruntime opt", "fast"], repeats=1)
    text = onnx_import.markdown(rows, ["numpy", "onnxruntime opt", "fast"], quick=True)
    assert "| numpy | onnxruntime opt | fast | numba first s | optimize s | nodes | loops |" in text
    assert "| W7 Loop, every step (mit-sot, 1000 steps) |" in text
    assert "- W7 Loop, every step: nodes " in text and "(quick sizes)" in text
