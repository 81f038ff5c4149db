"""ONNX Loop, Scan and If imported into symscan (``ss.onnx.load`` / ``import_function``): models
built by hand with ``onnx.helper`` in opsets 17 and 21, each run by onnxruntime (the ONNX
oracle) and by the imported function in modes "py", "fast" and "numba", and where simple
against a numpy loop written here; the errors for what symscan does not import; and what the
rewrites leave of an imported loop."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx_models import (
    MODEL_OPSETS,
    assert_outputs,
    check,
    const,
    graph,
    loop_body,
    model,
    run_onnxruntime,
    value,
)

import symscan as ss
from symscan.scan.ifelse import IfElse
from symscan.scan.op import Scan

from modes_tested import MODES_TESTED


def scan_count(f) -> int:
    """Scan nodes in a compiled function's graph (the rewrite tests count them the same way)."""
    return sum(isinstance(node.op, Scan) for node in f.fgraph.apply_nodes)


# ---------------------------------------------------------------------------- Loop: for loops
def for_loop_sum(opset: int, trip_count: str = "input", cond: bool = False) -> onnx.ModelProto:
    """``acc = a0; for i in range(n): acc += x[i]``, the partial sums as a scan output; the
    iteration number read through Gather; ``n`` a graph input or a Constant (4). ``cond``: a
    condition input ``go`` (last), which the body passes on."""
    body = loop_body([onnx.helper.make_node("Gather", ["x", "i"], ["xi"], axis=0),
                      onnx.helper.make_node("Add", ["acc", "xi"], ["acc_out"]),
                      onnx.helper.make_node("Identity", ["acc_out"], ["partial"])],
                     carried=[("acc", "acc_out", "float32", ())], scan_outputs=[("partial", "float32", ())])
    nodes = [const("n", 4, "int64")] if trip_count == "constant" else []
    nodes.append(onnx.helper.make_node("Loop", ["n", "go" if cond else "", "a0"], ["total", "partials"], body=body))
    inputs = [value("x", "float32", ["N"])] + ([value("n", "int64")] if trip_count == "input" else [])
    inputs += [value("a0", "float32")] + ([value("go", "bool")] if cond else [])
    return model(nodes, inputs, [value("total", "float32"), value("partials", "float32", ["K"])], opset=opset)


def numpy_for_loop_sum(x, *rest):
    n, a0 = (rest if len(rest) == 2 else (4, rest[0]))
    partials = np.float32(a0) + np.cumsum(x[:n], dtype=np.float32)
    return [partials[-1] if n > 0 else np.float32(a0), partials.astype(np.float32)]


@pytest.mark.parametrize("opset", MODEL_OPSETS)
def test_for_loop_reads_x_at_the_iteration_number(mode, opset):
    x = np.arange(1.0, 7.0, dtype=np.float32)
    check(for_loop_sum(opset), mode, [x, np.int64(5), np.float32(0.5)], [x, np.int64(1), np.float32(2.0)],
          [x, np.int64(0), np.float32(2.0)], numpy_loop=numpy_for_loop_sum)


@pytest.mark.parametrize("opset", MODEL_OPSETS)
def test_for_loop_with_a_constant_trip_count(mode, opset):
    x = np.arange(1.0, 7.0, dtype=np.float32)
    check(for_loop_sum(opset, trip_count="constant"), mode, [x, np.float32(0.5)], numpy_loop=numpy_for_loop_sum)


def test_for_loop_with_a_condition_input_runs_no_step_when_it_is_false(mode):
    """A body passing its condition on runs every step of the trip count, or none."""
    x = np.arange(1.0, 7.0, dtype=np.float32)
    check(for_loop_sum(17, cond=True), mode, [x, np.int64(3), np.float32(0.5), np.bool_(True)],
          [x, np.int64(3), np.float32(0.5), np.bool_(False)],
          numpy_loop=lambda x, n, a0, go: numpy_for_loop_sum(x, n if go else 0, a0))


def test_for_loop_with_a_constant_trip_count_has_static_lengths():
    """A Constant trip count gives the scan output its length when the graph is built."""
    _, (total, partials) = ss.onnx.load(for_loop_sum(17, trip_count="constant"))
    assert total.type.shape == () and partials.type.shape == (4,)


# ---------------------------------------------------------------------------- Loop: conditions
def counting_loop(opset: int, trip_count: str = "input", cond: str = "input") -> onnx.ModelProto:
    """``acc += i + 1`` while ``acc < limit``: the body's condition turns false once acc
    reaches limit. ``trip_count``/``cond``: "input" (a graph input), "none" (omitted) or
    "true" (a Constant true, the do-while form)."""
    body = loop_body([onnx.helper.make_node("Cast", ["i"], ["fi"], to=onnx.TensorProto.DOUBLE),
                      const("one", 1.0),
                      onnx.helper.make_node("Add", ["fi", "one"], ["step"]),
                      onnx.helper.make_node("Add", ["acc", "step"], ["acc_out"]),
                      onnx.helper.make_node("Less", ["acc_out", "limit"], ["cond_out"]),
                      onnx.helper.make_node("Identity", ["acc_out"], ["seen"])],
                     carried=[("acc", "acc_out", "float64", ())], scan_outputs=[("seen", "float64", ())],
                     cond_out="cond_out")
    nodes, inputs = [], []
    if trip_count == "input":
        inputs.append(value("n", "int64"))
    if cond == "input":
        inputs.append(value("go", "bool"))
    elif cond == "true":
        nodes.append(const("go", True))
    nodes.append(onnx.helper.make_node("Loop", ["n" if trip_count == "input" else "", "" if cond == "none" else "go",
                                                "a0"], ["acc_final", "seen_all"], body=body))
    return model(nodes, inputs + [value("a0", "float64"), value("limit", "float64")],
                 [value("acc_final", "float64"), value("seen_all", "float64", ["K"])], opset=opset)


def numpy_counting_loop(trip_count, go, a0, limit):
    acc, seen, i = np.float64(a0), [], 0
    while (trip_count is None or i < trip_count) and go:
        acc = acc + (i + 1.0)
        seen.append(acc)
        go, i = acc < limit, i + 1
    return [np.float64(acc), np.array(seen, dtype=np.float64)]


TRIP_AND_CONDITION = {
    "turns false part way": (10, True, 20.0),
    "never turns false": (4, True, 1e9),
    "false at the first step": (10, True, 0.5),
    "initial condition false": (10, False, 1e9),
    "trip count 0": (0, True, 1e9),
    "negative trip count": (-3, True, 1e9),
}


@pytest.mark.parametrize("opset", MODEL_OPSETS)
@pytest.mark.parametrize("case", list(TRIP_AND_CONDITION))
def test_loop_with_trip_count_and_condition(mode, opset, case):
    n, go, limit = TRIP_AND_CONDITION[case]
    check(counting_loop(opset), mode, [np.int64(n), np.bool_(go), np.float64(0.0), np.float64(limit)],
          numpy_loop=numpy_counting_loop)


