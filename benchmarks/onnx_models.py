"""W3-W8 as ONNX models, written the way a user would write them, for benchmarks/onnx_import.py.

Two ways of writing each:

- onnxscript (``@script()``, opset 18, float64): a ``for t in range(n)`` loop reading ``x[t]``
  with ``op.Gather``, or a ``while`` loop with a condition. onnxscript loops carry values and
  have no scan outputs, so these models return the loop's final values (the last row of what
  the W-workload returns): "final" in their names.
- ``onnx.helper``: an ONNX Scan (the per-step values are scan outputs) or an ONNX Loop with
  scan outputs, returning every step as the W-workload does: "every step" in their names.

Input values and the numpy reference loops are the W-workloads' (benchmarks/workloads.py);
sizes are theirs (``quick``: small ones). onnxscript is optional (it is not a symscan
dependency): without it only the ``onnx.helper`` models are built.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper

from benchmarks import workloads

try:  # module-level: onnxscript resolves the names a script uses in its module's globals
    from onnxscript import DOUBLE, INT64, script
    from onnxscript import opset18 as op
except ImportError:
    script = None

OPSET = 18
DOUBLE_T = TensorProto.DOUBLE
GROWTH = helper.make_tensor("growth", DOUBLE_T, [], [1.0001])  # W6's constants, exact in float64
INCREMENT = helper.make_tensor("increment", DOUBLE_T, [], [1e-4])
MINUS_INF = helper.make_tensor("minus_inf", DOUBLE_T, [], [-np.inf])


@dataclass
class OnnxWorkload:
    name: str  # e.g. "W3 onnxscript for, final"
    workload: str  # "W3"
    description: str
    model: onnx.ModelProto
    values: list
    numpy_loop: Callable[..., list]


def last_rows(loop: Callable[..., list]) -> Callable[..., list]:
    """The reference of a "final" model: the last row of each output of the workload's loop."""

    def final(*values):
        return [np.asarray(out)[-1] for out in loop(*values)]

    return final


# ---------------------------------------------------------------------------- onnxscript
def _onnxscript_functions() -> dict | None:
    """The onnxscript functions by workload (None without onnxscript). Defined here, not at
    import, so that this module imports without onnxscript."""
    if script is None:
        return None

    @script()
    def w3_for(x: DOUBLE["N"]) -> DOUBLE:  # noqa: F821  (onnxscript: "N" names a dimension)
        total = op.CastLike(0.0, x)
        n = op.Size(x)
        for i in range(n):
            total = total + op.Gather(x, i, axis=0)
        return total

    @script()
    def w4_for(X: DOUBLE["T", "B", "I"], W_in: DOUBLE["I", "H"], W_h: DOUBLE["H", "H"], b: DOUBLE["H"],  # noqa: F821
               h0: DOUBLE["B", "H"]) -> DOUBLE["B", "H"]:  # noqa: F821
        h = op.Identity(h0)
        steps = op.Squeeze(op.Shape(X, start=0, end=1))
        for t in range(steps):
            h = op.Tanh(op.MatMul(op.Gather(X, t, axis=0), W_in) + op.MatMul(h, W_h) + b)
        return h

    @script()
    def w5_for(u: DOUBLE["T", "S"], x0: DOUBLE[3, "S"], y0: DOUBLE["S"], W: DOUBLE["S", "S"],  # noqa: F821
               W_in_1: DOUBLE["S", "S"], W_in_2: DOUBLE["S", "S"], W_feedback: DOUBLE["S", "S"],  # noqa: F821
               W_out: DOUBLE["S", "S"]) -> tuple[DOUBLE["S"], DOUBLE["S"]]:  # noqa: F821
        x3 = op.Gather(x0, 0, axis=0)
        x2 = op.Gather(x0, 1, axis=0)
        x1 = op.Gather(x0, 2, axis=0)
        y = op.Identity(y0)
        steps = op.Squeeze(op.Shape(u, start=0, end=1)) - 4
        for t in range(steps):
            u_tm4 = op.Gather(u, t, axis=0)
            u_t = op.Gather(u, t + 4, axis=0)
            x_t = op.Tanh(op.MatMul(x1, W) + op.MatMul(u_t, W_in_1) + op.MatMul(u_tm4, W_in_2)
                          + op.MatMul(y, W_feedback))
            y = op.MatMul(x3, W_out)
            x3 = op.Identity(x2)
            x2 = op.Identity(x1)
            x1 = op.Identity(x_t)
        return x1, y

    @script()
    def w6_while(x0: DOUBLE, limit: DOUBLE) -> DOUBLE:
        growth = op.Constant(value=GROWTH)
        increment = op.Constant(value=INCREMENT)
        x = growth * x0 + increment
        go = x <= limit
        while go:
            x = growth * x + increment
            go = x <= limit
        return x

    @script()
    def w7_for(init: DOUBLE[2], n: INT64) -> DOUBLE:
        a2 = op.Gather(init, 0, axis=0)
        a1 = op.Gather(init, 1, axis=0)
        for _ in range(n):
            a = 0.5 * a1 + 0.5 * a2 + 1.0
            a2 = op.Identity(a1)
            a1 = op.Identity(a)
        return a1

    @script()
    def w8_for(x: DOUBLE["N"]) -> tuple[DOUBLE, DOUBLE]:  # noqa: F821
        n = op.Size(x)
        total = op.CastLike(0.0, x)
        for i in range(n):
            total = total + op.Gather(x, i, axis=0)
        peak = op.Constant(value=MINUS_INF)
        for j in range(n):
            peak = op.Max(peak, op.Gather(x, j, axis=0))
        return total, peak

    return {"W3": w3_for, "W4": w4_for, "W5": w5_for, "W6": w6_while, "W7": w7_for, "W8": w8_for}


