"""scan's error paths: each raises the documented exception type with a message that names the
argument by role and position, the user's variable, the types involved and the fix (API.md,
STYLE.md). Build-time errors come from ``scan()``; run-time ones from the compiled function,
which then leaves every shared variable as it was."""

import re

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T


def message_of(exc_type, build):
    """The message of the ``exc_type`` error that ``build()`` raises."""
    with pytest.raises(exc_type) as info:
        build()
    return str(info.value)


def assert_mentions(message: str, *fragments: str) -> None:
    missing = [f for f in fragments if f not in message]
    assert not missing, f"{missing} not in the message: {message}"


FIX_HINT = re.compile(r"[;:.]\s*(give|make|pass|cast|add|use|drop|list|reduce|reshape|return|slice)\b")


# ---------------------------------------------------------------------------- initial state vs fn's result
@pytest.mark.parametrize("n_steps", [None, 1], ids=["loop", "unrolled"])
def test_float32_initial_for_a_float64_result(n_steps):
    x, h0 = T.vector("x"), T.fscalar("h0")
    message = message_of(TypeError, lambda: ss.scan(lambda a, h: h + a, sequences=x, outputs_info=h0,
                                                    n_steps=n_steps))
    assert_mentions(message, "scan:", "outputs_info[0]", "'h0'", "float32", "float64", ".astype('float64')")


def test_triangular_pitfall_int8_initial_with_an_int32_sequence():
    """The guide's pitfall: T.as_tensor_variable(0)-style int8 state, arange(up_to) is int32."""
    up_to = T.iscalar("up_to")
    seq = T.arange(up_to)
    assert seq.dtype == "int32"
    message = message_of(TypeError, lambda: ss.scan(lambda a, s: s + a, sequences=seq,
                                                    outputs_info=T.as_tensor_variable(np.int8(0))))
    assert_mentions(message, "outputs_info[0]", "int8", "int32", ".astype('int32')")
    named = T.as_tensor_variable(np.int8(0), name="total0")
    message = message_of(TypeError, lambda: ss.scan(lambda a, s: s + a, sequences=seq, outputs_info=named))
    assert_mentions(message, "outputs_info[0]", "'total0'", "int8", "int32")


def test_triangular_fix_from_the_hint_builds_and_runs():
    up_to = T.iscalar("up_to")
    seq = T.arange(up_to)
    result, _ = ss.scan(lambda a, s: s + a, sequences=seq,
                        outputs_info=T.as_tensor_variable(np.int8(0)).astype("int32"))
    out = ss.function([up_to], result, mode="py")(15)
    expected, total = [], 0
    for n in range(15):
        total += n
        expected.append(total)
    assert out.dtype == np.int32
    assert out.tolist() == expected


def test_second_output_dtype_mismatch_names_its_position():
    x = T.vector("x")
    s0, p0 = T.dscalar("s0"), T.iscalar("p0")
    message = message_of(TypeError, lambda: ss.scan(lambda a, s, p: [s + a, p * a], sequences=x,
                                                    outputs_info=[s0, p0]))
    assert_mentions(message, "outputs_info[1]", "'p0'", "int32", "float64")
    assert "outputs_info[0]" not in message


def test_ndim_mismatch():
    x, hv = T.vector("x"), T.vector("hv")
    message = message_of(ValueError, lambda: ss.scan(lambda a, h: (h + a).sum(), sequences=x, outputs_info=hv))
    assert_mentions(message, "outputs_info[0]", "'hv'", "float64[?]", "float64[]", "1 dimension(s)",
                    "make the initial value match one step")


def test_mit_sot_ndim_mismatch_counts_one_step():
    init = T.matrix("init")
    message = message_of(ValueError, lambda: ss.scan(lambda a, b: (a + b).sum(), n_steps=3,
                                                     outputs_info=dict(initial=init, taps=[-2, -1])))
    assert_mentions(message, "outputs_info[0]", "'init'", "1 dimension(s) per step", "float64[?, ?]", "float64[]")
    ok, _ = ss.scan(lambda a, b: (a + b).sum(), n_steps=3, outputs_info=dict(initial=T.vector("v"), taps=[-2, -1]))
    assert ok.ndim == 1


def test_static_shape_mismatch():
    h3 = T.tensor("float64", shape=(3,), name="h3")
    W = T.tensor("float64", shape=(3, 4), name="W")
    message = message_of(ValueError, lambda: ss.scan(lambda h: T.dot(h, W), outputs_info=h3, n_steps=4))
    assert_mentions(message, "outputs_info[0]", "'h3'", "(3,)", "float64[4]")