@pytest.mark.parametrize("opset", MODEL_OPSETS)
@pytest.mark.parametrize("mode", ["py", "fast", "numba"])
def test_while_loop_without_trip_count(mode, opset):
    if mode not in MODES_TESTED:
        pytest.skip(f"mode {mode!r} is not installed")
    check(counting_loop(opset, trip_count="none"), mode, [np.bool_(True), np.float64(0.0), np.float64(20.0)],
          [np.bool_(True), np.float64(0.0), np.float64(-1.0)], [np.bool_(False), np.float64(0.0), np.float64(20.0)],
          numpy_loop=lambda go, a0, limit: numpy_counting_loop(None, go, a0, limit))


@pytest.mark.parametrize("opset", MODEL_OPSETS)
@pytest.mark.parametrize("mode", ["py", "fast", "numba"])
def test_do_while_loop(mode, opset):
    """The condition input a Constant true and no trip count: the body runs at least once."""
    if mode not in MODES_TESTED:
        pytest.skip(f"mode {mode!r} is not installed")
    check(counting_loop(opset, trip_count="none", cond="true"), mode, [np.float64(0.0), np.float64(20.0)],
          [np.float64(5.0), np.float64(1.0)],
          numpy_loop=lambda a0, limit: numpy_counting_loop(None, True, a0, limit))


@pytest.mark.parametrize("mode", ["py", "fast", "numba"])
def test_loop_with_a_huge_trip_count_given_at_run_time(mode):
    """INT64_MAX as the trip count (as torch.onnx writes a while loop): the condition ends it."""
    if mode not in MODES_TESTED:
        pytest.skip(f"mode {mode!r} is not installed")
    huge = np.int64(np.iinfo(np.int64).max)
    check(counting_loop(17), mode, [huge, np.bool_(True), np.float64(0.0), np.float64(20.0)],
          numpy_loop=lambda n, go, a0, limit: numpy_counting_loop(None, go, a0, limit))


def while_loop_of_scan_outputs(opset: int = 17) -> onnx.ModelProto:
    """``i*i`` for i = 0, 1, ... while ``i*i < limit``: no carried value, no trip count."""
    make = onnx.helper.make_node
    body = loop_body([make("Cast", ["i"], ["fi"], to=onnx.TensorProto.DOUBLE), make("Mul", ["fi", "fi"], ["square"]),
                      make("Less", ["square", "limit"], ["cond_out"])],
                     scan_outputs=[("square", "float64", ())], cond_out="cond_out")
    return model([make("Loop", ["", "go"], ["squares"], body=body)], [value("go", "bool"), value("limit", "float64")],
                 [value("squares", "float64", ["K"])], opset=opset)


@pytest.mark.parametrize("mode", ["py", "fast", "numba"])
def test_while_loop_with_scan_outputs_only(mode):
    if mode not in MODES_TESTED:
        pytest.skip(f"mode {mode!r} is not installed")

    def numpy_loop(go, limit):
        squares, i = [], 0
        while go:
            squares.append(float(i * i))
            go, i = i * i < limit, i + 1
        return [np.array(squares, dtype=np.float64)]

    check(while_loop_of_scan_outputs(), mode, [np.bool_(True), np.float64(30.0)], [np.bool_(False), np.float64(30.0)],
          numpy_loop=numpy_loop)


@pytest.mark.parametrize("opset", MODEL_OPSETS)
def test_for_loop_with_an_ignored_condition_output(mode, opset):
    """Trip count, no condition input, and a body whose condition stays true: a for loop."""
    check(counting_loop(opset, cond="none"), mode, [np.int64(4), np.float64(0.0), np.float64(1e9)],
          [np.int64(0), np.float64(1.0), np.float64(1e9)],
          numpy_loop=lambda n, a0, limit: numpy_counting_loop(n, True, a0, limit))


def test_loop_without_trip_count_or_condition_that_stays_true_is_refused():
    """``Loop("", "")`` with the body passing its condition on never ends: refused at load."""
    body = loop_body([onnx.helper.make_node("Identity", ["acc"], ["acc_out"])],
                     carried=[("acc", "acc_out", "float32", ())])
    loop = onnx.helper.make_node("Loop", ["", "", "a0"], ["acc_final"], body=body, name="forever")
    with pytest.raises(ss.onnx.ModelImportError, match=r"'forever' \(Loop.*never ends"):
        ss.onnx.load(model([loop], [value("a0", "float32")], [value("acc_final", "float32")]))


# ---------------------------------------------------------------------------- Loop: values carried and stacked
def mixed_loop(opset: int) -> onnx.ModelProto:
    """Carried values of four dtypes and three ranks (float32 0-d, float64 1-d, int64 2-d, bool
    0-d) and one passed through unchanged; scan outputs of a 0-d and a 2-d value per step."""
    make = onnx.helper.make_node
    body = loop_body(
        [const("half", 0.5, "float32"), make("Mul", ["s", "half"], ["s_half"]),
         make("Add", ["s_half", "half"], ["s_out"]),
         make("Cast", ["i"], ["fi"], to=onnx.TensorProto.DOUBLE), make("Add", ["v", "fi"], ["v_out"]),
         const("two", 2, "int64"), make("Mul", ["m", "two"], ["m2"]), make("Sub", ["m2", "i"], ["m_out"]),
         make("Not", ["b"], ["b_out"]),
         make("ReduceSum", ["v_out"], ["v_sum"], keepdims=0), make("Identity", ["m_out"], ["m_seen"])],
        carried=[("s", "s_out", "float32", ()), ("v", "v_out", "float64", [3]), ("m", "m_out", "int64", [2, 2]),
                 ("b", "b_out", "bool", ()), ("p", "p", "float32", [2])],
        scan_outputs=[("v_sum", "float64", ()), ("m_seen", "int64", [2, 2])])
    loop = make("Loop", ["n", "", "s0", "v0", "m0", "b0", "p0"],
                ["s_final", "v_final", "m_final", "b_final", "p_final", "v_sums", "m_all"], body=body)
    inputs = [value("n", "int64"), value("s0", "float32"), value("v0", "float64", [3]), value("m0", "int64", [2, 2]),
              value("b0", "bool"), value("p0", "float32", [2])]
    outputs = [value("s_final", "float32"), value("v_final", "float64", [3]), value("m_final", "int64", [2, 2]),
               value("b_final", "bool"), value("p_final", "float32", [2]), value("v_sums", "float64", ["K"]),
               value("m_all", "int64", ["K", 2, 2])]
    return model([loop], inputs, outputs, opset=opset)


def numpy_mixed_loop(n, s, v, m, b, p):
    v_sums, m_all = [], []
    for i in range(n):
        s, v, m, b = np.float32(s * np.float32(0.5) + np.float32(0.5)), v + i, m * 2 - i, ~b
        v_sums.append(v.sum())
        m_all.append(m)
    return [s, v, m, b, p, np.array(v_sums, dtype=np.float64), np.array(m_all, dtype=np.int64).reshape(-1, 2, 2)]


