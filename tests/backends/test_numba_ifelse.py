"""ifelse in mode numba: inside a loop it is an ``if``/``else`` in the kernel (the loop stays
compiled), lazy there (a branch that would raise is not run, and the call is not rerun in
mode fast), with the values of mode py for scalars, arrays, views, several outputs and nesting."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.tensor.assertion import assert_that

pytest.importorskip("numba")

LOOPS = ["-push_out_seq", "-scan_to_accumulate", "-scan_to_linear_recurrence"]
"""Keep loops as loops (no rewrite turns them into whole-array operations)."""


def _compiled_and_agreeing(inputs, outputs, *value_sets, rewrites=LOOPS):
    """The numba function, after checking that every loop is a kernel, that each call gives mode
    py's values and that no call was rerun in mode fast (a kernel that raised)."""
    f = ss.function(inputs, outputs, mode="numba", rewrites=rewrites)
    py = ss.function(inputs, outputs, mode="py")
    for values in value_sets:
        got, want = f(*values), py(*values)
        for g, w in zip(got if isinstance(got, list) else [got], want if isinstance(want, list) else [want]):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    report = f.backend_report()
    assert report and all(line.endswith(": numba") for line in report), report
    assert f._evaluate._fast is None, "a kernel raised and the call was rerun in mode fast"
    return f


def test_a_branch_that_would_raise_is_not_run_in_the_kernel():
    xs = T.vector("xs")

    def step(v, acc):
        must_be_positive = T.log(assert_that(v, v > 0, message="v must be positive"))
        return ss.ifelse(v > 0, acc + must_be_positive, acc - 1.0)

    out, _ = ss.scan(step, sequences=xs, outputs_info=T.constant(0.0))
    _compiled_and_agreeing([xs], out, [np.array([1.0, -2.0, 3.0, 0.0])], [np.array([-1.0, -1.0])])


def test_a_shape_error_in_the_branch_not_taken():
    ys = T.matrix("ys")

    def step(y, acc):
        needs_three = T.dot(T.ones((3,)), y)  # numba raises unless len(y) == 3
        return ss.ifelse(T.eq(y.shape[0], 3), acc + needs_three, acc + y.sum())

    out, _ = ss.scan(step, sequences=ys, outputs_info=T.constant(0.0))
    _compiled_and_agreeing([ys], out, [np.arange(10.0).reshape(2, 5)], [np.arange(6.0).reshape(2, 3)])


def test_arrays_views_and_several_outputs(rng):
    M, h0 = T.matrix("M"), T.vector("h0")

    def step(row, h, k):
        # a fresh array in one arm, a reversed view in the other
        then, other = [h * 0.5 + row, h.sum(), T.cast(k + 1, "int32")], [h[::-1], row.max(), k]
        return ss.ifelse(row.sum() > 0, then, other)

    outs, _ = ss.scan(step, sequences=M, outputs_info=[h0, None, T.constant(np.int32(0))])
    _compiled_and_agreeing([M, h0], outs, [rng.normal(size=(7, 3)), rng.normal(size=3)])


def test_nested_ifelse_and_a_loop_in_a_branch(rng):
    xs, W = T.vector("xs"), T.matrix("W")

    def step(v, h, W):
        inner_loop, _ = ss.scan(lambda hh, W: T.tanh(T.dot(W, hh)), outputs_info=h, non_sequences=W, n_steps=3)
        deep = ss.ifelse(v > 1, inner_loop[-1], T.sqrt(T.abs(h)))
        return ss.ifelse(v > 0, deep, h * v)

    hs, _ = ss.scan(step, sequences=xs, outputs_info=T.ones((2,)), non_sequences=W)
    _compiled_and_agreeing([xs, W], hs, [np.array([2.0, 0.5, -1.0, 3.0]), rng.normal(size=(2, 2))])


def test_outside_loops_mode_numba_is_lazy_too():
    y = T.vector("y")
    out = ss.ifelse(T.eq(y.shape[0], 3), T.dot(T.ones((3,)), y), y.sum())
    f = ss.function([y], out, mode="numba")
    assert f(np.arange(5.0)) == 10.0 and f(np.arange(3.0)) == 3.0