# ---------------------------------------------------------------------------- outputs_info entries
def test_outputs_info_for_a_subset_of_the_outputs():
    x = T.vector("x")
    message = message_of(ValueError, lambda: ss.scan(lambda a: [a, a * 2], sequences=x, outputs_info=[None]))
    assert_mentions(message, "returned 2 output(s)", "outputs_info describes 1", "None for an output")
    message = message_of(ValueError, lambda: ss.scan(lambda a, h: h + a, sequences=x,
                                                     outputs_info=[T.scalar("h0"), None]))
    assert_mentions(message, "returned 1 output(s)", "outputs_info describes 2")


def test_taps_for_an_output_without_initial():
    x = T.vector("x")
    message = message_of(ValueError, lambda: ss.scan(lambda a: a, sequences=x, outputs_info=[dict(taps=[-1])]))
    assert_mentions(message, "outputs_info[0]", "taps [-1]", "no initial value", "dict(initial=X",
                    "drop the taps")


@pytest.mark.parametrize("taps", [[0], [-1, 0], [-2, 1]])
def test_non_negative_output_taps(taps):
    x = T.vector("x")
    message = message_of(ValueError, lambda: ss.scan(lambda a, *past: a, sequences=x,
                                                     outputs_info=[dict(initial=T.vector("h0"), taps=taps)]))
    assert_mentions(message, "outputs_info[0]", f"taps {taps}", "negative")


def test_repeated_taps():
    x = T.vector("x")
    message = message_of(ValueError, lambda: ss.scan(lambda a, b: a + b, sequences=dict(input=x, taps=[-1, -1])))
    assert_mentions(message, "sequences[0]", "[-1, -1]", "list each tap once")
    message = message_of(ValueError, lambda: ss.scan(lambda a, p, q: a + p, sequences=x,
                                                     outputs_info=dict(initial=T.vector("y0"), taps=[-2, -2])))
    assert_mentions(message, "outputs_info[0]", "[-2, -2]", "list each tap once")


def test_non_integer_taps():
    x = T.vector("x")
    message = message_of(TypeError, lambda: ss.scan(lambda a: a, sequences=dict(input=x, taps=[0.5])))
    assert_mentions(message, "sequences[0]", "integers", "0.5")


@pytest.mark.parametrize("case", ["non-negative", "repeated sequence", "repeated output"])
def test_tap_errors_name_the_variable(case):
    x, h0 = T.vector("x"), T.vector("h0")
    if case == "non-negative":
        build = lambda: ss.scan(lambda a, h: a, sequences=x, outputs_info=[dict(initial=h0, taps=[0])])  # noqa: E731
        name = "'h0'"
    elif case == "repeated sequence":
        build = lambda: ss.scan(lambda a, b: a + b, sequences=dict(input=x, taps=[-1, -1]))  # noqa: E731
        name = "'x'"
    else:
        build = lambda: ss.scan(lambda a, p, q: a, sequences=x,  # noqa: E731
                                outputs_info=dict(initial=h0, taps=[-2, -2]))
        name = "'h0'"
    assert_mentions(message_of(ValueError, build), name)


def test_static_shape_mismatch_gives_a_fix():
    h3 = T.tensor("float64", shape=(3,), name="h3")
    W = T.tensor("float64", shape=(3, 4), name="W")
    message = message_of(ValueError, lambda: ss.scan(lambda h: T.dot(h, W), outputs_info=h3, n_steps=4))
    assert FIX_HINT.search(message), message


# ---------------------------------------------------------------------------- sequences and n_steps
def test_scalar_as_a_sequence():
    s = T.scalar("s")
    message = message_of(ValueError, lambda: ss.scan(lambda a: a, sequences=[T.vector("v"), s]))
    assert_mentions(message, "sequences[1]", "'s'", "float64[]", "scalar", "leading time axis",
                    "pass it as a non_sequence")


def test_no_n_steps_and_no_sequences():
    message = message_of(ValueError, lambda: ss.scan(lambda h: h * 2, outputs_info=T.scalar("h0")))
    assert_mentions(message, "n_steps", "required", "no sequences")


@pytest.mark.parametrize("n_steps", [3.0, np.float64(3.0), True])
def test_non_integer_python_n_steps(n_steps):
    message = message_of(TypeError, lambda: ss.scan(lambda h: h * 2, outputs_info=T.scalar("h0"), n_steps=n_steps))
    assert_mentions(message, "n_steps", "int", repr(n_steps))


