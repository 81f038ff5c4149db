"""The fast evaluator: what it generates and the paths the generated code can take.

Numbers are always compared with the reference interpreter (mode "py")."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.backends.fast import FastEvaluator
from symscan.graph.fg import FunctionGraph


def _both(inputs, outputs, values, **kwargs):
    fast = ss.function(inputs, outputs, mode="fast", **kwargs)
    py = ss.function(inputs, outputs, mode="py", **kwargs)
    got, want = fast(*values), py(*values)
    for g, w in zip(got if isinstance(got, list) else [got], want if isinstance(want, list) else [want]):
        assert np.asarray(g).dtype == np.asarray(w).dtype and np.shape(g) == np.shape(w)
        np.testing.assert_array_equal(g, w)
    return fast


LOOPS = ["-vectorize"]
"""These tests are about the loops the evaluator writes: the rewrites that remove loops are off."""


def test_source_is_one_function_with_a_loop_per_scan():
    x = T.vector("x")
    out, _ = ss.scan(lambda v, s: s + v, sequences=x, outputs_info=T.constant(0.0))
    f = _both([x], out, [np.arange(5.0)], rewrites=LOOPS)
    assert f.source.startswith("def ") and f.source.count("for ") == 1
    assert "values[" not in f.source and "perform" not in f.source.split("for ", 1)[1]  # no dispatch in the loop
    assert ss.function([x], out, mode="py").source is None


def test_nested_scans_become_nested_loops():
    M = T.matrix("M")

    def row_sums(row):
        cs, _ = ss.scan(lambda v, acc: acc + v, sequences=row, outputs_info=T.constant(0.0))
        return cs

    out, _ = ss.scan(row_sums, sequences=M)
    f = _both([M], out, [np.arange(12.0).reshape(3, 4)], rewrites=LOOPS)
    loops = [line for line in f.source.splitlines() if line.lstrip().startswith("for ")]
    assert len(loops) == 2 and len(loops[1]) - len(loops[1].lstrip()) > len(loops[0]) - len(loops[0].lstrip())


def test_ring_buffer_of_one_step_keeps_no_rows():
    A, k = T.vector("A"), T.iscalar("k")
    result, _ = ss.scan(lambda p, A: p * A, outputs_info=T.ones_like(A), non_sequences=A, n_steps=k)
    f = _both([A, k], result[-1], [np.linspace(0.5, 1.5, 7), np.int32(9)], rewrites=LOOPS)
    body = f.source.split("for ", 1)[1]
    assert "_buf" not in body  # only the latest value is kept, no buffer writes per step
    with pytest.raises(IndexError):
        f(np.ones(3), 0)


def test_mit_sot_windows_and_rings():
    init = T.vector("init")
    out, _ = ss.scan(lambda a3, a1: a1 + 0.5 * a3, outputs_info=dict(initial=init, taps=[-3, -1]), n_steps=20)
    _both([init], [out, out[-2:], out[-1]], [np.array([1.0, 2.0, 3.0])], rewrites=LOOPS)
    f = _both([init], out[-2:], [np.array([1.0, 2.0, 3.0])], rewrites=LOOPS)
    assert "% " in f.source  # a ring of two rows


def test_inplace_guards_fall_back_when_broadcasting_grows_the_result():
    """x + y where y may broadcast x to a larger shape: the in-place path must not be taken."""
    x, y = T.vector("x"), T.vector("y")
    out = T.exp(x) + T.exp(y)
    f = _both([x, y], out, [np.ones(1), np.arange(4.0)], rewrites=["-fusion"])  # the Elemwise guard
    _both([x, y], out, [np.arange(4.0), np.ones(1)], rewrites=["-fusion"])
    assert "out=" in f.source


def test_into_buffer_guard_falls_back_and_checks_shapes():
    """A loop output computed into its buffer row; a step producing another shape is an error."""
    h0, W = T.vector("h0"), T.matrix("W")
    out, _ = ss.scan(lambda h, W: T.tanh(T.dot(h, W)), outputs_info=h0, non_sequences=W, n_steps=4)
    f = _both([h0, W], out, [np.ones(3), np.eye(3) * 0.5])
    assert "out=" in f.source
    with pytest.raises(ValueError, match="same shape at every step"):
        f(np.ones(3), np.ones((3, 5)))
    with pytest.raises(ValueError, match="same shape at every step"):
        ss.function([h0, W], out, mode="py")(np.ones(3), np.ones((3, 5)))


def test_scalar_maximum_keeps_nan_like_numpy():
    x = T.vector("x")
    out, _ = ss.scan(lambda v, m: T.maximum(m, v), sequences=x, outputs_info=T.constant(-np.inf))
    _both([x], out, [np.array([1.0, np.nan, 3.0, 2.0])])
    low, _ = ss.scan(lambda v, m: T.minimum(v, m), sequences=x, outputs_info=T.constant(np.inf))
    _both([x], low, [np.array([np.nan, 1.0, -3.0, 2.0])])


def test_errors_name_the_failing_node():
    x, y = T.vector("x"), T.vector("y")
    f = ss.function([x, y], T.exp(x) * y, mode="fast")  # fused: the chain's node is named
    with pytest.raises(ValueError, match=r"broadcast.*while evaluating Composite\{mul\(exp\(i0\), i1\)\}"):
        f(np.ones(2), np.ones(3))
    g = ss.function([x, y], T.exp(x) * y, mode="fast", rewrites=["-fusion"])
    with pytest.raises(ValueError, match=r"broadcast.*while evaluating Elemwise\{mul\}"):
        g(np.ones(2), np.ones(3))


def test_evaluator_on_a_graph_with_shared_and_constants():
    s = ss.shared(np.array([1.0, 2.0]), name="s")
    x = T.vector("x")
    fgraph = FunctionGraph([x], [x * s + 1.0, (s ** 2).sum()])
    ev = FastEvaluator(fgraph)
    a, b = ev([np.array([3.0, 4.0])], {fgraph.shared_variables[0]: s.get_value()})
    np.testing.assert_array_equal(a, [4.0, 9.0])
    assert float(b) == 5.0


def test_zero_steps_and_until_paths():
    s0, k = T.scalar("s0"), T.iscalar("k")
    out, _ = ss.scan(lambda s: (s * 2, ss.until(s * 2 > 10)), outputs_info=s0, n_steps=k)
    for steps in (0, 1, 3, 50):
        _both([s0, k], out, [np.float64(1.0), np.int32(steps)])
    x = T.matrix("x")
    mapped, _ = ss.scan(lambda row: row * 2, sequences=x, n_steps=k)
    f = _both([x, k], mapped, [np.ones((3, 4)), np.int32(0)])
    assert f(np.ones((3, 4)), 0).shape == (0, 4)


def test_scalar_pow_is_bitwise_the_ufunc():
    """numpy's scalar ** and its power ufunc differ for float32 (17 ** 18); fast must match py."""
    x = T.fscalar("x")
    _both([x], x ** 18.0, [np.float32(17.0)])


