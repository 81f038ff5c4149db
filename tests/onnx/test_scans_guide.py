"""Every example of the Theano scan guide, built with symscan, exported to ONNX: the plain graph
(mode "py") and the optimised one (mode "fast") pass the full checker and give mode "py"'s
numbers in onnxruntime and in onnx's reference evaluator; mode="onnxruntime" gives them too.
The Gibbs sampler draws random numbers, which have no ONNX form: exporting it names the op."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T


# ---------------------------------------------------------------------------- the examples
def power(last_only: bool):
    """A**k: the last step (the guide's power function), or every step."""
    k, A = T.iscalar("k"), T.vector("A")
    result, updates = ss.scan(lambda prior, A: prior * A, outputs_info=T.ones_like(A), non_sequences=A, n_steps=k)
    outputs = result[-1] if last_only else result
    return [A, k], outputs, updates, [[np.arange(10.0), 2], [np.arange(10.0), 4], [[1.5, -2.0, 3.0], 5]]


def polynomial():
    coefficients, x = T.vector("coefficients"), T.scalar("x")
    components, updates = ss.scan(lambda c, power, free: c * (free ** power), outputs_info=None,
                                  sequences=[coefficients, T.arange(10000)], non_sequences=x)
    return [coefficients, x], [components.sum(), components], updates, [[[1.0, 0.0, 2.0], 3.0],
                                                                        [[0.5, -1.0, 2.0, 4.0], -1.5]]


def triangular():
    up_to = T.iscalar("up_to")
    seq = T.arange(up_to)
    result, updates = ss.scan(lambda value, total: total + value, sequences=seq,
                              outputs_info=T.as_tensor_variable(np.asarray(0, seq.dtype)))
    return [up_to], result, updates, [[15], [1], [0]]


def set_subtensor():
    location, values, model = T.imatrix("location"), T.vector("values"), T.matrix("output_model")

    def set_value_at_position(a_location, a_value, output_model):
        zeros = T.zeros_like(output_model)
        return T.set_subtensor(zeros[a_location[0], a_location[1]], a_value)

    result, updates = ss.scan(set_value_at_position, sequences=[location, values], non_sequences=model)
    return [location, values, model], result, updates, [[[[1, 1], [2, 3]], [42.0, 50.0], np.zeros((5, 5))]]


def shared_counter():
    """``a: a + 1`` for 10 steps; b = a + 1 and c = updates[a] + 1, with the updates."""
    a = ss.shared(1, name="a")
    _, updates = ss.scan(lambda: {a: a + 1}, n_steps=10)
    return [], [a + 1, updates[a] + 1], updates, [[]]


def taps_rnn():
    def one_step(u_tm4, u_t, x_tm3, x_tm1, y_tm1, W, W_in_1, W_in_2, W_feedback, W_out):
        x_t = T.tanh(T.dot(x_tm1, W) + T.dot(u_t, W_in_1) + T.dot(u_tm4, W_in_2) + T.dot(y_tm1, W_feedback))
        return [x_t, T.dot(x_tm3, W_out)]

    Ws = [T.matrix(name) for name in ("W", "W_in_1", "W_in_2", "W_feedback", "W_out")]
    u, x0, y0 = T.matrix("u"), T.matrix("x0"), T.vector("y0")
    (x_vals, y_vals), updates = ss.scan(one_step, sequences=dict(input=u, taps=[-4, -0]),
                                        outputs_info=[dict(initial=x0, taps=[-3, -1]), y0], non_sequences=Ws,
                                        strict=True)
    r = np.random.default_rng(3)
    n_x, n_u, n_y = 4, 3, 2
    values = [r.normal(size=(9, n_u)), r.normal(size=(3, n_x)), r.normal(size=n_y), 0.5 * r.normal(size=(n_x, n_x)),
              r.normal(size=(n_u, n_x)), r.normal(size=(n_u, n_x)), r.normal(size=(n_y, n_x)),
              r.normal(size=(n_x, n_y))]
    return [u, x0, y0] + Ws, [x_vals, y_vals], updates, [values]


def power_of_2():
    max_value = T.scalar("max_value")
    values, updates = ss.scan(lambda previous, max_value: (previous * 2, ss.until(previous * 2 > max_value)),
                              outputs_info=T.constant(1.0), non_sequences=max_value, n_steps=1024)
    return [max_value], values, updates, [[45.0], [0.5], [1e300]]


def until_with_updates():
    """The reference's ``return [y1_t, y2_t], {x: x + 1}, until(x < 50)``."""
    x = ss.shared(45, name="x")
    (y1, y2), updates = ss.scan(lambda: ([2 * x, x - 50], {x: x + 1}, ss.until(x < 50)), n_steps=10)
    return [], [y1, y2], updates, [[]]


def return_forms(form: str):
    """fn returns (outputs, updates), (updates, outputs), (outputs, update pairs) or updates only."""
    counter = ss.shared(0.0, name="counter")

    def fn(s):
        outputs, update = [s * counter], {counter: counter + s}
        return {"outputs, updates": (outputs, update), "updates, outputs": (update, outputs),
                "outputs, update pairs": (outputs, list(update.items())), "updates only": update}[form]

    seq = T.vector("seq")
    outputs, updates = ss.scan(fn, sequences=seq)
    return [seq], [] if form == "updates only" else outputs, updates, [[[1.0, 2.0, 3.0]]]


def free_variable():
    """fn reads W_2 = W**2 without it being passed, mapped over X and repeated from x0."""
    W = T.matrix("W")
    W_2 = W ** 2
    X, x0 = T.matrix("X"), T.vector("x0")
    mapped, _ = ss.scan(lambda x: T.dot(x, W_2), sequences=X)
    repeated, updates = ss.scan(lambda x: T.dot(x, W_2), outputs_info=x0, n_steps=3)
    r = np.random.default_rng(2)
    return [X, x0, W], [mapped, repeated], updates, [[r.normal(size=(4, 3)), r.normal(size=3), r.normal(size=(3, 3))]]


def argument_order():
    """Sequences with taps [-3, 2, -1], [0] and [3]; outputs with taps [-3, -5], None and -1."""

    def fn(s1_tm3, s1_tp2, s1_tm1, s2_t, s3_tp3, o1_tm3, o1_tm5, o3_tm1, a1, a2):
        o2 = T.stack([s1_tm3, s1_tp2, s1_tm1, s2_t, s3_tp3, o1_tm3, o1_tm5, o3_tm1, a1, a2])
        return [o1_tm3 - 0.5 * o1_tm5 + a1 * s1_tm3, o2, a2 * o3_tm1 + s2_t * s1_tp2]

    s1, s2, s3, o1 = (T.vector(name) for name in ("Sequence1", "Sequence2", "Sequence3", "Output1"))
    o2, o3, a1, a2 = (T.scalar(name) for name in ("Output2", "Output3", "Argument1", "Argument2"))
    outputs, updates = ss.scan(fn, sequences=[dict(input=s1, taps=[-3, 2, -1]), s2, dict(input=s3, taps=3)],
                               outputs_info=[dict(initial=o1, taps=[-3, -5]), dict(initial=o2, taps=None), o3],
                               non_sequences=[a1, a2])
    r = np.random.default_rng(4)
    values = [r.uniform(-1, 1, size=12), r.uniform(-1, 1, size=9), r.uniform(-1, 1, size=9),
              r.uniform(-1, 1, size=5), 0.3, 0.7, -0.8]
    return [s1, s2, s3, o1, o3, a1, a2], outputs, updates, [values]


GUIDE = {
    "power": lambda: power(last_only=True),
    "power every step": lambda: power(last_only=False),
    "polynomial": polynomial,
    "triangular numbers": triangular,
    "set_subtensor": set_subtensor,
    "shared counter": shared_counter,
    "taps RNN": taps_rnn,
    "power of 2 until": power_of_2,
    "until with updates": until_with_updates,
    **{f"fn returns {form}": (lambda form=form: return_forms(form))
       for form in ("outputs, updates", "updates, outputs", "outputs, update pairs", "updates only")},
    "free variable": free_variable,
    "argument order": argument_order,
}


# ---------------------------------------------------------------------------- export
@pytest.mark.parametrize("mode", ["py", "fast"], ids=["plain", "optimised"])
@pytest.mark.parametrize("example", list(GUIDE))
def test_guide_example_exports(export_check, example, mode):
    inputs, outputs, updates, value_sets = GUIDE[example]()
    f = ss.function(inputs, outputs, updates=updates, mode=mode)
    model = export_check(f, *value_sets)
    updated = [f"{var.name}_updated" for var, _ in f.updates]
    assert [o.name for o in model.graph.output][len(f.outputs):] == updated


def test_the_plain_guide_examples_lower_as_the_api_says(export_check):
    """Sequences read at tap 0 with sit-sot/nit-sot outputs: Scan; n_steps without sequences,
    taps, mit-sot and until: Loop."""
    expected = {"power": [("Loop", [])], "polynomial": [("Scan", [])], "triangular numbers": [("Scan", [])],
                "set_subtensor": [("Scan", [])], "shared counter": [("Loop", [])], "taps RNN": [("Loop", [])],
                "power of 2 until": [("Loop", [])], "until with updates": [("Loop", [])],
                "fn returns outputs, updates": [("Scan", [])], "free variable": [("Scan", []), ("Loop", [])],
                "argument order": [("Loop", [])]}
    for example, kinds in expected.items():
        inputs, outputs, updates, _ = GUIDE[example]()
        model = export_check.export(ss.function(inputs, outputs, updates=updates, mode="py"))
        assert export_check.loop_kinds(model.graph) == kinds, example


def test_shared_counter_feeds_its_update_back(export_check):
    """The model's extra output is a's new value; fed back as a, it gives the second call."""
    inputs, outputs, updates, _ = shared_counter()
    f = ss.function(inputs, outputs, updates=updates, mode="fast")
    model = export_check.export(f)
    assert [i.name for i in model.graph.input] == ["a"]
    session = export_check.session(model)
    b, c, a = session.run(None, {})
    assert (int(b), int(c), int(a)) == (2, 12, 11)
    b, c, a = session.run(None, {"a": a})
    assert (int(b), int(c), int(a)) == (12, 22, 21)


# ---------------------------------------------------------------------------- random draws
def gibbs(explicit: bool):
    r = np.random.default_rng(0)
    W = ss.shared(r.normal(size=(6, 3)), name="W")
    bvis, bhid = ss.shared(r.normal(size=6), name="bvis"), ss.shared(r.normal(size=3), name="bhid")
    trng = T.shared_randomstreams.RandomStreams(1234)

    def one_step(vsample, *params):
        W_, bvis_, bhid_ = params or (W, bvis, bhid)
        hmean = T.nnet.sigmoid(T.dot(vsample, W_) + bhid_)
        hsample = trng.binomial(size=hmean.shape, n=1, p=hmean)
        vmean = T.nnet.sigmoid(T.dot(hsample, W_.T) + bvis_)
        return trng.binomial(size=vsample.shape, n=1, p=vmean, dtype="float64")

    sample = T.vector("sample")
    values, updates = ss.scan(one_step, outputs_info=sample, non_sequences=[W, bvis, bhid] if explicit else None,
                              n_steps=10, strict=explicit)
    return sample, values, updates


@pytest.mark.parametrize("mode", ["py", "fast", "onnxruntime"])
@pytest.mark.parametrize("explicit", [False, True], ids=["implicit", "non_sequences"])
def test_gibbs_sampler_is_an_export_error_naming_the_random_op(mode, explicit):
    sample, values, updates = gibbs(explicit)
    with pytest.raises(ss.onnx.ExportError, match=r"RandomVariable\{binomial"):
        ss.onnx.export(ss.function([sample], values[-1], updates=updates, mode=mode))


# ---------------------------------------------------------------------------- mode="onnxruntime"
@pytest.mark.parametrize("example", list(GUIDE))
def test_guide_example_in_onnxruntime_mode(example):
    """Same numbers as mode "py", and the shared variables advance alike over two calls."""
    inputs, outputs, updates, value_sets = GUIDE[example]()
    updated = list(dict.fromkeys(var for var, _ in (updates.items() if isinstance(updates, dict) else updates)))
    start = [var.get_value() for var in updated]
    results = {}
    for mode in ("py", "onnxruntime"):
        for var, value in zip(updated, start):
            var.set_value(value)
        f = ss.function(inputs, outputs, updates=updates, mode=mode)
        results[mode] = [(f(*values), [var.get_value() for var in updated]) for values in value_sets * 2]
    for (got, got_shared), (expected, expected_shared) in zip(results["onnxruntime"], results["py"]):
        got, expected = (list(got), list(expected)) if isinstance(expected, list) else ([got], [expected])
        for g, e in zip(got + got_shared, expected + expected_shared):
            assert np.shape(g) == np.shape(e) and np.asarray(g).dtype == np.asarray(e).dtype
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12)


def running_state_with_shared_updates(mode: str):
    """A running state, a shared vector and a shared step counter, compiled in ``mode``."""
    total, calls = ss.shared(np.array([0.0, 1.0]), name="total"), ss.shared(np.int64(0), name="calls")
    x = T.matrix("x")
    out, updates = ss.scan(lambda row, s: (s * 0.5 + row, {total: total + row, calls: calls + 1}),
                           sequences=x, outputs_info=T.zeros(2))
    return ss.function([x], out[-1], updates=updates, mode=mode), total, calls


def test_onnxruntime_mode_advances_shared_state_of_a_scan_over_a_sequence():
    """Two calls, as in mode "py": the shared variables are fed back between calls."""
    results = {}
    for mode in ("py", "onnxruntime"):
        f, total, calls = running_state_with_shared_updates(mode)
        xv = np.arange(6.0).reshape(3, 2)
        results[mode] = [(f(xv), total.get_value(), calls.get_value()) for _ in range(2)]
    assert [int(c) for _, _, c in results["onnxruntime"]] == [3, 6]
    for got, expected in zip(results["onnxruntime"], results["py"]):
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-9)
