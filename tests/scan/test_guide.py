"""Every example of the Theano scan guide, run through ``symscan.compat.theano``.

Each example is held below as the guide prints it and run by ``run_guide``, which changes
only its import lines (``import theano`` -> ``import symscan.compat.theano as theano`` and
so on) and captures what it prints. Python 2 is adapted by hand and nowhere else:
``print x`` -> ``print(x)``, ``xrange`` -> ``range``. Expected numbers are the ones the
guide prints, or come from numpy loops written here, never from symscan.
"""

import contextlib
import io
import re
import textwrap

import numpy as np
import pytest

import symscan as ss
import symscan.compat.theano as theano
import symscan.compat.theano.tensor as T

# Every example runs with the default mode set to "py", "fast" and "fast" without each rewrite.
pytestmark = pytest.mark.usefixtures("default_mode")

# ---------------------------------------------------------------------------- running the guide
COMPAT_IMPORTS = {
    "import theano": "import symscan.compat.theano as theano",
    "import theano.tensor as T": "import symscan.compat.theano.tensor as T",
    "import theano.tensor as TT": "import symscan.compat.theano.tensor as TT",
    "from theano import tensor as T": "from symscan.compat.theano import tensor as T",
}

# The guide reads as one session: blocks without imports use these earlier ones.
SESSION_IMPORTS = """
import numpy
import theano
import theano.tensor as T
"""


def port(source: str) -> str:
    """The example with its Theano import lines replaced; every other line is unchanged."""
    lines = [COMPAT_IMPORTS.get(line, line) for line in textwrap.dedent(source).splitlines()]
    ported = "\n".join(lines)
    assert not re.search(r"^\s*(import|from)\s+theano\b", ported, re.MULTILINE), ported
    return ported


def run_guide(source: str, namespace: dict | None = None, **defined) -> tuple[dict, str]:
    """Run an example (in ``namespace`` to continue an earlier one, else in a fresh session);
    ``defined`` are values the guide leaves to the reader. Returns the namespace and stdout."""
    if namespace is None:
        namespace = {}
        exec(port(SESSION_IMPORTS), namespace)
    namespace.update(defined)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(port(source), "<theano scan guide>", "exec"), namespace)
    return namespace, printed.getvalue()


_TOKEN = re.compile(r"\[|\]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def printed_values(text: str) -> list[np.ndarray]:
    """Each printed array, list or number, in order (``[[1. 2.] [3. 4.]]`` -> a 2x2 array).

    Only brackets and numbers count, so numpy's spacing and line wrapping do not matter.
    """
    values, open_lists = [], []
    for token in _TOKEN.findall(text):
        if token == "[":
            open_lists.append([])
        elif token == "]":
            done = open_lists.pop()
            (open_lists[-1] if open_lists else values).append(done)
        else:
            (open_lists[-1] if open_lists else values).append(float(token))
    assert not open_lists, f"unbalanced brackets in {text!r}"
    return [np.array(v) for v in values]


def assert_prints(printed: str, guide_output: str) -> None:
    """What the example printed is, number for number and shape for shape, what the guide shows."""
    got, expected = printed_values(printed), printed_values(guide_output)
    assert len(got) == len(expected), f"printed {printed!r}, the guide shows {guide_output!r}"
    for g, e in zip(got, expected):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-7)


def test_port_changes_only_the_import_lines():
    source = "import theano\nfrom theano import tensor as T\nx = T.vector()  # import theano\n"
    assert port(source).splitlines() == [
        "import symscan.compat.theano as theano",
        "from symscan.compat.theano import tensor as T",
        "x = T.vector()  # import theano",
    ]


def test_printed_values_reads_numpy_and_python_printing():
    first, second, third = printed_values("[[ 1.  2.]\n [ 3. -4.e+01]]\n19.0\n[0, 1, 3]")
    np.testing.assert_array_equal(first, [[1.0, 2.0], [3.0, -40.0]])
    assert second.shape == () and second == 19.0
    np.testing.assert_array_equal(third, [0, 1, 3])


