"""ONNX's own backend test suite (the node tests shipped in the onnx package) with symscan as the
backend (``symscan.onnx.Backend``), run as onnx's runner runs them: prepare the model, run each
data set, compare with the expected outputs (shape, dtype, then values at the test's tolerance).

A test is selected when symscan can hold everything in it (``node_tests.selection``): every op,
in subgraphs too, imports (``ss.onnx.supported_ops()``), every tensor has a dtype symscan has
(no bfloat16, float8, int4, strings), no sequence or optional values, and no op variant listed in
``UNSUPPORTED_VARIANTS``. Every selected test must pass, in modes "fast" and "py"; those with a
Loop or Scan in mode "numba" too.
"""

import numpy as np
import pytest
from node_tests import loop_tests, selection

import symscan as ss
from symscan.onnx.backend import Backend

SELECTED, SKIPPED = selection()


def run_test(case, mode: str) -> None:
    from onnx.backend.test.runner import Runner, _normalize_tensor

    rep = Backend.prepare(case.model, mode=mode)
    for inputs, expected in case.data_sets:
        outputs = rep.run([_normalize_tensor(v) for v in inputs])
        Runner.assert_similar_outputs([_normalize_tensor(v) for v in expected], outputs, case.rtol, case.atol)


@pytest.mark.parametrize("case", SELECTED, ids=lambda c: c.name)
def test_node_fast(case):
    run_test(case, "fast")


@pytest.mark.parametrize("case", SELECTED, ids=lambda c: c.name)
def test_node_py(case):
    run_test(case, "py")


@pytest.mark.parametrize("case", loop_tests(SELECTED), ids=lambda c: c.name)
def test_node_with_loops_numba(case):
    pytest.importorskip("numba")
    run_test(case, "numba")


def test_the_selection_covers_the_suite():
    """Most node tests are selected, every Loop/Scan/If test that holds only tensors among them,
    and each one left out has a reason."""
    assert len(SELECTED) > 850
    names = {c.name for c in SELECTED}
    for name in ("test_loop11", "test_scan9_sum", "test_scan_sum", "test_if",
                 "test_range_float_type_positive_delta_expanded", "test_range_int32_type_negative_delta_expanded"):
        assert name in names
    assert all(reason for reason in SKIPPED.values())
    assert "SequenceInsert" in SKIPPED["test_loop13_seq"]
    assert SKIPPED["test_identity_sequence"].startswith("sequence or optional")
    assert SKIPPED["test_cast_FLOAT_to_BFLOAT16"].startswith("dtype")


def test_an_unsupported_op_is_refused_naming_op_and_node():
    onnx = pytest.importorskip("onnx")
    node = onnx.helper.make_node("TopK", ["x", "k"], ["values", "indices"], name="top")
    graph = onnx.helper.make_graph(
        [node], "g", [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4]),
                      onnx.helper.make_tensor_value_info("k", onnx.TensorProto.INT64, [1])],
        [onnx.helper.make_tensor_value_info("values", onnx.TensorProto.FLOAT, None),
         onnx.helper.make_tensor_value_info("indices", onnx.TensorProto.INT64, None)])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    with pytest.raises(ss.onnx.ModelImportError, match=r"'top' \(TopK -> 'values', 'indices'\).*TopK has no symscan"):
        ss.onnx.load(model)
    assert not Backend.is_compatible(model)


def test_static_inputs_compile_once_per_value():
    """A Slice whose axes are a graph input: the backend compiles per value of the axes."""
    onnx = pytest.importorskip("onnx")
    info = onnx.helper.make_tensor_value_info
    node = onnx.helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["y"])
    bounds = [info(n, onnx.TensorProto.INT64, [1]) for n in ("starts", "ends", "axes")]
    graph = onnx.helper.make_graph([node], "g", [info("x", onnx.TensorProto.FLOAT, [3, 4])] + bounds,
                                   [info("y", onnx.TensorProto.FLOAT, None)])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    with pytest.raises(ss.onnx.StaticInputsNeeded, match="axes") as err:
        ss.onnx.load(model)
    assert err.value.input_names == ["axes"]
    rep = Backend.prepare(model)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    one = np.array([1])
    np.testing.assert_array_equal(rep.run([x, one, np.array([3]), np.array([0])])[0], x[1:3])
    np.testing.assert_array_equal(rep.run([x, one, np.array([3]), np.array([1])])[0], x[:, 1:3])
    np.testing.assert_array_equal(rep.run([x, np.array([0]), np.array([2]), np.array([1])])[0], x[:, 0:2])
    assert len(rep.functions) == 2  # one per value of the axes; the bounds stay inputs


def test_run_node_runs_one_node_on_its_inputs():
    onnx = pytest.importorskip("onnx")
    node = onnx.helper.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1, alpha=2.0)
    a, b, c = np.ones((2, 3), np.float32), np.arange(12, dtype=np.float32).reshape(4, 3), np.ones(4, np.float32)
    (y,) = Backend.run_node(node, [a, b, c])
    np.testing.assert_allclose(y, 2.0 * a @ b.T + c)
    assert Backend.supports_device("CPU") and not Backend.supports_device("CUDA")
