"""function(): outputs, updates, givens, input checks, modes, aliasing; shared(); Variable.eval.

Tests that take the ``mode`` fixture run in mode "py" and in mode "fast"; ``both_modes`` runs a
graph in both and requires the same results (tests/support/both_modes.py)."""

from dataclasses import dataclass

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.compile import MODES, get_mode
from symscan.graph import Apply, Op

import both_modes


@dataclass(frozen=True)
class FailAbove(Op):
    """Returns its input, but raises at run time when any element exceeds ``limit``."""

    limit: float

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type])

    def perform(self, node, inputs):
        if np.any(inputs[0] > self.limit):
            raise RuntimeError(f"value above {self.limit}")
        return [inputs[0].copy()]


# ---------------------------------------------------------------------------- outputs
def test_single_output_is_returned_bare(mode):
    x = T.vector("x")
    f = ss.function([x], x * 2.0, mode=mode)
    out = f(np.array([1.0, 2.0]))
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, [2.0, 4.0])


def test_list_of_outputs_is_returned_as_a_list(mode):
    x = T.vector("x")
    xv = np.array([1.0, -2.0, 3.0])
    out = ss.function([x], [x * 2.0], mode=mode)(xv)
    assert isinstance(out, list) and len(out) == 1
    np.testing.assert_array_equal(out[0], xv * 2.0)
    outs = ss.function([x], (x.sum(), T.exp(x)), mode=mode)(xv)
    assert isinstance(outs, list) and len(outs) == 2
    assert outs[0] == pytest.approx(xv.sum())
    np.testing.assert_allclose(outs[1], np.exp(xv))


def test_no_outputs_returns_an_empty_list(mode):
    x = T.vector("x")
    assert ss.function([x], [], mode=mode)(np.ones(2)) == []
    assert ss.function([x], mode=mode)(np.ones(2)) == []


def test_output_dtype_and_shape_follow_numpy(mode, rng):
    a, b = T.imatrix("a"), T.fvector("b")
    av = rng.integers(-5, 5, size=(3, 4)).astype("int32")
    bv = rng.standard_normal(4).astype("float32")
    out = ss.function([a, b], a * b, mode=mode)(av, bv)
    expected = av * bv
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_allclose(out, expected)


def test_constant_output(mode):
    f = ss.function([], T.constant(np.array([1.0, 2.0])), mode=mode)
    np.testing.assert_array_equal(f(), [1.0, 2.0])


def test_input_returned_as_output(mode):
    x = T.vector("x")
    f = ss.function([x], x, mode=mode)
    xv = np.array([1.0, 2.0])
    np.testing.assert_array_equal(f(xv), xv)


# ---------------------------------------------------------------------------- updates
def test_updates_dict_apply_after_the_call(mode):
    s = ss.shared(np.array([0.0, 1.0]), name="s")
    x = T.vector("x")
    f = ss.function([x], s * 1.0, updates={s: s + x}, mode=mode)
    out = f(np.array([1.0, 1.0]))
    np.testing.assert_array_equal(out, [0.0, 1.0])  # the value before the update
    np.testing.assert_array_equal(s.get_value(), [1.0, 2.0])
    out = f(np.array([10.0, 10.0]))
    np.testing.assert_array_equal(out, [1.0, 2.0])
    np.testing.assert_array_equal(s.get_value(), [11.0, 12.0])


def test_updates_as_list_of_pairs(mode):
    s, t = ss.shared(1.0, name="s"), ss.shared(5, name="t")
    f = ss.function([], [], updates=[(s, s * 2.0), (t, t - 1)], mode=mode)
    for _ in range(3):
        f()
    assert s.get_value() == 8.0 and t.get_value() == 2
    assert s.get_value().dtype == np.float64 and t.get_value().dtype == np.int64


def test_updates_use_values_from_before_the_call(mode):
    a = ss.shared(np.array([1.0, 2.0]), name="a")
    b = ss.shared(np.array([3.0, 4.0]), name="b")
    swap = ss.function([], [], updates={a: b, b: a}, mode=mode)
    swap()
    np.testing.assert_array_equal(a.get_value(), [3.0, 4.0])
    np.testing.assert_array_equal(b.get_value(), [1.0, 2.0])
    swap()
    np.testing.assert_array_equal(a.get_value(), [1.0, 2.0])
    np.testing.assert_array_equal(b.get_value(), [3.0, 4.0])