@pytest.mark.parametrize("opset", MODEL_OPSETS)
@pytest.mark.parametrize("n", [3, 0])
def test_loop_carries_and_stacks_values_of_several_dtypes_and_ranks(mode, opset, n):
    values = [np.int64(n), np.float32(3.0), np.array([1.0, 2.0, 3.0]), np.array([[1, -2], [3, 4]]), np.bool_(True),
              np.array([0.25, -1.5], dtype=np.float32)]
    check(mixed_loop(opset), mode, values, numpy_loop=numpy_mixed_loop)


def test_loop_outputs_keep_the_carried_dtypes_and_ranks():
    _, outputs = ss.onnx.load(mixed_loop(17))
    assert [str(out.type.dtype) for out in outputs] == ["float32", "float64", "int64", "bool", "float32", "float64",
                                                        "int64"]
    assert [out.ndim for out in outputs] == [0, 1, 2, 0, 1, 1, 3]


def invariant_loop(opset: int) -> onnx.ModelProto:
    """A scan output that does not depend on the iteration (``w * 2`` each step) next to one
    that does, and a carried value passed on through Identity."""
    make = onnx.helper.make_node
    body = loop_body([const("two", 2.0, "float32"), make("Mul", ["w", "two"], ["w2"]),
                      make("Identity", ["c"], ["c_out"]), make("Cast", ["i"], ["fi"], to=onnx.TensorProto.FLOAT),
                      make("Add", ["c", "fi"], ["ci"])],
                     carried=[("c", "c_out", "float32", [2])],
                     scan_outputs=[("w2", "float32", [2]), ("ci", "float32", [2])])
    loop = make("Loop", ["n", "", "c0"], ["c_final", "w2_all", "ci_all"], body=body)
    return model([loop], [value("n", "int64"), value("w", "float32", [2]), value("c0", "float32", [2])],
                 [value("c_final", "float32", [2]), value("w2_all", "float32", ["K", 2]),
                  value("ci_all", "float32", ["K", 2])], opset=opset)


@pytest.mark.parametrize("opset", MODEL_OPSETS)
def test_loop_invariant_scan_output_repeats_each_step(mode, opset):
    w, c0 = np.array([1.5, -2.0], dtype=np.float32), np.array([0.0, 1.0], dtype=np.float32)
    check(invariant_loop(opset), mode, [np.int64(3), w, c0], [np.int64(0), w, c0],
          numpy_loop=lambda n, w, c0: [c0, np.tile(w * 2, (n, 1)), (c0 + np.arange(n, dtype=np.float32)[:, None])
                                       .reshape(n, 2)])


# ---------------------------------------------------------------------------- Loop: outer-scope values
def outer_scope_loop(opset: int) -> onnx.ModelProto:
    """The body reads ``w`` (a graph input) and ``w_sq`` (computed by a node of the main graph)
    by name: ``acc = acc * w + w_sq`` per step."""
    make = onnx.helper.make_node
    body = loop_body([make("Mul", ["acc", "w"], ["scaled"]), make("Add", ["scaled", "w_sq"], ["acc_out"])],
                     carried=[("acc", "acc_out", "float64", [2])])
    nodes = [make("Mul", ["w", "w"], ["w_sq"]), make("Loop", ["n", "", "a0"], ["acc_final"], body=body)]
    return model(nodes, [value("n", "int64"), value("w", "float64", [2]), value("a0", "float64", [2])],
                 [value("acc_final", "float64", [2])], opset=opset)


def numpy_outer_scope_loop(n, w, acc):
    for _ in range(n):
        acc = acc * w + w * w
    return [acc]


@pytest.mark.parametrize("opset", MODEL_OPSETS)
def test_loop_body_reads_outer_values_by_name(mode, opset):
    w, a0 = np.array([0.5, -1.0]), np.array([1.0, 2.0])
    check(outer_scope_loop(opset), mode, [np.int64(4), w, a0], [np.int64(0), w, a0],
          numpy_loop=numpy_outer_scope_loop)


# ---------------------------------------------------------------------------- Loop: nesting
def nested_loops(opset: int) -> onnx.ModelProto:
    """``for i in range(n): for j in range(i + 1): acc += w * j + i`` with the inner Loop's trip
    count computed from the outer iteration number, and its body reading ``i`` (the outer
    body's input) and ``w`` (a graph input) by name; the outer loop stacks each step's ``acc``."""
    make = onnx.helper.make_node
    inner = loop_body([make("Cast", ["j"], ["fj"], to=onnx.TensorProto.DOUBLE), make("Mul", ["w", "fj"], ["wj"]),
                       make("Cast", ["i"], ["fi"], to=onnx.TensorProto.DOUBLE),
                       make("Add", ["inner_acc", "wj"], ["t"]), make("Add", ["t", "fi"], ["inner_out"])],
                      carried=[("inner_acc", "inner_out", "float64", ())], name="inner", iteration="j")
    outer = loop_body([const("one", 1, "int64"), make("Add", ["i", "one"], ["inner_n"]),
                       make("Loop", ["inner_n", "", "acc"], ["acc_out"], body=inner),
                       make("Identity", ["acc_out"], ["acc_seen"])],
                      carried=[("acc", "acc_out", "float64", ())], scan_outputs=[("acc_seen", "float64", ())],
                      name="outer")
    loop = make("Loop", ["n", "", "a0"], ["acc_final", "acc_all"], body=outer)
    return model([loop], [value("n", "int64"), value("w", "float64"), value("a0", "float64")],
                 [value("acc_final", "float64"), value("acc_all", "float64", ["K"])], opset=opset)


def numpy_nested_loops(n, w, acc):
    seen = []
    for i in range(n):
        for j in range(i + 1):
            acc = acc + w * j + i
        seen.append(acc)
    return [np.float64(acc), np.array(seen, dtype=np.float64)]


@pytest.mark.parametrize("opset", MODEL_OPSETS)
def test_loop_nested_in_a_loop_reads_the_outer_iteration_number(mode, opset):
    check(nested_loops(opset), mode, [np.int64(4), np.float64(0.5), np.float64(1.0)],
          [np.int64(0), np.float64(0.5), np.float64(1.0)], [np.int64(1), np.float64(2.0), np.float64(0.0)],
          numpy_loop=numpy_nested_loops)


def scan_in_loop(opset: int) -> onnx.ModelProto:
    """``for i in range(n)``: a Scan over the rows of ``x`` (an outer-scope value) sums them
    into a state started at ``acc``, then adds i."""
    make = onnx.helper.make_node
    scan_body = graph([make("Add", ["row_acc", "row"], ["row_acc_out"])],
                      [value("row_acc", "float32", [3]), value("row", "float32", [3])],
                      [value("row_acc_out", "float32", [3])], name="rows")
    body = loop_body([make("Scan", ["acc", "x"], ["summed"], body=scan_body, num_scan_inputs=1),
                      make("Cast", ["i"], ["fi"], to=onnx.TensorProto.FLOAT),
                      make("Add", ["summed", "fi"], ["acc_out"])],
                     carried=[("acc", "acc_out", "float32", [3])])
    loop = make("Loop", ["n", "", "a0"], ["acc_final"], body=body)
    return model([loop], [value("n", "int64"), value("x", "float32", ["R", 3]), value("a0", "float32", [3])],
                 [value("acc_final", "float32", [3])], opset=opset)