@pytest.mark.parametrize("read", ["last", "last two"])
def test_a_ringed_map_of_rows_of_unknown_shape(read):
    """Issue 12, bug 1: a map returning its (non-scalar) sequence element unchanged, read at
    ``out[-1]``: save_mem keeps one step, whose row shape is known only at run time; the
    generated code checked it against a row shape it never recorded (NameError)."""
    x = T.matrix("x")
    out, _ = ss.scan(lambda v: v, sequences=x)
    picked = out[-1] if read == "last" else out[-2:]
    f = _both([x], picked, [np.arange(6.0).reshape(3, 2)], rewrites=["save_mem"])
    assert "rings=" in ss.dprint(f, file="str")
    _both([x], picked, [np.arange(6.0).reshape(3, 2)])  # every rewrite on
    np.testing.assert_array_equal(f(np.ones((3, 2))), np.ones(2) if read == "last" else np.ones((2, 2)))
    if read == "last":  # no step: out[-1] is an index error in every mode
        for g in (f, ss.function([x], picked, mode="py")):
            with pytest.raises(IndexError):
                g(np.ones((0, 2)))
    else:
        _both([x], picked, [np.ones((0, 2))], rewrites=["save_mem"])


def test_the_generated_source_leaves_linecache_with_the_function():
    """Tracebacks show the generated lines while the function lives; a process compiling many
    functions (the fuzzer: thousands a minute) must not keep every source (it grew ~35 MB/min)."""
    import gc
    import linecache

    x = T.vector("x")
    f = ss.function([x], T.exp(x) * 2.0, mode="fast")
    filename = f._evaluate._filename
    assert linecache.getline(filename, 2).strip()
    del f
    gc.collect()
    assert filename not in linecache.cache
