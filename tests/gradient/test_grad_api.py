"""``ss.grad`` and its companions: Theano 1.0's semantics and edge cases (GRADIENTS.md §1,
§7 case 25), checked against numpy; every gradient also compared across modes."""

import warnings

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.gradient import DisconnectedType, NullType
from symscan.tensor.gradient_markers import GradientMarker

MODES = ("py", "fast", "onnxruntime")


def _values(inputs, outputs, *values, modes=MODES):
    """``outputs`` in every mode; all agree; mode "py"'s values."""
    results = {m: ss.function(inputs, outputs, mode=m)(*values) for m in modes}
    for mode, got in results.items():
        for g, e in zip(got if isinstance(got, list) else [got], results["py"] if isinstance(got, list)
                        else [results["py"]]):
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14, err_msg=mode)
    return results["py"]


# ---------------------------------------------------------------------------- cost and wrt
def test_cost_must_be_a_scalar():
    x = T.vector("x")
    with pytest.raises(TypeError, match=r"cost must be a scalar .* got 'x'.*\.sum\(\)"):
        ss.grad(x, x)


def test_wrt_a_set_is_refused():
    x = T.vector("x")
    with pytest.raises(TypeError, match="a set has no order"):
        ss.grad(x.sum(), {x})


@pytest.mark.parametrize("structure", [list, tuple, None])
def test_the_result_has_the_structure_of_wrt(structure):
    x, y = T.vector("x"), T.vector("y")
    cost = (x * y).sum()
    wrt = [x, y] if structure is None else structure([x, y])
    result = ss.grad(cost, x if structure is None else wrt)
    if structure is None:
        assert not isinstance(result, (list, tuple))
    else:
        assert type(result) is structure and len(result) == 2
        gx, gy = _values([x, y], list(result), np.array([1.0, 2.0]), np.array([3.0, 4.0]))
        np.testing.assert_array_equal(gx, [3.0, 4.0])
        np.testing.assert_array_equal(gy, [1.0, 2.0])


def test_cost_none_needs_known_grads():
    x = T.vector("x")
    with pytest.raises(ValueError, match="known_grads"):
        ss.grad(None, x)


def test_known_grads_alone_is_a_vector_jacobian_product():
    x = T.vector("x")
    y = x * x
    v = T.vector("v")
    g = ss.grad(None, x, known_grads={y: v})
    np.testing.assert_array_equal(_values([x, v], g, np.array([1.0, 2.0]), np.array([3.0, 5.0])), [6.0, 20.0])


def test_known_grads_and_a_cost_add_up():
    x = T.vector("x")
    y = x * 3.0
    g = ss.grad(y.sum(), x, known_grads={y: T.ones_like(y) * 2.0})
    np.testing.assert_array_equal(_values([x], g, np.array([1.0, 2.0])), [9.0, 9.0])


def test_add_names():
    x = T.vector("x")
    cost = (x * x).sum()
    cost.name = "loss"
    assert ss.grad(cost, x).name == "(dloss/dx)"
    assert ss.grad((x * x).sum(), x).name == "(dcost/dx)"
    assert ss.grad((x * x).sum(), x, add_names=False).name is None


# ---------------------------------------------------------------------------- disconnected and undefined
def test_a_disconnected_wrt_raises_by_default():
    x, y = T.vector("x"), T.vector("y")
    with pytest.raises(ss.DisconnectedInputError, match=r"does not depend on wrt\[1\] 'y'.*disconnected_inputs"):
        ss.grad((x * 2.0).sum(), [x, y])
    assert issubclass(ss.DisconnectedInputError, ValueError)


def test_disconnected_inputs_warn_and_ignore_give_float_zeros():
    x, y = T.vector("x"), T.ivector("y")
    with pytest.warns(UserWarning, match="does not depend on"):
        gx, gy = ss.grad((x * 2.0).sum(), [x, y], disconnected_inputs="warn")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, gy2 = ss.grad((x * 2.0).sum(), [x, y], disconnected_inputs="ignore")
    for g in (gy, gy2):
        value = _values([x, y], g, np.ones(2), np.array([1, 2, 3], dtype="int32"))
        assert value.dtype == np.float64 and value.shape == (3,) and not value.any()


def test_return_disconnected_none_and_disconnected():
    x, y = T.vector("x"), T.vector("y")
    cost = (x * 2.0).sum()
    assert ss.grad(cost, [x, y], disconnected_inputs="ignore", return_disconnected="None")[1] is None
    g = ss.grad(cost, [x, y], disconnected_inputs="ignore", return_disconnected="Disconnected")[1]
    assert isinstance(g.type, DisconnectedType)
    with pytest.raises(ValueError, match="return_disconnected"):
        ss.grad(cost, x, return_disconnected="nothing")


def test_undefined_gradients_raise_or_are_returned():
    x = T.vector("x")
    cost = ss.undefined_grad(x * 2.0).sum()
    with pytest.raises(ss.NullTypeGradError, match="undefined_grad.*null_gradients='return'"):
        ss.grad(cost, x)
    g = ss.grad(cost, x, null_gradients="return")
    assert isinstance(g.type, NullType)