@pytest.mark.parametrize("opset", MODEL_OPSETS)
def test_scan_inside_a_loop_body(mode, opset):
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    check(scan_in_loop(opset), mode, [np.int64(3), x, np.ones(3, dtype=np.float32)],
          [np.int64(0), x, np.ones(3, dtype=np.float32)], numpy_loop=numpy_scan_in_loop)


def numpy_scan_in_loop(n, x, acc):
    for i in range(n):
        acc = acc + x.sum(axis=0) + np.float32(i)
    return [acc]


def loop_in_scan(opset: int = 17) -> onnx.ModelProto:
    """A Scan over x whose body runs ``Loop(n)`` raising each element to the power n (an
    outer-scope trip count), summed into a state and stacked."""
    make = onnx.helper.make_node
    inner = loop_body([make("Mul", ["power", "e"], ["power_out"])], carried=[("power", "power_out", "float32", ())],
                      name="inner")
    body = graph([make("Loop", ["n", "", "one"], ["p"], body=inner), make("Add", ["s", "p"], ["s_out"]),
                  make("Identity", ["p"], ["p_seen"])],
                 [value("s", "float32"), value("e", "float32")],
                 [value("s_out", "float32"), value("p_seen", "float32")],
                 name="elements", initializers={"one": np.float32(1.0)})
    scan = make("Scan", ["s0", "x"], ["s_final", "powers"], body=body, num_scan_inputs=1)
    return model([scan], [value("n", "int64"), value("s0", "float32"), value("x", "float32", ["T"])],
                 [value("s_final", "float32"), value("powers", "float32", ["T"])], opset=opset)


def test_loop_inside_a_scan_body(mode):
    x = np.array([1.0, 2.0, 0.5], dtype=np.float32)
    check(loop_in_scan(), mode, [np.int64(3), np.float32(0.0), x], [np.int64(0), np.float32(1.0), x],
          numpy_loop=lambda n, s0, x: [np.float32(s0 + (x ** n).sum()), (x ** n).astype(np.float32)])


def test_scan_of_no_rows_inside_a_loop_body(mode):
    """The inner Scan runs no step (onnxruntime 1.32 fails on a Scan input of length 0, see
    test_scan_of_zero_length_input): the numpy loop is the oracle."""
    values = [np.int64(2), np.zeros((0, 3), dtype=np.float32), np.ones(3, dtype=np.float32)]
    assert_outputs(ss.onnx.import_function(scan_in_loop(17), mode=mode)(*values), numpy_scan_in_loop(*values),
                   f"mode {mode!r}")


# ---------------------------------------------------------------------------- Loop: where onnxruntime leads
def test_loop_stops_on_the_body_condition_without_a_condition_input(mode):
    """``Loop(M, "")``: the spec's table calls the body's condition "ignored", but onnxruntime
    stops when it turns false, and so does symscan."""
    values = [np.int64(10), np.float64(0.0), np.float64(5.0)]
    expected = run_onnxruntime(counting_loop(17, cond="none"), values)
    assert_outputs(expected, numpy_counting_loop(10, True, 0.0, 5.0), "onnxruntime vs the numpy while loop")
    check(counting_loop(17, cond="none"), mode, values)


def iteration_number_loop(opset: int = 17) -> onnx.ModelProto:
    """The body returns its iteration-number input ``i`` itself as a carried value and as a
    scan output (no node in between)."""
    body = loop_body([], carried=[("last", "i", "int64", ())], scan_outputs=[("i", "int64", ())])
    loop = onnx.helper.make_node("Loop", ["n", "", "last0"], ["last_final", "all_i"], body=body)
    return model([loop], [value("n", "int64"), value("last0", "int64")],
                 [value("last_final", "int64"), value("all_i", "int64", ["K"])], opset=opset)


def test_iteration_number_returned_directly_counts_from_zero(mode):
    """The spec's ``i`` of each step: 0 .. n-1, the last one the final value. (onnxruntime 1.32
    returns n for every step here, its loop counter after the increment, and gives 0 .. n-1
    once an Identity is in between: the numpy loop is the oracle.)"""
    f = ss.onnx.import_function(iteration_number_loop(), mode=mode)
    assert_outputs(f(np.int64(4), np.int64(-7)), [np.int64(3), np.arange(4, dtype=np.int64)], f"mode {mode!r}")
    assert_outputs(f(np.int64(0), np.int64(-7)), [np.int64(-7), np.zeros(0, dtype=np.int64)], f"mode {mode!r}")


def one_element_loop(where: str) -> onnx.ModelProto:
    """The counting loop with its trip count, its condition input or its body's condition of
    shape [1] instead of a scalar (onnxruntime runs all three)."""
    make = onnx.helper.make_node
    body_nodes = [const("one", 1.0), make("Add", ["acc", "one"], ["acc_out"]),
                  make("Less", ["acc_out", "limit"], ["cond_out" if where != "body condition" else "cond_0d"])]
    if where == "body condition":
        body_nodes += [const("shape1", [1], "int64"), make("Reshape", ["cond_0d", "shape1"], ["cond_out"])]
    body = loop_body(body_nodes, carried=[("acc", "acc_out", "float64", ())], cond_out="cond_out")
    body.output[0].CopyFrom(value("cond_out", "bool", [1] if where == "body condition" else []))
    if where == "condition input":
        body.input[1].CopyFrom(value("cond_in", "bool", [1]))
    loop = make("Loop", ["n", "go", "a0"], ["acc_final"], body=body)
    inputs = [value("n", "int64", [1] if where == "trip count" else []),
              value("go", "bool", [1] if where == "condition input" else []), value("a0", "float64"),
              value("limit", "float64")]
    return model([loop], inputs, [value("acc_final", "float64")])


@pytest.mark.parametrize("where", ["trip count", "condition input", "body condition"])
def test_one_element_trip_count_and_condition(where):
    m = one_element_loop(where)
    values = [np.array([10] if where == "trip count" else 10, dtype=np.int64),
              np.array([True] if where == "condition input" else True), np.float64(0.0), np.float64(4.0)]
    assert_outputs(run_onnxruntime(m, values), [np.float64(4.0)], "onnxruntime")
    check(m, "fast", values)


