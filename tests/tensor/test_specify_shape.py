"""``T.specify_shape(x, shape)``: the static shape goes into the type, the run-time shape is
checked (in every mode, and rewrites keep the check)."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.tensor.shape import SpecifyShape

import both_modes


def _specify_nodes(f):
    return [n for n in f.fgraph.apply_nodes if isinstance(n.op, SpecifyShape)]


# ---------------------------------------------------------------------------- types
def test_the_type_gets_the_static_shape():
    x = T.matrix("x")
    assert T.specify_shape(x, (2, 3)).type == ss.TensorType("float64", (2, 3))
    n = T.lscalar("n")
    assert T.specify_shape(x, (n, 3)).type.shape == (None, 3)
    assert T.specify_shape(T.scalar("s"), ()).type.shape == ()


def test_later_ops_use_the_static_shape():
    x = T.vector("x")
    fixed = T.specify_shape(x, (6,))
    assert fixed.reshape((2, -1)).type.shape == (2, 3)
    n, = fixed.shape
    assert T.get_scalar_constant_value(n) == 6


# ---------------------------------------------------------------------------- values and errors
def test_a_value_of_the_specified_shape_passes_through():
    x = T.matrix("x")
    value = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(both_modes.run([x], T.specify_shape(x, (2, 3)) * 2.0, value), value * 2.0)


@pytest.mark.parametrize("bad", [(3, 2), (2, 4), (1, 3)])
def test_another_shape_is_a_value_error_naming_the_variable(bad):
    x = T.matrix("x")
    f = both_modes.function([x], T.specify_shape(x, (2, 3)) * 2.0)
    expected = rf"specify_shape: 'x' \(float64\[\?, \?\]\) has shape \({bad[0]}, {bad[1]}\) at run time but \(2, 3\)"
    with pytest.raises(ValueError, match=expected):
        f(np.ones(bad))


def test_symbolic_lengths_are_checked_at_run_time():
    x, n = T.vector("x"), T.lscalar("n")
    f = both_modes.function([x, n], T.specify_shape(x, (n,)).sum())
    assert f(np.ones(4), 4) == 4.0
    with pytest.raises(ValueError, match=r"has shape \(4,\) at run time but \(5,\)"):
        f(np.ones(4), 5)


def test_the_shape_of_another_variable():
    x, y = T.matrix("x"), T.matrix("y")
    f = both_modes.function([x, y], T.specify_shape(x, y.shape) + y)
    np.testing.assert_array_equal(f(np.ones((2, 2)), np.ones((2, 2))), np.full((2, 2), 2.0))
    with pytest.raises(ValueError, match="'x'"):
        f(np.ones((2, 3)), np.ones((2, 2)))


def test_a_shape_vector_of_unknown_length_is_checked_too():
    x, shape = T.matrix("x"), T.lvector("shape")
    f = both_modes.function([x, shape], T.specify_shape(x, shape))
    np.testing.assert_array_equal(f(np.ones((2, 3)), [2, 3]), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"'shape' \(int64\[\?\]\) has shape \(3,\).*\(2,\).*one length per dimension"):
        f(np.ones((2, 3)), [2, 3, 1])


def test_a_scalar():
    s = T.scalar("s")
    assert both_modes.run([s], T.specify_shape(s, ()) + 1.0, 2.0) == 3.0


# ---------------------------------------------------------------------------- build-time errors
def test_wrong_number_of_entries():
    with pytest.raises(ValueError, match=r"'x' \(float64\[\?, \?\]\) has 2 dimension\(s\) but the shape has 3 entries"):
        T.specify_shape(T.matrix("x"), (1, 2, 3))


def test_a_length_conflicting_with_the_static_type():
    x = T.tensor("float64", (None, 3), name="x")
    with pytest.raises(ValueError, match=r"axis 1 of 'x' \(float64\[\?, 3\]\) cannot have length 4"):
        T.specify_shape(x, (2, 4))


def test_negative_or_non_integer_lengths():
    with pytest.raises(ValueError, match="cannot have length -1"):
        T.specify_shape(T.vector("x"), (-1,))
    with pytest.raises(TypeError, match="integer scalar"):
        T.specify_shape(T.vector("x"), (2.5,))


# ---------------------------------------------------------------------------- rewrites keep the check
def test_canonicalize_does_not_drop_the_check():
    """``* 1`` disappears, the SpecifyShape node stays and still checks."""
    x = T.vector("x")
    f = ss.function([x], T.specify_shape(x, (3,)) * 1, mode="fast")
    assert len(_specify_nodes(f)) == 1
    with pytest.raises(ValueError, match=r"\(2,\) at run time but \(3,\)"):
        f(np.ones(2))


def test_a_check_read_only_through_its_shape_stays():
    x = T.vector("x")
    f = both_modes.function([x], T.specify_shape(x, (3,)).shape[0] * 2)
    assert len(_specify_nodes(f.fast)) == 1
    assert f(np.ones(3)) == 6
    with pytest.raises(ValueError, match="specify_shape"):
        f(np.ones(4))


def test_constant_folding_keeps_a_failing_check_for_run_time():
    """A length computed from constants is unknown when the graph is built (no static value)
    but folded by the rewrites: a passing check folds away, a failing one stays to raise."""
    good = T.specify_shape(T.constant(np.ones(3)), ((T.constant(np.array([3])) * 1)[0],)) * 2.0
    bad = T.specify_shape(T.constant(np.ones(3)), ((T.constant(np.array([4])) * 1)[0],))
    np.testing.assert_array_equal(both_modes.run([], good), [2.0, 2.0, 2.0])
    f = both_modes.function([], bad * 2.0)  # building succeeds; the call fails
    with pytest.raises(ValueError, match=r"\(3,\) at run time but \(4,\)"):
        f()


def test_inside_a_loop():
    xs = T.matrix("xs")
    rows, _ = ss.scan(lambda row: T.specify_shape(row, (2,)) * 3.0, sequences=[xs])
    f = both_modes.function([xs], rows)
    np.testing.assert_array_equal(f(np.ones((4, 2))), np.full((4, 2), 3.0))
    with pytest.raises(ValueError, match=r"\(3,\) at run time but \(2,\)"):
        f(np.ones((4, 3)))


def test_an_in_place_reader_never_writes_into_the_callers_array():
    """The checked value is the input itself: the inplace rewrite sees through SpecifyShape
    (a view op), so ``+ 1`` is not written into it (both_modes checks the input is unchanged)."""
    x = T.vector("x")
    f = both_modes.function([x], T.specify_shape(x, (2000,)) + 1.0)
    value = np.arange(2000.0)
    np.testing.assert_array_equal(f(value), value + 1.0)
    assert not [n for n in f.fast.fgraph.apply_nodes if "inplace" in n.tag]


def test_printing():
    x = T.vector("x")
    text = ss.dprint(T.specify_shape(x, (3,)), file="str")
    assert "SpecifyShape" in text
