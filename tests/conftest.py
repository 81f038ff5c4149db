"""Shared fixtures. The suite runs with the rewriter's debug checks on."""

import os
from pathlib import Path

import numpy as np
import pytest

import symscan as ss

from modes_tested import MODES_TESTED

ss.config.debug_checks = True


@pytest.fixture
def rng():
    return np.random.default_rng(20261121)


@pytest.fixture(params=MODES_TESTED)
def mode(request):
    """Every mode that must agree with the reference interpreter (numba where installed)."""
    return request.param


def pytest_collection_modifyitems(config, items):
    """Mode jax's cases of the tests listed in ``jax_limits`` are marked (see there why)."""
    import jax_limits

    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "jax" not in (params.get("mode"), params.get("default_mode")):
            continue
        where = Path(os.path.relpath(item.path, config.rootpath)).as_posix()
        test = f"{where}::{item.originalname}"
        if test in jax_limits.EXPECTED_NOT_LOWERABLE or f"{where}::{item.name}" in jax_limits.EXPECTED_NOT_LOWERABLE:
            from symscan.backends.jax.graph import NotLowerable

            item.add_marker(pytest.mark.xfail(raises=NotLowerable, strict=True, reason=jax_limits.NOT_LOWERABLE))
        elif test in jax_limits.COMPARES_NUMPY_DRAWS:
            item.add_marker(pytest.mark.skip(reason=jax_limits.NUMPY_DRAWS))
        elif test in jax_limits.PROFILES:
            item.add_marker(pytest.mark.skip(reason=jax_limits.NO_PROFILE))


def pytest_configure(config):
    """Test modules mirror the packages without ``__init__.py``, so basenames repeat
    (tests/graph/test_basic.py, tests/tensor/test_basic.py); importlib mode imports each
    file under its own path instead of failing with "import file mismatch"."""
    config.option.importmode = "importlib"


@pytest.fixture
def registry():
    """The rewrite registry, restored after the test (tests may register throw-away rules)."""
    import rewrites

    saved = dict(rewrites.REGISTRY)
    yield rewrites.REGISTRY
    rewrites.REGISTRY.clear()
    rewrites.REGISTRY.update(saved)


@pytest.fixture(params=["float64", "float32"])
def floatX(request):
    """``config.floatX`` set to each float dtype for the test, and restored afterwards."""
    saved = ss.config.floatX
    ss.config.floatX = request.param
    yield request.param
    ss.config.floatX = saved


class ScanRewriteCheck:
    """Helpers for the scan rewrite tests: compile with a chosen rewrite selection, compare
    with the reference interpreter (mode "py"), and look at the Scan nodes and the report."""

    @staticmethod
    def compile(inputs, outputs, rewrites, updates=None):
        return ss.function(inputs, outputs, updates=updates, mode="fast", rewrites=rewrites)

    def same_as_py(self, f, inputs, outputs, *value_sets, rtol=1e-12, updates=None):
        """``f`` (compiled from ``inputs``/``outputs``) gives mode "py"'s numbers, or raises
        the same kind of error, for each list of input values."""
        reference = ss.function(inputs, outputs, updates=updates, mode="py")
        for values in value_sets:
            try:
                expected = reference(*values)
            except ValueError:
                with pytest.raises(ValueError, match="scan: "):
                    f(*values)
                continue
            got = f(*values)
            pairs = zip(got, expected) if isinstance(expected, list) else [(got, expected)]
            for g, e in pairs:
                assert np.shape(g) == np.shape(e) and np.asarray(g).dtype == np.asarray(e).dtype
                np.testing.assert_allclose(g, e, rtol=rtol, atol=1e-13)

    def check(self, inputs, outputs, rewrites, *value_sets, rtol=1e-12, updates=None):
        """Compile with ``rewrites`` and check the numbers; returns the compiled function."""
        f = self.compile(inputs, outputs, rewrites, updates=updates)
        self.same_as_py(f, inputs, outputs, *value_sets, rtol=rtol, updates=updates)
        return f

    @staticmethod
    def scans(f) -> list:
        from symscan.scan import Scan

        return [n for n in f.fgraph.apply_nodes if isinstance(n.op, Scan)]

    def only_scan(self, f):
        """The one Scan node of ``f`` and its ``ScanArgs``."""
        from symscan.scan import ScanArgs

        scans = self.scans(f)
        assert len(scans) == 1, f"expected one Scan node, found {len(scans)}"
        return scans[0], ScanArgs.from_node(scans[0])

    @staticmethod
    def nodes(graph_or_node, op_class) -> list:
        """Nodes of ``op_class`` in a compiled function's graph or in a Scan node's body."""
        fgraph = graph_or_node.fgraph if hasattr(graph_or_node, "fgraph") else graph_or_node.op.inner
        return [n for n in fgraph.apply_nodes if isinstance(n.op, op_class)]

    @staticmethod
    def records(f, rule: str, fired: bool = True) -> list:
        return [r for r in f.rewrite_report() if r.rule == rule and r.fired == fired]