@pytest.mark.parametrize("n_steps,shown", [(T.scalar("n"), "'n' (float64[])"), (T.lvector("nv"), "'nv' (int64[?])")])
def test_non_integer_symbolic_n_steps(n_steps, shown):
    message = message_of(TypeError, lambda: ss.scan(lambda h: h * 2, outputs_info=T.scalar("h0"), n_steps=n_steps))
    assert_mentions(message, "n_steps", "integer scalar", shown)


def test_sequence_too_short_for_a_constant_n_steps_is_a_build_time_error():
    x5 = T.tensor("float64", shape=(5,), name="x5")
    message = message_of(ValueError, lambda: ss.scan(lambda a, b: a + b, sequences=dict(input=x5, taps=[-2, 0]),
                                                     n_steps=4))
    assert_mentions(message, "sequences[0]", "'x5'", "5 elements", "4 steps", "taps [-2, 0]", "need 6",
                    "longer sequence")
    # backwards (negative n_steps) needs as many elements
    message = message_of(ValueError, lambda: ss.scan(lambda a: a, sequences=x5, n_steps=-6))
    assert_mentions(message, "'x5'", "5 elements", "6 steps", "need 6")
    # exactly long enough builds
    ok, _ = ss.scan(lambda a, b: a + b, sequences=dict(input=x5, taps=[-2, 0]), n_steps=3)
    assert ok.type.shape == (3,)


def test_taps_wider_than_a_static_sequence():
    x2 = T.tensor("float64", shape=(2,), name="x2")
    message = message_of(ValueError, lambda: ss.scan(lambda a, b: a + b, sequences=dict(input=x2, taps=[-3, 0])))
    assert_mentions(message, "sequences[0]", "'x2'", "2 elements", "[-3, 0]", "span 3")


def test_sequence_too_short_for_a_symbolic_n_steps_is_a_call_time_error(mode):
    x, n = T.vector("x"), T.iscalar("n")
    out, _ = ss.scan(lambda a, b: a + b, sequences=dict(input=x, taps=[-2, 0]), n_steps=n, name="pairs")
    f = ss.function([x, n], out, mode=mode)
    np.testing.assert_array_equal(f(np.arange(6.0), 4), [0.0 + 2, 1 + 3, 2 + 4, 3 + 5])
    message = message_of(ValueError, lambda: f(np.arange(5.0), 4))
    assert_mentions(message, "'pairs'", "sequences[0]", "'x'", "5 elements", "4 steps", "taps [-2, 0]", "need 6")


def test_sequence_too_short_for_a_negative_symbolic_n_steps(mode):
    x, n = T.vector("x"), T.iscalar("n")
    out, _ = ss.scan(lambda a: a * 2, sequences=x, n_steps=n)
    f = ss.function([x, n], out, mode=mode)
    np.testing.assert_array_equal(f(np.arange(5.0), -3), [8.0, 6.0, 4.0])
    assert_mentions(message_of(ValueError, lambda: f(np.arange(2.0), -3)), "'x'", "2 elements", "need 3")


def test_sequence_too_short_for_one_unrolled_step(mode):
    x = T.vector("x")
    out, _ = ss.scan(lambda a: a * 2, sequences=x, n_steps=1)
    f = ss.function([x], out, mode=mode)
    assert_mentions(message_of(ValueError, lambda: f(np.zeros(0))), "sequences[0]", "'x'", "0 elements")


# ---------------------------------------------------------------------------- what fn returns
@pytest.mark.parametrize("value,shown", [("hello", "str 'hello'"), (object(), "object <object")])
def test_fn_returning_a_non_variable(value, shown):
    x = T.vector("x")
    message = message_of(TypeError, lambda: ss.scan(lambda a: value, sequences=x))
    assert_mentions(message, "fn returned", shown, "position 0", "fn must return variables")
    message = message_of(TypeError, lambda: ss.scan(lambda a: [a * 2, value], sequences=x))
    assert_mentions(message, "position 1")


def test_until_not_last():
    x = T.vector("x")
    message = message_of(TypeError, lambda: ss.scan(lambda a: [ss.until(a > 0), a], sequences=x))
    assert_mentions(message, "until(...)", "last")


def test_two_untils():
    x = T.vector("x")
    message = message_of(TypeError, lambda: ss.scan(lambda a: [a, ss.until(a > 0), ss.until(a > 1)], sequences=x))
    assert_mentions(message, "until(...)", "last")


