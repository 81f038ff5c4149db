"""Run a graph in mode "py" (the reference interpreter, the oracle) and in mode "fast" (every
rewrite, then the generated-Python evaluator) and require the same results.

"Same" means: the same Python type, dtype, shape and values (``assert_array_equal``: bitwise
for ints and bools, NaNs in the same places for floats; a tolerance only when the caller passes
one), the same new values of the shared variables the call updates (random generators: the same
state), inputs left untouched, or an error of the same exception type in both modes.

Each call starts both modes from the same shared values, so functions with updates (random
draws, accumulators) can be called repeatedly; after a call the shared variables hold the new
values (the same in both modes). Results (and errors) are those of mode "py".

``pyproject.toml`` puts ``tests/support`` on ``sys.path`` (pytest's ``pythonpath``), so test
modules ``import both_modes``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

import symscan as ss

from modes_tested import MODES_TESTED

MODES = tuple(MODES_TESTED)


class BothModes:
    """``ss.function(inputs, outputs, **kwargs)`` compiled in every mode; calling it runs each
    mode on the same values and shared state, checks that they agree, and returns mode "py"'s
    result (or raises its error)."""

    def __init__(self, inputs, outputs=None, *, rtol: float | None = None, atol: float = 0.0, **kwargs):
        self.rtol, self.atol = rtol, atol
        self.py, py_error = _compile(inputs, outputs, "py", kwargs)
        self.fast, fast_error = _compile(inputs, outputs, "fast", kwargs)
        if py_error is not None or fast_error is not None:  # building fails: alike in both modes
            _same_error(py_error, fast_error, "building the function")
        shared = []
        for f in (self.py, self.fast):
            shared += f.fgraph.shared_variables + [var for var, _ in f.updates]
        self.shared = list(dict.fromkeys(shared))

    def __call__(self, *values):
        before = {var: var.get_value() for var in self.shared}
        originals = [np.array(v, copy=True) if isinstance(v, np.ndarray) else None for v in values]
        expected, expected_error, expected_state = self._call(self.py, values, originals)
        for var, value in before.items():  # mode "fast" starts from the same state
            var.set_value(value)
        got, got_error, got_state = self._call(self.fast, values, originals)
        if expected_error is not None or got_error is not None:
            _same_error(expected_error, got_error, "the call")
        assert_same(got, expected, rtol=self.rtol, atol=self.atol, what="the result")
        for var in self.shared:
            assert_same(got_state[var], expected_state[var], rtol=self.rtol, atol=self.atol,
                        what=f"the new value of shared variable {var.name!r}")
        return expected

    def _call(self, f, values, originals):
        try:
            result, error = f(*values), None
        except Exception as err:
            result, error = None, err
        state = {var: var.get_value() for var in self.shared}
        for i, (value, original) in enumerate(zip(values, originals)):
            if original is not None:
                assert_same(value, original, what=f"input {i} after a call in mode {f.mode.name!r} (modified)")
        return result, error, state


def _compile(inputs, outputs, mode: str, kwargs: dict):
    try:
        return ss.function(inputs, outputs, mode=mode, **kwargs), None
    except Exception as err:
        return None, err


def _same_error(expected: Exception | None, got: Exception | None, what: str) -> None:
    """Raise mode "py"'s error when mode "fast" raised one of the same type; else fail."""
    if expected is None:
        raise AssertionError(f"{what}: mode 'py' succeeded, mode 'fast' raised {type(got).__name__}: {got}") from got
    if got is None:
        raise AssertionError(f"{what}: mode 'py' raised {type(expected).__name__}: {expected}; mode 'fast' "
                             f"did not raise") from expected
    if type(got) is not type(expected):
        raise AssertionError(f"{what}: mode 'py' raised {type(expected).__name__}: {expected}; mode 'fast' "
                             f"raised {type(got).__name__}: {got}") from got
    raise expected


def function(inputs, outputs=None, **kwargs) -> BothModes:
    """Like ``ss.function`` (no ``mode``); ``rtol``/``atol`` allow float results to differ."""
    return BothModes(inputs, outputs, **kwargs)


def run(inputs, outputs, *values, **kwargs):
    """Compile in every mode, call once with ``values``, check the modes agree, return "py"'s result."""
    return BothModes(inputs, outputs, **kwargs)(*values)


def evaluate(var, givens: Mapping | None = None, **kwargs):
    """``var.eval(givens)`` (which runs mode "py" only) in every mode, checked to agree."""
    givens = dict(givens or {})
    return BothModes(list(givens), var, **kwargs)(*givens.values())


def assert_same(got, expected, *, rtol: float | None = None, atol: float = 0.0, what: str = "the value") -> None:
    """Same type, dtype, shape and values (``rtol``: floats within that tolerance)."""
    assert type(got) is type(expected), f"{what}: {type(got).__name__} instead of {type(expected).__name__}"
    if isinstance(expected, (list, tuple)):
        assert len(got) == len(expected), f"{what}: {len(got)} values instead of {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(g, e, rtol=rtol, atol=atol, what=f"{what}[{i}]")
        return
    if isinstance(expected, np.random.Generator):
        assert got.bit_generator.state == expected.bit_generator.state, f"{what}: generator states differ"
        return
    if not isinstance(expected, (np.ndarray, np.generic)):
        assert got == expected, f"{what}: {got!r} instead of {expected!r}"
        return
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype} instead of {expected.dtype}"
    assert got.shape == expected.shape, f"{what}: shape {got.shape} instead of {expected.shape}"
    if rtol is not None and expected.dtype.kind in "fc":
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=what)