# ---------------------------------------------------------------------------- integers
def test_grad_of_an_int_variable_with_respect_to_itself_is_one():
    x = T.iscalar("x")
    g = ss.grad(x, x)
    assert g.dtype == ss.config.floatX
    assert _values([x], g, np.int32(5)) == 1.0


def test_an_int_input_of_a_float_function_gets_a_real_gradient():
    x = T.ivector("x")
    g = ss.grad((x * 2.5).sum(), x)
    assert g.dtype == "float64"
    np.testing.assert_array_equal(_values([x], g, np.array([1, 2], dtype="int32")), [2.5, 2.5])


def test_through_an_integer_output_the_gradient_is_zero_not_disconnected():
    x = T.vector("x")
    g = ss.grad(T.cast(x * 2.0, "int64").sum() * 1.0 + 0.0 * x.sum(), x)
    np.testing.assert_array_equal(_values([x], g, np.array([1.5, 2.5])), [0.0, 0.0])
    only_int = ss.grad(T.cast(x, "int64").sum() * 1.0, x)  # connected through the cast: zeros, no error
    np.testing.assert_array_equal(_values([x], only_int, np.array([1.5, 2.5])), [0.0, 0.0])


def test_gradients_are_never_integer_typed():
    x = T.lvector("x")
    for g in ss.grad((x * x).sum() * 1.0, [x]):
        assert g.dtype.startswith("float")


def test_float32_inputs_get_float32_gradients():
    x = T.fvector("x")
    g = ss.grad((x * np.float32(3.0)).sum(), x)
    assert g.dtype == "float32"


# ---------------------------------------------------------------------------- consider_constant and markers
def test_consider_constant_stops_the_gradient_there():
    x = T.vector("x")
    y = x * x
    cost = (y * x).sum()
    g = ss.grad(cost, x, consider_constant=[y])
    np.testing.assert_array_equal(_values([x], g, np.array([2.0, 3.0])), [4.0, 9.0])  # y, not 3 x**2


def test_zero_grad_is_connected_but_zero():
    x = T.vector("x")
    g = ss.grad((ss.zero_grad(x) * x).sum(), x)
    np.testing.assert_array_equal(_values([x], g, np.array([2.0, 3.0])), [2.0, 3.0])
    only = ss.grad(ss.zero_grad(x).sum(), x)  # no DisconnectedInputError
    np.testing.assert_array_equal(_values([x], only, np.array([2.0, 3.0])), [0.0, 0.0])


def test_disconnected_grad_disconnects_what_is_above():
    x = T.vector("x")
    with pytest.raises(ss.DisconnectedInputError):
        ss.grad(ss.disconnected_grad(x * 2.0).sum(), x)
    g = ss.grad((ss.disconnected_grad(x) * x).sum(), x)
    np.testing.assert_array_equal(_values([x], g, np.array([2.0, 3.0])), [2.0, 3.0])


def test_grad_clip_and_grad_scale():
    x = T.vector("x")
    clipped = ss.grad((ss.grad_clip(x, -1.0, 2.0) * T.constant([5.0, -3.0, 1.5])).sum(), x)
    np.testing.assert_array_equal(_values([x], clipped, np.ones(3)), [2.0, -1.0, 1.5])
    scaled = ss.grad((ss.grad_scale(x, 0.5) * T.constant([5.0, -3.0, 1.5])).sum(), x)
    np.testing.assert_array_equal(_values([x], scaled, np.ones(3)), [2.5, -1.5, 0.75])
    with pytest.raises(ValueError, match="upper_bound .* below lower_bound"):
        ss.grad_clip(x, 2.0, -1.0)


@pytest.mark.parametrize("marker", [ss.zero_grad, ss.disconnected_grad, ss.undefined_grad,
                                    lambda x: ss.grad_clip(x, -1.0, 1.0), lambda x: ss.grad_scale(x, 3.0)])
def test_markers_are_identities_forward_and_vanish_when_compiled(marker):
    x = T.vector("x")
    y = marker(x) * 2.0
    np.testing.assert_array_equal(_values([x], y, np.array([1.0, -4.0])), [2.0, -8.0])
    f = ss.function([x], y, mode="fast")
    assert not any(isinstance(n.op, GradientMarker) for n in f.fgraph.apply_nodes)


# ---------------------------------------------------------------------------- Lop, Rop, jacobian, hessian
def test_lop_and_rop_of_a_matrix_product(rng):
    W, x, v, u = T.matrix("W"), T.vector("x"), T.vector("v"), T.vector("u")
    y = T.tanh(T.dot(W, x))
    Wv, xv = rng.normal(size=(3, 4)), rng.normal(size=4)
    jac = (1 - np.tanh(Wv @ xv) ** 2)[:, None] * Wv  # dy/dx
    uv, vv = rng.normal(size=3), rng.normal(size=4)
    lop = ss.Lop(y, x, u)
    np.testing.assert_allclose(_values([W, x, u], lop, Wv, xv, uv), uv @ jac, rtol=1e-12)
    rop = ss.Rop(y, x, v)
    np.testing.assert_allclose(_values([W, x, v], rop, Wv, xv, vv), jac @ vv, rtol=1e-12)