def test_until_condition_must_be_a_scalar():
    x = T.vector("x")
    message = message_of(TypeError, lambda: ss.scan(lambda a: (a, ss.until(T.vector("v") > a)), sequences=x))
    assert_mentions(message, "until", "scalar", "bool[?]", ".all() or .any()")


def test_update_key_that_is_not_a_shared_variable():
    x = T.vector("x")
    message = message_of(TypeError, lambda: ss.scan(lambda a: (a, {x: x + 1}), sequences=x))
    assert_mentions(message, "updates", "shared variables as keys", "update 0", "'x'", "float64[?]")


def test_update_dtype_differs_from_the_shared_variable():
    x = T.vector("x")
    c = ss.shared(np.zeros(3), name="c")
    message = message_of(TypeError, lambda: ss.scan(lambda a: (a, {c: (c + 1).astype("float32")}), sequences=x))
    assert_mentions(message, "'c'", "float64[?]", "float32[?]", ".astype('float64')")
    counts = ss.shared(np.zeros(3, dtype="int64"), name="counts")
    message = message_of(TypeError, lambda: ss.scan(lambda a: (a, {counts: counts + a}), sequences=x))
    assert_mentions(message, "'counts'", "int64", "float64", ".astype('int64')")


def test_python_float_update_of_an_int_shared_variable():
    counter = ss.shared(np.int64(0), name="counter")
    message = message_of(TypeError, lambda: ss.scan(lambda: {counter: 1.5}, n_steps=3))
    assert_mentions(message, "'counter'", "int64")


def test_python_float_result_for_an_int_state():
    b0 = T.bscalar("b0")
    message = message_of(TypeError, lambda: ss.scan(lambda b: 2.5, outputs_info=b0, n_steps=2))
    assert_mentions(message, "outputs_info[0]", "'b0'", "int8")


# ---------------------------------------------------------------------------- fn's signature
def test_fn_that_cannot_take_what_scan_passes():
    x, s, W = T.vector("x"), T.scalar("s"), T.matrix("W")
    message = message_of(TypeError, lambda: ss.scan(lambda a: a, sequences=x, outputs_info=[s], non_sequences=[W]))
    assert_mentions(message, "fn(a)", "3 argument(s)", "0: sequences[0] 'x' tap 0",
                    "1: outputs_info[0] (initial 's') tap -1", "2: non_sequences[0] 'W'")


def test_fn_that_needs_more_arguments_than_scan_passes():
    x = T.vector("x")
    message = message_of(TypeError, lambda: ss.scan(lambda a, b, c: a, sequences=dict(input=x, taps=[-1, 0])))
    assert_mentions(message, "fn(a, b, c)", "2 argument(s)", "0: sequences[0] 'x' tap -1", "1: sequences[0] 'x' tap 0")


def test_fn_with_var_args_takes_anything():
    x = T.vector("x")
    out, _ = ss.scan(lambda *args: args[0] + args[1], sequences=dict(input=x, taps=[-1, 0]))
    np.testing.assert_array_equal(ss.function([x], out, mode="py")(np.arange(4.0)), [1.0, 3.0, 5.0])


# ---------------------------------------------------------------------------- strict=True
def test_strict_missing_variable():
    x, y = T.vector("x"), T.scalar("y")
    message = message_of(ss.MissingInputError, lambda: ss.scan(lambda a: a * y, sequences=x, strict=True))
    assert issubclass(ss.MissingInputError, ValueError)
    assert_mentions(message, "strict=True", "variable 'y'", "float64[]", "add it to non_sequences")


def test_strict_missing_shared_variable():
    x = T.vector("x")
    c = ss.shared(np.ones(2), name="c")
    message = message_of(ss.MissingInputError, lambda: ss.scan(lambda a: a * c.sum(), sequences=x, strict=True))
    assert_mentions(message, "shared variable 'c'", "non_sequences")
    out, _ = ss.scan(lambda a, c_: a * c_.sum(), sequences=x, non_sequences=[c], strict=True)
    np.testing.assert_array_equal(ss.function([x], out, mode="py")(np.arange(3.0)), [0.0, 2.0, 4.0])


def test_strict_with_one_unrolled_step():
    h0, k = T.vector("h0"), T.scalar("k")
    out, _ = ss.scan(lambda h, k_: h * k_, outputs_info=h0, non_sequences=[k], n_steps=1, strict=True)
    np.testing.assert_array_equal(ss.function([h0, k], out, mode="py")(np.ones(2), 3.0), [[3.0, 3.0]])


