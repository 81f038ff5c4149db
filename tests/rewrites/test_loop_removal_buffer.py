"""A closed form taken out of its loop builds the output's buffer in one array: the rows of
steps 1..T computed with room for the initial rows in front, which are then written in
place (no concatenation of the initial rows with a second array of the buffer's size).
Numbers against the loop itself (vectorize off) and numpy, for 0, 1, 2 and many steps."""

import tracemalloc

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.tensor.shape import Join
from symscan.tensor.subtensor import IncSubtensor

STEPS = [0, 1, 2, 50]


def _buffer_nodes(f) -> tuple[list, list]:
    nodes = f.fgraph.apply_nodes
    return [n for n in nodes if isinstance(n.op, Join)], [n for n in nodes if isinstance(n.op, IncSubtensor)]


@pytest.mark.parametrize("steps", STEPS)
def test_power_states_are_one_array_with_the_initial_row_written_in_place(steps):
    A, h0, k = T.vector("A"), T.vector("h0"), T.lscalar("k")
    states, _ = ss.scan(lambda h, A: h * A, outputs_info=h0, non_sequences=A, n_steps=k)
    f = ss.function([A, h0, k], states, mode="fast")
    joins, sets = _buffer_nodes(f)
    assert not any(type(n.op).__name__ == "Scan" for n in f.fgraph.apply_nodes)  # the closed form ran
    assert not joins and len(sets) == 1 and sets[0].tag.get("inplace") == 0
    a, h = np.array([0.5, 1.1, -2.0]), np.array([1.0, 3.0, -1.0])
    loop = ss.function([A, h0, k], states, mode="fast", rewrites=["-vectorize"])
    got = f(a, h, steps)
    np.testing.assert_allclose(got, loop(a, h, steps), rtol=1e-12)
    np.testing.assert_allclose(got, [h * a ** t for t in range(1, steps + 1)] or np.empty((0, 3)), rtol=1e-12)


@pytest.mark.parametrize("steps", STEPS)
def test_two_initial_rows_of_a_linear_recurrence(steps):
    """x_t = 1.5 x_(t-1) - 0.5 x_(t-2) + 1: the buffer's first two rows are the initial ones."""
    x0, k = T.matrix("x0"), T.lscalar("k")
    xs, _ = ss.scan(lambda a, b: 1.5 * b - 0.5 * a + 1, outputs_info=dict(initial=x0, taps=[-2, -1]), n_steps=k)
    f = ss.function([x0, k], xs, mode="fast")
    assert not _buffer_nodes(f)[0] and not any(type(n.op).__name__ == "Scan" for n in f.fgraph.apply_nodes)
    init = np.array([[1.0, -2.0], [0.5, 4.0]])
    want, rows = [], list(init)
    for _ in range(steps):
        rows.append(1.5 * rows[-1] - 0.5 * rows[-2] + 1)
        want.append(rows[-1])
    got = f(init, steps)
    np.testing.assert_allclose(got, ss.function([x0, k], xs, mode="fast", rewrites=["-vectorize"])(init, steps),
                               rtol=1e-12)
    np.testing.assert_allclose(got, np.array(want).reshape(steps, 2), rtol=1e-12)


def test_the_power_buffer_is_allocated_once():
    """One call allocates about the states' size (the result), not twice it."""
    A, k = T.vector("A"), T.lscalar("k")
    states, _ = ss.scan(lambda h, A: h * A, outputs_info=T.ones_like(A), non_sequences=A, n_steps=k)
    f = ss.function([A, k], states, mode="fast")
    a = np.linspace(0.99, 1.01, 500)
    f(a, 400)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = f(a, 400)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert peak < 1.3 * result.nbytes
