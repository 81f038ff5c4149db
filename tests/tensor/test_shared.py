"""``shared(value, name=None, strict=False, borrow=False)``: Theano's borrow semantics, for the
initial value and for get_value/set_value."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T


def test_without_borrow_the_initial_value_is_copied():
    value = np.array([1.0, 2.0])
    s = ss.shared(value, name="s")
    assert not np.shares_memory(s.get_value(borrow=True), value)
    value[0] = 50.0
    np.testing.assert_array_equal(s.get_value(), [1.0, 2.0])


def test_borrow_true_uses_the_array_itself():
    value = np.array([1.0, 2.0])
    s = ss.shared(value, name="s", borrow=True)
    assert s.get_value(borrow=True) is value
    value[0] = 50.0  # the caller's array is the shared value
    np.testing.assert_array_equal(s.get_value(), [50.0, 2.0])


@pytest.mark.parametrize("value", [[1, 2], 3.5, np.float32(2.0)], ids=["list", "float", "numpy-scalar"])
def test_borrow_of_a_non_array_makes_an_array_of_it(value):
    s = ss.shared(value, borrow=True)
    assert isinstance(s.get_value(borrow=True), np.ndarray)
    np.testing.assert_array_equal(s.get_value(), np.asarray(value))
    assert s.dtype == np.asarray(value).dtype


def test_borrowed_value_is_read_by_compiled_functions(mode):
    value = np.array([1.0, 2.0])
    s = ss.shared(value, name="s", borrow=True)
    x = T.vector("x")
    f = ss.function([x], x + s, mode=mode)
    value[1] = 10.0
    np.testing.assert_array_equal(f(np.zeros(2)), [1.0, 10.0])


def test_an_update_replaces_a_borrowed_value_without_writing_into_it(mode):
    value = np.array([1.0, 2.0])
    s = ss.shared(value, name="s", borrow=True)
    f = ss.function([], s * 2, updates={s: s + 1.0}, mode=mode)
    np.testing.assert_array_equal(f(), [2.0, 4.0])
    np.testing.assert_array_equal(s.get_value(), [2.0, 3.0])
    # Theano allows either; symscan never writes into the caller's array
    np.testing.assert_array_equal(value, [1.0, 2.0])


def test_get_value_borrow():
    s = ss.shared(np.array([1.0, 2.0]), name="s")
    copy, internal = s.get_value(), s.get_value(borrow=True)
    assert internal is s.get_value(borrow=True) and copy is not internal
    copy[0] = -1.0
    np.testing.assert_array_equal(s.get_value(), [1.0, 2.0])
    internal[0] = -1.0  # borrowing hands out the internal value itself
    np.testing.assert_array_equal(s.get_value(), [-1.0, 2.0])


def test_set_value_borrow():
    s = ss.shared(np.zeros(2), name="s")
    new = np.array([3.0, 4.0])
    s.set_value(new)
    assert not np.shares_memory(s.get_value(borrow=True), new)
    s.set_value(new, borrow=True)
    assert s.get_value(borrow=True) is new


def test_borrow_keeps_strict_and_the_dtype_rules():
    value = np.array([1.0, 2.0], dtype="float32")
    s = ss.shared(value, name="w", strict=True, borrow=True)
    assert s.dtype == "float32" and s.get_value(borrow=True) is value
    with pytest.raises(TypeError, match="'w'"):
        s.set_value(np.zeros(2))
    with pytest.raises(TypeError, match="numeric"):
        ss.shared(np.array(["a"]), borrow=True)