# ---------------------------------------------------------------------------- mit-sot initial rows
def test_mit_sot_initial_with_too_few_rows_is_a_build_time_error():
    init2 = T.tensor("float64", shape=(2,), name="init2")
    message = message_of(ValueError, lambda: ss.scan(lambda a, b: a + b, n_steps=4,
                                                     outputs_info=[dict(initial=init2, taps=[-3, -1])]))
    assert_mentions(message, "outputs_info[0]", "'init2'", "2 rows", "taps [-3, -1]", "need 3",
                    "initial[0] is output[-3]")


def test_mit_sot_initial_without_a_leading_axis():
    message = message_of(ValueError, lambda: ss.scan(lambda a, b: a + b, n_steps=4,
                                                     outputs_info=[dict(initial=T.scalar("s0"), taps=[-2, -1])]))
    assert_mentions(message, "outputs_info[0]", "'s0'", "float64[]", "leading axis of length 2")


def test_mit_sot_initial_with_too_few_rows_at_call_time(mode):
    init = T.vector("init")
    out, _ = ss.scan(lambda a, b: a + b, n_steps=4, outputs_info=[dict(initial=init, taps=[-3, -1])])
    f = ss.function([init], out, mode=mode)
    history = [1.0, 2.0, 3.0]
    for _ in range(4):
        history.append(history[-3] + history[-1])
    np.testing.assert_array_equal(f(np.array([1.0, 2.0, 3.0])), history[3:])
    message = message_of(ValueError, lambda: f(np.ones(2)))
    assert_mentions(message, "outputs_info[0]", "'init'", "2 initial rows", "taps [-3, -1]", "need 3")


# ---------------------------------------------------------------------------- run time: shapes per step
def test_output_shape_changing_at_a_later_step(mode):
    h = T.vector("h")
    # step 0 keeps h's length; step 1 returns one element less
    out, _ = ss.scan(lambda i, prev: prev[:2 - T.cast(i > 0, "int64")] * 2, sequences=T.arange(3),
                     outputs_info=h, name="shrink")
    f = ss.function([h], out, mode=mode)
    message = message_of(ValueError, lambda: f(np.ones(2)))
    assert_mentions(message, "shrink", "outputs_info[0]", "'h'", "shape (2,) per step", "step 1",
                    "shape (1,)", "same shape at every step")


def test_map_output_shape_changing_between_steps(mode):
    out, _ = ss.scan(lambda i: T.arange(i), sequences=T.arange(3))
    message = message_of(ValueError, lambda: ss.function([], out, mode=mode)())
    assert_mentions(message, "output 0", "step 1", "shape (1,)", "same shape at every step")


# ---------------------------------------------------------------------------- nothing half-updated
def test_failing_call_keeps_shared_values(mode):
    x, n = T.vector("x"), T.iscalar("n")
    counter = ss.shared(np.int64(10), name="counter")
    total = ss.shared(np.zeros(2), name="total")
    stream = ss.RandomStream(5)

    def step(a):
        noise = stream.uniform(size=(2,))
        return a + noise.sum(), {counter: counter + 1, total: total + a}

    out, updates = ss.scan(step, sequences=x, n_steps=n)
    assert len(updates) == 3  # counter, total and the generator
    f = ss.function([x, n], out, updates=updates, mode=mode)
    generator = next(v for v in updates if v not in (counter, total))
    state = generator.get_value().bit_generator.state
    with pytest.raises(ValueError, match="sequences\\[0\\] 'x' has 2 elements"):
        f(np.ones(2), 3)
    assert counter.get_value() == 10
    np.testing.assert_array_equal(total.get_value(), [0.0, 0.0])
    assert generator.get_value().bit_generator.state == state
    f(np.ones(3), 3)  # a good call applies every update
    assert counter.get_value() == 13
    np.testing.assert_array_equal(total.get_value(), [3.0, 3.0])
    assert generator.get_value().bit_generator.state != state


def test_failing_step_keeps_shared_values(mode):
    h = T.vector("h")
    counter = ss.shared(np.float64(5.0), name="counter")
    out, updates = ss.scan(lambda prev: (T.concatenate([prev, prev[:1]]), {counter: counter + 1}),
                           outputs_info=h, n_steps=3)
    f = ss.function([h], out, updates=updates, mode=mode)
    with pytest.raises(ValueError, match="same shape at every step"):
        f(np.ones(2))
    assert counter.get_value() == 5.0
