"""Variables, constants, shared variables, Apply nodes and ops (props-based equality)."""

import dataclasses
import inspect
from dataclasses import dataclass

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.graph import Apply, Constant, Op, SharedVariable, TensorType, Variable, describe
from symscan.tensor.elemwise import Cast, Elemwise

import both_modes


@dataclass(frozen=True)
class Scale(Op):
    """A test op with one prop: multiplies by ``factor``."""

    factor: float = 2.0

    def make_node(self, x):
        return Apply(self, [x], [x.type])

    def perform(self, node, inputs):
        return [inputs[0] * self.factor]


@dataclass(frozen=True)
class Split(Op):
    """A test op with two outputs (the value and its negation)."""

    def make_node(self, x):
        return Apply(self, [x], [x.type, x.type])

    def perform(self, node, inputs):
        return [inputs[0].copy(), -inputs[0]]


@dataclass(frozen=True)
class Shift(Op):
    """Same field as ``Scale``, different class: must not compare equal to it."""

    factor: float = 2.0


class Plain(Op):
    """An op that is not a dataclass: no props, identity equality."""


VEC = TensorType("float64", (None,))


# ---------------------------------------------------------------------------- ops
def test_elemwise_ops_with_equal_props_are_equal_and_hash_equal():
    a, b = Elemwise("add"), Elemwise("add")
    assert a is not b
    assert a == b and hash(a) == hash(b)
    assert Elemwise("add") != Elemwise("mul")
    assert len({Elemwise("add"), Elemwise("add"), Elemwise("mul")}) == 2


def test_ops_of_different_classes_with_equal_fields_differ():
    assert Scale(2.0) != Shift(2.0)
    assert Scale(2.0) != Cast("float64")
    assert Scale(2.0) == Scale(2.0) and Scale(2.0) != Scale(3.0)


def test_props_normalised_before_comparison():
    assert Cast("float32") == Cast(np.float32) == Cast("f4")
    assert hash(Cast("float32")) == hash(Cast(np.float32))


def test_ops_are_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Elemwise("add").name = "mul"


def test_props_and_str():
    assert Scale(3.0).props() == {"factor": 3.0}
    assert str(Scale(3.0)) == "Scale{3.0}"
    assert str(Split()) == "Split"
    assert str(Elemwise("add")) == "Elemwise{add}"
    assert Plain().props() == {}
    assert Plain() != Plain()


def test_base_op_methods_name_the_class_when_missing():
    with pytest.raises(NotImplementedError, match="Plain.make_node"):
        Plain().make_node()
    with pytest.raises(NotImplementedError, match="Plain.perform"):
        Plain().perform(None, [])
    assert Plain().inner_graphs() == ()


def test_op_call_returns_single_output_or_list():
    x = VEC.make_variable(name="x")
    y = Scale(2.0)(x)
    assert isinstance(y, Variable) and y.owner.op == Scale(2.0) and y.owner.inputs == [x]
    outs = Split()(x)
    assert isinstance(outs, list) and len(outs) == 2
    assert outs[0].owner is outs[1].owner
    assert [o.index for o in outs] == [0, 1]


# ---------------------------------------------------------------------------- Apply
def test_apply_owns_its_outputs():
    x = VEC.make_variable(name="x")
    node = Apply(Split(), [x], [VEC, TensorType("int8", ())])
    assert [o.owner for o in node.outputs] == [node, node]
    assert [o.index for o in node.outputs] == [0, 1]
    assert node.outputs[1].type == TensorType("int8", ())
    with pytest.raises(ValueError, match="2 outputs"):
        _ = node.out
    assert Scale()(x).owner.out.owner.op == Scale()


def test_apply_inputs_is_a_fresh_list():
    x = VEC.make_variable()
    inputs = [x]
    node = Apply(Scale(), inputs, [VEC])
    inputs.append(x)
    assert node.inputs == [x]