# ---------------------------------------------------------------------------- A**k
NUMPY_POWER = """
result = 1
for i in range(k):
  result = result * A
"""

POWER = """
import theano
import theano.tensor as T

k = T.iscalar("k")
A = T.vector("A")

# Symbolic description of the result
result, updates = theano.scan(fn=lambda prior_result, A: prior_result * A,
                              outputs_info=T.ones_like(A),
                              non_sequences=A,
                              n_steps=k)

# We only care about A**k, but scan has provided us with A**1 through A**k.
# Discard the values that we don't care about. Scan is smart enough to
# notice this and not waste memory saving them.
final_result = result[-1]

# compiled function that returns A**k
power = theano.function(inputs=[A,k], outputs=final_result, updates=updates)

print(power(range(10),2))
print(power(range(10),4))
"""

POWER_OUTPUT = """
[  0.   1.   4.   9.  16.  25.  36.  49.  64.  81.]
[  0.00000000e+00   1.00000000e+00   1.60000000e+01   8.10000000e+01
   2.56000000e+02   6.25000000e+02   1.29600000e+03   2.40100000e+03
   4.09600000e+03   6.56100000e+03]
"""


def test_power_prints_the_guides_numbers():
    namespace, printed = run_guide(POWER)
    assert_prints(printed, POWER_OUTPUT)
    assert namespace["updates"] == {}
    for k in (2, 4):
        numpy_loop = {"A": np.arange(10.0), "k": k}
        exec(NUMPY_POWER, numpy_loop)  # the guide's own python/numpy version
        np.testing.assert_array_equal(namespace["power"](range(10), k), numpy_loop["result"])


def test_power_result_holds_every_step():
    """scan returns A**1 .. A**k, one row per step, before result[-1] picks the last."""
    namespace, _ = run_guide(POWER)
    every_step = theano.function([namespace["A"], namespace["k"]], namespace["result"])
    out = every_step([1.5, -2.0, 3.0], 5)
    assert out.shape == (5, 3)
    expected, row = [], np.ones(3)
    for _ in range(5):
        row = row * np.array([1.5, -2.0, 3.0])
        expected.append(row)
    np.testing.assert_allclose(out, expected)


# ---------------------------------------------------------------------------- polynomial
POLYNOMIAL = """
import numpy

coefficients = theano.tensor.vector("coefficients")
x = T.scalar("x")

max_coefficients_supported = 10000

# Generate the components of the polynomial
components, updates = theano.scan(fn=lambda coefficient, power, free_variable: coefficient * (free_variable ** power),
                                  outputs_info=None,
                                  sequences=[coefficients, theano.tensor.arange(max_coefficients_supported)],
                                  non_sequences=x)
# Sum them up
polynomial = components.sum()

# Compile a function
calculate_polynomial = theano.function(inputs=[coefficients, x], outputs=polynomial)

# Test
test_coefficients = numpy.asarray([1, 0, 2], dtype=numpy.float32)
test_value = 3
print(calculate_polynomial(test_coefficients, test_value))
print(1.0 * (3 ** 0) + 0.0 * (3 ** 1) + 2.0 * (3 ** 2))
"""

POLYNOMIAL_OUTPUT = """
19.0
19.0
"""


def test_polynomial_prints_19():
    namespace, printed = run_guide(POLYNOMIAL)
    assert_prints(printed, POLYNOMIAL_OUTPUT)
    # arange(10000) is truncated to the 3 coefficients: one component per coefficient
    components = theano.function([namespace["coefficients"], namespace["x"]], namespace["components"])
    np.testing.assert_allclose(components([1.0, 0.0, 2.0], 3.0), [1.0 * 3**0, 0.0 * 3**1, 2.0 * 3**2])


