"""Loops exported by torch 2.13 (tests/onnx/data/make_torch_models.py wrote the models and the
example inputs with torch's outputs; torch is not needed here): each model imported in modes
"py", "fast" and "numba" gives torch's outputs and onnxruntime's; ``ss.onnx.optimize`` keeps
them in onnxruntime, and its report says what changed (the loops left, the rewrites fired).

What the importer refuses (the op and node it names) is an xfail of the import test; what the
optimiser does worse than it could is a strict xfail of its own test (see each reason)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx_models import assert_outputs, session

import symscan as ss
from symscan.onnx.pipeline import LOOP_OPS, op_counts

from modes_tested import MODES_TESTED

DATA = Path(__file__).resolve().parent / "data"

LOOPS_AFTER_OPTIMIZE = {
    "elman_final": 1,  # a recurrence: the loop stays
    "while_doubling": 1,
    "cumsum_final": 0,  # a for loop (its condition is an outer constant): scan_to_accumulate
    "cumsum_stacked": 1,  # out[i] = acc, a ScatterND into a carried tensor: stays a loop
    "dynamo_elman_scan": 1,
    "dynamo_while_doubling": 1,
    "dynamo_cumsum_scan": 0,  # scan_to_accumulate: CumSum
}
"""Loop + Scan nodes (bodies included) in ``optimize``'s model; each original model has one."""

REFUSED = {
    "elman_stacked": (ss.onnx.ModelImportError, "ONNX node '/SequenceEmpty' (SequenceEmpty",
                      "torch writes hs.append(h); torch.stack(hs) as a loop-carried ONNX sequence "
                      "(SequenceEmpty, SequenceInsert, ConcatFromSequence): symscan imports tensors only"),
    "elman_cat": (ValueError, "ONNX node '/Loop' (Loop -> 'h', 'hs')",
                  "torch writes hs = torch.cat([hs, h[None]]) as a loop-carried tensor that grows each step; "
                  "a scan state keeps its shape (and the error is scan's ValueError, not ModelImportError)"),
}
"""Models the importer refuses: the error type, the start of its message, why."""

MODELS = list(LOOPS_AFTER_OPTIMIZE) + list(REFUSED)


def load(name: str) -> tuple[onnx.ModelProto, list[np.ndarray], list[np.ndarray]]:
    """The model, its example inputs (in the order of its graph inputs) and torch's outputs."""
    model = onnx.load(str(DATA / f"torch_{name}.onnx"))
    data = np.load(DATA / f"torch_{name}.npz")
    defaults = {t.name for t in model.graph.initializer}
    inputs = [data[f"in_{i.name}"] for i in model.graph.input if i.name not in defaults]
    outputs = [data[f"out_{o.name}"] for o in model.graph.output]
    return model, inputs, outputs


def run_onnxruntime(model: onnx.ModelProto, inputs: list) -> list:
    names = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    return session(model).run(None, dict(zip(names, inputs)))


def loop_counts(model: onnx.ModelProto) -> int:
    counts = op_counts(model.graph)
    return sum(counts[op] for op in LOOP_OPS)


def scan_outputs_of_loops(graph: onnx.GraphProto) -> int:
    """How many per-step outputs the Loop nodes of a graph (and of its bodies) stack."""
    count = 0
    for node in graph.node:
        if node.op_type == "Loop":
            count += len(node.output) - (len(node.input) - 2)
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                count += scan_outputs_of_loops(attribute.g)
    return count


def refused(name: str) -> list:
    if name not in REFUSED:
        return []
    error, _, reason = REFUSED[name]
    return [pytest.mark.xfail(strict=True, raises=error, reason=reason)]


def params(modes) -> list:
    return [pytest.param(name, mode, marks=refused(name), id=f"{name}-{mode}") for name in MODELS for mode in modes]


def test_every_model_has_its_files():
    assert sorted(p.stem[len("torch_"):] for p in DATA.glob("torch_*.onnx")) == sorted(MODELS)
    assert sorted(p.stem[len("torch_"):] for p in DATA.glob("torch_*.npz")) == sorted(MODELS)