def test_fibonacci_updates_read_old_values(mode):
    a, b = ss.shared(0, name="a"), ss.shared(1, name="b")
    step = ss.function([], a, updates=[(a, b), (b, a + b)], mode=mode)
    seen = [int(step()) for _ in range(10)]
    assert seen == [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]


def test_update_with_python_scalar(mode):
    s = ss.shared(np.zeros(()), name="s")
    c = ss.shared(7, name="c")
    ss.function([], [], updates={s: 3, c: 0}, mode=mode)()
    assert s.get_value() == 3.0 and s.get_value().dtype == np.float64
    assert c.get_value() == 0


def test_update_changes_length_but_not_ndim(mode):
    s = ss.shared(np.arange(3.0), name="s")
    f = ss.function([], [], updates={s: T.concatenate([s, s])}, mode=mode)
    f()
    np.testing.assert_array_equal(s.get_value(), [0, 1, 2, 0, 1, 2])


def test_update_with_wrong_dtype_is_rejected_when_building():
    s = ss.shared(np.zeros(2), name="s")
    x = T.fvector("x")
    with pytest.raises(TypeError) as info:
        ss.function([x], [], updates={s: x})
    text = str(info.value)
    assert "float64" in text and "float32" in text and "'s'" in text


def test_update_with_wrong_ndim_is_rejected():
    s = ss.shared(np.zeros(2), name="s")
    with pytest.raises(TypeError, match="1 dimension"):
        ss.function([], [], updates={s: s.sum()})


def test_update_with_a_lossy_python_scalar_is_rejected():
    c = ss.shared(0, name="c")
    with pytest.raises(TypeError, match="'c'"):
        ss.function([], [], updates={c: 1.5})
    with pytest.raises(TypeError):
        ss.function([], [], updates={ss.shared(np.int8(0)): 1000})


def test_update_of_a_non_shared_variable_is_rejected():
    x = T.vector("x")
    with pytest.raises(TypeError, match="only shared variables"):
        ss.function([x], x, updates={x: x + 1.0})


def test_same_shared_variable_updated_twice_is_rejected():
    s = ss.shared(1.0, name="s")
    with pytest.raises(ValueError, match="twice"):
        ss.function([], [], updates=[(s, s + 1.0), (s, s * 2.0)])


@pytest.mark.parametrize("updates", [42, [(1, 2, 3)]])
def test_malformed_updates_are_rejected(updates):
    with pytest.raises(TypeError, match="updates"):
        ss.function([], [], updates=updates)


# ---------------------------------------------------------------------------- failing calls
def test_runtime_shape_error_leaves_shared_state_unchanged(mode):
    s = ss.shared(np.array([1.0, 2.0]), name="s")
    t = ss.shared(np.array([5.0]), name="t")
    x = T.vector("x")
    f = ss.function([x], [], updates={t: t + 1.0, s: s + x}, mode=mode)
    with pytest.raises(ValueError):
        f(np.ones(3))  # cannot broadcast (2,) with (3,)
    np.testing.assert_array_equal(s.get_value(), [1.0, 2.0])
    np.testing.assert_array_equal(t.get_value(), [5.0])
    f(np.ones(2))
    np.testing.assert_array_equal(s.get_value(), [2.0, 3.0])
    np.testing.assert_array_equal(t.get_value(), [6.0])


def test_op_raising_at_run_time_leaves_shared_state_unchanged(mode):
    s = ss.shared(np.array([1.0, 2.0]), name="s")
    counter = ss.shared(0, name="counter")
    x = T.vector("x")
    f = ss.function([x], s, updates={s: FailAbove(10.0)(s + x), counter: counter + 1}, mode=mode)
    f(np.array([1.0, 1.0]))
    assert counter.get_value() == 1
    with pytest.raises(RuntimeError, match="above 10.0"):
        f(np.array([100.0, 0.0]))
    np.testing.assert_array_equal(s.get_value(), [2.0, 3.0])
    assert counter.get_value() == 1


def test_index_error_at_run_time_leaves_shared_state_unchanged(mode):
    s = ss.shared(np.array([1.0, 2.0, 3.0]), name="s")
    i = T.lscalar("i")
    f = ss.function([i], s[i], updates={s: s * 2.0}, mode=mode)
    assert f(1) == 2.0
    with pytest.raises(IndexError):
        f(10)
    np.testing.assert_array_equal(s.get_value(), [2.0, 4.0, 6.0])


