"""Making tensors: constants and their dtypes, constructors, config.floatX, and the Python
operators and methods of symbolic variables.

Graphs run in mode "py" and mode "fast", which must agree exactly (tests/support/both_modes.py)."""

import operator

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.graph.basic import Constant

import both_modes


def evaluate(inputs, output, *values):
    """The reference result; mode "fast" gives exactly the same."""
    with np.errstate(all="ignore"):
        return np.asarray(both_modes.run(inputs, output, *values))


def assert_same(actual, expected):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_array_equal(actual, expected)


@pytest.fixture
def float_x():
    """Set config.floatX for one test and put the previous value back afterwards."""
    saved = ss.config.floatX
    yield lambda value: setattr(ss.config, "floatX", value)
    ss.config.floatX = saved


# ---------------------------------------------------------------------------- constants
@pytest.mark.parametrize("value", [
    0, 1, -7, 2**40, 2**63, 0.0, -1.5, 1e300, True, False, 1j, 2 + 3j,
    [1, 2, 3], [1, 2.5], [[1.0], [2.0]], [True, False], [], [[1, 2], [3, 4]],
    np.int8(3), np.uint16(7), np.float32(1.5), np.bool_(True), np.complex64(1j),
    np.arange(6, dtype="int16").reshape(2, 3), np.zeros((0, 2), dtype="float32"),
    np.array(5, dtype="uint8"), np.array([1.5, 2.5], dtype="float16"),
])
@pytest.mark.parametrize("convert", [T.constant, T.as_tensor_variable])
def test_constants_follow_numpy_dtype_rules(value, convert):
    expected = np.asarray(value)
    c = convert(value)
    assert isinstance(c, Constant) and isinstance(c, T.TensorConstant)
    assert c.dtype == expected.dtype.name
    assert c.type.shape == expected.shape  # constants know every length
    assert c.ndim == expected.ndim
    assert_same(c.data, expected)
    assert_same(c.eval(), expected)
    assert_same(both_modes.evaluate(c), expected)


def test_python_number_dtypes_from_the_contract():
    assert T.constant(0).dtype == np.dtype(int).name == "int64"
    assert T.constant(0.0).dtype == "float64"
    assert T.constant(True).dtype == "bool"
    assert T.as_tensor_variable(np.zeros(3, dtype="float32")).dtype == "float32"
    assert T.as_tensor_variable([1, 2]).dtype == "int64"


def test_floatX_does_not_change_constant_dtypes(float_x):
    float_x("float32")
    assert T.constant(0.0).dtype == "float64"
    assert T.as_tensor_variable([1.5]).dtype == "float64"


def test_constant_with_dtype():
    c = T.constant(3, dtype="int8")
    assert c.dtype == "int8"
    assert_same(c.data, np.int8(3))
    assert T.constant([1, 2], dtype="float32").dtype == "float32"
    assert T.constant(1.5, dtype=np.float16).dtype == "float16"
    with pytest.raises(TypeError):
        T.constant(300, dtype="int8")  # does not fit
    with pytest.raises(TypeError):
        T.constant(-1, dtype="uint8")


def test_constant_copies_and_freezes_its_value():
    source = np.array([1.0, 2.0, 3.0])
    c = T.constant(source)
    source[0] = 100.0
    assert_same(c.data, np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError):
        c.data[0] = 5.0


def test_constant_name():
    c = T.constant(2.5, name="half_five")
    assert c.name == "half_five"
    assert T.as_tensor_variable(np.ones(2), name="ones").name == "ones"


@pytest.mark.parametrize("bad", ["text", None, object(), {"a": 1}, [1, "a"], np.array(["x"]),
                                 np.array([1, None], dtype=object), 2**70])
def test_constants_must_be_numeric(bad):
    with pytest.raises(TypeError):
        T.constant(bad)
    with pytest.raises(TypeError):
        T.as_tensor_variable(bad)


def test_constant_of_a_variable_is_an_error():
    with pytest.raises(TypeError):
        T.constant(T.dvector("x"))


