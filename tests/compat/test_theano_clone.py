"""``ss.clone`` / ``theano.clone(output, replace=None, strict=True, share_inputs=True)``."""

import numpy as np
import pytest

import symscan as ss
import symscan.compat.theano as theano
import symscan.compat.theano.tensor as T
from symscan.graph import toposort

import both_modes


def _graph():
    x, y = T.vector("x"), T.vector("y")
    s = ss.shared(np.array([1.0, -1.0]), name="s")
    out = T.exp(x) * 2.0 + y * s
    return x, y, s, out


def test_clone_without_replace_copies_every_node_and_computes_the_same():
    x, y, s, out = _graph()
    copy = theano.clone(out)
    assert copy is not out
    old_nodes, new_nodes = toposort([out]), toposort([copy])
    assert len(new_nodes) == len(old_nodes) and not set(old_nodes) & set(new_nodes)
    values = (np.array([0.0, 1.0]), np.array([3.0, 4.0]))
    expected = np.exp(values[0]) * 2.0 + values[1] * np.array([1.0, -1.0])
    np.testing.assert_allclose(both_modes.run([x, y], copy, *values), expected, rtol=1e-15)


def test_renaming_the_copy_leaves_the_original():
    x, y, s, out = _graph()
    out.name = "out"
    copy = ss.clone(out)
    copy.name = "renamed"
    assert out.name == "out"


def test_replace_substitutes_variables_dict_or_pairs():
    x, y, s, out = _graph()
    z = T.vector("z")
    for replace in ({x: z * 3.0}, [(x, z * 3.0)]):
        copy = ss.clone(out, replace=replace)
        got = both_modes.run([z, y], copy, np.array([0.5, -1.0]), np.array([2.0, 2.0]))
        np.testing.assert_allclose(got, np.exp([1.5, -3.0]) * 2.0 + np.array([2.0, -2.0]), rtol=1e-15)
    # the original still reads x
    np.testing.assert_allclose(both_modes.run([x, y], out, np.zeros(2), np.zeros(2)), [2.0, 2.0])


def test_replacing_a_shared_variable_by_a_value():
    x, y, s, out = _graph()
    copy = ss.clone(out, replace={s: np.array([10.0, 20.0])})
    got = both_modes.run([x, y], copy, np.zeros(2), np.ones(2))
    np.testing.assert_allclose(got, [12.0, 22.0])


def test_a_list_of_outputs_gives_a_list_sharing_one_copy():
    x, y, s, out = _graph()
    half = out / 2.0
    copies = ss.clone([out, half], replace={y: T.zeros_like(y)})
    assert isinstance(copies, list) and len(copies) == 2
    assert copies[1].owner.inputs[0] is copies[0]  # one copy of the common part
    a, b = both_modes.run([x, y], copies, np.zeros(2), np.ones(2))
    np.testing.assert_allclose(a, [2.0, 2.0])
    np.testing.assert_allclose(b, [1.0, 1.0])


def test_share_inputs_false_gives_fresh_root_variables():
    x, y, s, out = _graph()
    shared_inputs = set(ss.graph.graph_inputs([ss.clone(out)]))
    assert {x, y, s} <= shared_inputs
    fresh = ss.graph.graph_inputs([ss.clone(out, share_inputs=False)])
    names = {v.name for v in fresh if v.owner is None and not isinstance(v, ss.graph.Constant)}
    assert names == {"x", "y", "s"}
    assert x not in fresh and y not in fresh
    assert s in fresh  # shared variables are state: the copy reads the same one


def test_strict_refuses_a_replacement_of_another_type():
    x, y, s, out = _graph()
    expected = r"clone: replace\[0\].*'x' \(float64\[\?\]\).*'f' \(float32\[\?\]\).*strict=False"
    with pytest.raises(TypeError, match=expected):
        ss.clone(out, replace={x: T.fvector("f")})
    with pytest.raises(TypeError, match="another type"):
        ss.clone(out, replace={x: T.matrix("m")})


def test_strict_accepts_a_more_precise_static_shape():
    x, y, s, out = _graph()
    fixed = T.tensor("float64", (2,), name="fixed")
    copy = ss.clone(out, replace={x: fixed})
    assert copy.type.shape == (2,)


def test_not_strict_lets_the_types_follow():
    x, y, s, out = _graph()
    f = T.fvector("f")
    copy = ss.clone(T.exp(x) + x, replace={x: f}, strict=False)
    assert copy.dtype == "float32"
    value = np.array([1.5, 2.0], dtype="float32")
    got = both_modes.run([f], copy, value)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.exp(value) + value)


def test_clone_of_a_scan_output():
    k, A = T.iscalar("k"), T.vector("A")
    result, _ = theano.scan(lambda prior, A: prior * A, outputs_info=T.ones_like(A), non_sequences=A, n_steps=k)
    B = T.vector("B")
    copy = theano.clone(result[-1], replace={A: B + 1.0})
    got = both_modes.run([B, k], copy, np.array([1.0, 2.0]), 3)
    np.testing.assert_allclose(got, np.array([2.0, 3.0]) ** 3)


def test_bad_arguments_are_named():
    x, y, s, out = _graph()
    with pytest.raises(TypeError, match=r"output\[0\] must be a symbolic variable"):
        ss.clone(3.0)
    with pytest.raises(TypeError, match=r"replace\[0\] must map a symbolic variable"):
        ss.clone(out, replace={"x": y})
    with pytest.raises(TypeError, match="the replacement of 'x'"):
        ss.clone(out, replace={x: ["a", "b"]})
