"""Export -> import -> export: symscan functions with loops (the kinds the export tests build:
sequence taps, go_backwards, n_steps, until, sit-sot/mit-sot/nit-sot outputs, shared updates,
rings, nested scans, the scan guide's examples, the benchmark workloads at small sizes), each
exported plain (mode "py") and optimised (mode "fast"). For each: (a) the model in onnxruntime,
(b) ``ss.onnx.import_function(model)`` in modes "py" and "fast", (c) the imported function
exported again, in onnxruntime, and (d) ``ss.onnx.optimize(model)`` in onnxruntime all give the
original function's results (mode "py"; updated shared variables' new values after the outputs).
Then the run-time checks: a sequence too short for n_steps fails the imported function with the
check's ValueError."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_models import assert_outputs, op_types, run_onnxruntime

import symscan as ss
import symscan.tensor as T
from benchmarks import workloads


# ---------------------------------------------------------------------------- the functions
def sit_and_nit(go_backwards=False, n_steps=None):
    """A running state and a per-step output over the rows of x (n_steps: None, an int or
    "symbolic", the input k)."""
    x, s0, k = T.matrix("x"), T.vector("s0"), T.lscalar("k")
    outs, updates = ss.scan(lambda row, s: [s * 0.5 + row, (row * s).sum()], sequences=x, outputs_info=[s0, None],
                            go_backwards=go_backwards, n_steps=k if n_steps == "symbolic" else n_steps)
    xv, s0v = np.arange(10.0).reshape(5, 2) / 4, np.array([1.0, -1.0])
    if n_steps == "symbolic":
        return [x, s0, k], outs, updates, [[xv, s0v, np.int64(steps)] for steps in (3, 0, -2)]
    empty = [[xv[:0], s0v]] if n_steps is None else []
    return [x, s0], outs, updates, [[xv, s0v]] + empty


def sequence_taps():
    """Taps [-1, 0, 2] on one sequence, a mit-sot with taps [-2, -1]."""
    x, m0 = T.vector("x"), T.vector("m0")
    out, updates = ss.scan(lambda a, b, c, p2, p1: p1 * 0.5 + p2 * 0.25 + a + b * c,
                           sequences=dict(input=x, taps=[-1, 0, 2]), outputs_info=dict(initial=m0, taps=[-2, -1]))
    return [x, m0], out, updates, [[np.arange(7.0), np.array([1.0, 2.0])], [np.arange(3.0), np.array([1.0, 2.0])]]


def until(n_steps=20):
    """Doubling until the state passes a limit (the guide's power of 2), n_steps a bound."""
    s0, limit = T.scalar("s0"), T.scalar("limit")
    out, updates = ss.scan(lambda s, limit: (s * 2, ss.until(s * 2 > limit)), outputs_info=s0,
                           non_sequences=limit, n_steps=n_steps)
    return [s0, limit], out, updates, [[1.0, 45.0], [1.0, 1e9], [100.0, 1.0]]


def shared_updates():
    """A state over the rows of x updating a shared vector and a shared step counter."""
    total, calls = ss.shared(np.array([0.0, 1.0]), name="total"), ss.shared(np.int64(0), name="calls")
    x = T.matrix("x")
    out, updates = ss.scan(lambda row, s: (s * 0.5 + row, {total: total + row, calls: calls + 1}),
                           sequences=x, outputs_info=T.zeros(2))
    return [x], out, updates, [[np.arange(6.0).reshape(3, 2)]]


def reads_shared_weights():
    W = ss.shared(np.arange(4.0).reshape(2, 2) / 4, name="W")
    m, h0 = T.matrix("m"), T.vector("h0")
    out, updates = ss.scan(lambda row, h: T.tanh(T.dot(h, W) + row), sequences=m, outputs_info=h0)
    return [m, h0], out, updates, [[np.ones((3, 2)), np.zeros(2)]]


def nested():
    """At each row, an inner scan (a running sum of the row) read at its last step."""
    x = T.matrix("x")

    def outer(row, acc):
        inner, _ = ss.scan(lambda e, s: s + e, sequences=row, outputs_info=T.constant(0.0))
        return acc * 0.5 + inner[-1]

    out, updates = ss.scan(outer, sequences=x, outputs_info=T.constant(1.0))
    return [x], out, updates, [[np.arange(12.0).reshape(4, 3)]]


def integers_and_booleans():
    x = T.ivector("x")
    out, updates = ss.scan(lambda v, total: [total + v, v > 2, v.astype("int64") * 3], sequences=x,
                           outputs_info=[T.constant(np.int32(0)), None, None])
    return [x], out, updates, [[np.arange(5, dtype="int32")]]


def float32():
    x = T.fvector("x")
    out, updates = ss.scan(lambda v, total: total * np.float32(0.5) + v, sequences=x,
                           outputs_info=T.constant(np.float32(1.0)))
    return [x], out, updates, [[np.arange(5, dtype="float32")]]


def last_steps(last: int):
    """``out[-1]`` / ``out[-last:]`` of a symbolic-length loop (rings of save_mem in mode "fast")."""
    A, k = T.vector("A"), T.lscalar("k")
    result, updates = ss.scan(lambda prior, A: prior * A, outputs_info=T.ones_like(A), non_sequences=A, n_steps=k)
    return [A, k], result[-1] if last == 1 else result[-last:], updates, [[np.arange(4.0), np.int64(3)],
                                                                          [np.array([0.5, 2.0]), np.int64(5)]]


def static_shapes():
    """Sequences and states of static shape: the model declares their lengths."""
    x, s0 = T.tensor("float64", shape=(5, 2), name="x"), T.tensor("float64", shape=(2,), name="s0")
    outs, updates = ss.scan(lambda row, s: [s + row, row * 2], sequences=x, outputs_info=[s0, None])
    return [x, s0], outs, updates, [[np.arange(10.0).reshape(5, 2), np.ones(2)]]


def guide_taps_rnn():
    """The guide's RNN with taps [-4, 0] on u, [-3, -1] on x and -1 on y (W5's graph), with
    inputs, states and outputs of different widths (W5's values are all one width)."""
    w = workloads.taps_rnn(8, 3)
    r = np.random.default_rng(3)
    values = [r.normal(size=(9, 3)), r.normal(size=(3, 4)), r.normal(size=2), 0.5 * r.normal(size=(4, 4)),
              r.normal(size=(3, 4)), r.normal(size=(3, 4)), r.normal(size=(2, 4)), r.normal(size=(4, 2))]
    return w.inputs, w.outputs, {}, [values]


def guide_triangular():
    up_to = T.iscalar("up_to")
    seq = T.arange(up_to)
    result, updates = ss.scan(lambda value, total: total + value, sequences=seq,
                              outputs_info=T.as_tensor_variable(np.asarray(0, seq.dtype)))
    return [up_to], result, updates, [[np.int32(15)], [np.int32(1)]]


def guide_free_variable():
    """fn reads W**2 without it being passed: mapped over X and repeated from x0."""
    W = T.matrix("W")
    X, x0 = T.matrix("X"), T.vector("x0")
    mapped, _ = ss.scan(lambda x: T.dot(x, W ** 2), sequences=X)
    repeated, updates = ss.scan(lambda x: T.dot(x, W ** 2), outputs_info=x0, n_steps=3)
    r = np.random.default_rng(2)
    return [X, x0, W], [mapped, repeated], updates, [[r.normal(size=(4, 3)), r.normal(size=3),
                                                      r.normal(size=(3, 3))]]


def lazy_ifelse():
    """``y[k]`` if k is in range, else the sum of y; with a second output of a length that depends
    on the branch. A value set with k out of range: the Gather of the branch not taken must not run."""
    y, k = T.vector("y"), T.lscalar("k")
    outs = ss.ifelse(T.lt(k, y.shape[0]), [y[k], y[:2]], [y.sum(), T.concatenate([y, y])])
    return [y, k], outs, {}, [[np.arange(3.0), np.int64(1)], [np.arange(3.0), np.int64(7)]]


def ifelse_in_a_loop():
    """A state that takes the log of positive elements and counts down on the others."""
    xs = T.vector("xs")
    out, updates = ss.scan(lambda v, acc: ss.ifelse(v > 0, acc + T.log(v), acc - 1.0), sequences=xs,
                           outputs_info=T.constant(0.0))
    return [xs], out, updates, [[np.array([1.0, -2.0, 3.0, 0.0])]]


def workload(builder, *sizes):
    """A benchmark workload at a small size, its value set the workload's own."""
    def build():
        w = builder(*sizes)
        return w.inputs, w.outputs, {}, [w.values]

    return build


FUNCTIONS = {
    "sit and nit over a sequence": sit_and_nit,
    "go_backwards": lambda: sit_and_nit(go_backwards=True),
    "n_steps=3": lambda: sit_and_nit(n_steps=3),
    "n_steps=0": lambda: sit_and_nit(n_steps=0),
    "n_steps symbolic": lambda: sit_and_nit(n_steps="symbolic"),
    "sequence taps and a mit-sot": sequence_taps,
    "until": until,
    "shared updates": shared_updates,
    "reads shared weights": reads_shared_weights,
    "nested scan": nested,
    "int32, bool and int64 outputs": integers_and_booleans,
    "float32": float32,
    "out[-1]": lambda: last_steps(1),
    "out[-2:]": lambda: last_steps(2),
    "static shapes": static_shapes,
    "guide: taps RNN": guide_taps_rnn,
    "guide: triangular numbers": guide_triangular,
    "guide: free variable": guide_free_variable,
    "ifelse": lazy_ifelse,
    "ifelse in a loop body": ifelse_in_a_loop,
    "W1 power": workload(workloads.power, 20, 20),
    "W2 polynomial": workload(workloads.polynomial, 50),
    "W3 running sum": workload(workloads.running_sum, 50),
    "W4 Elman RNN": workload(workloads.elman_rnn, 6, 2, 3, 4),
    "W5 taps RNN": workload(workloads.taps_rnn, 8, 3),
    "W6 while loop": workload(workloads.while_loop, 1000),
    "W7 mit-sot": workload(workloads.mit_sot, 30),
    "W8 running sum and max": workload(workloads.running_sum_and_max, 50),
    "W9 set_subtensor": workload(workloads.set_subtensor, 5, (4, 4)),
}

KNOWN_IMPORT_FAILURES: dict[tuple[str, str], pytest.MarkDecorator] = {}
"""(function, export mode) -> the xfail of the import bug it meets."""


def cases() -> list:
    return [pytest.param(name, mode, id=f"{name}-{'plain' if mode == 'py' else 'optimised'}",
                         marks=[KNOWN_IMPORT_FAILURES[name, mode]] if (name, mode) in KNOWN_IMPORT_FAILURES else [])
            for name in FUNCTIONS for mode in ("py", "fast")]


# ---------------------------------------------------------------------------- checks
def assert_results(got, expected, what: str) -> None:
    """Same count, dtypes and shapes; floats to 1e-7 (float32: 1e-5), the rest exact."""
    assert len(got) == len(expected), f"{what}: {len(got)} outputs instead of {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        rtol = 1e-5 if np.asarray(e).dtype == np.float32 else 1e-7
        assert_outputs([g], [e], f"{what}, output {i}", rtol=rtol, atol=rtol * 1e-3)


def exported(name: str, mode: str):
    """(the compiled function, its model, its value sets)."""
    inputs, outputs, updates, value_sets = FUNCTIONS[name]()
    f = ss.function(inputs, outputs, updates=updates or None, mode=mode)
    return f, ss.onnx.export(f), value_sets


# ---------------------------------------------------------------------------- (a) to (c)
@pytest.mark.parametrize("name,mode", cases())
def test_export_import_export_gives_the_original_results(name, mode, export_check):
    f, model, value_sets = exported(name, mode)
    imported = {m: ss.onnx.import_function(model, mode=m) for m in ("py", "fast")}
    reexported = ss.onnx.export(imported["fast"])
    for values in value_sets:
        expected = export_check.expected(f, values)
        assert_results(run_onnxruntime(model, values), expected, f"{name}: the export in onnxruntime")
        for m, g in imported.items():
            assert_results(g(*values), expected, f"{name}: imported, mode {m!r}")
        assert_results(run_onnxruntime(reexported, values), expected, f"{name}: re-exported, in onnxruntime")


# ---------------------------------------------------------------------------- (d)
@pytest.mark.parametrize("name,mode", cases())
def test_optimize_of_the_export_gives_the_original_results(name, mode, export_check):
    f, model, value_sets = exported(name, mode)
    optimized = ss.onnx.optimize(model)
    assert [i.name for i in optimized.graph.input] == [i.name for i in model.graph.input]
    assert [o.name for o in optimized.graph.output] == [o.name for o in model.graph.output]
    for values in value_sets:
        assert_results(run_onnxruntime(optimized, values), export_check.expected(f, values),
                       f"{name}: optimized, in onnxruntime")


def test_plain_scan_over_a_sequence_of_run_time_length_imports():
    """A Scan that may run no step runs one on a row of
    zeros instead (onnxruntime's Scan fails on empty inputs), chosen by an If whose branches are
    ``x`` and ``zeros((1,) + x.shape[1:])``."""
    x, s0 = T.vector("x"), T.scalar("s0")
    out, _ = ss.scan(lambda v, s: s * 0.5 + v, sequences=x, outputs_info=s0)
    f = ss.function([x, s0], out, mode="py")
    model = ss.onnx.export(f)
    assert "If" in op_types(model.graph) and "Scan" in op_types(model.graph)
    for values in ([np.arange(3.0), np.float64(1.0)], [np.zeros(0), np.float64(1.0)]):
        assert_results(ss.onnx.import_function(model, mode="py")(*values), [f(*values)], "imported")


def test_an_exported_ifelse_imports_as_an_ifelse():
    inputs, outputs, _, value_sets = lazy_ifelse()
    model = ss.onnx.export(ss.function(inputs, outputs, mode="py"))
    imported = ss.onnx.import_function(model, mode="py")
    (node,) = [n for n in imported.fgraph.apply_nodes if type(n.op).__name__ == "IfElse"]
    kinds = [sorted(type(n.op).__name__ for n in g.apply_nodes) for g in node.op.inner_graphs()]
    assert kinds == [["Subtensor", "Subtensor"], ["Join", "Reduce"]]  # y[k] and y[:2]; sum and concatenate
    for values in value_sets:
        assert_results(imported(*values), run_onnxruntime(model, values), "imported vs onnxruntime")


# ---------------------------------------------------------------------------- ops the exporter writes
def _advanced_indexing():
    m, i, j = T.matrix("m"), T.lvector("i"), T.lvector("j")
    return [m, i, j], m[i, j], [np.arange(6.0).reshape(2, 3), np.array([0, 1]), np.array([2, 0])]


def _set_subtensor():
    m, v = T.matrix("m"), T.vector("v")
    return [m, v], T.set_subtensor(m[0, 1:], v), [np.arange(6.0).reshape(2, 3), np.array([9.0, 8.0])]


def _dot_with_a_3d_tensor():
    a, b = T.matrix("a"), T.tensor3("b")
    return [a, b], T.dot(a, b), [np.ones((2, 3)), np.arange(60.0).reshape(4, 3, 5)]


def _gradient_summing_to_a_shape():
    x, y = T.matrix("x"), T.vector("y")
    return [x, y], ss.grad((x * y).sum(), y), [np.arange(6.0).reshape(2, 3), np.ones(3)]


@pytest.mark.parametrize("build", [
    pytest.param(_advanced_indexing, id="GatherND (integer-array indexing)"),
    pytest.param(_set_subtensor, id="ScatterElements (set_subtensor)"),
    pytest.param(_dot_with_a_3d_tensor, id="Einsum (dot with a 3-d tensor)"),
])
def test_ops_the_exporter_writes_import(build):
    inputs, output, values = build()
    f = ss.function(inputs, output, mode="py")
    model = ss.onnx.export(f)
    assert_results(ss.onnx.import_function(model, mode="py")(*values), [f(*values)], "imported")


def test_nonzero_is_refused_naming_the_node():
    """A gradient's sum_to with axes found at run time exports through NonZero, whose output's
    length depends on the data: symscan has no such op (known limitation, README)."""
    inputs, output, values = _gradient_summing_to_a_shape()
    model = ss.onnx.export(ss.function(inputs, output, mode="py"))
    assert "NonZero" in op_types(model.graph)
    with pytest.raises(ss.onnx.ModelImportError, match=r"\(NonZero -> .*NonZero has no symscan form"):
        ss.onnx.import_function(model)


# ---------------------------------------------------------------------------- run-time checks
SHORT_SEQUENCES = {
    "Scan, n_steps=6": dict(n_steps=6, taps=[0], backwards=False),
    "Loop, symbolic n_steps": dict(n_steps="symbolic", taps=[0], backwards=False),
    "Loop, taps [-1, 1]": dict(n_steps="symbolic", taps=[-1, 1], backwards=False),
    "Loop, go_backwards": dict(n_steps="symbolic", taps=[0], backwards=True),
}


def short_sequence(n_steps, taps, backwards):
    """A state over the rows of x read at ``taps``, for 6 steps; x gets 5 rows."""
    x, s0, k = T.matrix("x"), T.vector("s0"), T.lscalar("k")
    out, _ = ss.scan(lambda *args: args[-1] * 0.5 + sum(args[:-1]), sequences=dict(input=x, taps=taps),
                     outputs_info=s0, go_backwards=backwards, n_steps=k if n_steps == "symbolic" else n_steps)
    inputs = [x, s0] + ([k] if n_steps == "symbolic" else [])
    values = [np.ones((5, 2)), np.zeros(2)] + ([np.int64(6)] if n_steps == "symbolic" else [])
    return inputs, out, values


def check_message(err: Exception) -> str:
    """A check's message without the evaluator's "(while evaluating ...)"."""
    return str(err).split(" (while evaluating")[0]


@pytest.mark.parametrize("mode", ["py", "fast"], ids=["plain", "optimised"])
@pytest.mark.parametrize("case", list(SHORT_SEQUENCES))
def test_sequence_too_short_fails_the_imported_function_with_the_checks_message(case, mode):
    """The model's check comes back as an Assert: the imported function raises the ValueError
    that mode "onnxruntime" raises for the original (the rule, without the actual lengths,
    which the model does not hold), and so do the re-exported and the optimised models; mode
    "py"'s message states the same rule with the lengths."""
    from symscan.onnx.context import failed_check

    inputs, out, values = short_sequence(**SHORT_SEQUENCES[case])
    with pytest.raises(ValueError) as in_py:
        ss.function(inputs, out, mode="py")(*values)
    with pytest.raises(ValueError) as in_onnxruntime:
        ss.function(inputs, out, mode="onnxruntime")(*values)
    rule = str(in_onnxruntime.value)
    assert rule.startswith("scan: sequences[0] 'x' has fewer elements than n_steps + ")
    assert check_message(in_py.value).startswith("scan: sequences[0] 'x' has 5 elements but 6 steps")
    assert check_message(in_py.value).endswith("; pass a longer sequence or a smaller n_steps") and rule.endswith(
        "; pass a longer sequence or a smaller n_steps")
    model = ss.onnx.export(ss.function(inputs, out, mode=mode))
    for import_mode in ("py", "fast"):
        with pytest.raises(ValueError) as imported:
            ss.onnx.import_function(model, mode=import_mode)(*values)
        assert check_message(imported.value) == rule, f"imported in mode {import_mode!r}"
    for what, again in [("re-exported", ss.onnx.export(ss.onnx.import_function(model))),
                        ("optimised", ss.onnx.optimize(model))]:
        with pytest.raises(Exception) as in_model:
            run_onnxruntime(again, values)
        assert failed_check(str(in_model.value)) == rule, what


@pytest.mark.parametrize("mode", ["py", "fast"], ids=["plain", "optimised"])
def test_mit_sot_with_too_few_initial_rows_fails_the_imported_function(mode):
    h, k = T.vector("h"), T.lscalar("k")
    xs, _ = ss.scan(lambda a, b: a + b, outputs_info=dict(initial=h, taps=[-2, -1]), n_steps=k)
    model = ss.onnx.export(ss.function([h, k], xs, mode=mode))
    f = ss.onnx.import_function(model, mode="fast")
    with pytest.raises(ValueError, match=r"^scan: outputs_info\[0\] \(initial 'h'\) has fewer than 2 initial rows"):
        f(np.array([1.0]), np.int64(4))
    np.testing.assert_array_equal(f(np.array([1.0, 2.0]), np.int64(4))[0], [3.0, 5.0, 8.0, 13.0])


@pytest.mark.parametrize("import_mode", ["py", "fast"])
def test_check_of_a_sequence_no_output_reads_stays_after_import(import_mode):
    """The loop's second output (all that reads y) is not an output of the function: mode
    "fast" drops it, but the loop's check of y stays (README), in the model too."""
    x, y = T.vector("x"), T.vector("y")
    (doubled, _), _ = ss.scan(lambda u, v: [u * 2, v * 3], sequences=[x, y], n_steps=3)
    f = ss.function([x, y], doubled, mode="fast")
    values = [np.arange(5.0), np.arange(2.0)]
    with pytest.raises(ValueError, match="'y' has 2 elements but 3 steps"):
        f(*values)
    model = ss.onnx.export(f)
    with pytest.raises(Exception, match="'y' has fewer elements than n_steps"):
        run_onnxruntime(model, values)
    with pytest.raises(ValueError, match="'y' has fewer elements than n_steps"):
        ss.onnx.import_function(model, mode=import_mode)(*values)