def test_bad_input_leaves_shared_state_unchanged(mode):
    s = ss.shared(np.array([1.0]), name="s")
    x = T.vector("x")
    f = ss.function([x], [], updates={s: s + x.sum()}, mode=mode)
    with pytest.raises(TypeError):
        f(np.ones(2, dtype="complex128"))
    with pytest.raises(ValueError):
        f(np.ones((2, 2)))
    np.testing.assert_array_equal(s.get_value(), [1.0])


# ---------------------------------------------------------------------------- givens
def test_givens_replace_an_input_by_an_expression(mode):
    x, y = T.vector("x"), T.vector("y")
    f = ss.function([y], (x * 2.0).sum(), givens={x: y + 1.0}, mode=mode)
    yv = np.array([1.0, 2.0, 3.0])
    assert f(yv) == pytest.approx(((yv + 1.0) * 2.0).sum())


def test_givens_replace_a_shared_variable_by_a_constant(mode):
    s = ss.shared(np.array([1.0, 2.0]), name="s")
    x = T.vector("x")
    f = ss.function([x], x * s, givens={s: T.constant(np.array([10.0, 20.0]))}, mode=mode)
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [10.0, 40.0])
    assert s not in f.fgraph.shared_variables
    s.set_value(np.array([0.0, 0.0]))
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [10.0, 40.0])


def test_givens_replace_a_shared_variable_by_another(mode):
    s = ss.shared(np.array([1.0, 2.0]), name="s")
    other = ss.shared(np.array([3.0, 4.0]), name="other")
    f = ss.function([], s * 2.0, givens=[(s, other)], mode=mode)
    np.testing.assert_array_equal(f(), [6.0, 8.0])


def test_givens_apply_to_updates_too(mode):
    s = ss.shared(np.array([1.0]), name="s")
    x, y = T.vector("x"), T.vector("y")
    f = ss.function([y], [], updates={s: s + x}, givens={x: y * 3.0}, mode=mode)
    f(np.array([2.0]))
    np.testing.assert_array_equal(s.get_value(), [7.0])


def test_givens_with_an_incompatible_type_are_rejected():
    x = T.vector("x")
    with pytest.raises(TypeError, match="givens"):
        ss.function([], x * 2.0, givens={x: T.ivector("i")})
    with pytest.raises(TypeError, match="givens"):
        ss.function([], x * 2.0, givens={x: T.matrix("m")})
    with pytest.raises(TypeError, match="givens"):
        ss.function([], x * 2.0, givens={"x": x})


def test_givens_do_not_change_the_user_graph():
    x, y = T.vector("x"), T.vector("y")
    out = x * 2.0
    ss.function([y], out, givens={x: y})
    assert out.owner.inputs[0] is x
    f = both_modes.function([x], out)
    np.testing.assert_array_equal(f(np.array([1.0])), [2.0])


# ---------------------------------------------------------------------------- input checks
def test_wrong_number_of_inputs_is_a_type_error_naming_them(mode):
    x, y = T.vector("x"), T.vector("y")
    f = ss.function([x, y], x + y, name="adder", mode=mode)
    with pytest.raises(TypeError, match=r"'adder' takes 2 input.*'x', 'y'.*got 1"):
        f(np.ones(2))
    with pytest.raises(TypeError, match="got 3"):
        f(np.ones(2), np.ones(2), np.ones(2))


def test_lossy_dtype_is_a_type_error_naming_the_input(mode):
    x, y = T.vector("x"), T.ivector("counts")
    f = ss.function([x, y], x * y, mode=mode)
    with pytest.raises(TypeError, match=r"input 1 \('counts'\).*int32.*int64"):
        f(np.ones(2), np.ones(2, dtype="int64"))
    with pytest.raises(TypeError, match=r"input 1 \('counts'\)"):
        f(np.ones(2), [1.5, 2.0])
    with pytest.raises(TypeError, match=r"input 0 \('x'\)"):
        f(np.ones(2, dtype="complex64"), np.ones(2, dtype="int32"))


def test_wrong_ndim_is_a_value_error_naming_the_input(mode):
    x = T.matrix("weights")
    f = ss.function([x], x.sum(), mode=mode)
    with pytest.raises(ValueError, match=r"'weights'.*2 dimension"):
        f(np.ones(3))


