"""The Composite op: a fused elementwise chain gives exactly the unfused chain's values."""

import importlib.util

import numpy as np
import pytest

import symscan as ss
from symscan import tensor as T
from symscan.tensor.composite import Composite, composite_of, inner_nodes


def test_composite_matches_the_chain_with_broadcasting():
    x, b = T.matrix("x"), T.vector("b")
    chain = T.sigmoid(x + b) * 2.0
    op, (out,) = composite_of([x, b], [chain])
    assert str(op) == "Composite{mul(sigmoid(add(i0, i1)), 2.0)}"
    assert [n.op.name for n in inner_nodes(op)] == ["add", "sigmoid", "mul"]
    assert out.type == chain.type
    xv, bv = np.random.default_rng(0).normal(size=(3, 4)), np.linspace(-1, 1, 4)
    fused = ss.function([x, b], out, mode="py")(xv, bv)
    unfused = ss.function([x, b], chain, mode="py")(xv, bv)
    np.testing.assert_array_equal(fused, unfused)


def test_composite_equality_is_structural_and_dtypes_are_kept():
    i = T.vector("i", dtype="int32")
    f = T.vector("f", dtype="float32")
    chain = T.exp((i + i).astype("float32")) * f
    op1, (out,) = composite_of([i, f], [chain])
    i2, f2 = T.vector(dtype="int32"), T.vector(dtype="float32")
    op2, _ = composite_of([i2, f2], [T.exp((i2 + i2).astype("float32")) * f2])
    assert op1 == op2 and hash(op1) == hash(op2)
    assert out.dtype == "float32"
    iv, fv = np.array([1, 2, 3], dtype="int32"), np.ones(3, dtype="float32")
    result = ss.function([i, f], out, mode="py")(iv, fv)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, np.exp((iv + iv).astype("float32")) * fv)


def test_composite_refuses_other_ops_and_wrong_input_dtypes():
    x = T.vector("x")
    with pytest.raises(ValueError, match="not computed by an elementwise op"):
        composite_of([x], [T.exp(x.sum())])
    op, _ = composite_of([x], [T.exp(x) + 1.0])
    with pytest.raises(TypeError, match="must have dtype float64"):
        op(T.vector(dtype="float32"))
    assert isinstance(op, Composite)


def test_an_output_reading_some_inputs_has_the_broadcast_shape_of_all(rng):
    """The rewrite never builds one, but the contract holds in every backend."""
    x, y = T.vector("x"), T.matrix("y")
    op, outs = composite_of([x, y], [T.exp(x) * 2.0, T.exp(x) + y])
    xv, yv = rng.normal(size=3), rng.normal(size=(2, 3))
    want = [np.broadcast_to(np.exp(xv) * 2.0, (2, 3)), np.exp(xv) + yv]
    modes = ["py", "fast"] + (["onnxruntime"] if importlib.util.find_spec("onnxruntime") else [])
    for mode in modes:
        got = ss.function([x, y], outs, mode=mode, rewrites=[])(xv, yv)
        for g, w in zip(got, want):
            assert g.shape == (2, 3)
            np.testing.assert_allclose(g, w, rtol=1e-15)