# ---------------------------------------------------------------------------- triangular numbers
TRIANGULAR = """
import numpy as np
import theano
import theano.tensor as T

up_to = T.iscalar("up_to")

# define a named function, rather than using lambda
def accumulate_by_adding(arange_val, sum_to_date):
    return sum_to_date + arange_val
seq = T.arange(up_to)

# An unauthorized implicit downcast from the dtype of 'seq', to that of
# 'T.as_tensor_variable(0)' which is of dtype 'int8' by default would occur
# if this instruction were to be used instead of the next one:
# outputs_info = T.as_tensor_variable(0)

outputs_info = T.as_tensor_variable(np.asarray(0, seq.dtype))
scan_result, scan_updates = theano.scan(fn=accumulate_by_adding,
                                        outputs_info=outputs_info,
                                        sequences=seq)
triangular_sequence = theano.function(inputs=[up_to], outputs=scan_result)

# test
some_num = 15
print(triangular_sequence(some_num))
print([n * (n + 1) // 2 for n in range(some_num)])
"""

TRIANGULAR_OUTPUT = """
[  0   1   3   6  10  15  21  28  36  45  55  66  78  91 105]
[0, 1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 66, 78, 91, 105]
"""


def test_triangular_numbers():
    namespace, printed = run_guide(TRIANGULAR)
    assert_prints(printed, TRIANGULAR_OUTPUT)
    out = namespace["triangular_sequence"](15)
    assert out.dtype == np.dtype(namespace["seq"].dtype)  # accumulated in seq's integer dtype
    assert out.dtype.kind == "i"


# ---------------------------------------------------------------------------- set_subtensor
SET_SUBTENSOR = """
location = T.imatrix("location")
values = T.vector("values")
output_model = T.matrix("output_model")

def set_value_at_position(a_location, a_value, output_model):
    zeros = T.zeros_like(output_model)
    zeros_subtensor = zeros[a_location[0], a_location[1]]
    return T.set_subtensor(zeros_subtensor, a_value)

result, updates = theano.scan(fn=set_value_at_position,
                              outputs_info=None,
                              sequences=[location, values],
                              non_sequences=output_model)

assign_values_at_positions = theano.function(inputs=[location, values, output_model], outputs=result)

# test
test_locations = numpy.asarray([[1, 1], [2, 3]], dtype=numpy.int32)
test_values = numpy.asarray([42, 50], dtype=numpy.float32)
test_output_model = numpy.zeros((5, 5), dtype=numpy.float32)
print(assign_values_at_positions(test_locations, test_values, test_output_model))
"""

SET_SUBTENSOR_OUTPUT = """
[[[  0.   0.   0.   0.   0.]
  [  0.  42.   0.   0.   0.]
  [  0.   0.   0.   0.   0.]
  [  0.   0.   0.   0.   0.]
  [  0.   0.   0.   0.   0.]]

 [[  0.   0.   0.   0.   0.]
  [  0.   0.   0.   0.   0.]
  [  0.   0.   0.  50.   0.]
  [  0.   0.   0.   0.   0.]
  [  0.   0.   0.   0.   0.]]]
"""


def test_set_subtensor_prints_the_2x5x5_result():
    _, printed = run_guide(SET_SUBTENSOR)
    assert_prints(printed, SET_SUBTENSOR_OUTPUT)


# ---------------------------------------------------------------------------- Gibbs sampling
GIBBS = """
import theano
from theano import tensor as T

W = theano.shared(W_values) # we assume that ``W_values`` contains the
                            # initial values of your weight matrix

bvis = theano.shared(bvis_values)
bhid = theano.shared(bhid_values)

trng = T.shared_randomstreams.RandomStreams(1234)

def OneStep(vsample) :
    hmean = T.nnet.sigmoid(theano.dot(vsample, W) + bhid)
    hsample = trng.binomial(size=hmean.shape, n=1, p=hmean)
    vmean = T.nnet.sigmoid(theano.dot(hsample, W.T) + bvis)
    return trng.binomial(size=vsample.shape, n=1, p=vmean,
                         dtype=theano.config.floatX)

sample = theano.tensor.vector()

values, updates = theano.scan(OneStep, outputs_info=sample, n_steps=10)

gibbs10 = theano.function([sample], values[-1], updates=updates)
"""