@pytest.fixture
def scan_rw():
    """``ScanRewriteCheck``: compile with some rewrites, compare with mode "py", inspect."""
    return ScanRewriteCheck()


def _scan_nodes(f_or_fgraph):
    """The Scan nodes of a compiled function's (or a FunctionGraph's) graph, in order."""
    from symscan.scan.op import Scan

    fgraph = getattr(f_or_fgraph, "fgraph", f_or_fgraph)
    return [node for node in fgraph.toposort() if isinstance(node.op, Scan)]


@pytest.fixture
def scan_nodes():
    """``scan_nodes(f)``: the Scan nodes of ``f.fgraph`` in topological order."""
    return _scan_nodes


def _same_as_py(f, *values, rtol=1e-10, atol=1e-12):
    """Call ``f`` and the same graph compiled in mode "py"; the results agree (values, shapes,
    dtypes), or both raise the same kind of error. Returns ``f``'s result (or the error)."""
    reference = f.__dict__.get("_test_reference")
    if reference is None:
        outputs = f.outputs if f.return_list else f.outputs[0]
        reference = f.__dict__["_test_reference"] = ss.function(f.inputs, outputs, mode="py")
    try:
        expected = reference(*values)
    except Exception as err:  # the rewritten function must fail the same way
        with pytest.raises(type(err)) as info:
            f(*values)
        return info.value
    got = f(*values)
    pairs = zip(got, expected) if f.return_list else [(got, expected)]
    for g, e in pairs:
        g, e = np.asarray(g), np.asarray(e)
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, g.dtype, e.shape, e.dtype)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
    return got


@pytest.fixture
def same_as_py():
    """``same_as_py(f, *values)``: ``f`` agrees with its graph run by the reference interpreter."""
    return _same_as_py


# ---------------------------------------------------------------------------- ONNX export checks
FLOAT_TOLERANCES = {"float16": (1e-3, 0), "float32": (1e-6, 0), "float64": (1e-6, 0)}
"""(rtol, atol) for float results when ONNX computes differently from numpy (float16 results
are computed in float32 and rounded once, numpy rounds after each step)."""


def assert_onnx_result(got, expected, what: str = "the result") -> None:
    """Same dtype and shape; floats allclose (``FLOAT_TOLERANCES``), ints and bools exact."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype} instead of {expected.dtype}"
    assert got.shape == expected.shape, f"{what}: shape {got.shape} instead of {expected.shape}"
    if expected.dtype.kind == "f":
        rtol, atol = FLOAT_TOLERANCES[expected.dtype.name]
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=what)


def _onnx_agree(inputs, outputs, *values, updates=None, opset=None, value_sets=None):
    """Compile ``inputs -> outputs`` in mode "py", export it, check the model fully, run it in
    onnxruntime and in onnx's reference evaluator on ``values`` (or on each list of values in
    ``value_sets``; fed by the model's input names, shared variables use their initializers) and
    compare every output with mode "py"'s. Returns the model."""
    import onnx
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator

    f = ss.function(inputs, outputs, updates=updates, mode="py")
    model = ss.onnx.export(f, opset=opset)  # shared variables' initializers: their values now
    onnx.checker.check_model(model, full_check=True)
    runners = {"onnxruntime": ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]),
               "reference evaluator": ReferenceEvaluator(model)}
    updated = [var for var, _ in f.updates]
    for call_values in value_sets if value_sets is not None else [values]:
        before = [var.get_value() for var in updated]
        result = f(*call_values)
        expected = (list(result) if isinstance(result, list) else [result]) + [var.get_value() for var in updated]
        for var, value in zip(updated, before):  # the call leaves the shared variables as they were
            var.set_value(value)
        feeds = {i.name: np.asarray(v) for i, v in zip(model.graph.input, call_values)}
        for runner, session in runners.items():
            got = session.run(None, feeds)
            assert len(got) == len(expected), f"{runner}: {len(got)} outputs instead of {len(expected)}"
            for i, (g, e) in enumerate(zip(got, expected)):
                assert_onnx_result(g, e, what=f"{runner} on {call_values}, output {i} ({model.graph.output[i].name})")
    return model


