"""TensorType: dtype normalisation, static shapes, subtyping and ``filter`` (runtime checks)."""

import numpy as np
import pytest

import symscan.tensor as T
from symscan.graph.type import SUPPORTED_DTYPES, TensorType, normalize_dtype


# ---------------------------------------------------------------------------- dtypes
@pytest.mark.parametrize("spec, name", [
    ("float64", "float64"), ("f4", "float32"), (np.float32, "float32"), (np.dtype("int16"), "int16"),
    (float, "float64"), (int, "int64"), (bool, "bool"), ("complex64", "complex64"), ("u1", "uint8"),
])
def test_dtype_is_normalised_to_its_numpy_name(spec, name):
    assert normalize_dtype(spec) == name
    assert TensorType(spec, ()).dtype == name


def test_every_supported_dtype_round_trips():
    for name in SUPPORTED_DTYPES:
        t = TensorType(name, (None,))
        assert t.dtype == name
        assert t.numpy_dtype == np.dtype(name)


@pytest.mark.parametrize("spec", ["object", "U3", "datetime64", "S4", "V8"])
def test_unsupported_dtype_is_a_type_error_listing_the_supported_ones(spec):
    with pytest.raises(TypeError, match="not supported") as info:
        TensorType(spec, ())
    assert "float64" in str(info.value) and "int32" in str(info.value)


def test_not_a_dtype_is_a_type_error():
    with pytest.raises(TypeError, match="'nope' is not a dtype"):
        TensorType("nope", ())


# ---------------------------------------------------------------------------- static shape
def test_static_shape_is_a_tuple_of_ints_and_none():
    t = TensorType("float64", [np.int64(2), None, 3])
    assert t.shape == (2, None, 3)
    assert all(type(s) is int for s in t.shape if s is not None)
    assert t.ndim == 3


def test_negative_static_length_is_rejected():
    with pytest.raises(ValueError, match="negative"):
        TensorType("float64", (2, -1))


def test_equality_and_hash_follow_dtype_and_shape():
    a, b = TensorType("float32", (None, 3)), TensorType(np.float32, [None, 3])
    assert a == b and hash(a) == hash(b)
    assert a != TensorType("float64", (None, 3))
    assert a != TensorType("float32", (None, 4))
    assert a != TensorType("float32", (None, None))
    assert len({a, b, TensorType("float32", (2, 3))}) == 2


def test_str_and_repr():
    t = TensorType("int32", (None, 3))
    assert str(t) == "int32[?, 3]"
    assert "int32" in repr(t) and "(None, 3)" in repr(t)
    assert str(TensorType("float64", ())) == "float64[]"


def test_clone_changes_only_what_is_given():
    t = TensorType("float32", (None, 3))
    assert t.clone() == t
    assert t.clone(dtype="int8") == TensorType("int8", (None, 3))
    assert t.clone(shape=(2,)) == TensorType("float32", (2,))


# ---------------------------------------------------------------------------- subtyping
def test_is_super_unknown_lengths_accept_known_ones():
    general, specific = TensorType("float64", (None, 3)), TensorType("float64", (5, 3))
    assert general.is_super(specific)
    assert not specific.is_super(general)
    assert general.is_super(general)


@pytest.mark.parametrize("other", [
    TensorType("float32", (None, 3)),  # dtype
    TensorType("float64", (None, 4)),  # known length
    TensorType("float64", (None,)),  # ndim
    TensorType("float64", (None, 3, 1)),
])
def test_is_super_false_and_conflict_for_incompatible_types(other):
    t = TensorType("float64", (None, 3))
    assert not t.is_super(other)
    assert t.conflicts_with(other)
    assert other.conflicts_with(t)


def test_no_conflict_when_unknown_lengths_could_match():
    a, b = TensorType("float64", (None, 3)), TensorType("float64", (2, None))
    assert not a.conflicts_with(b) and not b.conflicts_with(a)
    assert not a.is_super(b) and not b.is_super(a)


# ---------------------------------------------------------------------------- filter: numpy values
def test_filter_returns_an_array_of_the_type_dtype():
    t = TensorType("float64", (None,))
    value = np.arange(3.0)
    out = t.filter(value)
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    np.testing.assert_array_equal(out, value)


@pytest.mark.parametrize("src, dst", [
    ("float16", "float32"), ("float32", "float64"), ("int8", "int32"), ("uint8", "int16"),
    ("int32", "float64"), ("bool", "int8"), ("float32", "complex64"), ("int16", "float32"),
])
def test_filter_allows_numpy_safe_casts(src, dst):
    value = np.ones((2, 3), dtype=src)
    out = TensorType(dst, (None, 3)).filter(value)
    assert out.dtype == np.dtype(dst)
    np.testing.assert_array_equal(out, value.astype(dst))