GIBBS_NON_SEQUENCES = """
W = theano.shared(W_values) # we assume that ``W_values`` contains the
                            # initial values of your weight matrix

bvis = theano.shared(bvis_values)
bhid = theano.shared(bhid_values)

trng = T.shared_randomstreams.RandomStreams(1234)

# OneStep, with explicit use of the shared variables (W, bvis, bhid)
def OneStep(vsample, W, bvis, bhid):
    hmean = T.nnet.sigmoid(theano.dot(vsample, W) + bhid)
    hsample = trng.binomial(size=hmean.shape, n=1, p=hmean)
    vmean = T.nnet.sigmoid(theano.dot(hsample, W.T) + bvis)
    return trng.binomial(size=vsample.shape, n=1, p=vmean,
                     dtype=theano.config.floatX)

sample = theano.tensor.vector()

# The new scan, with the shared variables passed as non_sequences
values, updates = theano.scan(fn=OneStep,
                              outputs_info=sample,
                              non_sequences=[W, bvis, bhid],
                              n_steps=10)

gibbs10 = theano.function([sample], values[-1], updates=updates)
"""

GIBBS_STRICT = """
# The new scan, using strict=True
values, updates = theano.scan(fn=OneStep,
                              outputs_info=sample,
                              non_sequences=[W, bvis, bhid],
                              n_steps=10,
                              strict=True)
"""

N_VISIBLE, N_HIDDEN = 7, 4


def gibbs_values(floatX: str) -> dict:
    """W_values, bvis_values, bhid_values: the guide assumes the reader has them."""
    weights = np.random.default_rng(5)
    return {"W_values": weights.normal(size=(N_VISIBLE, N_HIDDEN)).astype(floatX),
            "bvis_values": weights.normal(size=N_VISIBLE).astype(floatX),
            "bhid_values": weights.normal(size=N_HIDDEN).astype(floatX)}


def assert_binary_samples(out, shape, floatX):
    assert out.shape == shape
    assert out.dtype == np.dtype(floatX)
    assert set(np.unique(out)) <= {0.0, 1.0}


@pytest.mark.parametrize("example", [GIBBS, GIBBS_NON_SEQUENCES], ids=["implicit", "non_sequences"])
def test_gibbs_sampler_draws_binary_visible_vectors(example, floatX):
    namespace, _ = run_guide(example, **gibbs_values(floatX))
    assert namespace["sample"].dtype == floatX
    start = np.ones(N_VISIBLE, dtype=floatX)
    assert_binary_samples(namespace["gibbs10"](start), (N_VISIBLE,), floatX)
    chain = theano.function([namespace["sample"]], namespace["values"], updates=namespace["updates"])
    assert_binary_samples(chain(start), (10, N_VISIBLE), floatX)


@pytest.mark.parametrize("example", [GIBBS, GIBBS_NON_SEQUENCES], ids=["implicit", "non_sequences"])
def test_gibbs_updates_advance_the_random_streams(example):
    """"If you do not pass this update dictionary to your function, you will always get the
    same 10 sets of random numbers"; with it, the streams move on between calls."""
    namespace, _ = run_guide(example, **gibbs_values("float64"))
    updates, sample, values = namespace["updates"], namespace["sample"], namespace["values"]
    assert isinstance(updates, dict) and len(updates) > 0
    assert all(isinstance(key, ss.graph.SharedVariable) for key in updates)
    start = np.ones(N_VISIBLE)
    with_updates = theano.function([sample], values, updates=updates)
    chains = [with_updates(start) for _ in range(4)]
    assert any(not np.array_equal(chains[0], chain) for chain in chains[1:])
    without_updates = theano.function([sample], values)
    np.testing.assert_array_equal(without_updates(start), without_updates(start))


def test_gibbs_non_sequences_do_not_change_the_chain():
    """Passing W, bvis, bhid as non_sequences only simplifies the graph: with the same seed
    both versions of the guide's sampler draw the same chain."""
    chains = []
    for example in (GIBBS, GIBBS_NON_SEQUENCES):
        namespace, _ = run_guide(example, **gibbs_values("float64"))
        chains.append([namespace["gibbs10"](np.ones(N_VISIBLE)) for _ in range(3)])
    np.testing.assert_array_equal(chains[0], chains[1])