# ---------------------------------------------------------------------------- Scan
def scan_model(opset: int = 17, in_axes=None, in_dirs=None, out_axes=None, out_dirs=None) -> onnx.ModelProto:
    """Scan over ``x`` ([2, T]: its steps along axis 1 or -1, element [2]) and ``y`` ([T]) with
    two states (float64 [2], int64 0-d) and two scan outputs ([2] and 0-d per step)."""
    make = onnx.helper.make_node
    body = graph([make("Add", ["s", "xe"], ["s_out"]), make("Cast", ["ye"], ["yi"], to=onnx.TensorProto.INT64),
                  make("Add", ["t", "yi"], ["t_out"]), make("Mul", ["s_out", "xe"], ["o1"]),
                  make("Cast", ["t_out"], ["o2"], to=onnx.TensorProto.DOUBLE)],
                 [value("s", "float64", [2]), value("t", "int64"), value("xe", "float64", [2]), value("ye", "float64")],
                 [value("s_out", "float64", [2]), value("t_out", "int64"), value("o1", "float64", [2]),
                  value("o2", "float64")])
    attrs = {name: v for name, v in [("scan_input_axes", in_axes), ("scan_input_directions", in_dirs),
                                     ("scan_output_axes", out_axes), ("scan_output_directions", out_dirs)] if v}
    scan = make("Scan", ["s0", "t0", "x", "y"], ["s_final", "t_final", "o1_all", "o2_all"], body=body,
                num_scan_inputs=2, name="two_inputs", **{"scan_input_axes": [1, 0], **attrs})
    o1_shape = [2, "T"] if (out_axes or [0])[0] in (1, -1) else ["T", 2]
    return model([scan], [value("s0", "float64", [2]), value("t0", "int64"), value("x", "float64", [2, "T"]),
                          value("y", "float64", ["T"])],
                 [value("s_final", "float64", [2]), value("t_final", "int64"), value("o1_all", "float64", o1_shape),
                  value("o2_all", "float64", ["T"])], opset=opset)


def numpy_scan(s, t, x, y, in_dirs=(0, 0), out_axes=(0, 0), out_dirs=(0, 0)):
    xs, ys = x.T[::-1] if in_dirs[0] else x.T, y[::-1] if in_dirs[1] else y
    o1, o2 = [], []
    for xe, ye in zip(xs, ys):
        s, t = s + xe, t + np.int64(ye)
        o1.append(s * xe)
        o2.append(np.float64(t))
    o1, o2 = np.array(o1).reshape(-1, 2), np.array(o2, dtype=np.float64)
    o1, o2 = (o1[::-1] if out_dirs[0] else o1), (o2[::-1] if out_dirs[1] else o2)
    return [s, np.int64(t), o1.T if out_axes[0] else o1, o2]


def running_sum_scan(opset: int) -> onnx.ModelProto:
    """One state, one scan input, one scan output: the running sum of the rows of x."""
    make = onnx.helper.make_node
    body = graph([make("Add", ["s", "row"], ["s_out"]), make("Identity", ["s_out"], ["seen"])],
                 [value("s", "float32", [3]), value("row", "float32", [3])],
                 [value("s_out", "float32", [3]), value("seen", "float32", [3])], name="rows")
    return model([make("Scan", ["s0", "x"], ["total", "partials"], body=body, num_scan_inputs=1)],
                 [value("s0", "float32", [3]), value("x", "float32", ["T", 3])],
                 [value("total", "float32", [3]), value("partials", "float32", ["T", 3])], opset=opset)


@pytest.mark.parametrize("opset", MODEL_OPSETS)
def test_scan_of_one_input_is_a_running_sum(mode, opset):
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    check(running_sum_scan(opset), mode, [np.ones(3, dtype=np.float32), x],
          numpy_loop=lambda s0, x: [s0 + x.sum(axis=0), s0 + np.cumsum(x, axis=0, dtype=np.float32)])


SCAN_ATTRIBUTES = {
    "defaults": {},
    "input axis -1": dict(in_axes=[-1, -1]),
    "input directions 1": dict(in_dirs=[1, 0]),
    "bidirectional inputs": dict(in_dirs=[0, 1]),
    "output axis 1": dict(out_axes=[1, 0]),
    "output axis -1": dict(out_axes=[-1, 0]),
    "output directions 1": dict(out_dirs=[1, 1]),
    "everything reversed": dict(in_axes=[-1, 0], in_dirs=[1, 1], out_axes=[1, 0], out_dirs=[1, 0]),
}


@pytest.mark.parametrize("opset", MODEL_OPSETS)
@pytest.mark.parametrize("case", list(SCAN_ATTRIBUTES))
def test_scan_with_axes_and_directions(mode, opset, case):
    attrs = SCAN_ATTRIBUTES[case]
    r = np.random.default_rng(5)
    values = [np.array([1.0, 2.0]), np.int64(3), r.normal(size=(2, 4)), np.arange(4.0)]
    numpy_attrs = {k: attrs[v] for k, v in [("in_dirs", "in_dirs"), ("out_axes", "out_axes"), ("out_dirs", "out_dirs")]
                   if v in attrs}
    check(scan_model(opset, **attrs), mode, values, values[:2] + [values[2][:, :1], values[3][:1]],
          numpy_loop=lambda *v: numpy_scan(*v, **numpy_attrs))


@pytest.mark.parametrize("case", ["defaults", "everything reversed"])
def test_scan_of_zero_length_input(mode, case):
    """No step: the states' initial values and empty scan outputs. (onnxruntime 1.32 fails on
    a Scan input of length 0 along axis 0, and the process dies of SIGFPE when the axis is 1:
    the numpy loop is the oracle.)"""
    attrs = SCAN_ATTRIBUTES[case]
    values = [np.array([1.0, 2.0]), np.int64(3), np.zeros((2, 0)), np.zeros(0)]
    got = ss.onnx.import_function(scan_model(17, **attrs), mode=mode)(*values)
    assert_outputs(got, numpy_scan(*values, **{k: v for k, v in attrs.items() if k != "in_axes"}), f"mode {mode!r}")


def test_scan_inputs_of_different_lengths_fail_naming_the_node(mode):
    """ONNX requires equal lengths; onnxruntime fails at run time ("inconsistent sequence
    lengths"), symscan with a ValueError naming the node (its scan would stop at the shortest)."""
    m = scan_model(17)
    values = [np.array([1.0, 2.0]), np.int64(3), np.ones((2, 4)), np.arange(3.0)]
    with pytest.raises(Exception, match="inconsistent sequence lengths"):
        run_onnxruntime(m, values)
    f = ss.onnx.import_function(m, mode=mode)
    with pytest.raises(ValueError, match=r"'two_inputs' \(Scan.*different lengths"):
        f(*values)
    with pytest.raises(ValueError, match=r"'two_inputs' \(Scan.*different lengths"):
        f(*values[:2], np.ones((2, 3)), np.arange(4.0))