# ---------------------------------------------------------------------------- onnx.helper
def _value(name: str, shape=()) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, DOUBLE_T, None if shape is None else list(shape))


def _model(name: str, nodes: list, inputs: list, outputs: list) -> onnx.ModelProto:
    model = helper.make_model(helper.make_graph(nodes, name, inputs, outputs),
                              opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model, full_check=True)
    return model


def _const(name: str, value, dtype=None) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=onnx.numpy_helper.from_array(np.asarray(value, dtype),
                                                                                      name))


def _loop_body(name: str, nodes: list, carried: list, scan_outputs: list, cond_out: str = "cond_in"):
    """A Loop body: inputs i, cond_in and the carried values' (name_in, name_out, shape); outputs
    the condition, the carried values, the scan outputs (name, shape)."""
    inputs = ([helper.make_tensor_value_info("i", TensorProto.INT64, []),
               helper.make_tensor_value_info("cond_in", TensorProto.BOOL, [])]
              + [_value(n_in, shape) for n_in, _, shape in carried])
    outputs = ([helper.make_tensor_value_info(cond_out, TensorProto.BOOL, [])]
               + [_value(n_out, shape) for _, n_out, shape in carried] + [_value(n, s) for n, s in scan_outputs])
    return helper.make_graph(nodes, name, inputs, outputs)


def w3_scan() -> onnx.ModelProto:
    """partial = Scan(acc = acc + x_t) over x: every partial sum."""
    body = helper.make_graph([helper.make_node("Add", ["acc", "x_t"], ["acc_out"]),
                              helper.make_node("Identity", ["acc_out"], ["partial_t"])], "w3_body",
                             [_value("acc"), _value("x_t")], [_value("acc_out"), _value("partial_t")])
    nodes = [_const("zero", 0.0), helper.make_node("Scan", ["zero", "x"], ["total", "partial"], body=body,
                                                   num_scan_inputs=1)]
    return _model("w3_scan", nodes, [_value("x", ["N"])], [_value("partial", ["N"])])


