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


# ---------------------------------------------------------------------------- theano.clone(share_inputs=False)
def _roots(outputs):
    return ss.graph.graph_inputs(outputs if isinstance(outputs, list) else [outputs])


def _by_name(outputs, name):
    (found,) = [v for v in _roots(outputs) if v.name == name]
    return found


def test_theano_share_inputs_false_copies_every_root_shared_and_constants_included():
    x, y, s, out = _graph()
    copy = theano.clone(out, share_inputs=False)
    old, new = _roots(out), _roots(copy)
    assert len(new) == len(old) and not set(old) & set(new)
    s_copy = _by_name(copy, "s")
    assert type(s_copy) is type(s) and s_copy.type == s.type
    assert any(isinstance(v, ss.graph.Constant) for v in new)  # 2.0, copied with its value


def test_a_copied_shared_variable_shares_the_storage(mode):
    """Theano's copies share the shared variable's container: setting either sets both, and a
    function of the copy reads the original's current value (and may update it)."""
    x, y, s, out = _graph()
    copy = theano.clone(out, share_inputs=False)
    x2, y2, s2 = (_by_name(copy, name) for name in ("x", "y", "s"))
    f = theano.function([x2, y2], copy, mode=mode, updates={s2: s2 * 10.0})
    values = (np.array([0.0, 1.0]), np.array([3.0, 4.0]))
    np.testing.assert_allclose(f(*values), np.exp(values[0]) * 2.0 + values[1] * [1.0, -1.0], rtol=1e-15)
    np.testing.assert_array_equal(s.get_value(), [10.0, -10.0])  # the update through the copy
    s.set_value(np.array([0.0, 0.0]))
    np.testing.assert_array_equal(s2.get_value(), [0.0, 0.0])
    np.testing.assert_allclose(f(*values), np.exp(values[0]) * 2.0, rtol=1e-15)


def test_a_copied_random_generator_has_no_default_update_as_in_theano(mode):
    stream = T.shared_randomstreams.RandomStreams(3)
    draw = stream.uniform(size=(2,))
    copy = theano.clone(draw, share_inputs=False)
    (rng_copy,) = [v for v in _roots(copy) if isinstance(v, ss.graph.SharedVariable)]
    assert getattr(rng_copy, "default_update", None) is None
    f = theano.function([], copy, mode=mode)
    np.testing.assert_array_equal(f(), f())  # the same state each call: nothing advances it


def test_replacement_graphs_are_copied_too(mode):
    x, y, s, out = _graph()
    z = T.vector("z")
    offset = theano.shared(np.array([1.0, 1.0]), name="offset")
    copy = theano.clone(out, replace={x: z * 3.0 + offset}, share_inputs=False)
    roots = _roots(copy)
    assert z not in roots and offset not in roots and x not in roots
    assert {v.name for v in roots if v.name} == {"z", "offset", "y", "s"}
    z2, y2 = _by_name(copy, "z"), _by_name(copy, "y")
    got = both_modes.run([z2, y2], copy, np.array([0.5, -1.0]), np.array([2.0, 2.0]))
    np.testing.assert_allclose(got, np.exp([2.5, -2.0]) * 2.0 + np.array([2.0, -2.0]), rtol=1e-15)


def test_a_root_shared_by_the_outputs_and_a_replacement_is_copied_once():
    x, y, s, out = _graph()
    copy = theano.clone(out, replace={x: y * 2.0}, share_inputs=False)
    assert [v.name for v in _roots(copy)].count("y") == 1


def test_theano_share_inputs_true_and_ss_clone_keep_shared_variables():
    x, y, s, out = _graph()
    assert s in _roots(theano.clone(out)) and x in _roots(theano.clone(out))
    assert s in _roots(ss.clone(out, share_inputs=False))


def test_copy_inputs_is_the_deprecated_name_of_share_inputs():
    x, y, s, out = _graph()
    with pytest.warns(DeprecationWarning, match="copy_inputs.*share_inputs"):
        copy = theano.clone(out, copy_inputs=False)
    assert s not in _roots(copy) and x not in _roots(copy)


def test_tutorial_a_copied_network_follows_the_trained_parameters(mode):
    """A network copied with share_inputs=False (fresh input, copied parameters) evaluates with
    the parameters that training the original leaves, since the copies share their storage."""
    rng = np.random.default_rng(4)
    data = rng.normal(size=(30, 3))
    target = data @ np.array([1.0, -2.0, 0.5])
    x, t, lr = T.dmatrix("x"), T.dvector("t"), T.dscalar("lr")
    w = theano.shared(np.zeros(3), name="w")
    cost = T.mean((T.dot(x, w) - t) ** 2)
    train = theano.function([x, t, theano.In(lr, value=0.1)], cost, mode=mode,
                            updates={w: w - lr * T.grad(cost, w)})
    copy = theano.clone(cost, share_inputs=False)
    evaluate = theano.function([_by_name(copy, "x"), _by_name(copy, "t")], copy, mode=mode)
    costs = [float(train(x=data, t=target)) for _ in range(20)]
    assert costs[-1] < 0.5 * costs[0]
    expected = np.mean((data @ w.get_value() - target) ** 2)
    np.testing.assert_allclose(evaluate(data, target), expected, rtol=1e-12)
    assert w not in _roots(copy)