@pytest.fixture
def quiet_numpy():
    """Integer overflow and division by zero are what some tests check: numpy's warnings (also
    from onnx's reference evaluator, which computes with numpy) are noise there."""
    import warnings

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


@pytest.fixture
def onnx_agree():
    """``onnx_agree(inputs, outputs, *values, updates=None, opset=None, value_sets=None)``: the
    exported model passes the full checker and gives mode "py"'s results (same dtypes and shapes)
    in onnxruntime and in onnx's reference evaluator; returns the model."""
    return _onnx_agree


# ---------------------------------------------------------------------------- exported loops
# Where onnx's reference evaluator cannot run a model (onnxruntime can): its message.
REFERENCE_EVALUATOR_LIMITS = {
    "reversed Scan input": (RuntimeError, "Scan is not implemented for other output input_direction than 0"),
    "Loop of zero trips": (ValueError, "need at least one array to concatenate"),
}


def _control_flow(graph) -> list:
    """The Scan, Loop and If nodes of an ONNX graph, in order, each with those of its bodies:
    ``[("Loop", [("Scan", [])])]``."""
    from onnx import AttributeProto

    found = []
    for node in graph.node:
        bodies = [a.g for a in node.attribute if a.type == AttributeProto.GRAPH]
        inner = [item for body in bodies for item in _control_flow(body)]
        if node.op_type in ("Scan", "Loop", "If"):
            found.append((node.op_type, inner))
        else:
            found += inner
    return found


def _loop_kinds(graph) -> list:
    """The Scan and Loop nodes as ``_control_flow`` lists them, If nodes (guards the lowering
    adds) left out but what their branches hold kept."""
    return _without_if(_control_flow(graph))


def _without_if(items: list) -> list:
    kinds = []
    for op_type, inner in items:
        kinds += _without_if(inner) if op_type == "If" else [(op_type, _without_if(inner))]
    return kinds


def _nodes(graph, op_type: str) -> list:
    """Every ``op_type`` node of an ONNX graph and of its bodies."""
    from onnx import AttributeProto

    found = []
    for node in graph.node:
        if node.op_type == op_type:
            found.append(node)
        for attribute in node.attribute:
            if attribute.type == AttributeProto.GRAPH:
                found += _nodes(attribute.g, op_type)
    return found


def _reference_limits(model, session_feeds) -> set:
    """The ``REFERENCE_EVALUATOR_LIMITS`` this model meets on these feeds: a reversed Scan input
    anywhere, or a Loop of the main graph that stacks outputs and runs no trip (its trip count
    read off the model run in onnxruntime)."""
    import onnx
    import onnxruntime as ort

    limits = set()
    if any(1 in next((a.ints for a in node.attribute if a.name == "scan_input_directions"), [])
           for node in _nodes(model.graph, "Scan")):
        limits.add("reversed Scan input")
    stacking = [node for node in model.graph.node if node.op_type == "Loop" and len(node.output) > len(node.input) - 2]
    if stacking:
        probe = onnx.ModelProto()
        probe.CopyFrom(model)
        del probe.graph.output[:]
        probe.graph.output.extend(onnx.helper.make_tensor_value_info(node.input[0], onnx.TensorProto.INT64, [])
                                  for node in stacking)
        session = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
        if any(int(trips) == 0 for trips in session.run(None, session_feeds)):
            limits.add("Loop of zero trips")
    return limits


