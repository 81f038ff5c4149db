"""Calling a compiled function by input name, and inputs with defaults (``In``), as in Theano:
``f(index=3, lr=0.1)``, ``function([index, In(lr, value=0.1)], ...)``."""

import pickle

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.compile import In


def _affine(mode, **options):
    x, a, b = T.dvector("x"), T.dscalar("a"), T.dscalar("b")
    return ss.function([x, a, In(b, value=0.5)], a * x + b, mode=mode, name="affine", **options)


def test_keywords_positions_and_defaults_give_the_same_values(mode):
    f = _affine(mode)
    x = np.array([1.0, -2.0, 3.0])
    expected = 2.0 * x + 0.5
    for got in (f(x, 2.0), f(x, 2.0, 0.5), f(x=x, a=2.0), f(a=2.0, x=x, b=0.5), f(x, a=2.0), f(x, 2.0, b=0.5)):
        np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(f(x, a=-1.0, b=10.0), -x + 10.0)


def test_a_default_is_used_again_after_a_call_that_overrides_it(mode):
    f = _affine(mode)
    x = np.ones(2)
    np.testing.assert_array_equal(f(x, 1.0, b=7.0), [8.0, 8.0])
    np.testing.assert_array_equal(f(x, 1.0), [1.5, 1.5])


def test_an_input_given_by_position_and_by_keyword_is_refused_naming_it():
    f = _affine("py")
    with pytest.raises(TypeError, match=r"'affine' got two values for input 1 \('a'\): one by position and "
                                        r"one as a=\.\.\.; pass it once"):
        f(np.ones(2), 1.0, a=2.0)


def test_an_unknown_keyword_is_refused_listing_the_names():
    f = _affine("py")
    with pytest.raises(TypeError, match=r"'affine' has no input named 'c'; its inputs are \('x', 'a', 'b'\)"):
        f(np.ones(2), 1.0, c=2.0)


def test_a_missing_input_is_named_with_the_fix():
    f = _affine("py")
    with pytest.raises(TypeError, match=r"'affine' takes 3 input\(s\) \('x', 'a', 'b'\), got 1: no value for "
                                        r"input 1 \('a'\); pass it by position or as a=\.\.\., or give it a "
                                        r"default with In\(var, value=\.\.\.\)"):
        f(x=np.ones(2))
    with pytest.raises(TypeError, match=r"takes 3 input\(s\).*got 4"):
        f(np.ones(2), 1.0, 2.0, 3.0)


def test_two_inputs_with_one_name_can_be_passed_by_position_only(mode):
    a, b = T.dscalar("v"), T.dscalar("v")
    f = ss.function([a, b], a - b, mode=mode)
    assert f(5.0, 2.0) == 3.0
    with pytest.raises(TypeError, match=r"inputs 0 and 1 are all named 'v', so v= is ambiguous; pass their "
                                        r"values by position, or name them apart with In\(var, name=\.\.\.\)"):
        f(5.0, v=2.0)


