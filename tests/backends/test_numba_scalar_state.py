"""Mode "numba": 0-d state of every dtype (shared updates, sit-sots, loops drawing random
numbers, in kernels and in the Python loops numba leaves) keeps its dtype and numpy's values.
Numba returns a 0-d value as a Python float, int or complex; a float32 shared value once came
back as float64 and the update was refused."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.tensor.random import GeneratorType

pytest.importorskip("numba")

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered")  # int8/uint8 state wraps, as in numpy

DTYPES = ["float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool", "complex64", "complex128"]
LOOPS = ["-push_out_seq", "-scan_to_accumulate", "-scan_to_linear_recurrence"]
XS = np.array([3.5, 1.0, 4.25, 1.0, 5.0, 0.5, 2.75], dtype="float32")


def _factor(dtype: str) -> np.ndarray:
    return np.asarray({"f": 0.5, "c": 0.5 + 0.25j}.get(np.dtype(dtype).kind, 3), dtype=dtype)


def step(h, x, dtype: str):
    """One step of the state: symbolic for variables, numpy's for numpy values."""
    if dtype == "bool":
        return h ^ (x > 2)
    if isinstance(h, np.ndarray | np.generic):
        return h * _factor(dtype) + np.asarray(x).astype(dtype)
    return h * _factor(dtype) + T.cast(x, dtype)


def numpy_loop(h0, draws, dtype: str) -> list[np.ndarray]:
    """Every state a numpy loop goes through, after the initial one."""
    states, h = [], np.asarray(h0, dtype=dtype)[()]
    for x in draws:
        h = step(h, x, dtype)
        states.append(np.asarray(h))
    return states


def run_modes(inputs, outputs, updates, values) -> dict:
    """Per mode, from the same shared values (random generators too): (function, outputs, the
    updated tensors' new values)."""
    start = {var: var.get_value() for var in updates}
    results = {}
    for mode in ("py", "fast", "numba"):
        for var, value in start.items():
            var.set_value(value)
        f = ss.function(inputs, outputs, updates=updates, mode=mode, rewrites=None if mode == "py" else LOOPS)
        got = f(*values)
        results[mode] = (f, got, [var.get_value() for var in updates if not isinstance(var.type, GeneratorType)])
    for var, value in start.items():
        var.set_value(value)
    return results


def assert_exact(got, want) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"dtype {got.dtype}, expected {want.dtype}"
    np.testing.assert_array_equal(got, want)


def in_kernels(f) -> bool:
    report = f.backend_report()
    return bool(report) and all(line.endswith(": numba") for line in report)


def _numba_has_arithmetic(dtype: str) -> bool:
    return not dtype.startswith("complex")  # complex loops stay Python (ops.py refuses them)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_shared_value_the_loop_keeps(dtype):
    """The program of the report: a loop over a sequence read at tap -4 that keeps 'sh0'."""
    x = T.tensor("float32", shape=(None,), name="x")
    sh0 = ss.shared(np.asarray(-0.175 if np.dtype(dtype).kind in "fc" else 5, dtype=dtype), name="sh0")
    initial = sh0.get_value()
    _, updates = ss.scan(lambda x_tm4: {sh0: sh0}, sequences=[dict(input=x, taps=[-4])])
    for mode, (f, _, (new,)) in run_modes([x], [], updates, [XS]).items():
        assert_exact(new, initial)
        assert mode != "numba" or in_kernels(f), f.backend_report()


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_shared_update_and_a_sit_sot(dtype):
    """A shared value updated at each step, next to a sit-sot that starts from it and returns
    its last value: the numbers of a numpy loop, in the state's dtype."""
    x = T.tensor("float32", shape=(None,), name="x")
    acc = ss.shared(np.asarray(1, dtype=dtype), name="acc")
    _, accumulated = ss.scan(lambda x_t: {acc: step(acc, x_t, dtype)}, sequences=[x])
    hs, _ = ss.scan(lambda x_t, h: step(h, x_t, dtype), sequences=[x], outputs_info=[acc])
    states = numpy_loop(1, XS, dtype)
    for mode, (f, (all_h, last_h), (new_acc,)) in run_modes([x], [hs, hs[-1]], accumulated, [XS]).items():
        assert_exact(new_acc, states[-1])
        assert_exact(last_h, states[-1])
        assert_exact(all_h, np.array(states))
        assert mode != "numba" or in_kernels(f) or not _numba_has_arithmetic(dtype), f.backend_report()