def scan_passing_values_on(opset: int = 17) -> onnx.ModelProto:
    """A Scan body returning its inputs themselves: state ``p`` passed on, the element ``xe``
    as a reversed scan output (no node in between)."""
    make = onnx.helper.make_node
    body = graph([make("Add", ["s", "xe"], ["s_out"])],
                 [value("s", "float32", [2]), value("p", "int64"), value("xe", "float32", [2])],
                 [value("s_out", "float32", [2]), value("p", "int64"), value("xe", "float32", [2])])
    scan = make("Scan", ["s0", "p0", "x"], ["s_final", "p_final", "x_back"], body=body, num_scan_inputs=1,
                scan_output_directions=[1])
    return model([scan], [value("s0", "float32", [2]), value("p0", "int64"), value("x", "float32", ["T", 2])],
                 [value("s_final", "float32", [2]), value("p_final", "int64"), value("x_back", "float32", ["T", 2])],
                 opset=opset)


def test_scan_body_returning_its_inputs(mode):
    """The state passed on keeps its value and the element comes back reversed. (onnxruntime
    1.32 returns 0 for such a state and uninitialised memory for such a scan output: the numpy
    result is the oracle.)"""
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    got = ss.onnx.import_function(scan_passing_values_on(), mode=mode)(np.ones(2, dtype=np.float32), np.int64(7), x)
    assert_outputs(got, [1 + x.sum(axis=0), np.int64(7), x[::-1]], f"mode {mode!r}")


def scan8_model(directions=(0,), lengths: str = "") -> onnx.ModelProto:
    """Scan-8 (opset 8): axis 0 a batch, each batch element's ``x`` scanned along axis 1."""
    make = onnx.helper.make_node
    body = graph([make("Add", ["s", "xe"], ["s_out"]), make("Mul", ["s_out", "xe"], ["o"])],
                 [value("s", "float32", [2]), value("xe", "float32", [2])],
                 [value("s_out", "float32", [2]), value("o", "float32", [2])])
    scan = make("Scan", [lengths, "s0", "x"], ["s_final", "o_all"], body=body, num_scan_inputs=1,
                directions=list(directions), name="batched")
    inputs = [value("lens", "int64", ["B"])] if lengths else []
    return model([scan], inputs + [value("s0", "float32", ["B", 2]), value("x", "float32", ["B", "T", 2])],
                 [value("s_final", "float32", ["B", 2]), value("o_all", "float32", ["B", "T", 2])], opset=8)


def numpy_scan8(s0, x, directions=(0,)):
    finals, outs = [], []
    for s, rows in zip(s0, x):
        o = []
        for xe in (rows[::-1] if directions[0] else rows):
            s = s + xe
            o.append(s * xe)
        finals.append(s)
        outs.append(np.array(o, dtype=np.float32).reshape(-1, 2))
    return [np.array(finals, dtype=np.float32).reshape(-1, 2), np.array(outs, dtype=np.float32).reshape(x.shape)]


@pytest.mark.parametrize("directions", [(0,), (1,)])
def test_scan8_scans_each_batch_element(mode, directions):
    x = np.arange(24, dtype=np.float32).reshape(2, 6, 2) / 10
    check(scan8_model(directions), mode, [np.ones((2, 2), dtype=np.float32), x],
          [np.ones((3, 2), dtype=np.float32), np.ones((3, 1, 2), dtype=np.float32)],
          numpy_loop=lambda s0, x: numpy_scan8(s0, x, directions))


def test_scan8_with_sequence_lens_is_refused_naming_the_node():
    with pytest.raises(ss.onnx.ModelImportError, match=r"'batched' \(Scan.*sequence_lens"):
        ss.onnx.load(scan8_model(lengths="lens"))


# ---------------------------------------------------------------------------- If
def if_model(cond: str = "input", opset: int = 17, cond_shape=(), then_nodes=None, else_nodes=None,
             out_shape=(3,)) -> onnx.ModelProto:
    """``y = x * w if c else x - w`` (branches reading ``x`` and ``w`` from the main graph);
    ``cond``: "input" (a graph input of shape ``cond_shape``), or "true"/"false" (a Constant)."""
    make = onnx.helper.make_node
    then_branch = graph(then_nodes or [make("Mul", ["x", "w"], ["t"])], [], [value("t", "float32", out_shape)],
                        name="then")
    else_branch = graph(else_nodes or [make("Sub", ["x", "w"], ["e"])], [], [value("e", "float32", out_shape)],
                        name="else")
    nodes = [] if cond == "input" else [const("c", cond == "true")]
    nodes.append(make("If", ["c"], ["y"], then_branch=then_branch, else_branch=else_branch, name="choose"))
    inputs = ([value("c", "bool", cond_shape)] if cond == "input" else []) + [value("x", "float32", [3]),
                                                                             value("w", "float32")]
    return model(nodes, inputs, [value("y", "float32", out_shape)], opset=opset)


@pytest.mark.parametrize("opset", MODEL_OPSETS)
def test_if_on_a_graph_input_becomes_an_ifelse(mode, opset):
    x, w = np.arange(3, dtype=np.float32), np.float32(2.0)
    check(if_model(opset=opset), mode, [np.bool_(True), x, w], [np.bool_(False), x, w],
          numpy_loop=lambda c, x, w: [x * w if c else x - w])
    (node,) = [n for n in ss.onnx.import_function(if_model(opset=opset), mode="py").fgraph.apply_nodes
               if isinstance(n.op, IfElse)]
    assert [str(n.op) for n in node.op.then_graph.apply_nodes] == ["Elemwise{mul}"]
    assert [str(n.op) for n in node.op.else_graph.apply_nodes] == ["Elemwise{sub}"]


def failing_branch_model(op: str, opset: int = 17) -> onnx.ModelProto:
    """``y = x[k] if k < len(x) else -1`` ("Gather": out of range when not chosen), or
    ``y = sum(reshape(x, (2, 3)), 0) if len(x) == 6 else x[:3]`` ("Reshape": of another size
    when not chosen); the condition computed in the main graph, the branches reading x and k."""
    make = onnx.helper.make_node
    if op == "Gather":
        then_branch = graph([make("Gather", ["x", "k"], ["t"], axis=0)], [], [value("t", "float32")], name="then")
        else_branch = graph([const("e", -1.0, "float32")], [], [value("e", "float32")], name="else")
        condition = [make("Less", ["k", "n"], ["c"])]
        out_shape = ()
    else:
        then_nodes = [make("Reshape", ["x", "shape"], ["r"]), make("ReduceSum", ["r", "zero"], ["t"], keepdims=0)]
        then_branch = graph(then_nodes, [], [value("t", "float32", [3])], name="then",
                            initializers={"shape": np.array([2, 3]), "zero": np.array([0])})
        else_branch = graph([make("Slice", ["x", "starts", "ends"], ["e"])], [], [value("e", "float32", [3])],
                            name="else", initializers={"starts": np.array([0]), "ends": np.array([3])})
        condition = [make("Equal", ["n", "six"], ["c"])]
        out_shape = (3,)
    nodes = [make("Shape", ["x"], ["shape_x"]), make("Gather", ["shape_x", "zero_i"], ["n"], axis=0), *condition,
             make("If", ["c"], ["y"], then_branch=then_branch, else_branch=else_branch, name="choose")]
    return model(nodes, [value("k", "int64"), value("x", "float32", ["N"])], [value("y", "float32", out_shape)],
                 opset=opset, initializers={"zero_i": np.int64(0), "six": np.int64(6)})


