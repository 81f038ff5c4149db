"""Loops written with onnxscript (``@script()`` functions turned into models): a for loop over
``range(n)``, a while loop, nested for loops, loops reading the function's values, a loop that
breaks and one holding an if/else. Each model is imported into symscan (modes "py", "fast",
"numba") and compared with onnxruntime on the original model; ``ss.onnx.optimize(model)``
keeps the input and output names and gives the same results in onnxruntime."""

import numpy as np
import pytest
from onnx_models import assert_outputs, check, op_types, run_onnxruntime

import symscan as ss

onnxscript = pytest.importorskip("onnxscript")
from onnxscript import FLOAT, INT64, script  # noqa: E402
from onnxscript import opset18 as op  # noqa: E402

VECTOR = FLOAT["N"]
"""A float32 vector of any length (onnxscript's annotation)."""


@script()
def running_sum(x: VECTOR, n: INT64) -> FLOAT:
    acc = op.Constant(value_float=0.0)
    for i in range(n):
        acc = acc + op.Gather(x, i, axis=0)
    return acc


@script()
def halve_while_above(x: FLOAT, limit: FLOAT) -> FLOAT:
    y = x
    above = op.Greater(y, limit)
    while above:
        y = y / 2.0
        above = op.Greater(y, limit)
    return y


@script()
def double_sum(n: INT64, m: INT64, w: FLOAT) -> FLOAT:
    acc = op.Constant(value_float=0.0)
    for i in range(n):
        for j in range(m):
            acc = acc + w * op.Cast(i * j, to=1)
    return acc


@script()
def scaled_recurrence(x: VECTOR, w: FLOAT, n: INT64) -> VECTOR:
    scale = op.Mul(w, w)
    acc = x
    for _ in range(n):
        acc = acc * scale + x
    return acc


@script()
def sum_until_above(x: VECTOR, n: INT64, limit: FLOAT) -> FLOAT:
    acc = op.Constant(value_float=0.0)
    for i in range(n):
        acc = acc + op.Gather(x, i, axis=0)
        stop = acc > limit
        if stop:
            break
    return acc


@script()
def sum_of_magnitudes(x: VECTOR, n: INT64) -> FLOAT:
    acc = op.Constant(value_float=0.0)
    for i in range(n):
        xi = op.Gather(x, i, axis=0)
        if xi > 0.0:
            acc = acc + xi
        else:
            acc = acc - xi
    return acc


def f32(*values):
    return np.array(values, dtype=np.float32)


X = f32(1.0, -2.0, 3.0, 0.5, 4.0)

CASES = {
    "for loop over range(n)": (running_sum, [[X, np.int64(4)], [X, np.int64(0)]],
                               lambda x, n: [np.float32(x[:n].sum())]),
    "while loop": (halve_while_above, [[np.float32(100.0), np.float32(3.0)], [np.float32(1.0), np.float32(3.0)]],
                   None),
    "nested for loops": (double_sum, [[np.int64(3), np.int64(4), np.float32(0.5)],
                                      [np.int64(0), np.int64(4), np.float32(0.5)]],
                         lambda n, m, w: [np.float32(w * sum(i * j for i in range(n) for j in range(m)))]),
    "loop reading the function's values": (scaled_recurrence, [[f32(0.0, 1.0, 2.0), np.float32(0.5), np.int64(3)]],
                                           None),
    "for loop with break": (sum_until_above, [[X, np.int64(5), np.float32(2.5)], [X, np.int64(5), np.float32(99.0)]],
                            None),
    "if/else in the loop body": (sum_of_magnitudes, [[X, np.int64(5)]], lambda x, n: [np.float32(abs(x[:n]).sum())]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_onnxscript_loop_imports_like_onnxruntime(mode, case):
    fn, value_sets, numpy_loop = CASES[case]
    check(fn.to_model_proto(), mode, *value_sets, numpy_loop=numpy_loop, what=f"{case}: ")


@pytest.mark.parametrize("case", list(CASES))
def test_optimized_onnxscript_model_runs_like_the_original(case):
    fn, value_sets, _ = CASES[case]
    model = fn.to_model_proto()
    optimized = ss.onnx.optimize(model)
    assert [i.name for i in optimized.graph.input] == [i.name for i in model.graph.input]
    assert [o.name for o in optimized.graph.output] == [o.name for o in model.graph.output]
    for values in value_sets:
        assert_outputs(run_onnxruntime(optimized, values), run_onnxruntime(model, values),
                       f"{case}: optimized vs original in onnxruntime on {values}")


def test_optimize_replaces_the_running_sum_loop():
    """``acc += x[i]`` becomes a cumulative sum: no Loop left, and the report says so."""
    optimized, report = ss.onnx.optimize(running_sum.to_model_proto(), with_report=True)
    assert "Loop" not in op_types(optimized.graph) and "Scan" not in op_types(optimized.graph)
    assert (report.loops(report.before), report.loops(report.after)) == (1, 0)
    assert report.fired()["scan_to_accumulate"] == 1