def test_in_name_is_the_keyword(mode):
    x = T.dvector()  # unnamed: only In's name lets it be passed by keyword
    f = ss.function([In(x, name="data", value=np.arange(3.0))], x * 2.0, mode=mode)
    np.testing.assert_array_equal(f(), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(f(data=np.ones(2)), [2.0, 2.0])
    with pytest.raises(TypeError, match="no input named 'x'"):
        f(x=np.ones(2))


def test_the_default_is_checked_when_compiling_and_kept_as_a_copy(mode):
    lr = T.fscalar("lr")
    with pytest.raises(TypeError, match=r"the default value of input 0 \('lr'\) of the function must be numeric"):
        ss.function([In(lr, value="fast")], lr * 2, mode=mode)
    with pytest.raises(TypeError, match=r"the default value of input 0 \('lr'\).*float32.*allow_input_downcast"):
        ss.function([In(lr, value=np.float64(0.1))], lr * 2, mode=mode)
    start = np.array([1.0, 2.0])
    x = T.dvector("x")
    f = ss.function([In(x, value=start)], x, mode=mode)
    start[0] = 100.0  # the caller's array changes after compiling: the default does not
    first = f()
    np.testing.assert_array_equal(first, [1.0, 2.0])
    first[1] = -1.0  # nor does changing a returned value (the output never aliases the default)
    np.testing.assert_array_equal(f(), [1.0, 2.0])


def test_a_python_float_default_fits_a_float32_input(mode):
    lr = T.fscalar("lr")
    f = ss.function([In(lr, value=0.1)], lr * 2, mode=mode)
    out = f()
    assert out.dtype == np.float32 and out == np.float32(0.1) * np.float32(2)


def test_strict_refuses_a_cast_that_the_default_rule_allows():
    x = T.dvector("x")
    loose = ss.function([x], x * 2)
    strict = ss.function([In(x, strict=True)], x * 2)
    ints = np.array([1, 2], dtype=np.int32)
    np.testing.assert_array_equal(loose(ints), [2.0, 4.0])
    with pytest.raises(TypeError, match=r"input 0 \('x'\).*float64"):
        strict(ints)
    np.testing.assert_array_equal(strict(np.array([1.0, 2.0])), [2.0, 4.0])


def test_in_allow_downcast_overrides_the_function_flag():
    x, y = T.fvector("x"), T.fvector("y")
    f = ss.function([In(x, allow_downcast=True), y], x + y)
    value = np.array([0.1, 0.2])  # float64: downcast only for x
    with pytest.raises(TypeError, match=r"input 1 \('y'\)"):
        f(value, value)
    assert f(value, value.astype(np.float32)).dtype == np.float32


def test_mutable_and_borrow_are_accepted_and_results_never_alias_inputs(mode):
    x = T.dvector("x")
    f = ss.function([In(x, mutable=True, borrow=True)], x, mode=mode)
    value = np.array([1.0, 2.0])
    out = f(value)
    out[0] = 9.0
    assert value[0] == 1.0


def test_in_options_theano_has_but_symscan_refuses_are_named():
    x = T.dvector("x")
    with pytest.raises(NotImplementedError, match=r"In\('x' .*update=.*shared variable.*updates="):
        In(x, value=np.zeros(1), update=x + 1.0)
    with pytest.raises(NotImplementedError, match="implicit="):
        In(x, value=np.zeros(1), implicit=True)
    with pytest.raises(ValueError, match="mutable=True with borrow=False"):
        In(x, mutable=True, borrow=False)
    with pytest.raises(TypeError, match="In: the input must be a symbolic variable, got float"):
        In(1.0)


def test_an_in_of_a_computed_variable_is_refused_like_the_variable():
    x = T.dvector("x")
    with pytest.raises(TypeError, match=r"inputs\[0\] .* is not a root variable"):
        ss.function([In(x * 2.0, value=np.zeros(1))], x)


def test_keyword_calls_apply_updates_and_defaults_in_a_training_step(mode):
    """SGD on least squares with a defaulted learning rate, called by keyword as Theano programs do."""
    rng = np.random.default_rng(3)
    data, w_true = rng.normal(size=(40, 3)), np.array([1.0, -2.0, 0.5])
    target = data @ w_true
    w = ss.shared(np.zeros(3), name="w")
    xs, ys, index, lr = ss.shared(data, name="xs"), ss.shared(target, name="ys"), T.lscalar("index"), T.dscalar("lr")
    batch_x, batch_y = xs[index * 10:(index + 1) * 10], ys[index * 10:(index + 1) * 10]
    cost = ((T.dot(batch_x, w) - batch_y) ** 2).mean()
    step = ss.function([index, In(lr, value=0.1)], cost, updates={w: w - lr * ss.grad(cost, w)}, mode=mode)
    expected_w, costs = np.zeros(3), []
    for i in range(20):
        bx, by = data[(i % 4) * 10:(i % 4 + 1) * 10], target[(i % 4) * 10:(i % 4 + 1) * 10]
        residual = bx @ expected_w - by
        np.testing.assert_allclose(step(index=i % 4), (residual ** 2).mean(), rtol=1e-12)
        expected_w = expected_w - 0.1 * 2 * bx.T @ residual / 10
        costs.append(float((residual ** 2).mean()))
    np.testing.assert_allclose(w.get_value(), expected_w, rtol=1e-12)
    assert costs[-1] < costs[0] / 10


def test_keywords_and_defaults_survive_pickling():
    a, b = T.dscalar("v"), T.dscalar("v")
    f = pickle.loads(pickle.dumps(ss.function([a, In(b, value=1.0)], a - b)))
    assert f(5.0) == 4.0
    with pytest.raises(TypeError, match="ambiguous"):
        f(v=2.0)
    g = pickle.loads(pickle.dumps(_affine("fast")))
    np.testing.assert_array_equal(g(x=np.ones(2), a=2.0), [2.5, 2.5])
