"""``function``'s Theano options: allow_input_downcast, on_unused_input, no_default_updates, and
Theano's mode names."""

import warnings

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.compile import MODES, get_mode

import both_modes


# ---------------------------------------------------------------------------- allow_input_downcast
def test_downcast_true_casts_numpy_arrays_with_precision_loss(mode):
    x = T.fvector("x")
    f = ss.function([x], x * 2, mode=mode, allow_input_downcast=True)
    value = np.array([0.1, 1e-50, 3.0])  # float64; 1e-50 underflows to 0 in float32
    out = f(value)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, value.astype(np.float32) * np.float32(2))
    assert out[1] == 0.0


def test_downcast_true_truncates_floats_into_ints(mode):
    i = T.ivector("i")
    f = ss.function([i], i + 1, mode=mode, allow_input_downcast=True)
    out = f([1.7, -2.5, 3.0])
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, np.array([1.7, -2.5, 3.0]).astype(np.int32) + 1)  # [2, -1, 4]


def test_downcast_true_still_checks_ndim(mode):
    x = T.fvector("x")
    f = ss.function([x], x, mode=mode, allow_input_downcast=True)
    with pytest.raises(ValueError, match="'x'.*1 dimension"):
        f(np.ones((2, 2)))


def test_downcast_none_refuses_float64_arrays_and_names_the_option(mode):
    x = T.fvector("x")
    f = ss.function([x], x * 2, mode=mode)
    with pytest.raises(TypeError, match=r"input 0 \('x'\).*float32.*allow_input_downcast=True"):
        f(np.array([0.1, 0.2]))


def test_downcast_none_accepts_python_floats_rounded_to_float32(mode):
    x = T.fvector("x")
    f = ss.function([x], x, mode=mode)
    out = f([0.1, 0.2])
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.array([0.1, 0.2], dtype=np.float32))
    s = T.fscalar("s")
    assert ss.function([s], s * 1, mode=mode)(0.1) == np.float32(0.1)


def test_downcast_false_refuses_python_floats_that_round(mode):
    x = T.fvector("x")
    f = ss.function([x], x, mode=mode, allow_input_downcast=False)
    with pytest.raises(TypeError, match=r"'x'.*0\.1.*allow_input_downcast=False allows no rounding"):
        f([0.1, 0.5])
    np.testing.assert_array_equal(f([1.5, 0.25]), np.array([1.5, 0.25], dtype=np.float32))  # exact: fine
    with pytest.raises(TypeError, match="33554433"):
        f([2 ** 25 + 1])  # an int float32 cannot hold
    np.testing.assert_array_equal(f([2 ** 24]), [2.0 ** 24])
    assert ss.function([x], x, mode=mode)([2 ** 25 + 1])[0] == np.float32(2 ** 25)  # None: rounded


def test_downcast_false_accepts_safe_numpy_casts(mode):
    x = T.dvector("x")
    f = ss.function([x], x * 1, mode=mode, allow_input_downcast=False)
    out = f(np.array([1, 2], dtype=np.int32))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [1.0, 2.0])
    i = T.ivector("i")
    with pytest.raises(TypeError, match=r"'i'.*int32.*float64 array"):
        ss.function([i], i * 1, mode=mode, allow_input_downcast=False)(np.ones(2))


def test_downcast_bad_value_is_rejected():
    x = T.vector("x")
    with pytest.raises(TypeError, match="allow_input_downcast must be None, True or False"):
        ss.function([x], x, allow_input_downcast="yes")


# ---------------------------------------------------------------------------- on_unused_input
def test_unused_input_raise_names_it():
    x, y = T.vector("x"), T.vector("forgotten")
    with pytest.raises(ss.UnusedInputError, match=r"inputs\[1\] 'forgotten'.*on_unused_input='warn'"):
        ss.function([x, y], x * 2, on_unused_input="raise")
    assert issubclass(ss.UnusedInputError, ValueError)


def test_unused_input_warn(mode):
    x, y = T.vector("x"), T.vector("y")
    with pytest.warns(UserWarning, match=r"inputs\[1\] 'y'"):
        f = ss.function([x, y], x * 2, mode=mode, on_unused_input="warn")
    np.testing.assert_array_equal(f(np.ones(2), np.ones(3)), [2.0, 2.0])


def test_unused_input_ignore_is_silent_and_the_default(mode):
    x, y = T.vector("x"), T.vector("y")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ss.function([x, y], x, mode=mode, on_unused_input="ignore")
        f = ss.function([x, y], x + 1, mode=mode)
    np.testing.assert_array_equal(f(np.zeros(2), np.zeros(7)), [1.0, 1.0])