@pytest.mark.parametrize("op", ["Gather", "Reshape"])
def test_if_does_not_run_the_branch_not_taken(mode, op):
    """onnxruntime runs only the chosen branch; so does the imported ifelse (a switch, computing
    both, would fail on these values)."""
    m = failing_branch_model(op)
    short, five, six = (np.arange(n, dtype=np.float32) for n in (3, 5, 6))
    values = [[np.int64(5), short], [np.int64(1), short]] if op == "Gather" else [[np.int64(0), five],
                                                                                     [np.int64(0), six]]
    numpy_loop = (lambda k, x: [np.float32(x[k] if k < len(x) else -1)]) if op == "Gather" else \
        (lambda k, x: [x.reshape(2, 3).sum(0) if len(x) == 6 else x[:3]])
    check(m, mode, *values, numpy_loop=numpy_loop)


def test_if_on_a_one_element_condition(mode):
    """The spec's condition is any tensor of one element; shape [1] is common."""
    x, w = np.arange(3, dtype=np.float32), np.float32(2.0)
    check(if_model(cond_shape=[1]), mode, [np.array([True]), x, w], [np.array([False]), x, w])


def test_if_on_a_one_element_condition_keeps_scalar_outputs_scalar():
    make = onnx.helper.make_node
    m = if_model(cond_shape=[1], then_nodes=[make("ReduceSum", ["x"], ["t"], keepdims=0)],
                 else_nodes=[make("ReduceMax", ["x"], ["e"], keepdims=0)], out_shape=())
    x = np.arange(3, dtype=np.float32)
    for c in (True, False):
        assert_outputs(run_onnxruntime(m, [np.array([c]), x, np.float32(0)]), [np.float32(3.0 if c else 2.0)],
                       "onnxruntime")
    check(m, "fast", [np.array([True]), x, np.float32(0)], [np.array([False]), x, np.float32(0)])


@pytest.mark.parametrize("taken", ["true", "false"])
def test_if_on_a_constant_builds_only_the_taken_branch(taken):
    f = ss.onnx.import_function(if_model(cond=taken), mode="py")
    assert sorted(str(node.op) for node in f.fgraph.apply_nodes) == ["Elemwise{mul}" if taken == "true"
                                                                      else "Elemwise{sub}"]
    x, w = np.arange(3, dtype=np.float32), np.float32(2.0)
    assert_outputs(f(x, w), run_onnxruntime(if_model(cond=taken), [x, w]), "mode 'py' vs onnxruntime")


def unimported_branch_model(taken: str) -> onnx.ModelProto:
    """An If on a Constant whose ``taken`` branch ("good" or "bad") slices x, the other one
    holding TopK, an op symscan does not import."""
    make = onnx.helper.make_node
    bad = graph([make("TopK", ["x", "k"], ["e", "indices"], name="top")], [], [value("e", "float32", [2])], name="bad",
                initializers={"k": np.array([2])})
    good = graph([make("Slice", ["x", "starts", "ends"], ["t"])], [], [value("t", "float32", [2])], name="good",
                 initializers={"starts": np.array([0]), "ends": np.array([2])})
    first, second = (good, bad) if taken == "good" else (bad, good)
    return model([const("c", True), make("If", ["c"], ["y"], then_branch=first, else_branch=second)],
                 [value("x", "float32", [3])], [value("y", "float32", [2])])


def test_if_on_a_constant_ignores_an_unimported_op_in_the_branch_not_taken(mode):
    x = np.array([3.0, 1.0, 2.0], dtype=np.float32)
    check(unimported_branch_model("good"), mode, [x], numpy_loop=lambda x: [x[:2]])


def test_if_on_a_constant_refuses_an_unimported_op_in_the_branch_taken():
    with pytest.raises(ss.onnx.ModelImportError, match=r"'top' \(TopK.*graph 'bad'"):
        ss.onnx.load(unimported_branch_model("bad"))


def branches_of_different_shapes(then_shape: str = "x") -> onnx.ModelProto:
    """``y = t if c else x[:2, None]`` (shape (2, 1)), with ``t`` ``x[None, :]`` (1, 3) ("row") or
    ``x`` (3,) ("x", another rank): the output's shape depends on the run-time condition."""
    make = onnx.helper.make_node
    then_nodes = [make("Unsqueeze", ["x", "zero"], ["t"])] if then_shape == "row" else [make("Identity", ["x"], ["t"])]
    then_branch = graph(then_nodes, [], [value("t", "float32", [1, 3] if then_shape == "row" else [3])],
                        name="then", initializers={"zero": np.array([0])})
    else_branch = graph([make("Slice", ["x", "starts", "ends"], ["s"]), make("Unsqueeze", ["s", "one"], ["e"])], [],
                        [value("e", "float32", [2, 1])], name="else",
                        initializers={"starts": np.array([0]), "ends": np.array([2]), "one": np.array([1])})
    return model([make("If", ["c"], ["y"], then_branch=then_branch, else_branch=else_branch, name="choose")],
                 [value("c", "bool"), value("x", "float32", [3])],
                 [value("y", "float32", ["K", "L"] if then_shape == "row" else ["K"])])


def test_if_with_branches_of_different_shapes_takes_the_chosen_one(mode):
    """Branches of one rank whose lengths differ: the chosen one's value and shape."""
    m = branches_of_different_shapes("row")
    _, (y,) = ss.onnx.load(m)
    assert y.ndim == 2
    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    check(m, mode, [np.bool_(True), x], [np.bool_(False), x * 2])


def test_if_with_branches_of_other_ranks_needs_the_condition_at_load():
    with pytest.raises(ss.onnx.StaticInputsNeeded, match=r"'choose' \(If.*condition") as err:
        ss.onnx.load(branches_of_different_shapes())
    assert err.value.input_names == ["c"]
    _, (y,) = ss.onnx.load(branches_of_different_shapes(), static_inputs={"c": False})
    assert y.type.shape == (2, 1)


def test_backend_compiles_an_if_of_other_ranks_per_condition_value(mode):
    m = branches_of_different_shapes()
    rep = ss.onnx.Backend.prepare(m, mode=mode)
    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    for c, xv in [(True, x), (False, x), (True, x + 1), (False, x * 2)]:
        got = list(rep.run([np.bool_(c), xv]))
        np.testing.assert_array_equal(got[0], xv if c else xv[:2, None])
    assert len(rep.functions) == 2