def w3_loop() -> onnx.ModelProto:
    """for i in range(len(x)): acc += x[i], each partial sum a scan output."""
    body = _loop_body("w3_loop_body", [helper.make_node("Gather", ["x", "i"], ["x_i"], axis=0),
                                       helper.make_node("Add", ["acc", "x_i"], ["acc_out"]),
                                       helper.make_node("Identity", ["acc_out"], ["partial_t"]),
                                       helper.make_node("Identity", ["cond_in"], ["cond_out"])],
                      [("acc", "acc_out", [])], [("partial_t", [])], cond_out="cond_out")
    nodes = [_const("zero", 0.0), helper.make_node("Size", ["x"], ["n"]),
             helper.make_node("Loop", ["n", "", "zero"], ["total", "partial"], body=body)]
    return _model("w3_loop", nodes, [_value("x", ["N"])], [_value("partial", ["N"])])


def w4_scan() -> onnx.ModelProto:
    """hs = Scan(h = tanh(x_t W_in + h W_h + b)) over X: every state."""
    body = helper.make_graph([helper.make_node("MatMul", ["x_t", "W_in"], ["xw"]),
                              helper.make_node("MatMul", ["h", "W_h"], ["hw"]),
                              helper.make_node("Add", ["xw", "hw"], ["pre"]),
                              helper.make_node("Add", ["pre", "b"], ["pre_b"]),
                              helper.make_node("Tanh", ["pre_b"], ["h_out"]),
                              helper.make_node("Identity", ["h_out"], ["h_t"])], "w4_body",
                             [_value("h", ["B", "H"]), _value("x_t", ["B", "I"])],
                             [_value("h_out", ["B", "H"]), _value("h_t", ["B", "H"])])
    inputs = [_value("X", ["T", "B", "I"]), _value("W_in", ["I", "H"]), _value("W_h", ["H", "H"]), _value("b", ["H"]),
              _value("h0", ["B", "H"])]
    nodes = [helper.make_node("Scan", ["h0", "X"], ["h_last", "hs"], body=body, num_scan_inputs=1)]
    return _model("w4_scan", nodes, inputs, [_value("hs", ["T", "B", "H"])])


def w5_loop() -> onnx.ModelProto:
    """The taps RNN as a Loop over t: u[t] and u[t + 4] by Gather, x's last three states and y
    carried, x_t and y_t scan outputs."""
    mm = [helper.make_node("MatMul", [a, w], [o]) for a, w, o in
          [("x1", "W", "m1"), ("u_t", "W_in_1", "m2"), ("u_tm4", "W_in_2", "m3"), ("y", "W_feedback", "m4"),
           ("x3", "W_out", "y_out")]]
    nodes = ([helper.make_node("Gather", ["u", "i"], ["u_tm4"], axis=0), _const("four", 4, "int64"),
              helper.make_node("Add", ["i", "four"], ["i4"]), helper.make_node("Gather", ["u", "i4"], ["u_t"], axis=0)]
             + mm + [helper.make_node("Sum", ["m1", "m2", "m3", "m4"], ["pre"]),
                     helper.make_node("Tanh", ["pre"], ["x_t"]),
                     helper.make_node("Identity", ["x2"], ["x3_out"]), helper.make_node("Identity", ["x1"], ["x2_out"]),
                     helper.make_node("Identity", ["x_t"], ["x1_out"]), helper.make_node("Identity", ["x_t"], ["xs_t"]),
                     helper.make_node("Identity", ["y_out"], ["ys_t"]),
                     helper.make_node("Identity", ["cond_in"], ["cond_out"])])
    carried = [("x3", "x3_out", ["S"]), ("x2", "x2_out", ["S"]), ("x1", "x1_out", ["S"]), ("y", "y_out", ["S"])]
    body = _loop_body("w5_loop_body", nodes, carried, [("xs_t", ["S"]), ("ys_t", ["S"])], cond_out="cond_out")
    names = ["W", "W_in_1", "W_in_2", "W_feedback", "W_out"]
    inputs = [_value("u", ["T", "S"]), _value("x0", [3, "S"]), _value("y0", ["S"])] + [_value(n, ["S", "S"])
                                                                                      for n in names]
    outer = [_const(f"row{k}", k, "int64") for k in range(3)]
    outer += [helper.make_node("Gather", ["x0", f"row{k}"], [f"x0_{k}"], axis=0) for k in range(3)]
    outer += [helper.make_node("Shape", ["u"], ["u_len"], start=0, end=1), _const("four_", [4], "int64"),
              helper.make_node("Sub", ["u_len", "four_"], ["steps_1"]),
              helper.make_node("Squeeze", ["steps_1"], ["steps"]),
              helper.make_node("Loop", ["steps", "", "x0_0", "x0_1", "x0_2", "y0"],
                               ["x3_f", "x2_f", "x1_f", "y_f", "xs", "ys"], body=body)]
    return _model("w5_loop", outer, inputs, [_value("xs", ["T4", "S"]), _value("ys", ["T4", "S"])])


