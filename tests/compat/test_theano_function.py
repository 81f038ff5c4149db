"""``theano.function``: Theano 1.0's signature and defaults over ``ss.function``."""

import numpy as np
import pytest

import symscan as ss
import symscan.compat.theano as theano
import symscan.compat.theano.tensor as T
from symscan.compile import MODES


def test_unused_inputs_raise_by_default_as_in_theano():
    x, y = T.vector("x"), T.vector("y")
    with pytest.raises(theano.compile.UnusedInputError, match=r"inputs\[1\] 'y'"):
        theano.function([x, y], x * 2)
    with pytest.warns(UserWarning, match="'y'"):
        theano.function([x, y], x * 2, on_unused_input="warn")
    f = theano.function([x, y], x * 2, on_unused_input="ignore")
    np.testing.assert_array_equal(f([1.0], [5.0, 6.0]), [2.0])


def test_mode_is_the_third_parameter(mode):
    x = T.vector("x")
    s = theano.shared(np.zeros(1), name="s")
    f = theano.function([x], x + 1.0, mode, {s: s + 1.0})
    assert f.mode is MODES[mode]
    np.testing.assert_array_equal(f([1.0]), [2.0])
    assert s.get_value()[0] == 1.0


@pytest.mark.parametrize("name, expected", [("FAST_RUN", "fast"), ("FAST_COMPILE", "py"), ("DebugMode", "py")])
def test_theano_mode_names(name, expected):
    x = T.dmatrix("x")
    f = theano.function([x], x.sum(axis=0), mode=name)
    assert f.mode is MODES[expected]
    np.testing.assert_array_equal(f(np.arange(6.0).reshape(2, 3)), [3.0, 5.0, 7.0])


def test_theano_only_arguments_are_accepted(mode):
    x, y = T.vector("x"), T.vector("y")
    f = theano.function([x], x * y, mode=mode, givens={y: x + 1.0}, accept_inplace=False, rebuild_strict=True,
                        profile=False, name="g")
    assert f.name == "g"
    np.testing.assert_array_equal(f([1.0, 2.0]), [2.0, 6.0])


def test_allow_input_downcast_and_no_default_updates_pass_through(mode):
    x = T.fvector("x")
    stream = T.shared_randomstreams.RandomStreams(2)
    draw = stream.uniform(size=(2,))
    f = theano.function([x], [x * 2, draw], mode=mode, allow_input_downcast=True, no_default_updates=True)
    (a, d1), (_, d2) = f(np.array([0.1, 0.2])), f(np.array([0.1, 0.2]))
    assert a.dtype == np.float32
    np.testing.assert_array_equal(a, np.array([0.1, 0.2], dtype=np.float32) * 2)
    np.testing.assert_array_equal(d1, d2)


def test_ss_function_keeps_accepting_unused_inputs():
    x, y = T.vector("x"), T.vector("y")
    f = ss.function([x, y], x)
    np.testing.assert_array_equal(f([1.0], [2.0]), [1.0])


def test_a_ported_snippet_runs_unchanged():
    """Theano-era code using the names this port adds: typed constructors, shape unpacking,
    reshape with ndim, specify_shape, std/var, clone, shared(borrow=...), multinomial."""
    X = T.dmatrix("X")
    n, d = X.shape
    flat = T.reshape(X, T.stack([n * d]), ndim=1)
    centred = (X - X.mean(axis=0)) / X.std(axis=0)
    checked = T.specify_shape(centred, (4, 3))
    w = theano.shared(np.ones(3), name="w", borrow=True)
    score = theano.clone(checked.dot(w), replace={w: w * 2.0})
    rng = T.shared_randomstreams.RandomStreams(0)
    counts = rng.multinomial(n=10, pvals=T.nnet.softmax(X))
    f = theano.function([X], [flat, score, counts, X.var()], mode="FAST_RUN")
    data = np.arange(12.0).reshape(4, 3) ** 1.5
    got_flat, got_score, got_counts, got_var = f(data)
    np.testing.assert_array_equal(got_flat, data.ravel())
    expected = ((data - data.mean(axis=0)) / data.std(axis=0)).dot(np.full(3, 2.0))
    np.testing.assert_allclose(got_score, expected, rtol=1e-12)
    assert got_counts.shape == (4, 3) and (got_counts.sum(axis=1) == 10).all()
    np.testing.assert_allclose(got_var, data.var(), rtol=1e-12)