def test_as_tensor_variable_returns_variables_unchanged():
    x = T.fmatrix("x")
    assert T.as_tensor_variable(x) is x
    assert T.as_tensor_variable(x, dtype="float32") is x
    with pytest.raises(TypeError, match="float64"):
        T.as_tensor_variable(x, dtype="float64")  # no silent casts


def test_as_tensor_variable_stacks_lists_of_variables():
    a, b = T.dscalar("a"), T.dscalar("b")
    v = T.as_tensor_variable([a, b, a])
    assert v.ndim == 1 and v.dtype == "float64"
    assert v.type.shape == (3,)
    assert_same(evaluate([a, b], v, 1.5, -2.0), np.array([1.5, -2.0, 1.5]))


# ---------------------------------------------------------------------------- constructors
CONSTRUCTORS = [
    ("scalar", 0, None), ("vector", 1, None), ("matrix", 2, None), ("tensor3", 3, None), ("tensor4", 4, None),
    ("iscalar", 0, "int32"), ("ivector", 1, "int32"), ("imatrix", 2, "int32"),
    ("lscalar", 0, "int64"), ("lvector", 1, "int64"), ("lmatrix", 2, "int64"),
    ("fscalar", 0, "float32"), ("fvector", 1, "float32"), ("fmatrix", 2, "float32"),
    ("dscalar", 0, "float64"), ("dvector", 1, "float64"), ("dmatrix", 2, "float64"),
    ("bscalar", 0, "int8"), ("bvector", 1, "int8"),
]


@pytest.mark.parametrize("name, ndim, dtype", CONSTRUCTORS)
def test_constructors(name, ndim, dtype):
    make = getattr(T, name)
    x = make()
    assert isinstance(x, T.TensorVariable)
    assert x.owner is None and x.name is None
    assert x.ndim == ndim
    assert x.type.shape == (None,) * ndim
    assert x.dtype == (dtype or "float64")
    named = make("my_input")
    assert named.name == "my_input"
    assert make(name="kw").name == "kw"
    assert named is not make("my_input")  # every call is a new input
    # a value of any length fits
    value = np.ones((2, 3, 1, 4)[:ndim], dtype=x.dtype)
    assert_same(evaluate([x], x * 1, value), value)


@pytest.mark.parametrize("name, ndim, dtype", [c for c in CONSTRUCTORS if c[2] is None])
def test_untyped_constructors_follow_floatX(name, ndim, dtype, float_x):
    float_x("float32")
    assert getattr(T, name)().dtype == "float32"
    assert T.tensor(shape=(None,) * ndim).dtype == "float32"
    float_x("float64")
    assert getattr(T, name)().dtype == "float64"


@pytest.mark.parametrize("name, ndim, dtype", [c for c in CONSTRUCTORS if c[2] is not None])
def test_typed_constructors_ignore_floatX(name, ndim, dtype, float_x):
    float_x("float32")
    assert getattr(T, name)().dtype == dtype


def test_floatX_rejects_non_float_dtypes(float_x):
    saved = ss.config.floatX
    for bad in ["int32", "float16", "double", None]:
        with pytest.raises(ValueError):
            float_x(bad)
        assert ss.config.floatX == saved


def test_float_x_in_arithmetic(float_x):
    float_x("float32")
    x = T.vector("x")
    out = x * 2.5 + 1
    assert out.dtype == "float32"
    value = np.array([1.0, 2.0], dtype="float32")
    assert_same(evaluate([x], out, value), value * 2.5 + 1)


def test_tensor_constructor():
    x = T.tensor("int16", (None, 3), "q")
    assert (x.dtype, x.type.shape, x.name, x.ndim) == ("int16", (None, 3), "q", 2)
    y = T.tensor(dtype="uint8", shape=(2, 0), name="empty")
    assert (y.dtype, y.type.shape, y.name) == ("uint8", (2, 0), "empty")
    z = T.tensor("float32")
    assert z.type.shape == () and z.name is None
    assert T.tensor(np.float32, [None]).dtype == "float32"
    assert T.tensor("bool", (1,)).dtype == "bool"
    # values must match the static lengths
    f = both_modes.function([x], x + 1)  # the static-length check is the same in both modes
    assert_same(f(np.zeros((4, 3), dtype="int16")), np.ones((4, 3), dtype="int16"))
    with pytest.raises(ValueError):
        f(np.zeros((4, 2), dtype="int16"))


