"""Assert: a value passed through once run-time conditions hold (imported ONNX checks)."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.tensor.assertion import Assert, assert_that


def test_passes_the_value_or_raises_the_message(mode):
    x = T.vector("x")
    checked = assert_that(x, T.gt(x.shape[0], 1), T.all(T.ge(x, 0)), message="x needs two non-negative values")
    f = ss.function([x], checked * 1.0, mode=mode)
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [1.0, 2.0])
    for bad in (np.array([1.0]), np.array([1.0, -2.0])):
        with pytest.raises(ValueError, match="x needs two non-negative values"):
            f(bad)


def test_conditions_must_be_bool_scalars():
    x = T.vector("x")
    with pytest.raises(TypeError, match="condition 0 must be a bool scalar"):
        assert_that(x, x > 0, message="m")
    with pytest.raises(TypeError, match="condition 0 must be a bool scalar"):
        assert_that(x, x.sum(), message="m")
    assert assert_that(x, message="nothing to check") is x


def test_inside_a_loop_in_every_mode(mode):
    xs = T.vector("xs")
    out, _ = ss.scan(lambda v, acc: assert_that(acc + v, T.lt(acc + v, 10.0), message="the sum passed 10"),
                     sequences=xs, outputs_info=T.constant(0.0))
    f = ss.function([xs], out, mode=mode)
    np.testing.assert_array_equal(f(np.ones(3)), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="the sum passed 10"):
        f(np.full(4, 3.0))


def test_the_gradient_goes_through_the_value():
    x = T.vector("x")
    cost = (assert_that(x, T.gt(x.shape[0], 0), message="empty") ** 2).sum()
    g = ss.function([x], ss.grad(cost, x))
    np.testing.assert_allclose(g(np.array([1.0, -3.0])), [2.0, -6.0])


def test_exported_as_a_guard_and_imported_back():
    pytest.importorskip("onnxruntime")
    x = T.vector("x")
    f = ss.function([x], assert_that(x + 1.0, T.gt(x.shape[0], 2), message="x is too short"))
    model = ss.onnx.export(f)
    assert any(n.op_type == "If" for n in model.graph.node)
    back = ss.onnx.import_function(model)
    assert any(isinstance(n.op, Assert) for n in back.fgraph.apply_nodes)
    np.testing.assert_array_equal(back(np.zeros(3))[0], np.ones(3))
    with pytest.raises(ValueError, match="x is too short"):
        back(np.zeros(2))
    g = ss.function([x], assert_that(x + 1.0, T.gt(x.shape[0], 2), message="x is too short"), mode="onnxruntime")
    with pytest.raises(ValueError, match="x is too short"):
        g(np.zeros(2))
