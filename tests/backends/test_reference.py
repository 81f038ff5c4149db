"""The reference interpreter: toposort then perform, with error context and output checks.

Where the behaviour is not the interpreter's own (its output-type check, its order of
evaluation), the fast evaluator (mode "fast") is checked to behave the same way."""

from dataclasses import dataclass, field

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.backends.fast.evaluator import FastEvaluator
from symscan.backends.reference import ReferenceEvaluator, check_value
from symscan.graph import Apply, FunctionGraph, Op, TensorType


@dataclass(frozen=True)
class Logged(Op):
    """Adds ``amount`` and appends ``tag`` to ``log`` when performed (records the order)."""

    tag: str
    amount: float = 1.0
    log: list = field(default_factory=list, compare=False, hash=False)

    def make_node(self, *inputs):
        inputs = [T.as_tensor_variable(i) for i in inputs]
        return Apply(self, inputs, [inputs[0].type])

    def perform(self, node, inputs):
        self.log.append(self.tag)
        return [sum(inputs) + self.amount]


@dataclass(frozen=True)
class Buggy(Op):
    """Promises ``declared`` but returns ``actual_dtype`` values of ``actual_shape`` (or a float)."""

    declared: TensorType
    actual_dtype: str = "float64"
    actual_shape: tuple | None = None
    python_float: bool = False

    def make_node(self, x):
        return Apply(self, [T.as_tensor_variable(x)], [self.declared])

    def perform(self, node, inputs):
        if self.python_float:
            return [1.0]
        shape = np.shape(inputs[0]) if self.actual_shape is None else self.actual_shape
        return [np.zeros(shape, dtype=self.actual_dtype)]


@dataclass(frozen=True)
class TooMany(Op):
    """Returns two values for a one-output node."""

    def make_node(self, x):
        return Apply(self, [x], [x.type])

    def perform(self, node, inputs):
        return [inputs[0], inputs[0]]


@dataclass(frozen=True)
class Raises(Op):
    """Raises ``exc_type`` at run time."""

    exc_type: type = ZeroDivisionError

    def make_node(self, x):
        return Apply(self, [x], [x.type])

    def perform(self, node, inputs):
        raise self.exc_type("deliberate failure")


class OddError(Exception):
    """An exception whose constructor takes two arguments."""

    def __init__(self, code, text):
        super().__init__(f"{code}: {text}")


@dataclass(frozen=True)
class RaisesOdd(Op):
    def make_node(self, x):
        return Apply(self, [x], [x.type])

    def perform(self, node, inputs):
        raise OddError(7, "odd")


def test_evaluates_in_topological_order():
    log: list = []
    x = T.vector("x")
    a = Logged("a", log=log)(x)
    b = Logged("b", log=log)(a)
    c = Logged("c", log=log)(a)
    d = Logged("d", log=log)(c, b)  # reads c before b
    fg = FunctionGraph([x], [d], clone=False)
    evaluator = ReferenceEvaluator(fg)
    result = evaluator([np.array([0.0, 1.0])])
    assert log.index("a") < log.index("b") < log.index("d")
    assert log.index("a") < log.index("c") < log.index("d")
    assert log == [n.op.tag for n in evaluator.order]
    assert len(log) == 4  # a is computed once although two nodes read it
    xv = np.array([0.0, 1.0])
    av = xv + 1
    np.testing.assert_array_equal(result[0], (av + 1) + (av + 1) + 1)


@pytest.mark.parametrize("evaluator", [ReferenceEvaluator, FastEvaluator], ids=["reference", "fast"])
def test_evaluates_constants_shared_and_inputs_as_outputs(evaluator):
    x = T.vector("x")
    s = ss.shared(np.array([2.0, 3.0]), name="s")
    k = T.constant(np.array([10.0, 20.0]))
    fg = FunctionGraph([x], [x, k, x * s + k], clone=False)
    xv = np.array([1.0, 1.0])
    out = evaluator(fg)([xv], {s: s.get_value()})
    np.testing.assert_array_equal(out[0], xv)
    np.testing.assert_array_equal(out[1], [10.0, 20.0])
    np.testing.assert_array_equal(out[2], [12.0, 23.0])