def test_rop_of_several_outputs_keeps_their_structure(rng):
    x, v = T.vector("x"), T.vector("v")
    a, b = ss.Rop([x * x, T.exp(x)], [x], [v])
    xv, vv = rng.normal(size=3), rng.normal(size=3)
    ga, gb = _values([x, v], [a, b], xv, vv)
    np.testing.assert_allclose(ga, 2 * xv * vv, rtol=1e-12)
    np.testing.assert_allclose(gb, np.exp(xv) * vv, rtol=1e-12)


def test_jacobian_of_a_vector_is_a_scan_of_grads(rng):
    x = T.vector("x")
    J = ss.jacobian(x ** 2 * x[0], x)
    xv = rng.normal(size=3)
    expected = np.diag(2 * xv * xv[0])
    expected[:, 0] += xv ** 2
    np.testing.assert_allclose(_values([x], J, xv), expected, rtol=1e-12)
    scans = [n for n in ss.function([x], J, mode="py").fgraph.apply_nodes if type(n.op).__name__ == "Scan"]
    assert len(scans) == 1


def test_jacobian_of_a_matrix_and_of_a_scalar(rng):
    x, W = T.vector("x"), T.matrix("W")
    J = ss.jacobian(T.outer(x, x), x)
    xv = rng.normal(size=2)
    expected = np.einsum("ik,j->ijk", np.eye(2), xv) + np.einsum("i,jk->ijk", xv, np.eye(2))
    np.testing.assert_allclose(_values([x], J, xv), expected, rtol=1e-12)
    gW, gx = ss.jacobian((W * x).sum(), [W, x])
    Wv = rng.normal(size=(3, 2))
    np.testing.assert_allclose(_values([W, x], [gW, gx], Wv, xv)[1], Wv.sum(axis=0), rtol=1e-12)


def test_hessian_of_a_cubic(rng):
    x = T.vector("x")
    H = ss.hessian((x ** 3).sum() + x[0] * x[1], x)
    xv = np.array([0.3, 0.6])
    np.testing.assert_allclose(_values([x], H, xv), [[6 * 0.3, 1.0], [1.0, 6 * 0.6]], rtol=1e-12)
    with pytest.raises(TypeError, match="each wrt must be a vector"):
        ss.hessian((x ** 3).sum(), T.matrix("m"))


# ---------------------------------------------------------------------------- verify_grad
def test_verify_grad_accepts_a_right_gradient_and_rejects_a_wrong_one():
    from dataclasses import dataclass

    from symscan.gradient import pullback
    from symscan.graph.basic import Apply, Op

    @dataclass(frozen=True)
    class Square(Op):
        def make_node(self, x):
            return Apply(self, [x], [x.type])

        def perform(self, node, inputs):
            return [inputs[0] ** 2]

    ss.verify_grad(lambda a: T.exp(a) * a, [np.array([0.5, -1.0])], rng=np.random.default_rng(1))
    try:
        pullback(Square)(lambda node, g: [g[0] * node.inputs[0] * 3.0])  # 3x instead of 2x
        with pytest.raises(ss.GradientError, match="input 0 .* symbolic .* numeric"):
            ss.verify_grad(lambda a: Square()(a), [np.array([0.5, -1.0])], rng=np.random.default_rng(1), mode="py")
    finally:
        from symscan.gradient.registry import PULLBACKS

        PULLBACKS.pop(Square, None)


def test_verify_grad_needs_float_points():
    with pytest.raises(TypeError, match="float16/32/64"):
        ss.verify_grad(lambda a: a * 2, [np.array([1, 2])])


# ---------------------------------------------------------------------------- compat
def test_theano_names():
    import symscan.compat.theano as theano
    import symscan.compat.theano.tensor as TT
    from symscan.compat.theano import gradient
    from symscan.compat.theano.tests import unittest_tools as utt

    assert theano.grad is ss.grad and TT.grad is ss.grad and theano.gradient.grad is ss.grad
    assert TT.jacobian is ss.jacobian and TT.hessian is ss.hessian and theano.Rop is ss.Rop
    for name in ("zero_grad", "disconnected_grad", "undefined_grad", "grad_clip", "grad_scale", "verify_grad",
                 "grad_undefined", "grad_not_implemented", "DisconnectedInputError", "NullTypeGradError"):
        assert hasattr(gradient, name), name
    x = TT.vector("x")
    with pytest.warns(DeprecationWarning, match="consider_constant"):
        c = gradient.consider_constant(x)
    assert ss.function([x], theano.grad((c * x).sum(), x), mode="py")(np.array([3.0])) == 3.0
    utt.verify_grad(lambda a: TT.tanh(a), [np.array([0.1, 0.7])])