def test_gibbs_strict_with_every_shared_variable_passed(floatX):
    namespace, _ = run_guide(GIBBS_NON_SEQUENCES, **gibbs_values(floatX))
    namespace, _ = run_guide(GIBBS_STRICT, namespace)
    gibbs10 = theano.function([namespace["sample"]], namespace["values"][-1], updates=namespace["updates"])
    assert_binary_samples(gibbs10(np.zeros(N_VISIBLE, dtype=floatX)), (N_VISIBLE,), floatX)


# The strict example with one shared variable left out of OneStep's arguments and of
# non_sequences: OneStep then reads it from the session, as the first example's OneStep does.
GIBBS_STRICT_MISSING = """
def OneStep(vsample, {passed}):
    hmean = T.nnet.sigmoid(theano.dot(vsample, W) + bhid)
    hsample = trng.binomial(size=hmean.shape, n=1, p=hmean)
    vmean = T.nnet.sigmoid(theano.dot(hsample, W.T) + bvis)
    return trng.binomial(size=vsample.shape, n=1, p=vmean,
                     dtype=theano.config.floatX)

values, updates = theano.scan(fn=OneStep,
                              outputs_info=sample,
                              non_sequences=[{passed}],
                              n_steps=10,
                              strict=True)
"""


@pytest.mark.parametrize("missing", ["W", "bvis", "bhid"])
def test_gibbs_strict_without_a_shared_variable_names_it(missing):
    """"If you omit to pass W, bvis or bhid as a non_sequence, it will result in an error"."""
    namespace, _ = run_guide(GIBBS_NON_SEQUENCES, **gibbs_values("float64"))
    passed = ", ".join(name for name in ("W", "bvis", "bhid") if name != missing)
    with pytest.raises(ss.MissingInputError) as error:
        run_guide(GIBBS_STRICT_MISSING.format(passed=passed), namespace)
    assert re.search(rf"\b{missing}\b", str(error.value)), str(error.value)


# ---------------------------------------------------------------------------- shared counter
# The guide's two fragments of this example, one after the other (prose between them dropped).
SHARED_COUNTER = """
a = theano.shared(1)
values, updates = theano.scan(lambda: {a: a+1}, n_steps=10)

b = a + 1
c = updates[a] + 1
f = theano.function([], [b, c], updates=updates)

print(b)
print(c)
print(a.get_value())
"""


def test_shared_counter_with_updates_gives_2_12_11_then_12_22_21():
    namespace, printed = run_guide(SHARED_COUNTER)
    assert printed.splitlines()[-1] == "1"  # a before f has run
    f, a = namespace["f"], namespace["a"]
    b, c = f()
    assert (int(b), int(c), int(a.get_value())) == (2, 12, 11)
    b, c = f()
    assert (int(b), int(c), int(a.get_value())) == (12, 22, 21)


def test_shared_counter_without_updates_stays_2_12_1():
    namespace, _ = run_guide(SHARED_COUNTER)
    a, b, c = namespace["a"], namespace["b"], namespace["c"]
    f = theano.function([], [b, c])
    for _ in range(3):
        b_value, c_value = f()
        assert (int(b_value), int(c_value), int(a.get_value())) == (2, 12, 1)


# ---------------------------------------------------------------------------- RNN with taps
# The guide's two fragments (oneStep, then the variables and the scan), one after the other.
RNN = """
def oneStep(u_tm4, u_t, x_tm3, x_tm1, y_tm1, W, W_in_1, W_in_2,  W_feedback, W_out):

  x_t = T.tanh(theano.dot(x_tm1, W) + \\
               theano.dot(u_t,   W_in_1) + \\
               theano.dot(u_tm4, W_in_2) + \\
               theano.dot(y_tm1, W_feedback))
  y_t = theano.dot(x_tm3, W_out)

  return [x_t, y_t]

W = T.matrix()
W_in_1 = T.matrix()
W_in_2 = T.matrix()
W_feedback = T.matrix()
W_out = T.matrix()

u = T.matrix() # it is a sequence of vectors
x0 = T.matrix() # initial state of x has to be a matrix, since
                # it has to cover x[-3]
y0 = T.vector() # y0 is just a vector since scan has only to provide
                # y[-1]


([x_vals, y_vals], updates) = theano.scan(fn=oneStep,
                                          sequences=dict(input=u, taps=[-4,-0]),
                                          outputs_info=[dict(initial=x0, taps=[-3,-1]), y0],
                                          non_sequences=[W, W_in_1, W_in_2, W_feedback, W_out],
                                          strict=True)
     # for second input y, scan adds -1 in output_taps by default
"""