def w6_loop(max_steps: int) -> onnx.ModelProto:
    """x <- 1.0001 x + 1e-4 while x <= threshold (at most max_steps), every x a scan output."""
    body = _loop_body("w6_loop_body", [helper.make_node("Constant", [], ["growth"], value=GROWTH),
                                       helper.make_node("Constant", [], ["increment"], value=INCREMENT),
                                       helper.make_node("Mul", ["growth", "x"], ["gx"]),
                                       helper.make_node("Add", ["gx", "increment"], ["x_out"]),
                                       helper.make_node("LessOrEqual", ["x_out", "threshold"], ["go"]),
                                       helper.make_node("Identity", ["x_out"], ["x_t"])],
                      [("x", "x_out", [])], [("x_t", [])], cond_out="go")
    nodes = [_const("max_steps", max_steps, "int64"), _const("true", True, "bool"),
             helper.make_node("Loop", ["max_steps", "true", "x0"], ["x_last", "xs"], body=body)]
    return _model("w6_loop", nodes, [_value("x0"), _value("threshold")], [_value("xs", ["steps"])])


def w7_loop() -> onnx.ModelProto:
    """x_t = 0.5 x_(t-1) + 0.5 x_(t-2) + 1 for n steps (an input), every x_t a scan output."""
    nodes = [_const("half", 0.5), _const("one", 1.0),
             helper.make_node("Mul", ["half", "a1"], ["p1"]), helper.make_node("Mul", ["half", "a2"], ["p2"]),
             helper.make_node("Add", ["p1", "p2"], ["p"]), helper.make_node("Add", ["p", "one"], ["a"]),
             helper.make_node("Identity", ["a1"], ["a2_out"]), helper.make_node("Identity", ["a"], ["a1_out"]),
             helper.make_node("Identity", ["a"], ["x_t"]), helper.make_node("Identity", ["cond_in"], ["cond_out"])]
    body = _loop_body("w7_loop_body", nodes, [("a2", "a2_out", []), ("a1", "a1_out", [])], [("x_t", [])],
                      cond_out="cond_out")
    outer = [_const("zero", 0, "int64"), _const("one_", 1, "int64"),
             helper.make_node("Gather", ["init", "zero"], ["init0"], axis=0),
             helper.make_node("Gather", ["init", "one_"], ["init1"], axis=0),
             helper.make_node("Loop", ["n", "", "init0", "init1"], ["a2_f", "a1_f", "xs"], body=body)]
    inputs = [_value("init", [2]), helper.make_tensor_value_info("n", TensorProto.INT64, [])]
    return _model("w7_loop", outer, inputs, [_value("xs", ["n"])])