def if_in_loop(opset: int = 17) -> onnx.ModelProto:
    """``for i in range(n): acc = acc + x[i] if i < 2 else acc * 2``: an If in a Loop body on a
    condition computed from the iteration number, its branches reading body values."""
    make = onnx.helper.make_node
    then_branch = graph([make("Add", ["acc", "xi"], ["t"])], [], [value("t", "float64")], name="then")
    else_branch = graph([make("Mul", ["acc", "two"], ["e"])], [], [value("e", "float64")], name="else")
    body = loop_body([make("Gather", ["x", "i"], ["xi"], axis=0), make("Less", ["i", "two_i"], ["c"]),
                      make("If", ["c"], ["acc_out"], then_branch=then_branch, else_branch=else_branch)],
                     carried=[("acc", "acc_out", "float64", ())],
                     initializers={"two": np.float64(2), "two_i": np.int64(2)})
    return model([make("Loop", ["n", "", "a0"], ["acc_final"], body=body)],
                 [value("n", "int64"), value("x", "float64", ["N"]), value("a0", "float64")],
                 [value("acc_final", "float64")], opset=opset)


def test_if_inside_a_loop_body(mode):
    def numpy_loop(n, x, acc):
        for i in range(n):
            acc = acc + x[i] if i < 2 else acc * 2
        return [np.float64(acc)]

    check(if_in_loop(), mode, [np.int64(4), np.arange(1.0, 5.0), np.float64(0.5)],
          [np.int64(1), np.arange(1.0, 5.0), np.float64(0.5)], numpy_loop=numpy_loop)


# ---------------------------------------------------------------------------- errors
def test_loop_carried_value_changing_rank_is_refused_naming_the_node():
    """ONNX lets a loop-carried value change shape across iterations; symscan's states keep one
    type, so a rank change is refused when the model is loaded."""
    body = loop_body([onnx.helper.make_node("Unsqueeze", ["v", "axes"], ["v_out"])],
                     carried=[("v", "v_out", "float32", None)], initializers={"axes": np.array([0])})
    loop = onnx.helper.make_node("Loop", ["n", "", "v0"], ["v_final"], body=body, name="growing")
    m = model([loop], [value("n", "int64"), value("v0", "float32", [2])], [value("v_final", "float32", None)],
              check=False)
    assert run_onnxruntime(m, [np.int64(2), np.ones(2, dtype=np.float32)])[0].shape == (1, 1, 2)
    with pytest.raises(ss.onnx.ModelImportError, match=r"'growing' \(Loop.*carried value 'v' is float32\[2\] "
                                                      r"before a step and float32\[1, 2\] after it"):
        ss.onnx.load(m)


def test_loop_carried_value_changing_length_fails_at_run_time_naming_the_loop(mode):
    """A length change (``v = concat(v, v)``) shows only when the loop runs: a ValueError
    naming the loop, where onnxruntime doubles the vector."""
    body = loop_body([onnx.helper.make_node("Concat", ["v", "v"], ["v_out"], axis=0)],
                     carried=[("v", "v_out", "float32", ["L"])])
    loop = onnx.helper.make_node("Loop", ["n", "", "v0"], ["v_final"], body=body, name="doubling")
    m = model([loop], [value("n", "int64"), value("v0", "float32", ["L"])], [value("v_final", "float32", ["M"])],
              check=False)
    values = [np.int64(3), np.ones(2, dtype=np.float32)]
    assert run_onnxruntime(m, values)[0].shape == (16,)
    with pytest.raises(ValueError, match=r"'doubling'.*same shape at every step"):
        ss.onnx.import_function(m, mode=mode)(*values)


def sequence_loop(initial: str) -> onnx.ModelProto:
    """A Loop appending ``x`` to a sequence it carries; the initial sequence a graph input
    ("input") or made by SequenceEmpty ("node")."""
    make = onnx.helper.make_node
    sequence = onnx.helper.make_tensor_sequence_value_info
    body = graph([make("SequenceInsert", ["seq", "x"], ["seq_out"]), make("Identity", ["cond_in"], ["cond_out"])],
                 [value("i", "int64"), value("cond_in", "bool"), sequence("seq", onnx.TensorProto.FLOAT, [2])],
                 [value("cond_out", "bool"), sequence("seq_out", onnx.TensorProto.FLOAT, [2])])
    nodes = [make("SequenceEmpty", [], ["s0"], dtype=onnx.TensorProto.FLOAT, name="empty")] if initial == "node" else []
    nodes += [make("Loop", ["n", "", "s0"], ["s_final"], body=body, name="collect"),
              make("ConcatFromSequence", ["s_final"], ["y"], axis=0)]
    inputs = [value("n", "int64"), value("x", "float32", [2])]
    inputs += [sequence("s0", onnx.TensorProto.FLOAT, [2])] if initial == "input" else []
    return model(nodes, inputs, [value("y", "float32", ["K"])])


def test_sequence_typed_loop_carried_value_is_refused_naming_the_input():
    with pytest.raises(ss.onnx.ModelImportError, match=r"graph input 's0' is an ONNX sequence"):
        ss.onnx.load(sequence_loop("input"))
    with pytest.raises(ss.onnx.ModelImportError, match=r"'empty' \(SequenceEmpty -> 's0'\)"):
        ss.onnx.load(sequence_loop("node"))


@pytest.mark.parametrize("where", ["main graph", "loop body"])
def test_op_of_a_custom_domain_is_refused_naming_the_domain(where):
    make = onnx.helper.make_node
    custom = make("Frobnicate", ["acc" if where == "loop body" else "a0"], ["acc_out" if where == "loop body" else "y"],
                  domain="com.example", name="frob")
    if where == "loop body":
        body = loop_body([custom], carried=[("acc", "acc_out", "float32", ())])
        nodes = [make("Loop", ["n", "", "a0"], ["y"], body=body)]
    else:
        nodes = [custom]
    built = onnx.helper.make_model(graph(nodes, [value("n", "int64"), value("a0", "float32")],
                                         [value("y", "float32")], name="model"),
                                   opset_imports=[onnx.helper.make_opsetid("", 17),
                                                  onnx.helper.make_opsetid("com.example", 1)])
    with pytest.raises(ss.onnx.ModelImportError, match=r"'frob' \(Frobnicate.*domain 'com.example'"):
        ss.onnx.load(built)


# ---------------------------------------------------------------------------- structure after the rewrites
@pytest.mark.parametrize("trip_count", ["input", "constant"])
def test_for_loop_summing_x_leaves_no_scan_after_the_rewrites(trip_count):
    m = for_loop_sum(17, trip_count=trip_count)
    rewritten, plain = ss.onnx.import_function(m), ss.onnx.import_function(m, mode="py")
    assert (scan_count(rewritten), scan_count(plain)) == (0, 1)
    x = np.arange(1.0, 7.0, dtype=np.float32)
    values = [x, np.int64(5), np.float32(0.5)] if trip_count == "input" else [x, np.float32(0.5)]
    assert_outputs(rewritten(*values), plain(*values), "rewritten vs mode 'py'")
    assert_outputs(rewritten(*values), numpy_for_loop_sum(*values), "rewritten vs the numpy loop")