@pytest.mark.parametrize("dtype", ["object", "datetime64[ns]", "U5", "nope"])
def test_tensor_rejects_unsupported_dtypes(dtype):
    with pytest.raises(TypeError):
        T.tensor(dtype, (None,))


def test_tensor_rejects_negative_lengths():
    with pytest.raises(ValueError):
        T.tensor("float64", (2, -1))


# ---------------------------------------------------------------------------- Python operators
BINARY_OPERATORS = [
    (operator.add, T.add), (operator.sub, T.sub), (operator.mul, T.mul), (operator.truediv, T.true_div),
    (operator.floordiv, T.floor_div), (operator.mod, T.mod), (operator.pow, T.pow),
    (operator.lt, T.lt), (operator.le, T.le), (operator.gt, T.gt), (operator.ge, T.ge),
]
BITWISE_OPERATORS = [(operator.and_, T.and_), (operator.or_, T.or_), (operator.xor, T.xor)]

A_VAL = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]])
B_VAL = np.array([2.0, 0.5, -3.0])


@pytest.mark.parametrize("op, fn", BINARY_OPERATORS, ids=lambda p: getattr(p, "__name__", ""))
def test_binary_operators(op, fn):
    a, b = T.dmatrix("a"), T.dvector("b")
    with np.errstate(invalid="ignore"):  # (-2.0) ** 0.5
        expected = op(A_VAL, B_VAL)
    for out in [op(a, b), fn(a, b)]:
        assert isinstance(out, T.TensorVariable)
        assert out.dtype == expected.dtype.name
        assert_same(evaluate([a, b], out, A_VAL, B_VAL), expected)


@pytest.mark.parametrize("op, fn", BINARY_OPERATORS, ids=lambda p: getattr(p, "__name__", ""))
def test_reflected_operators_with_numpy_arrays_and_python_numbers(op, fn):
    b = T.dvector("b")
    # a numpy array on the left must not be treated as a sequence of elements
    out = op(A_VAL, b)
    assert isinstance(out, T.TensorVariable)
    assert out.type.shape == (2, 3)
    with np.errstate(invalid="ignore"):
        assert_same(evaluate([b], out, B_VAL), op(A_VAL, B_VAL))
    out = op(3.0, b)
    assert isinstance(out, T.TensorVariable)
    assert_same(evaluate([b], out, B_VAL), op(3.0, B_VAL))
    out = op(b, 3)
    assert_same(evaluate([b], out, B_VAL), op(B_VAL, 3))


def test_lists_and_tuples_become_constants():
    x = T.fvector("x")
    value = np.array([1.0, 2.0], dtype="float32")
    out = x + [0.5, 1.5]
    assert out.dtype == (value + np.array([0.5, 1.5])).dtype.name == "float64"  # a list is a strong float64 array
    assert_same(evaluate([x], out, value), value + np.array([0.5, 1.5]))
    assert_same(evaluate([x], x * (2, 3), value), value * np.array([2, 3]))


def test_reflected_operators_keep_operand_order():
    """``2 - x`` is not ``x - 2``: checked on values where the order matters."""
    x = T.dvector("x")
    value = np.array([1.0, 4.0, -3.0])
    for op in [operator.sub, operator.truediv, operator.floordiv, operator.mod, operator.pow]:
        assert_same(evaluate([x], op(2.0, x), value), op(2.0, value))
        assert_same(evaluate([x], op(np.full(3, 2.0), x), value), op(np.full(3, 2.0), value))


@pytest.mark.parametrize("op, fn", BITWISE_OPERATORS, ids=lambda p: getattr(p, "__name__", ""))
@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "uint8"])
def test_bitwise_operators(op, fn, dtype):
    a_val = np.array([0, 1, 5, 12], dtype=dtype) if dtype != "bool" else np.array([True, True, False, False])
    b_val = np.array([3, 1, 6, 10], dtype=dtype) if dtype != "bool" else np.array([True, False, True, False])
    a, b = T.tensor(dtype, (None,), "a"), T.tensor(dtype, (None,), "b")
    for out in [op(a, b), fn(a, b), op(a_val, b)]:
        assert out.dtype == dtype
        assert_same(evaluate([a, b], out, a_val, b_val), op(a_val, b_val))
    assert_same(evaluate([a], op(a, True if dtype == "bool" else 6), a_val),
                op(a_val, True if dtype == "bool" else 6))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int64"])