@pytest.mark.parametrize("src, dst", [
    ("float64", "float32"), ("int64", "int32"), ("float32", "int64"), ("int8", "uint8"),
    ("complex128", "float64"), ("int32", "float32"), ("int64", "bool"), ("uint64", "int64"),
])
def test_filter_rejects_lossy_numpy_casts_naming_the_value(src, dst):
    t = TensorType(dst, (None,))
    with pytest.raises(TypeError) as info:
        t.filter(np.ones(2, dtype=src), what="input 'w'")
    text = str(info.value)
    assert "input 'w'" in text and dst in text and src in text


def test_filter_rejects_lossy_numpy_scalars():
    with pytest.raises(TypeError, match="'k'.*int32.*int64"):
        TensorType("int32", ()).filter(np.int64(3), what="'k'")
    assert TensorType("int32", ()).filter(np.int8(3)).dtype == np.int32


def test_filter_strict_wants_the_exact_dtype():
    t = TensorType("float64", (None,))
    with pytest.raises(TypeError):
        t.filter(np.ones(2, dtype="float32"), strict=True)
    with pytest.raises(TypeError):
        t.filter([1, 2], strict=True)
    assert t.filter(np.ones(2), strict=True).dtype == np.float64


# ---------------------------------------------------------------------------- filter: Python values
@pytest.mark.parametrize("dtype, value", [
    ("int32", 3), ("int8", -128), ("uint8", 255), ("int32", True), ("float32", 1), ("float32", 0.1),
    ("float16", 2.5), ("complex64", 1 + 2j), ("float64", [1, 2.5]), ("int16", [[1, 2], [3, 4]]),
    ("bool", False),
])
def test_filter_converts_python_values_that_fit(dtype, value):
    t = TensorType(dtype, (None,) * np.ndim(value))
    out = t.filter(value)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, np.asarray(value).astype(dtype))


@pytest.mark.parametrize("dtype, value", [
    ("int32", 2**40), ("int8", 128), ("uint8", -1), ("uint16", [1, 70000]), ("int64", 1.5),
    ("int32", 3.0), ("float64", 1j), ("bool", 1), ("float32", 1e300), ("float16", 70000.0),
    ("float16", 10**6),
])
def test_filter_rejects_python_values_that_do_not_fit(dtype, value):
    t = TensorType(dtype, (None,) * np.ndim(value))
    with pytest.raises(TypeError) as info:
        t.filter(value, what="input 'p'")
    assert "input 'p'" in str(info.value) and dtype in str(info.value)


def test_python_value_error_shows_the_value():
    with pytest.raises(TypeError, match="2.5"):
        TensorType("int64", ()).filter(2.5)


def test_filter_accepts_an_empty_python_list_for_any_dtype():
    for dtype in ("int32", "uint8", "bool", "float32"):
        out = TensorType(dtype, (None,)).filter([])
        assert out.shape == (0,) and out.dtype == np.dtype(dtype)


def test_filter_python_float_to_float32_rounds_like_numpy():
    out = TensorType("float32", ()).filter(0.1)
    assert out == np.float32(0.1)


# ---------------------------------------------------------------------------- filter: shapes
def test_filter_wrong_ndim_is_a_value_error_naming_the_value():
    t = TensorType("float64", (None, None))
    with pytest.raises(ValueError, match=r"input 'm'.*2 dimension.*\(3,\)"):
        t.filter(np.ones(3), what="input 'm'")
    with pytest.raises(ValueError, match="0 dimension"):
        TensorType("float64", ()).filter([1.0])


def test_filter_wrong_static_length_is_a_value_error():
    t = TensorType("float64", (None, 3))
    assert t.filter(np.ones((5, 3))).shape == (5, 3)
    with pytest.raises(ValueError, match=r"'q'.*length 3 on axis 1.*\(5, 4\)"):
        t.filter(np.ones((5, 4)), what="'q'")


def test_filter_checks_dtype_before_shape():
    with pytest.raises(TypeError):
        TensorType("int8", (2,)).filter(np.ones(3, dtype="float64"))


@pytest.mark.parametrize("value", ["abc", None, object(), [1, [2, 3]]])
def test_filter_rejects_non_numeric_values(value):
    with pytest.raises(TypeError, match="'z'"):
        TensorType("float64", (None,)).filter(value, what="'z'")


def test_filter_rejects_symbolic_variables_pointing_to_givens():
    with pytest.raises(TypeError, match="givens"):
        TensorType("float64", (None,)).filter(T.vector("v"))


def test_make_variable_builds_a_root_of_this_type():
    t = TensorType("float32", (2,))
    v = t.make_variable(name="v")
    assert v.type is t and v.owner is None and v.name == "v"
    assert v.dtype == "float32" and v.ndim == 1
