"""Theano's named constructors: prefixes b w i l f d c z, kinds scalar .. tensor7, row and col
with their length-1 axis, and the plurals."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T

import both_modes

PREFIXES = {"b": "int8", "w": "int16", "i": "int32", "l": "int64", "f": "float32", "d": "float64",
            "c": "complex64", "z": "complex128"}
SHAPES = {"scalar": (), "vector": (None,), "matrix": (None, None), "row": (1, None), "col": (None, 1),
          "tensor3": (None,) * 3, "tensor4": (None,) * 4, "tensor5": (None,) * 5, "tensor6": (None,) * 6,
          "tensor7": (None,) * 7}


@pytest.mark.parametrize("kind", SHAPES)
@pytest.mark.parametrize("prefix", PREFIXES)
def test_typed_constructor(prefix, kind):
    var = getattr(T, prefix + kind)("v")
    assert var.type == ss.TensorType(PREFIXES[prefix], SHAPES[kind])
    assert var.name == "v" and var.owner is None
    assert getattr(T, prefix + kind)().name is None


@pytest.mark.parametrize("kind", SHAPES)
def test_untyped_constructor_follows_floatX(kind, floatX):
    var = getattr(T, kind)("v")
    assert var.type == ss.TensorType(floatX, SHAPES[kind])
    assert getattr(T, kind)(dtype="int32").dtype == "int32"


def test_row_and_col_broadcast_like_theanos_broadcastable_axes(mode):
    r, c = T.drow("r"), T.dcol("c")
    out = ss.function([r, c], r + c, mode=mode)(np.array([[1.0, 2.0, 3.0]]), np.array([[10.0], [20.0]]))
    np.testing.assert_array_equal(out, [[11.0, 12.0, 13.0], [21.0, 22.0, 23.0]])
    assert (r + c).type.shape == (None, None)
    assert T.row().dimshuffle(1).type.shape == (None,)  # the length-1 axis can be dropped


def test_a_row_refuses_two_rows():
    r = T.frow("r")
    f = both_modes.function([r], r * 2)
    with pytest.raises(ValueError, match=r"'r'.*length 1 on axis 0"):
        f(np.ones((2, 3), dtype="float32"))


def test_a_complex_input_computes(mode):
    z = T.zvector("z")
    out = ss.function([z], z * z, mode=mode)(np.array([1 + 2j, -1j]))
    np.testing.assert_array_equal(out, np.array([1 + 2j, -1j]) ** 2)


def test_tensor5_to_tensor7_compute(mode):
    x = T.ftensor5("x")
    value = np.arange(32, dtype="float32").reshape(2, 2, 2, 2, 2)
    np.testing.assert_array_equal(ss.function([x], x.sum(axis=4), mode=mode)(value), value.sum(axis=4))
    assert T.itensor7().ndim == 7


@pytest.mark.parametrize("plural, single", [("scalars", "scalar"), ("fvectors", "fvector"), ("dmatrices", "dmatrix"),
                                            ("irows", "irow"), ("lcols", "lcol"), ("tensor3s", "tensor3"),
                                            ("dtensor7s", "dtensor7")])
def test_plurals(plural, single):
    make_many, make = getattr(T, plural), getattr(T, single)
    a, b = make_many("a", "b")
    assert (a.name, b.name) == ("a", "b") and a.type == b.type == make().type
    three = make_many(3)
    assert len(three) == 3 and len({id(v) for v in three}) == 3
    assert make_many("only").name == "only"
    assert [v.name for v in make_many(["p", "q"])] == ["p", "q"]


def test_constructor_names_and_docs():
    assert T.ftensor3.__name__ == "ftensor3" and "float32" in T.ftensor3.__doc__
    assert T.dmatrices.__name__ == "dmatrices"
    assert not hasattr(T, "bmatrices")  # Theano had plurals for f d i l and floatX only