def test_invert_operator(dtype):
    value = np.array([True, False]) if dtype == "bool" else np.array([0, 1, 7], dtype=dtype)
    x = T.tensor(dtype, (None,), "x")
    assert_same(evaluate([x], ~x, value), ~value)
    assert_same(evaluate([x], T.invert(x), value), ~value)


def test_bitwise_operators_reject_floats():
    x, y = T.dvector("x"), T.dvector("y")
    for op in [operator.and_, operator.or_, operator.xor]:
        with pytest.raises(TypeError):
            op(x, y)
    with pytest.raises(TypeError):
        _ = ~x


def test_unary_operators():
    x = T.dmatrix("x")
    assert_same(evaluate([x], -x, A_VAL), -A_VAL)
    assert_same(evaluate([x], abs(x), A_VAL), np.abs(A_VAL))
    assert +x is x
    i = T.bvector("i")
    value = np.array([-3, 0, 4], dtype="int8")
    assert (-i).dtype == "int8" and abs(i).dtype == "int8"
    assert_same(evaluate([i], abs(-i), value), np.abs(-value))


def test_matmul_operator(rng):
    a, b = T.dmatrix("a"), T.dmatrix("b")
    a_val, b_val = rng.normal(size=(2, 3)), rng.normal(size=(3, 4))
    np.testing.assert_allclose(evaluate([a, b], a @ b, a_val, b_val), a_val @ b_val, rtol=1e-14)
    np.testing.assert_allclose(evaluate([b], a_val @ b, b_val), a_val @ b_val, rtol=1e-14)
    np.testing.assert_allclose(evaluate([a], a @ b_val, a_val), a_val @ b_val, rtol=1e-14)


def test_comparisons_are_symbolic_bools():
    x = T.dvector("x")
    value = np.array([-1.0, 0.0, 2.0])
    for op in [operator.lt, operator.le, operator.gt, operator.ge]:
        out = op(x, 0.0)
        assert isinstance(out, T.TensorVariable) and out.dtype == "bool"
        assert_same(evaluate([x], out, value), op(value, 0.0))
        # a numpy array on the left: numpy defers to the reflected comparison
        out = op(np.zeros(3), x)
        assert isinstance(out, T.TensorVariable) and out.dtype == "bool"
        assert_same(evaluate([x], out, value), op(np.zeros(3), value))


def test_equality_stays_identity():
    """``==`` keeps Python semantics so variables work as dict keys; use T.eq for elementwise."""
    x, y = T.dvector("x"), T.dvector("y")
    assert (x == x) is True and (x == y) is False and (x != y) is True
    assert {x: 1, y: 2}[x] == 1
    value = np.array([1.0, 2.0])
    assert_same(evaluate([x, y], T.eq(x, y), value, np.array([1.0, 3.0])), np.array([True, False]))
    assert_same(evaluate([x, y], T.neq(x, y), value, np.array([1.0, 3.0])), np.array([False, True]))


def test_operators_on_constants_and_shared_variables():
    c = T.constant(np.array([1.0, 2.0]))
    assert_same((c * 3 + 1).eval(), np.array([4.0, 7.0]))
    assert_same(both_modes.evaluate(c * 3 + 1), np.array([4.0, 7.0]))
    s = ss.shared(np.array([1, 2], dtype="int32"), name="s")
    assert_same((s + 1).eval(), np.array([2, 3], dtype="int32"))
    assert_same(both_modes.evaluate(s + 1), np.array([2, 3], dtype="int32"))
    assert_same((-s).eval(), np.array([-1, -2], dtype="int32"))
    assert_same(both_modes.evaluate(-s), np.array([-1, -2], dtype="int32"))