def test_static_shape_mismatch_is_a_value_error(mode):
    x = T.tensor("float64", (None, 3), name="rows")
    f = ss.function([x], x.sum(), mode=mode)
    assert f(np.ones((2, 3))) == 6.0
    with pytest.raises(ValueError, match=r"'rows'.*length 3 on axis 1"):
        f(np.ones((2, 4)))


def test_python_int_accepted_for_int32_input(mode):
    i = T.iscalar("i")
    f = ss.function([i], i * 2, mode=mode)
    out = f(21)
    assert out == 42 and out.dtype == np.int32
    with pytest.raises(TypeError):
        f(2**40)
    with pytest.raises(TypeError):
        f(1.5)


def test_safe_numpy_cast_and_python_floats_accepted(mode):
    x = T.fvector("x")
    f = ss.function([x], x * 2, mode=mode)
    out = f(np.array([1, 2], dtype="int8"))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [2.0, 4.0])
    np.testing.assert_array_equal(f([0.5, 1.5]), np.array([1.0, 3.0], dtype="float32"))
    with pytest.raises(TypeError):
        f(np.array([1.0], dtype="float64"))


def test_shared_variable_as_input_is_rejected():
    s = ss.shared(np.ones(2), name="s")
    with pytest.raises(TypeError, match="shared variable"):
        ss.function([s], s * 2.0)


def test_non_root_input_is_rejected():
    x = T.vector("x")
    with pytest.raises(TypeError, match="not a root variable"):
        ss.function([x * 2.0], x)
    with pytest.raises(TypeError, match="not a root variable"):
        ss.function([T.constant(1.0)], x)


def test_other_malformed_inputs_are_rejected():
    x = T.vector("x")
    with pytest.raises(TypeError, match="list of variables"):
        ss.function(x, x)
    with pytest.raises(TypeError, match=r"inputs\[1\]"):
        ss.function([x, np.ones(2)], x)
    with pytest.raises(ValueError, match="twice"):
        ss.function([x, x], x)


def test_missing_input_is_reported_when_building():
    x, y = T.vector("x"), T.vector("forgotten")
    with pytest.raises(ss.MissingInputError, match="'forgotten'"):
        ss.function([x], x + y)


def test_unused_input_is_accepted(mode):
    x, y = T.vector("x"), T.vector("y")
    f = ss.function([x, y], x * 2.0, mode=mode)
    np.testing.assert_array_equal(f(np.ones(2), np.ones(5)), [2.0, 2.0])


# ---------------------------------------------------------------------------- modes
def test_modes_agree(rng):
    x, w = T.matrix("x"), T.vector("w")
    s = ss.shared(np.array(0.5), name="s")
    out = [T.tanh(T.dot(x, w) + s) * (x.sum() + 1.0) + (x.sum() + 1.0), T.exp(x).max(axis=0)]
    xv, wv = rng.standard_normal((4, 3)), rng.standard_normal(3)
    expected = [np.tanh(xv @ wv + 0.5) * (xv.sum() + 1.0) + (xv.sum() + 1.0), np.exp(xv).max(axis=0)]
    for mode in (None, "py", "fast", "PY", get_mode("fast")):
        got = ss.function([x, w], out, mode=mode)(xv, wv)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-12)
    both_modes.run([x, w], out, xv, wv)  # and "fast" gives exactly what "py" gives


def test_default_mode_is_fast():
    f = ss.function([], T.constant(1.0))
    assert f.mode is MODES["fast"] and "fast" in repr(f)
    assert ss.function([], T.constant(1.0), mode="py").mode.rewrites == ()


@pytest.mark.parametrize("bad", ["bogus", "", 3])
def test_unknown_mode_is_a_value_error(bad):
    x = T.vector("x")
    with pytest.raises(ValueError, match="unknown mode.*'py'"):
        ss.function([x], x, mode=bad)


# ---------------------------------------------------------------------------- aliasing
def test_mutating_an_output_does_not_change_shared_state(mode):
    s = ss.shared(np.array([1.0, 2.0]), name="s")
    f = ss.function([], s, mode=mode)
    out = f()
    out[0] = 100.0
    np.testing.assert_array_equal(s.get_value(), [1.0, 2.0])
    np.testing.assert_array_equal(f(), [1.0, 2.0])


def test_outputs_do_not_alias_inputs(mode):
    x = T.vector("x")
    f = ss.function([x], [x, x.T, x * 1.0], mode=mode)
    xv = np.array([1.0, 2.0])
    outs = f(xv)
    for out in outs:
        assert not np.shares_memory(out, xv)
        out[0] = -7.0
    np.testing.assert_array_equal(xv, [1.0, 2.0])