def rnn_numpy(u, x0, y0, W, W_in_1, W_in_2, W_feedback, W_out):
    """x(n) = tanh(W x(n-1) + W_in_1 u(n) + W_in_2 u(n-4) + W_feedback y(n-1)), y(n) = W_out x(n-3),
    in the code's row-vector form; u[0] is u(-4), x0 holds x(-3), x(-2), x(-1), y0 is y(-1)."""
    x = {-3: x0[0], -2: x0[1], -1: x0[2]}
    y = {-1: y0}
    steps = range(len(u) - 4)
    for n in steps:
        x[n] = np.tanh(x[n - 1] @ W + u[n + 4] @ W_in_1 + u[n] @ W_in_2 + y[n - 1] @ W_feedback)
        y[n] = x[n - 3] @ W_out
    return np.array([x[n] for n in steps]), np.array([y[n] for n in steps])


def test_rnn_with_taps_matches_a_numpy_loop():
    namespace, _ = run_guide(RNN)
    assert namespace["updates"] == {}
    names = ["u", "x0", "y0", "W", "W_in_1", "W_in_2", "W_feedback", "W_out"]
    f = theano.function([namespace[name] for name in names], [namespace["x_vals"], namespace["y_vals"]])
    n_in, n_x, n_y = 3, 4, 2
    r = np.random.default_rng(11)
    uvals = r.normal(size=(9, n_in))  # like the guide's uvals = [0, 1, ..., 8]: 9 steps of u, 5 of x and y
    values = [uvals, r.normal(size=(3, n_x)), r.normal(size=n_y), 0.5 * r.normal(size=(n_x, n_x)),
              r.normal(size=(n_in, n_x)), r.normal(size=(n_in, n_x)), r.normal(size=(n_y, n_x)),
              r.normal(size=(n_x, n_y))]
    x_vals, y_vals = f(*values)
    expected_x, expected_y = rnn_numpy(*values)
    assert x_vals.shape == (5, n_x) and y_vals.shape == (5, n_y)
    np.testing.assert_allclose(x_vals, expected_x, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(y_vals, expected_y, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------- until
POWER_OF_2 = """
def power_of_2(previous_power, max_value):
    return previous_power*2, theano.scan_module.until(previous_power*2 > max_value)

max_value = T.scalar()
values, _ = theano.scan(power_of_2,
                        outputs_info = T.constant(1.),
                        non_sequences = max_value,
                        n_steps = 1024)

f = theano.function([max_value], values)

print(f(45))
"""

POWER_OF_2_OUTPUT = """
[  2.   4.   8.  16.  32.  64.]
"""


def test_power_of_2_stops_at_64():
    _, printed = run_guide(POWER_OF_2)
    assert_prints(printed, POWER_OF_2_OUTPUT)


def until_return_loop(x, n_steps):
    """The reference's ``return [y1_t, y2_t], {x:x+1}, until(x < 50)`` as a Python loop: each
    step sees x before its update, and the loop stops after the step whose condition held."""
    y1, y2 = [], []
    for _ in range(n_steps):
        y1.append(2 * x)
        y2.append(x - 50)
        stop = x < 50
        x = x + 1
        if stop:
            break
    return y1, y2, x


@pytest.mark.parametrize("start", [45, 60])
def test_reference_until_with_outputs_and_updates(start):
    x = theano.shared(start)

    def fn():
        y1_t, y2_t = 2 * x, x - 50
        return [y1_t, y2_t], {x:x+1}, theano.scan_module.until(x < 50)  # the guide's line

    (y1, y2), updates = theano.scan(fn, n_steps=10)
    f = theano.function([], [y1, y2], updates=updates)
    expected_y1, expected_y2, expected_x = until_return_loop(start, 10)
    got_y1, got_y2 = f()
    assert got_y1.tolist() == expected_y1 and got_y2.tolist() == expected_y2
    assert int(x.get_value()) == expected_x


@pytest.mark.parametrize("form", ["outputs, updates", "updates, outputs", "outputs, update pairs", "updates only"])
def test_reference_fn_return_forms(form):
    """fn can return (outputs_list, update_dictionary), (update_dictionary, outputs_list) or
    just one of the two; the dictionary can be a list of tuples."""
    counter = theano.shared(0.0)

    def fn(s):
        outputs, update = [s * counter], {counter: counter + s}
        return {"outputs, updates": (outputs, update), "updates, outputs": (update, outputs),
                "outputs, update pairs": (outputs, list(update.items())), "updates only": update}[form]

    seq = T.vector("seq")
    outputs, updates = theano.scan(fn, sequences=seq)
    run = theano.function([seq], [] if form == "updates only" else outputs, updates=updates)
    products, total = [], 0.0
    for s in [1.0, 2.0, 3.0]:
        products.append(s * total)
        total += s
    result = run([1.0, 2.0, 3.0])
    assert float(counter.get_value()) == total
    if form != "updates only":
        np.testing.assert_allclose(result, products)


# ---------------------------------------------------------------------------- allow_gc
@pytest.mark.parametrize("allow_gc", [None, False, True])
def test_allow_gc_argument_changes_no_numbers(allow_gc):
    """"using the argument allow_gc of the function theano.scan() and set it to False": it is
    about memory reuse, so A**k is still A**k."""
    k, A = T.iscalar("k"), T.vector("A")
    result, updates = theano.scan(fn=lambda prior_result, A: prior_result * A, outputs_info=T.ones_like(A),
                                  non_sequences=A, n_steps=k, allow_gc=allow_gc)
    power = theano.function(inputs=[A, k], outputs=result[-1], updates=updates)
    np.testing.assert_array_equal(power(range(10), 3), np.arange(10.0) ** 3)


# ---------------------------------------------------------------------------- reference: free variables
FREE_VARIABLE = """
import theano.tensor as TT

W   = TT.matrix()
W_2 = W**2
def f(x):
    return TT.dot(x,W_2)
"""


def test_reference_free_variable_W_2_is_found():
    """fn uses W_2 (computed from W) without it being passed: scan finds it."""
    namespace, _ = run_guide(FREE_VARIABLE)
    W, f = namespace["W"], namespace["f"]
    X, x0 = T.matrix("X"), T.vector("x0")
    mapped, _ = theano.scan(f, sequences=X)
    repeated, _ = theano.scan(f, outputs_info=x0, n_steps=3)
    run = theano.function([X, x0, W], [mapped, repeated])
    r = np.random.default_rng(2)
    Xv, x0v, Wv = r.normal(size=(4, 3)), r.normal(size=3), r.normal(size=(3, 3))
    got_mapped, got_repeated = run(Xv, x0v, Wv)
    np.testing.assert_allclose(got_mapped, [row @ Wv**2 for row in Xv], rtol=1e-12)
    expected, state = [], x0v
    for _ in range(3):
        state = state @ Wv**2
        expected.append(state)
    np.testing.assert_allclose(got_repeated, expected, rtol=1e-12)


# ---------------------------------------------------------------------------- reference: argument order
ARGUMENT_ORDER = """
scan(fn, sequences = [ dict(input= Sequence1, taps = [-3,2,-1])
                     , Sequence2
                     , dict(input =  Sequence3, taps = 3) ]
       , outputs_info = [ dict(initial =  Output1, taps = [-3,-5])
                        , dict(initial = Output2, taps = None)
                        , Output3 ]
       , non_sequences = [ Argument1, Argument2])
"""

# "fn should expect the following arguments in this given order"
GUIDE_ARGUMENT_ORDER = ["Sequence1[t-3]", "Sequence1[t+2]", "Sequence1[t-1]", "Sequence2[t]", "Sequence3[t+3]",
                        "Output1[t-3]", "Output1[t-5]", "Output3[t-1]", "Argument1", "Argument2"]


def argument_order_fn(Sequence1_tm3, Sequence1_tp2, Sequence1_tm1, Sequence2_t, Sequence3_tp3,
                      Output1_tm3, Output1_tm5, Output3_tm1, Argument1, Argument2):
    """Output2 (taps None: no past value) is every argument, stacked in the order scan passed them."""
    Output1_t = Output1_tm3 - 0.5 * Output1_tm5 + Argument1 * Sequence1_tm3
    Output2_t = T.stack([Sequence1_tm3, Sequence1_tp2, Sequence1_tm1, Sequence2_t, Sequence3_tp3,
                         Output1_tm3, Output1_tm5, Output3_tm1, Argument1, Argument2])
    Output3_t = Argument2 * Output3_tm1 + Sequence2_t * Sequence1_tp2
    return [Output1_t, Output2_t, Output3_t]


def argument_order_numpy(Sequence1, Sequence2, Sequence3, Output1, Output3, Argument1, Argument2):
    """The same three outputs with time made explicit: Sequence1's step 0 is its element 3
    (it reaches back to t-3), Output1 starts from output[-5..-1], Output3 from output[-1]."""
    n_steps = min(len(Sequence1) - 5, len(Sequence2), len(Sequence3) - 3)  # shortest sequence wins
    seq1 = {t - 3: v for t, v in enumerate(Sequence1)}
    out1 = {t - 5: v for t, v in enumerate(Output1)}
    out3 = {-1: Output3}
    out2 = []
    for t in range(n_steps):
        arguments = {"Sequence1[t-3]": seq1[t - 3], "Sequence1[t+2]": seq1[t + 2], "Sequence1[t-1]": seq1[t - 1],
                     "Sequence2[t]": Sequence2[t], "Sequence3[t+3]": Sequence3[t + 3],
                     "Output1[t-3]": out1[t - 3], "Output1[t-5]": out1[t - 5], "Output3[t-1]": out3[t - 1],
                     "Argument1": Argument1, "Argument2": Argument2}
        out1[t] = out1[t - 3] - 0.5 * out1[t - 5] + Argument1 * seq1[t - 3]
        out2.append([arguments[name] for name in GUIDE_ARGUMENT_ORDER])
        out3[t] = Argument2 * out3[t - 1] + Sequence2[t] * seq1[t + 2]
    steps = range(n_steps)
    return [out1[t] for t in steps], out2, [out3[t] for t in steps]


def test_reference_argument_order():
    results = []

    def scan(*args, **kwargs):  # the guide calls scan() without keeping what it returns
        results.append(theano.scan(*args, **kwargs))
        return results[-1]

    variables = {name: T.vector(name) for name in ("Sequence1", "Sequence2", "Sequence3", "Output1")}
    variables.update({name: T.scalar(name) for name in ("Output2", "Output3", "Argument1", "Argument2")})
    run_guide(ARGUMENT_ORDER, scan=scan, fn=argument_order_fn, **variables)
    (Output1, Output2, Output3), updates = results[0]
    assert updates == {}
    inputs = ["Sequence1", "Sequence2", "Sequence3", "Output1", "Output3", "Argument1", "Argument2"]
    f = theano.function([variables[name] for name in inputs], [Output1, Output2, Output3])
    r = np.random.default_rng(4)
    # lengths 12, 9, 9 allow 12-5=7, 9 and 9-3=6 steps: the loop runs 6
    values = [r.uniform(-1, 1, size=12), r.uniform(-1, 1, size=9), r.uniform(-1, 1, size=9),
              r.uniform(-1, 1, size=5), 0.3, 0.7, -0.8]
    got = f(*values)
    expected = argument_order_numpy(*values)
    assert got[1].shape == (6, 10)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12)