class ExportCheck:
    """Export a compiled function and check the model against mode "py" on sets of values."""

    control_flow = staticmethod(_control_flow)
    loop_kinds = staticmethod(_loop_kinds)
    nodes = staticmethod(_nodes)

    @staticmethod
    def export(f):
        """``ss.onnx.export(f)``, after ``onnx.checker.check_model(..., full_check=True)``."""
        import onnx

        model = ss.onnx.export(f)
        onnx.checker.check_model(model, full_check=True)
        return model

    @staticmethod
    def feeds(model, f, values) -> dict:
        """The user inputs by name, with the inputs' dtypes (shared variables: initializers)."""
        return {i.name: np.asarray(v, dtype=var.type.dtype) for i, var, v in zip(model.graph.input, f.inputs, values)}

    @staticmethod
    def session(model):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.log_severity_level = 3  # no warnings about shared variables' overridable initializers
        return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])

    @staticmethod
    def expected(f, values) -> list:
        """Mode "py"'s outputs for ``f``'s graph, then the new values of ``f``'s updated shared
        variables (which are left as they were)."""
        outputs = f.outputs if f.return_list else f.outputs[0]
        reference = f.__dict__.get("_export_reference")
        if reference is None:
            reference = f.__dict__["_export_reference"] = ss.function(f.inputs, outputs, updates=f.updates,
                                                                      mode="py")
        updated = [var for var, _ in f.updates]
        before = [var.get_value() for var in updated]
        result = reference(*values)
        after = [var.get_value() for var in updated]
        for var, value in zip(updated, before):
            var.set_value(value)
        return (list(result) if f.return_list else [result]) + after

    @staticmethod
    def assert_same(got, expected, runner: str, model) -> None:
        assert len(got) == len(expected), f"{runner}: {len(got)} outputs instead of {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            g, e = np.asarray(g), np.asarray(e)
            what = f"{runner}, output {i} ({model.graph.output[i].name})"
            assert (g.dtype, g.shape) == (e.dtype, e.shape), f"{what}: {g.dtype}{g.shape} instead of {e.dtype}{e.shape}"
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12, err_msg=what)

    def __call__(self, f, *value_sets, reference: bool = True, limits: tuple = ()):
        """Export ``f`` (fully checked); for each list of input values, the model run in
        onnxruntime and in onnx's reference evaluator gives mode "py"'s outputs and shared
        updates. Where the reference evaluator meets one of its limitations (found in the
        model, or named in ``limits``: e.g. a nested Loop of zero trips) it must fail with that
        limitation's message. Returns the model."""
        from onnx.reference import ReferenceEvaluator

        model = self.export(f)
        session = self.session(model)
        for values in value_sets:
            expected, feeds = self.expected(f, values), self.feeds(model, f, values)
            self.assert_same(session.run(None, feeds), expected, "onnxruntime", model)
            if not reference:
                continue
            met = _reference_limits(model, feeds) | set(limits)
            if not met:
                got = ReferenceEvaluator(model).run(None, feeds)
                self.assert_same(got, expected, "reference evaluator", model)
                continue
            with pytest.raises((RuntimeError, ValueError)) as failure:  # (a Scan fails already when built)
                ReferenceEvaluator(model).run(None, feeds)
            assert any(isinstance(failure.value, REFERENCE_EVALUATOR_LIMITS[limit][0])
                       and REFERENCE_EVALUATOR_LIMITS[limit][1] in str(failure.value) for limit in met), \
                f"the reference evaluator should meet {sorted(met)}, it raised {failure.value!r}"
        return model


@pytest.fixture
def export_check():
    """``export_check(f, *value_sets)``: ``f`` exported (full check) runs in onnxruntime and in
    onnx's reference evaluator (or meets a stated limitation of it) with mode "py"'s results;
    also ``.export``, ``.session``, ``.feeds``, ``.expected``, ``.loop_kinds`` and ``.nodes``."""
    return ExportCheck()