def test_inputs_used_by_updates_givens_or_loops_are_used():
    x, y, z, w = T.vector("x"), T.vector("y"), T.matrix("z"), T.vector("w")
    s = ss.shared(np.zeros(2), name="s")
    doubled, _ = ss.scan(lambda row, k: row * k, sequences=[z], non_sequences=[w])
    f = ss.function([x, y, z, w], [doubled, x], updates={s: y}, on_unused_input="raise")
    out, x_out = f(np.ones(2), np.ones(2) * 3, np.ones((2, 2)), np.array([2.0, 4.0]))
    np.testing.assert_array_equal(out, [[2.0, 4.0], [2.0, 4.0]])
    np.testing.assert_array_equal(s.get_value(), [3.0, 3.0])
    given = T.vector("given")
    g = ss.function([given], y * 2, givens={y: given}, on_unused_input="raise")
    np.testing.assert_array_equal(g([1.0]), [2.0])


def test_an_input_replaced_by_givens_is_unused():
    x, y = T.vector("x"), T.vector("y")
    with pytest.raises(ss.UnusedInputError, match="'x'"):
        ss.function([x, y], x * 2, givens={x: y}, on_unused_input="raise")


def test_unknown_on_unused_input_is_rejected():
    x = T.vector("x")
    with pytest.raises(ValueError, match="on_unused_input must be one of 'raise', 'warn', 'ignore'"):
        ss.function([x], x, on_unused_input="silent")


def test_eval_ignores_unused_givens():
    x, y = T.vector("x"), T.vector("y")
    np.testing.assert_array_equal((x * 2).eval({x: np.ones(2), y: np.ones(3)}), [2.0, 2.0])


# ---------------------------------------------------------------------------- no_default_updates
def _stream_and_draw(seed=7):
    stream = ss.RandomStream(seed)
    draw = stream.uniform(size=(3,))
    return stream, draw


def test_default_updates_advance_the_stream():
    _, draw = _stream_and_draw()
    f = both_modes.function([], draw)
    first, second = f(), f()
    assert not np.array_equal(first, second)


def test_no_default_updates_true_draws_the_same_values_each_call():
    _, draw = _stream_and_draw()
    f = both_modes.function([], draw, no_default_updates=True)
    first, second = f(), f()
    np.testing.assert_array_equal(first, second)
    assert f.py.updates == [] and f.fast.updates == []


def test_no_default_updates_lists_the_generators_to_keep():
    stream = ss.RandomStream(3)
    a, b = stream.normal(size=(2,)), stream.normal(size=(2,))
    rng_a = stream.state_updates[0][0]
    f = both_modes.function([], [a, b], no_default_updates=[rng_a])
    (a1, b1), (a2, b2) = f(), f()
    np.testing.assert_array_equal(a1, a2)  # a's generator is not advanced
    assert not np.array_equal(b1, b2)
    assert [var for var, _ in f.py.updates] == [stream.state_updates[1][0]]


def test_no_default_updates_keeps_explicit_updates():
    s = ss.shared(0.0, name="s")
    _, draw = _stream_and_draw()
    f = both_modes.function([], draw, updates={s: s + 1.0}, no_default_updates=True)
    f()
    f()
    assert s.get_value() == 2.0


def test_no_default_updates_rejects_non_shared_variables():
    _, draw = _stream_and_draw()
    with pytest.raises(TypeError, match=r"no_default_updates\[0\] must be a shared variable.*'x'"):
        ss.function([], draw, no_default_updates=[T.vector("x")])


# ---------------------------------------------------------------------------- Theano's mode names
@pytest.mark.parametrize("name, expected", [("FAST_RUN", "fast"), ("FAST_COMPILE", "py"), ("DebugMode", "py"),
                                            ("DEBUG_MODE", "py"), ("fast_run", "fast")])
def test_theano_mode_names(name, expected):
    assert get_mode(name) is MODES[expected]
    x = T.vector("x")
    f = ss.function([x], x * 3, mode=name)
    assert f.mode is MODES[expected]
    np.testing.assert_array_equal(f([1.0, 2.0]), [3.0, 6.0])


def test_config_mode_takes_theano_names():
    saved = ss.config.mode
    try:
        ss.config.mode = "FAST_COMPILE"
        assert ss.function([], T.constant(1.0)).mode is MODES["py"]
    finally:
        ss.config.mode = saved


def test_unknown_mode_lists_theano_names_too():
    with pytest.raises(ValueError, match="'FAST_RUN', 'FAST_COMPILE', 'DebugMode'"):
        get_mode("FAST_RUNN")
