"""Mode numba's reductions over one axis of a matrix (symscan/backends/numba/reductions.py),
isinf/isnan, fill (``second``) of an array and a run-time broadcast in ``sum_to``: the helpers
against numpy, and loops using them (an HMM's forward algorithm: logsumexp over an axis) against
mode py and a numpy loop, values and gradients, with every loop a kernel."""

import numpy as np
import pytest
from gradient_checks import central_difference

import symscan as ss
import symscan.tensor as T
from benchmarks.filtering import hmm_graph
from benchmarks.filtering import hmm_loop as forward_algorithm

pytest.importorskip("numba")

from symscan.backends.numba import reductions  # noqa: E402 - needs numba


@pytest.mark.parametrize("kind", sorted(reductions.KINDS))
@pytest.mark.parametrize("axis", [0, 1])
def test_reduce_matrix_agrees_with_numpy(rng, kind, axis):
    x = rng.normal(size=(5, 7))
    x[2, 3] = np.nan
    for a in (x, x.T.copy().T, x[:, ::2]):
        out = np.empty(a.shape[1 - axis])
        reductions.reduce_matrix_into(a, axis, reductions.KINDS[kind], out)
        np.testing.assert_allclose(out, getattr(np, kind)(a, axis=axis), rtol=1e-13)


def test_max_of_an_empty_axis_raises_and_sum_is_zero():
    with pytest.raises(ValueError):
        reductions.reduce_matrix_into(np.empty((0, 3)), 0, reductions.KINDS["max"], np.empty(3))
    out = np.empty(3)
    reductions.reduce_matrix_into(np.empty((0, 3)), 0, reductions.KINDS["sum"], out)
    assert (out == 0).all()


def test_sum_to_sums_the_broadcast_axes(rng):
    x = rng.normal(size=(4, 3))
    np.testing.assert_allclose(reductions.sum_to_matrix(x, 1, 3), x.sum(axis=0, keepdims=True))
    np.testing.assert_allclose(reductions.sum_to_matrix(x, 4, 1), x.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(reductions.sum_to_vector(x[0], 1), [x[0].sum()])
    with pytest.raises(ValueError):
        reductions.sum_to_matrix(x, 2, 3)


# ---------------------------------------------------------------------------- in loops
def hmm_loop(*values) -> float:
    """The benchmark's numpy forward algorithm, as a number."""
    return forward_algorithm(*values)[0][()]


def hmm_values(rng, steps=7, states=4, symbols=5):
    return [rng.integers(0, symbols, steps).astype("int32"), rng.normal(size=(states, states)),
            rng.normal(size=(states, symbols)), np.full(states, -np.log(states))]


def _runs_in_numba(f) -> bool:
    report = f.backend_report()
    return bool(report) and all(line.endswith(": numba") for line in report)


def test_hmm_forward_is_one_kernel_and_agrees(rng):
    inputs, ll = hmm_graph()
    f, py = ss.function(inputs, ll, mode="numba"), ss.function(inputs, ll, mode="py")
    values = hmm_values(rng)
    got = f(*values)
    assert _runs_in_numba(f), f.backend_report()
    np.testing.assert_allclose(got, py(*values), rtol=1e-12)
    np.testing.assert_allclose(got, hmm_loop(*values), rtol=1e-12)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_an_impossible_state_takes_the_isinf_branch(rng):
    """log alpha of -inf for every state but one: a column's max is -inf, and logsumexp shifts
    by 0 there (isinf in the kernel, on the float operand)."""
    inputs, ll = hmm_graph()
    f, py = ss.function(inputs, ll, mode="numba"), ss.function(inputs, ll, mode="py")
    values = hmm_values(rng)
    values[1][:, 2] = -np.inf  # no transition into state 2
    values[3] = np.array([0.0, -np.inf, -np.inf, -np.inf])
    got = f(*values)
    np.testing.assert_allclose(got, py(*values), rtol=1e-12)
    np.testing.assert_allclose(got, hmm_loop(*values), rtol=1e-12)


def test_hmm_gradient_reverse_loop_is_a_kernel_and_agrees(rng):
    """The pullbacks of logsumexp (max, switch, isinf, exp, sum over an axis) and of the indexing
    in the reverse loop, in numba, against mode py and central differences."""
    inputs, ll = hmm_graph()
    grads = ss.grad(ll, inputs[1:3])
    f, py = ss.function(inputs, grads, mode="numba"), ss.function(inputs, grads, mode="py")
    values = hmm_values(rng)
    got = f(*values)
    assert _runs_in_numba(f) and len(f.backend_report()) == 2, f.backend_report()
    for g, want, i in zip(got, py(*values), (1, 2)):
        np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(g, central_difference(hmm_loop, values, i), rtol=1e-5, atol=1e-7)


def test_a_row_broadcast_at_run_time_is_summed_in_the_kernel(rng):
    """A (1, n) non-sequence typed as a matrix of unknown shape, added to a (m, n) state: its
    gradient sums over the axis broadcast at run time (``SumToShape``), in the kernel."""
    x0, row = T.matrix("x0"), T.matrix("row")
    xs, _ = ss.scan(lambda x, row: T.tanh(x + row), outputs_info=x0, non_sequences=row, n_steps=4)
    g = ss.grad((xs ** 2).sum(), row)
    values = [rng.normal(size=(3, 2)), rng.normal(size=(1, 2))]
    f, py = ss.function([x0, row], g, mode="numba"), ss.function([x0, row], g, mode="py")
    got = f(*values)
    assert _runs_in_numba(f), f.backend_report()
    np.testing.assert_allclose(got, py(*values), rtol=1e-12)