def test_outputs_do_not_alias_each_other(mode):
    x = T.vector("x")
    f = ss.function([x], [x * 2.0, x * 2.0, x + 1.0], mode=mode)
    a, b, c = f(np.array([1.0, 2.0]))
    assert not np.shares_memory(a, b)
    a[0] = 50.0
    np.testing.assert_array_equal(b, [2.0, 4.0])


def test_outputs_are_writable_even_for_constants(mode):
    f = ss.function([], [T.constant(np.array([1.0, 2.0])), T.constant(np.arange(4.0)).reshape((2, 2))],
                    mode=mode)
    first, second = f()
    first[0] = 9.0
    second[0, 0] = 9.0
    np.testing.assert_array_equal(f()[0], [1.0, 2.0])
    np.testing.assert_array_equal(f()[1], [[0.0, 1.0], [2.0, 3.0]])


def test_output_does_not_alias_the_new_state(mode):
    s = ss.shared(np.array([1.0]), name="s")
    f = ss.function([], s + 1.0, updates={s: s + 1.0}, mode=mode)
    out = f()
    out[0] = 100.0
    np.testing.assert_array_equal(s.get_value(), [2.0])


def test_update_from_an_input_does_not_alias_the_callers_array(mode):
    s = ss.shared(np.zeros(2), name="s")
    x = T.vector("x")
    f = ss.function([x], [], updates={s: x}, mode=mode)
    xv = np.array([1.0, 2.0])
    f(xv)
    xv[0] = 99.0
    np.testing.assert_array_equal(s.get_value(), [1.0, 2.0])


def test_shared_variables_do_not_alias_each_other_after_updates(mode):
    a = ss.shared(np.array([1.0, 2.0]), name="a")
    b = ss.shared(np.array([3.0, 4.0]), name="b")
    c = ss.shared(np.array([0.0, 0.0]), name="c")
    f = ss.function([], [], updates={a: b, c: b * 2.0 + 0.0, b: b * 2.0 + 0.0}, mode=mode)
    f()
    values = [v.get_value(borrow=True) for v in (a, b, c)]
    for i in range(3):
        for j in range(i + 1, 3):
            assert not np.shares_memory(values[i], values[j])
    np.testing.assert_array_equal(a.get_value(), [3.0, 4.0])
    np.testing.assert_array_equal(b.get_value(), [6.0, 8.0])
    np.testing.assert_array_equal(c.get_value(), [6.0, 8.0])
    kept = ss.shared(np.array([-1.0, -2.0]), name="kept")
    ss.function([], [], updates={a: kept}, mode=mode)()  # kept is read, not updated
    assert not np.shares_memory(a.get_value(borrow=True), kept.get_value(borrow=True))
    np.testing.assert_array_equal(a.get_value(), [-1.0, -2.0])


def test_function_graph_is_a_copy():
    x = T.vector("x")
    out = T.exp(x)
    f = ss.function([x], out)
    assert f.fgraph.inputs[0] is not x
    assert out.owner not in f.fgraph.apply_nodes
    assert f.inputs == [x] and f.outputs == [out]


# ---------------------------------------------------------------------------- Variable.eval
def test_eval_with_givens_dict():
    x, y = T.vector("x"), T.scalar("y")
    out = x * y + 1.0
    xv = np.array([1.0, 2.0])
    np.testing.assert_allclose(out.eval({x: xv, y: 3.0}), xv * 3.0 + 1.0)
    np.testing.assert_allclose(out.eval({y: 2.0, x: xv}), xv * 2.0 + 1.0)
    np.testing.assert_allclose(both_modes.evaluate(out, {x: xv, y: 3.0}), xv * 3.0 + 1.0)
    np.testing.assert_allclose(both_modes.evaluate(out, {y: 2.0, x: xv}), xv * 2.0 + 1.0)


def test_eval_without_inputs_reads_shared_values():
    s = ss.shared(np.array([1.0, 2.0]), name="s")
    out = (s * 2.0).sum()
    assert out.eval() == 6.0
    assert both_modes.evaluate(out) == 6.0
    s.set_value(np.array([5.0, 5.0]))
    assert out.eval() == 20.0
    assert both_modes.evaluate(out) == 20.0


