"""``T.var``/``T.std`` and the ``.var``/``.std``/``.copy`` methods: numpy's numbers (Theano's
signature: axis, ddof, keepdims, corrected)."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T

import both_modes

AXES = [None, 0, 1, -1, (0, 2), (0, 1, 2)]


@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_var_and_std_are_numpys(rng, axis, ddof, keepdims):
    x = T.dtensor3("x")
    value = rng.normal(size=(3, 4, 5)) * 10.0 + 3.0
    var, std = both_modes.run([x], [x.var(axis=axis, ddof=ddof, keepdims=keepdims),
                                    T.std(x, axis=axis, ddof=ddof, keepdims=keepdims)], value)
    expected_var = np.var(value, axis=axis, ddof=ddof, keepdims=keepdims)
    assert var.shape == expected_var.shape and var.dtype == np.float64
    np.testing.assert_allclose(var, expected_var, rtol=1e-13)
    np.testing.assert_allclose(std, np.std(value, axis=axis, ddof=ddof, keepdims=keepdims), rtol=1e-13)


@pytest.mark.parametrize("dtype, result", [("float32", "float32"), ("int32", "float64"), ("int8", "float64"),
                                           ("float64", "float64")])
def test_result_dtypes_are_numpys(rng, dtype, result):
    x = T.tensor(dtype, (None, None), name="x")
    value = (rng.normal(size=(6, 3)) * 20).astype(dtype)
    var, std = both_modes.run([x], [x.var(axis=0), x.std()], value)
    assert var.dtype == np.dtype(result) == np.var(value, axis=0).dtype
    assert std.dtype == np.dtype(result)
    rtol = 1e-6 if result == "float32" else 1e-13
    np.testing.assert_allclose(var, np.var(value, axis=0), rtol=rtol)
    np.testing.assert_allclose(std, np.std(value), rtol=rtol)


def test_corrected_two_pass_is_the_variance_too(rng):
    x = T.dmatrix("x")
    value = rng.normal(size=(50, 4)) + 1e6  # a large mean: rounding in the deviations
    got = both_modes.run([x], x.var(axis=0, corrected=True), value)
    np.testing.assert_allclose(got, np.var(value, axis=0), rtol=1e-7)
    deviation = value - value.mean(axis=0)
    n = value.shape[0]
    expected = ((deviation ** 2).sum(axis=0) - deviation.sum(axis=0) ** 2 / n) / n  # the algorithm, in numpy
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    ddof = both_modes.run([x], x.std(axis=1, ddof=1, corrected=True, keepdims=True), value)
    np.testing.assert_allclose(ddof, np.std(value, axis=1, ddof=1, keepdims=True), rtol=1e-6)


def test_static_and_symbolic_lengths_agree(rng):
    fixed = T.tensor("float64", (4, 3), name="fixed")
    free = T.dmatrix("free")
    value = rng.normal(size=(4, 3))
    a = both_modes.run([fixed], fixed.var(axis=1), value)
    b = both_modes.run([free], free.var(axis=1), value)
    np.testing.assert_array_equal(a, b)


@pytest.mark.filterwarnings("ignore:Degrees of freedom")
def test_too_few_elements_for_ddof_gives_numpys_inf_and_nan():
    x = T.dvector("x")
    with np.errstate(all="ignore"):
        got = both_modes.run([x], [x.var(ddof=1), x.var()], np.array([2.0]))
        expected = [np.var([2.0], ddof=1), np.var([2.0])]
    np.testing.assert_array_equal(got, expected)  # nan (0/0), and 0


def test_complex_variance_is_real(mode):
    z = T.zvector("z")
    value = np.array([1 + 2j, -1j, 3.0 + 0j])
    got = ss.function([z], z.var(), mode=mode)(value)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.var(value), rtol=1e-13)


def test_var_inside_a_loop(rng):
    xs = T.dtensor3("xs")
    rows, _ = ss.scan(lambda m: m.std(axis=0), sequences=[xs])
    value = rng.normal(size=(3, 5, 2))
    np.testing.assert_allclose(both_modes.run([xs], rows, value), value.std(axis=1), rtol=1e-13)


def test_bad_arguments_are_named():
    x = T.dmatrix("x")
    with pytest.raises(ValueError, match=r"var: axis 2 is out of range for 'x'"):
        x.var(axis=2)
    with pytest.raises(TypeError, match=r"var of 'x'.*ddof must be a Python int"):
        x.var(ddof=0.5)


# ---------------------------------------------------------------------------- copy
def test_copy_is_a_new_variable_with_the_same_value(mode):
    x = T.dvector("x")
    copied = x.copy(name="copied")
    assert copied is not x and copied.owner is not None and copied.name == "copied"
    assert copied.type == x.type and x.copy().name is None
    value = np.array([1.0, -2.0])
    f = ss.function([x], copied, mode=mode)
    out = f(value)
    np.testing.assert_array_equal(out, value)
    assert not np.shares_memory(out, value)


def test_copy_does_not_copy_tags_and_keeps_constants():
    x = T.dmatrix("x")
    x.tag["note"] = 1
    assert x.copy().tag == {}
    c = T.constant(np.array([1, 2], dtype="int8")).copy()
    assert c.dtype == "int8"
    np.testing.assert_array_equal(both_modes.run([], c), [1, 2])


def test_a_copy_is_a_new_array_in_every_mode():
    """The rewrites may drop the copy node (``second(x, x)`` is ``x``), but a function never
    hands out its input's memory: the result is a new array either way."""
    x = T.dvector("x")
    value = np.arange(3.0)
    for mode in ("py", "fast"):
        out = ss.function([x], x.copy(), mode=mode)(value)
        np.testing.assert_array_equal(out, value)
        assert not np.may_share_memory(out, value)