@pytest.mark.parametrize("where", ["kernel", "python"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_shared_value_updated_by_random_draws(dtype, where):
    """Draws in a kernel (uniform) or in a loop numba leaves to Python (choice): the state
    follows the generator's own stream, cast to its dtype."""
    x = T.tensor("float32", shape=(None,), name="x")
    acc = ss.shared(np.asarray(1, dtype=dtype), name="acc")
    stream = ss.RandomStream(seed=5)
    choices = np.array([0.5, 2.5, 3.25])
    draw = (lambda: stream.uniform(low=0.0, high=4.0)) if where == "kernel" else (lambda: stream.choice(choices))
    _, updates = ss.scan(lambda x_t: {acc: step(acc, draw(), dtype)}, sequences=[x])
    (rng_var,) = [var for var in updates if isinstance(var.type, GeneratorType)]
    generator = rng_var.get_value()
    draws = [generator.uniform(0.0, 4.0) if where == "kernel" else generator.choice(choices) for _ in XS]
    states = numpy_loop(1, draws, dtype)
    for mode, (f, _, (new_acc,)) in run_modes([x], [], updates, [XS]).items():
        assert_exact(new_acc, states[-1])
        if mode == "numba":
            runs_in = "numba" if where == "kernel" and _numba_has_arithmetic(dtype) else "fast"
            assert f.backend_report()[0].split(": ")[1].startswith(runs_in), f.backend_report()


def test_the_reported_program_next_to_a_float32_draw_loop_left_to_python():
    x0, y = T.tensor("float32", shape=(None,), name="x0"), T.tensor("float32", shape=(None,), name="y")
    sh0 = ss.shared(np.array(-0.175, dtype="float32"), name="sh0")
    _, updates = ss.scan(lambda x_tm4: {sh0: sh0}, sequences=[dict(input=x0, taps=[-4])])
    stream = ss.RandomStream(seed=1)
    noisy, draw_updates = ss.scan(lambda v: v + stream.uniform(low=0, high=1, dtype="float32")
                                  + stream.choice(np.array([0.0, 1.0], dtype="float32")), sequences=[y])
    updates.update(draw_updates)
    results = run_modes([x0, y], noisy, updates, [np.arange(6, dtype="float32"), np.ones(3, dtype="float32")])
    _, want, (want_sh0,) = results["py"]
    assert want.dtype == np.float32
    assert_exact(want_sh0, np.array(-0.175, dtype="float32"))
    for mode in ("fast", "numba"):
        _, got, (new_sh0,) = results[mode]
        assert_exact(got, want)
        assert_exact(new_sh0, want_sh0)
    assert sorted(line.split(": ")[1][:5] for line in results["numba"][0].backend_report()) == ["fast ", "numba"]


def test_a_float16_scalar_keeps_its_loop_in_python_with_the_reason():
    """Numba cannot pass a float16 scalar in or out of a kernel: that loop stays Python."""
    x = T.tensor("float32", shape=(None,), name="x")
    acc = ss.shared(np.asarray(1, dtype="float16"), name="acc")
    _, updates = ss.scan(lambda x_t: {acc: acc * np.float16(0.5) + T.cast(x_t, "float16")}, sequences=[x])
    results = run_modes([x], [], updates, [XS])
    (line,) = results["numba"][0].backend_report()
    assert "float16 scalar" in line and "'acc'" in line and ": fast (" in line
    assert_exact(results["numba"][2][0], results["py"][2][0])
    assert results["numba"][2][0].dtype == np.float16
