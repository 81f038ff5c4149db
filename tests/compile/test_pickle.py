"""Compiled functions pickle (as Theano's did): the copy computes the same results and carries
the shared variables' values of the moment it was pickled, as its own copies."""

import pickle

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T


def _accumulator(mode):
    """acc += x each call (an update), a random draw (a default update) and a loop."""
    x = T.vector("x")
    acc = ss.shared(np.zeros(3), name="acc")
    stream = ss.RandomStream(11)
    noise = stream.normal(size=(3,))
    running, _ = ss.scan(lambda row, total: total + row, sequences=[x], outputs_info=[T.constant(0.0)])
    f = ss.function([x], [acc * 2.0 + x, noise, running], updates={acc: acc + x}, mode=mode, name="accumulate")
    return f, acc


def _shared_values(f) -> dict:
    return {var.name: var.get_value() for var in f.fgraph.shared_variables}


def _assert_same_state(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for name in a:
        if isinstance(a[name], np.random.Generator):
            assert a[name].bit_generator.state == b[name].bit_generator.state, name
        else:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_a_function_pickles_and_computes_the_same(mode):
    f, _ = _accumulator(mode)
    g = pickle.loads(pickle.dumps(f))
    assert g.mode is f.mode
    value = np.array([1.0, 2.0, 3.0])
    for got, expected in zip(g(value), f(value)):
        np.testing.assert_array_equal(got, expected)


def test_pickling_after_calls_keeps_the_state_of_that_moment(mode):
    f, acc = _accumulator(mode)
    value = np.array([1.0, -1.0, 0.5])
    f(value)
    f(value)
    g = pickle.loads(pickle.dumps(f))
    _assert_same_state(_shared_values(g), _shared_values(f))
    np.testing.assert_array_equal(g.fgraph.shared_variables[0].get_value(), [2.0, -2.0, 1.0])
    for _ in range(2):  # both advance alike: same accumulator, same draws
        for got, expected in zip(g(value), f(value)):
            np.testing.assert_array_equal(got, expected)
    _assert_same_state(_shared_values(g), _shared_values(f))


def test_the_copy_updates_its_own_shared_variables(mode):
    f, acc = _accumulator(mode)
    g = pickle.loads(pickle.dumps(f))
    g(np.ones(3))
    g(np.ones(3))
    np.testing.assert_array_equal(acc.get_value(), np.zeros(3))  # the original is untouched
    copy = next(v for v in g.fgraph.shared_variables if v.name == "acc")
    assert copy is not acc
    np.testing.assert_array_equal(copy.get_value(), [2.0, 2.0, 2.0])


def test_fast_mode_regenerates_its_code_on_unpickling():
    f, _ = _accumulator("fast")
    state = f._evaluate.__getstate__()
    assert set(state) == {"fgraph", "name"}  # no code objects, no generated namespace
    g = pickle.loads(pickle.dumps(f))
    assert g.source == f.source
    assert g._evaluate._fn is not f._evaluate._fn


def test_errors_still_name_the_node_after_unpickling(mode):
    x = T.matrix("x")
    f = pickle.loads(pickle.dumps(ss.function([x], T.specify_shape(x, (2, 2)) * 2, mode=mode)))
    with pytest.raises(ValueError, match=r"specify_shape: 'x'.*\(3, 2\)"):
        f(np.ones((3, 2)))


def test_an_onnxruntime_function_pickles_without_its_session():
    """The model is pickled and a new onnxruntime session opened on unpickling; shared values
    and the translation of failed checks into ValueError come along."""
    x = T.vector("x")
    acc = ss.shared(np.zeros(3), name="acc")
    running, _ = ss.scan(lambda row, total: total + row, sequences=[x], outputs_info=[T.constant(0.0)], n_steps=3)
    f = ss.function([x], [acc * 2.0 + x.sum(), running], updates={acc: acc + x.sum()}, mode="onnxruntime")
    f(np.ones(3))
    g = pickle.loads(pickle.dumps(f))
    for h in (f, g):
        got = h(np.arange(3.0))
        np.testing.assert_array_equal(got[0], [9.0, 9.0, 9.0])
        np.testing.assert_array_equal(got[1], [0.0, 1.0, 3.0])
    np.testing.assert_array_equal(g.fgraph.shared_variables[0].get_value(), [6.0, 6.0, 6.0])
    with pytest.raises(ValueError, match="fewer elements than n_steps"):
        g(np.ones(2))