def test_wrong_number_of_input_values_is_an_error():
    x, y = T.vector("x"), T.vector("y")
    evaluator = ReferenceEvaluator(FunctionGraph([x, y], [x + y]))
    with pytest.raises(ValueError):
        evaluator([np.ones(2)])


def test_runtime_error_names_the_op_and_input_types(mode):
    x = T.vector("x")
    f = ss.function([x], Raises()(T.exp(x)), mode=mode)
    with pytest.raises(ZeroDivisionError) as info:
        f(np.ones(2))
    text = str(info.value)
    assert "deliberate failure" in text
    assert "Raises" in text and "float64[?]" in text
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_runtime_numpy_error_names_the_elemwise_op(mode):
    x, y = T.vector("x"), T.vector("y")
    f = ss.function([x, y], x + y, mode=mode)
    with pytest.raises(ValueError, match=r"broadcast.*while evaluating Elemwise\{add\}.*'?x'?: float64\[\?\]"):
        f(np.ones(2), np.ones(3))


def test_runtime_error_with_an_unusual_constructor_keeps_its_type(mode):
    x = T.vector("x")
    f = ss.function([x], RaisesOdd()(x), mode=mode)
    with pytest.raises(OddError) as info:
        f(np.ones(2))
    text = str(info.value) + " ".join(getattr(info.value, "__notes__", []))
    assert "7: odd" in text and "RaisesOdd" in text


@pytest.mark.parametrize("op, wrong", [
    (Buggy(TensorType("float64", (None,)), actual_dtype="float32"), "float32"),
    (Buggy(TensorType("float64", (None,)), actual_shape=(2, 2)), "(2, 2)"),
    (Buggy(TensorType("float64", (3,)), actual_shape=(4,)), "(4,)"),
    (Buggy(TensorType("float64", ()), python_float=True), "float"),
])
def test_output_type_check_catches_a_buggy_op(op, wrong):
    x = T.vector("x")
    f = ss.function([x], op(x), mode="py")
    with pytest.raises(AssertionError, match="a bug in the op") as info:
        f(np.ones(3))
    assert "Buggy" in str(info.value) and wrong in str(info.value)


def test_output_type_check_accepts_correct_values():
    x = T.vector("x")
    ok = Buggy(TensorType("float64", (None,)))
    np.testing.assert_array_equal(ss.function([x], ok(x), mode="py")(np.ones(3)), np.zeros(3))
    np.testing.assert_array_equal(ss.function([x], ok(x), mode="fast")(np.ones(3)), np.zeros(3))
    node = ok.make_node(x)
    check_value(node.outputs[0], np.zeros(5), node)
    check_value(node.outputs[0], np.zeros(0), node)
    with pytest.raises(AssertionError):
        check_value(node.outputs[0], np.zeros(5, dtype="int64"), node)


def test_wrong_number_of_results_names_the_op():
    x = T.vector("x")
    f = ss.function([x], TooMany()(x), mode="py")
    with pytest.raises(AssertionError, match="TooMany returned 2 value"):
        f(np.ones(2))


def test_interpreter_matches_numpy_on_a_mixed_graph(rng):
    x, w = T.matrix("x"), T.matrix("w")
    h = T.tanh(T.dot(x, w))
    out = [h.sum(axis=1), T.maximum(h, 0.0).mean(), (h > 0).sum()]
    xv, wv = rng.standard_normal((5, 3)), rng.standard_normal((3, 4))
    hv = np.tanh(xv @ wv)
    fg = FunctionGraph([x, w], out)
    got = ReferenceEvaluator(fg)([xv, wv])
    np.testing.assert_allclose(got[0], hv.sum(axis=1))
    np.testing.assert_allclose(got[1], np.maximum(hv, 0.0).mean())
    assert got[2] == (hv > 0).sum()
    # the fast evaluator on the same (unrewritten) graph: exactly the same values and types
    fast = FastEvaluator(fg)([xv, wv])
    for f, g in zip(fast, got):
        assert type(f) is type(g) and np.shape(f) == np.shape(g) and np.asarray(f).dtype == np.asarray(g).dtype
        np.testing.assert_array_equal(f, g)