# ---------------------------------------------------------------------------- methods
def test_reduction_methods():
    x = T.dmatrix("x")
    for name in ["sum", "mean", "max", "min", "prod"]:
        for kwargs in [{}, {"axis": 0}, {"axis": -1}, {"axis": (0, 1)}, {"axis": 1, "keepdims": True}]:
            out = getattr(x, name)(**kwargs)
            expected = getattr(A_VAL, name)(**kwargs)
            got = evaluate([x], out, A_VAL)
            assert got.dtype == expected.dtype and got.shape == np.shape(expected)
            np.testing.assert_allclose(got, expected, rtol=1e-14)
    i = T.bmatrix("i")
    value = np.array([[1, 2, 3], [4, 5, 6]], dtype="int8")
    assert_same(evaluate([i], i.sum(), value), np.asarray(value.sum()))
    assert_same(evaluate([i], i.prod(axis=1), value), value.prod(axis=1))


def test_reshape_method():
    x = T.dmatrix("x")
    for args, shape in [(((3, 2),), (3, 2)), ((3, 2), (3, 2)), ((-1,), (6,)), (([1, 6],), (1, 6)),
                        ((6, -1), (6, 1))]:
        out = x.reshape(*args)
        assert out.ndim == len(shape)
        assert_same(evaluate([x], out, A_VAL), A_VAL.reshape(shape))
    n = T.lscalar("n")
    out = x.reshape((n, -1))
    assert_same(both_modes.run([x, n], out, A_VAL, 3), A_VAL.reshape(3, -1))


def test_dimshuffle_method():
    x = T.tensor("float64", (2, 3), "x")
    for pattern, expected in [((1, 0), A_VAL.T), (("x", 0, 1), A_VAL[None]), ((1, "x", 0), A_VAL.T[:, None]),
                              (((0, "x", 1),), A_VAL[:, None]), ((0, 1), A_VAL)]:
        out = x.dimshuffle(*pattern)
        assert out.type.shape == expected.shape
        assert_same(evaluate([x], out, A_VAL), expected)


def test_transpose_flatten_astype():
    x = T.tensor("float64", (2, 3), "x")
    assert x.T.type.shape == (3, 2)
    assert_same(evaluate([x], x.T, A_VAL), A_VAL.T)
    assert_same(evaluate([x], x.transpose(1, 0), A_VAL), A_VAL.T)
    assert x.flatten().type.shape == (6,)
    assert_same(evaluate([x], x.flatten(), A_VAL), A_VAL.flatten())
    assert x.astype("int32").dtype == "int32"
    assert_same(evaluate([x], x.astype("int32"), A_VAL), A_VAL.astype("int32"))
    assert_same(evaluate([x], x.astype(np.float32), A_VAL), A_VAL.astype(np.float32))
    t = T.tensor3("t")
    value = np.arange(24.0).reshape(2, 3, 4)
    assert_same(evaluate([t], t.T, value), value.T)
    assert_same(evaluate([t], t.flatten(2), value), value.reshape(2, 12))


def test_type_facts():
    x = T.tensor("int16", (None, 4), "x")
    assert x.ndim == 2 and x.dtype == "int16"
    shape = x.shape
    assert isinstance(shape, T.TensorVariable)
    assert shape.dtype == "int64" and shape.type.shape == (2,)
    value = np.zeros((5, 4), dtype="int16")
    assert_same(evaluate([x], shape, value), np.array(value.shape, dtype="int64"))
    assert_same(evaluate([x], x.shape[0], value), np.asarray(np.int64(5)))
    assert_same(evaluate([x], x.shape[-1] * 2, value), np.asarray(np.int64(8)))


def test_other_methods():
    x = T.dmatrix("x")
    assert_same(evaluate([x], x.argmax(axis=1), A_VAL), A_VAL.argmax(axis=1))
    assert_same(evaluate([x], x.argmin(), A_VAL), np.asarray(A_VAL.argmin()))
    assert_same(evaluate([x], x.cumsum(axis=0), A_VAL), A_VAL.cumsum(axis=0))
    assert_same(evaluate([x], x.cumprod(), A_VAL), A_VAL.cumprod())
    assert_same(evaluate([x], (x > 0).all(axis=0), A_VAL), (A_VAL > 0).all(axis=0))
    assert_same(evaluate([x], (x > 0).any(), A_VAL), np.asarray((A_VAL > 0).any()))


