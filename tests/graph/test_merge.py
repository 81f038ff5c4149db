"""Merge keys: when two constants or two nodes compute the same value."""

import numpy as np

import symscan.tensor as T
from symscan.graph import constant_key, node_key
from symscan.tensor.elemwise import Elemwise


def test_constants_with_equal_typed_values_share_a_key():
    assert constant_key(T.constant(np.array([1.0, 2.0]))) == constant_key(T.constant(np.array([1.0, 2.0])))
    assert constant_key(T.constant(3)) == constant_key(T.constant(3))
    assert hash(constant_key(T.constant(1.5))) == hash(constant_key(T.constant(1.5)))


def test_constant_keys_differ_by_value_dtype_and_shape():
    base = T.constant(np.array([1.0, 2.0]))
    others = [
        T.constant(np.array([1.0, 2.5])),
        T.constant(np.array([1.0, 2.0], dtype="float32")),
        T.constant(np.array([1, 2])),
        T.constant(np.array([[1.0, 2.0]])),
        T.constant(np.array([1.0, 2.0, 0.0])),
    ]
    assert len({constant_key(base)} | {constant_key(o) for o in others}) == 1 + len(others)


def test_constant_key_keeps_signed_zeros_apart_and_merges_nans():
    assert constant_key(T.constant(0.0)) != constant_key(T.constant(-0.0))
    assert constant_key(T.constant(np.nan)) == constant_key(T.constant(np.nan))


def test_constant_key_ignores_names():
    assert constant_key(T.constant(2.0, name="a")) == constant_key(T.constant(2.0, name="b"))


def test_identical_nodes_share_a_key():
    x, y = T.vector("x"), T.vector("y")
    a, b = x + y, x + y
    assert a.owner is not b.owner
    assert node_key(a.owner) == node_key(b.owner)
    assert hash(node_key(a.owner)) == hash(node_key(b.owner))


def test_node_keys_differ_by_op_and_by_inputs_and_their_order():
    x, y, z = T.vector("x"), T.vector("y"), T.vector("z")
    base = node_key((x + y).owner)
    assert base != node_key((x * y).owner)
    assert base != node_key((y + x).owner)  # no commutativity assumed
    assert base != node_key((x + z).owner)


def test_node_key_compares_ops_by_props():
    x = T.vector("x")
    a, b = Elemwise("exp")(x), Elemwise("exp")(x)
    assert a.owner.op is not b.owner.op
    assert node_key(a.owner) == node_key(b.owner)


def test_node_key_uses_input_identity_not_equal_constants():
    x = T.vector("x")
    a, b = x + T.constant(1.0), x + T.constant(1.0)
    assert node_key(a.owner) != node_key(b.owner)


def test_node_key_canonicalises_inputs():
    x = T.vector("x")
    c1, c2 = T.constant(1.0), T.constant(1.0)
    a, b = x + c1, x + c2
    canonical = {c2: c1}
    assert node_key(a.owner, lambda v: canonical.get(v, v)) == node_key(b.owner, lambda v: canonical.get(v, v))
