"""Shared fixtures. The suite runs with the rewriter's debug checks on."""

import numpy as np
import pytest

import symscan as ss

ss.config.debug_checks = True


@pytest.fixture
def rng():
    return np.random.default_rng(20261121)


@pytest.fixture(params=["py", "fast"])
def mode(request):
    """Every mode that must agree with the reference interpreter."""
    return request.param


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