@pytest.mark.parametrize("name", MODELS)
def test_onnxruntime_gives_torchs_outputs(name):
    """The recorded outputs are right for the model (the oracle the import is compared with)."""
    model, inputs, expected = load(name)
    onnx.checker.check_model(model, full_check=True)
    assert_outputs(run_onnxruntime(model, inputs), expected, f"{name}: onnxruntime vs torch", rtol=1e-5)


@pytest.mark.parametrize(("name", "mode"), params(MODES_TESTED))
def test_imported_model_gives_torchs_outputs(name, mode):
    model, inputs, expected = load(name)
    got = ss.onnx.import_function(model, mode=mode)(*inputs)
    assert_outputs(got, expected, f"{name} mode {mode!r} vs torch", rtol=1e-5)
    assert_outputs(got, run_onnxruntime(model, inputs), f"{name} mode {mode!r} vs onnxruntime", rtol=1e-5)


@pytest.mark.parametrize("name", list(REFUSED))
def test_refusal_names_the_op_and_the_node(name):
    model, _, _ = load(name)
    error, message, _ = REFUSED[name]
    with pytest.raises(error) as info:
        ss.onnx.load(model)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize("name", list(LOOPS_AFTER_OPTIMIZE))
def test_optimized_model_gives_torchs_outputs(name):
    model, inputs, expected = load(name)
    optimized, report = ss.onnx.optimize(model, with_report=True)
    print(f"\n{name}: {report}")
    onnx.checker.check_model(optimized, full_check=True)
    assert [i.name for i in optimized.graph.input] == [i.name for i in model.graph.input
                                                       if i.name not in {t.name for t in model.graph.initializer}]
    assert [o.name for o in optimized.graph.output] == [o.name for o in model.graph.output]
    assert_outputs(run_onnxruntime(optimized, inputs), expected, f"{name}: optimized, onnxruntime vs torch",
                   rtol=1e-5)
    assert (report.loops(report.before), report.loops(report.after)) == (1, LOOPS_AFTER_OPTIMIZE[name])
    assert (loop_counts(model), loop_counts(optimized)) == (1, LOOPS_AFTER_OPTIMIZE[name])
    assert report.before == op_counts(model.graph)


def test_optimize_turns_the_running_sum_scan_into_cumsum():
    _, report = ss.onnx.optimize(load("dynamo_cumsum_scan")[0], with_report=True)
    assert report.before["Scan"] == 1 and report.after["Scan"] + report.after["Loop"] == 0
    assert report.after["CumSum"] == 1 and report.fired()["scan_to_accumulate"] == 1


def test_optimize_moves_the_input_product_of_the_scan_rnn_out_of_the_loop():
    """push_out_seq: x_t @ W for every t is one MatMul before the loop."""
    _, report = ss.onnx.optimize(load("dynamo_elman_scan")[0], with_report=True)
    assert report.fired()["push_out_seq"] == 1


FOR_LOOP_AS_WHILE = ("torch's for-loop body passes on Identity(an outer Constant true) as its condition: "
                     "control._always_true follows producers inside the body only, so the Loop imports as a "
                     "while loop (until), and no rewrite turns a scan whose until is constant False back into a "
                     "for loop; push_out_seq, scan_to_accumulate and vectorize decline 'a while loop (until)'")


@pytest.mark.parametrize("name", ["elman_final", "cumsum_final"])
def test_torch_for_loop_is_a_for_loop(name):
    """What the dynamo-exported Scans of the same loops get: x[i] read before the loop (the RNN),
    no loop left (the sum)."""
    _, report = ss.onnx.optimize(load(name)[0], with_report=True)
    if name == "elman_final":
        assert report.fired()["push_out_seq"] == 1
    else:
        assert report.loops(report.after) == 0


@pytest.mark.parametrize("name", ["elman_final", "while_doubling", "dynamo_while_doubling"])
def test_optimize_stacks_no_more_steps_than_the_model(name):
    model = load(name)[0]
    assert scan_outputs_of_loops(ss.onnx.optimize(model).graph) <= scan_outputs_of_loops(model.graph) == 0