def test_eval():
    x, y = T.dvector("x"), T.dscalar("y")
    out = x * y + 1
    value = np.array([1.0, 2.0, 3.0])
    assert_same(out.eval({x: value, y: 2.0}), value * 2.0 + 1)
    assert_same(out.eval({y: 0.5, x: value}), value * 0.5 + 1)  # order of the dict does not matter
    assert_same(out.eval({x: value, y: 3.0}), value * 3.0 + 1)  # a second call with new values
    assert_same(T.constant(np.arange(3)).sum().eval(), np.asarray(np.arange(3).sum()))
    assert_same((T.constant(2.0) * 3).eval(), np.asarray(6.0))
    with pytest.raises(Exception, match="x"):
        out.eval({y: 1.0})  # x is missing
    # the same graphs in modes "py" and "fast"
    assert_same(both_modes.evaluate(out, {x: value, y: 2.0}), value * 2.0 + 1)
    assert_same(both_modes.evaluate(out, {y: 0.5, x: value}), value * 0.5 + 1)
    assert_same(both_modes.evaluate(T.constant(np.arange(3)).sum()), np.asarray(np.arange(3).sum()))
    assert_same(both_modes.evaluate(T.constant(2.0) * 3), np.asarray(6.0))
    with pytest.raises(Exception, match="x"):
        both_modes.evaluate(out, {y: 1.0})  # x is missing


# ---------------------------------------------------------------------------- truth value, no iteration
@pytest.mark.parametrize("make", [lambda: T.dvector("x"), lambda: T.dscalar("s"), lambda: T.constant([1.0, 2.0]),
                                  lambda: T.constant(False), lambda: T.dvector("x").sum()],
                         ids=["vector", "scalar", "constant", "false-constant", "computed"])
def test_variables_are_truthy_but_have_no_length(make):
    """Theano's rule: every variable is truthy (``if not W:`` tests that an argument was
    given, whatever its value), no len(); iteration only for vectors whose length is known when
    the graph is built (so that ``n, d = X.shape`` works): the constant vector."""
    x = make()
    assert bool(x) is True and (x or None) is x and not (not x)
    with pytest.raises(TypeError):
        len(x)
    if x.ndim == 1 and x.type.shape[0] is not None:
        assert len(list(x)) == x.type.shape[0]
        return
    with pytest.raises(TypeError):
        iter(x)
    with pytest.raises(TypeError):
        list(x)
    with pytest.raises(TypeError):
        for _ in x:
            pass


@pytest.mark.parametrize("make", [lambda x: x > 0, lambda x: x <= 0, lambda x: T.eq(x, 0), lambda x: T.neq(x, 0),
                                  lambda x: T.lt(x, 1), lambda x: T.ge(x, 1)],
                         ids=["gt", "le", "eq", "neq", "lt", "ge"])
def test_comparisons_have_no_truth_value(make):
    c = make(T.dscalar("s"))
    with pytest.raises(TypeError, match="T.and_.*T.switch"):
        bool(c)
    with pytest.raises(TypeError):
        if c:
            pass
    with pytest.raises(TypeError):
        _ = c and True


def test_chained_comparison_refused():
    x = T.dscalar("x")
    with pytest.raises(TypeError, match="comparison"):
        _ = 0 < x < 1  # Python evaluates (0 < x) and (x < 1)


def test_combined_comparisons_are_variables_again():
    """Only a comparison's own result is refused (Theano's rule): ``&`` of two is a variable."""
    x = T.dscalar("x")
    assert bool((x > 0) & (x < 1))


def test_modes_agree_on_operator_graph(mode):
    x, y = T.dmatrix("x"), T.dvector("y")
    out = ((x + y) * 2 - y / 3) ** 2 // 1.5 % 4 + abs(-x) @ y.dimshuffle(0, "x")
    got = ss.function([x, y], out, mode=mode)(A_VAL, B_VAL)
    expected = ((A_VAL + B_VAL) * 2 - B_VAL / 3) ** 2 // 1.5 % 4 + np.abs(-A_VAL) @ B_VAL[:, None]
    np.testing.assert_allclose(got, expected, rtol=1e-14)