def w8_scans() -> onnx.ModelProto:
    """A running sum and a running max as two Scans over x, every step kept."""

    def body(name: str, op_type: str) -> onnx.GraphProto:
        return helper.make_graph([helper.make_node(op_type, ["acc", "x_t"], ["acc_out"]),
                                  helper.make_node("Identity", ["acc_out"], ["y_t"])], name,
                                 [_value("acc"), _value("x_t")], [_value("acc_out"), _value("y_t")])

    nodes = [_const("zero", 0.0), helper.make_node("Constant", [], ["minus_inf"], value=MINUS_INF),
             helper.make_node("Scan", ["zero", "x"], ["total", "s"], body=body("w8_sum", "Add"), num_scan_inputs=1),
             helper.make_node("Scan", ["minus_inf", "x"], ["peak", "m"], body=body("w8_max", "Max"),
                              num_scan_inputs=1)]
    return _model("w8_scans", nodes, [_value("x", ["N"])], [_value("s", ["N"]), _value("m", ["N"])])


# ---------------------------------------------------------------------------- the list
def all_models(quick: bool = False) -> list[OnnxWorkload]:
    """Every model at the W-workloads' sizes (small ones with ``quick``), the onnxscript ones
    first where onnxscript is installed."""
    n3, steps, n7, n8 = (2000, 50, 1000, 2000) if quick else (100_000, 1000, 10_000, 100_000)
    w6_steps = 500 if quick else 5000
    x3 = workloads.running_sum(n3).values
    elman = workloads.elman_values(steps, 16, 64, 128)
    taps = workloads.taps_rnn_values(steps, 50)
    w6 = [np.float64(1.0), np.float64(2 * 1.0001 ** w6_steps - 1)]
    w7 = [np.array([0.0, 1.0]), np.int64(n7)]
    x8 = workloads.running_sum_and_max(n8).values

    def w7_loop_ref(init, n):
        return workloads.mit_sot_loop(init, int(n))

    sizes = {"W3": f"n={n3}", "W4": f"T={steps} batch=16 in=64 hidden=128", "W5": f"T={steps} size=50",
             "W6": f"about {w6_steps} steps", "W7": f"{n7} steps", "W8": f"n={n8}"}
    models = []
    scripts = _onnxscript_functions()
    if scripts is not None:
        script_models = [("W3", "running sum, total", x3, workloads.running_sum_loop),
                         ("W4", "Elman RNN, final h", elman, workloads.elman_loop),
                         ("W5", "taps RNN, final x and y", taps, workloads.taps_rnn_loop),
                         ("W6", "while loop, final x", w6, workloads.while_loop_loop),
                         ("W7", "mit-sot, final x", w7, w7_loop_ref),
                         ("W8", "running sum + max as two loops, final values", x8,
                          workloads.running_sum_and_max_loop)]
        kind = {"W6": "while"}
        for w, what, values, loop in script_models:
            models.append(OnnxWorkload(f"{w} onnxscript {kind.get(w, 'for')}, final", w, f"{what}, {sizes[w]}",
                                       scripts[w].to_model_proto(), values, last_rows(loop)))
    models += [
        OnnxWorkload("W3 Scan, every step", "W3", f"running sum, {sizes['W3']}", w3_scan(), x3,
                     workloads.running_sum_loop),
        OnnxWorkload("W3 Loop, every step", "W3", f"running sum (x[i] by Gather), {sizes['W3']}", w3_loop(), x3,
                     workloads.running_sum_loop),
        OnnxWorkload("W4 Scan, every step", "W4", f"Elman RNN, {sizes['W4']}", w4_scan(), elman, workloads.elman_loop),
        OnnxWorkload("W5 Loop, every step", "W5", f"taps RNN, {sizes['W5']}", w5_loop(), taps,
                     workloads.taps_rnn_loop),
        OnnxWorkload("W6 Loop, every step", "W6", f"while loop (trip count 100000 and a condition), "
                     f"{sizes['W6']}", w6_loop(100_000), w6, workloads.while_loop_loop),
        OnnxWorkload("W7 Loop, every step", "W7", f"mit-sot, {sizes['W7']}", w7_loop(), w7, w7_loop_ref),
        OnnxWorkload("W8 two Scans, every step", "W8", f"running sum + running max, {sizes['W8']}", w8_scans(), x8,
                     workloads.running_sum_and_max_loop),
    ]
    return models