def test_eval_of_a_constant_and_missing_inputs():
    assert T.constant(3.0).eval() == 3.0
    assert both_modes.evaluate(T.constant(3.0)) == 3.0
    x = T.vector("x")
    with pytest.raises(ss.MissingInputError, match="'x'"):
        (x + 1.0).eval()
    with pytest.raises(ss.MissingInputError, match="'x'"):
        both_modes.evaluate(x + 1.0)


# ---------------------------------------------------------------------------- shared()
def test_shared_dtype_and_type():
    assert ss.shared(3).dtype == "int64"
    assert ss.shared(3.0).dtype == "float64"
    assert ss.shared(np.zeros((2, 3), dtype="float32")).type == ss.TensorType("float32", (None, None))
    with pytest.raises(TypeError, match="numeric"):
        ss.shared("text")


def test_shared_keeps_a_copy_of_its_initial_value():
    value = np.array([1.0, 2.0])
    s = ss.shared(value, name="s")
    value[0] = 50.0
    np.testing.assert_array_equal(s.get_value(), [1.0, 2.0])


def test_get_value_returns_a_copy_unless_borrowed():
    s = ss.shared(np.array([1.0, 2.0]), name="s")
    v = s.get_value()
    v[0] = -1.0
    np.testing.assert_array_equal(s.get_value(), [1.0, 2.0])
    assert s.get_value() is not s.get_value()
    assert s.get_value(borrow=True) is s.get_value(borrow=True)


def test_set_value_copies_unless_borrowed():
    s = ss.shared(np.zeros(2), name="s")
    new = np.array([3.0, 4.0])
    s.set_value(new)
    new[0] = 99.0
    np.testing.assert_array_equal(s.get_value(), [3.0, 4.0])
    buffer = np.array([5.0, 6.0])
    s.set_value(memoryview(buffer))
    buffer[0] = 99.0
    np.testing.assert_array_equal(s.get_value(), [5.0, 6.0])
    s.set_value(buffer, borrow=True)
    assert s.get_value(borrow=True) is buffer


def test_set_value_safe_casts_and_length_changes():
    s = ss.shared(np.zeros(2), name="s")
    s.set_value(np.array([1, 2, 3], dtype="int32"))
    assert s.get_value().dtype == np.float64
    np.testing.assert_array_equal(s.get_value(), [1.0, 2.0, 3.0])
    s.set_value([0.5])
    np.testing.assert_array_equal(s.get_value(), [0.5])


def test_set_value_lossy_cast_raises_and_leaves_value_unchanged():
    s = ss.shared(np.array([1.0, 2.0], dtype="float32"), name="weights")
    with pytest.raises(TypeError, match="'weights'.*float32.*float64"):
        s.set_value(np.array([3.0, 4.0]))
    np.testing.assert_array_equal(s.get_value(), [1.0, 2.0])
    i = ss.shared(np.array([1, 2], dtype="int32"), name="counts")
    with pytest.raises(TypeError, match="'counts'"):
        i.set_value([1.5, 2.0])
    np.testing.assert_array_equal(i.get_value(), [1, 2])


def test_set_value_wrong_ndim_raises_and_leaves_value_unchanged():
    s = ss.shared(np.array([1.0, 2.0]), name="s")
    with pytest.raises(ValueError, match="1 dimension"):
        s.set_value(np.ones((2, 2)))
    np.testing.assert_array_equal(s.get_value(), [1.0, 2.0])


def test_strict_shared_requires_the_exact_dtype():
    s = ss.shared(np.array([1.0, 2.0]), name="s", strict=True)
    with pytest.raises(TypeError, match="'s'"):
        s.set_value(np.array([1.0, 2.0], dtype="float32"))
    with pytest.raises(TypeError):
        s.set_value([1, 2])
    np.testing.assert_array_equal(s.get_value(), [1.0, 2.0])
    s.set_value(np.array([7.0]))
    np.testing.assert_array_equal(s.get_value(), [7.0])
    loose = ss.shared(np.array([1.0, 2.0]), name="loose")
    loose.set_value(np.array([1.0], dtype="float32"))
    assert loose.get_value().dtype == np.float64


def test_set_value_is_seen_by_compiled_functions(mode):
    s = ss.shared(np.array([1.0]), name="s")
    f = ss.function([], s * 2.0, mode=mode)
    np.testing.assert_array_equal(f(), [2.0])
    s.set_value(np.array([4.0, 5.0]))
    np.testing.assert_array_equal(f(), [8.0, 10.0])