def test_clone_with_new_inputs_same_types_keeps_types_names_and_tags():
    x, y = T.vector("x"), T.vector("y")
    z, built_at = T.exp(x), (__file__, inspect.currentframe().f_lineno)
    z.name = "z"
    z.tag["note"] = 1
    z.owner.tag["n"] = 2
    new = z.owner.clone_with_new_inputs([y])
    assert new is not z.owner and new.op == z.owner.op
    assert new.inputs == [y]
    assert new.outputs[0].type == z.type and new.outputs[0].name == "z"
    assert new.outputs[0].tag == {"note": 1} and new.outputs[0].tag is not z.tag
    assert new.tag == {"n": 2, "built_at": built_at}  # the user line that built z, for pictures
    assert z.owner.inputs == [x]


def test_clone_with_new_inputs_reinfers_types():
    x, x3 = T.vector("x"), T.tensor("float32", (3,), name="x3")
    z = T.exp(x)
    new = z.owner.clone_with_new_inputs([x3])
    assert new.outputs[0].type == TensorType("float32", (3,))


def test_apply_repr_shows_op_and_inputs():
    x = T.vector("x")
    assert repr((x + x).owner) == "Elemwise{add}(x, x)"


# ---------------------------------------------------------------------------- variables
def test_variable_repr_name_producer_or_type():
    x = T.vector("x")
    assert repr(x) == "x"
    assert repr(T.exp(x)) == "Elemwise{exp}"
    assert repr(T.vector()) == "<float64[?]>"
    a, b = Split()(x)
    assert repr(b) == "Split.1"


def test_variable_clone_is_a_fresh_root_of_the_same_type():
    x = T.exp(T.vector("x"))
    x.name = "e"
    x.tag["k"] = 1
    c = x.clone()
    assert c is not x and c.owner is None and c.type == x.type and c.name == "e"
    assert c.tag == {"k": 1} and c.tag is not x.tag
    assert type(c) is type(x)
    assert x.clone(name="other").name == "other"


def test_constant_data_is_a_read_only_copy():
    value = np.arange(3.0)
    c = T.constant(value)
    value[0] = 100
    assert c.data[0] == 0 and c.value is c.data
    with pytest.raises(ValueError):
        c.data[0] = 5


def test_constant_signature_equal_for_equal_values():
    a, b = T.constant(np.array([1.0, 2.0])), T.constant(np.array([1.0, 2.0]))
    assert a.signature() == b.signature()
    assert a.signature() != T.constant(np.array([1.0, 3.0])).signature()
    assert a.signature() != T.constant(np.array([1.0, 2.0], dtype="float32")).signature()
    assert T.constant(0.0).signature() != T.constant(-0.0).signature()
    assert T.constant(np.nan).signature() == T.constant(np.nan).signature()


def test_constant_clone_is_equal_valued():
    c = T.constant(np.array([1, 2]), name="c")
    d = c.clone()
    assert isinstance(d, Constant) and d is not c and d.name == "c"
    assert d.signature() == c.signature()


def test_shared_variable_clone_keeps_identity():
    s = ss.shared(np.zeros(2), name="s")
    assert isinstance(s, SharedVariable)
    assert s.clone() is s


def test_describe_names_variables():
    x = T.vector("x")
    assert describe(x) == "'x' (float64[?])"
    assert "constant" in describe(T.constant(1.0))
    assert describe(T.exp(x)).startswith("the output of Elemwise{exp}")
    assert describe(T.vector()) == "an unnamed input (float64[?])"


def test_variable_eval_needs_no_compile_import_when_symscan_is_imported():
    x = T.vector("x")
    np.testing.assert_allclose((x * 2).eval({x: np.array([1.0, 2.0])}), [2.0, 4.0])
    np.testing.assert_allclose(both_modes.evaluate(x * 2, {x: np.array([1.0, 2.0])}), [2.0, 4.0])
