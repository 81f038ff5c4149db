"""inplace on random draws (Theano's ``random_make_inplace``): a draw whose old generator
state nothing else reads draws from the generator itself instead of a copy
(``node.tag["inplace"] = 0``). The numbers are those of the copying draws for the same seed,
and a call that fails leaves every stream's state as it was."""

import importlib.util

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.tensor.random import RandomVariable

from modes_tested import NUMBA

COPYING = ["-inplace"]
"""Every rewrite but inplace: each draw from a copy of its generator."""


def draws(fgraph) -> list:
    """The draw nodes of ``fgraph`` and of the loop bodies in it, outermost first."""
    found = []
    for node in fgraph.toposort():
        if isinstance(node.op, RandomVariable):
            found.append(node)
        for inner in node.op.inner_graphs():
            found += draws(inner)
    return found


def in_place(f) -> list[bool]:
    return [node.tag.get("inplace") == 0 for node in draws(f.fgraph)]


def states(updates) -> list[dict]:
    return [var.get_value(borrow=True).bit_generator.state for var in updates]


def gibbs(steps: int = 50, seed: int = 3):
    """An RBM's Gibbs chain: two binomial draws a step."""
    W = ss.shared(np.random.default_rng(0).normal(scale=0.5, size=(6, 4)), name="W")
    stream = ss.RandomStream(seed)
    v0 = T.dvector("v0")

    def step(v):
        h = stream.binomial(size=(4,), p=T.sigmoid(T.dot(v, W)), dtype="float64")
        return stream.binomial(size=(6,), p=T.sigmoid(T.dot(h, W.T)), dtype="float64")

    chain, updates = ss.scan(step, outputs_info=v0, n_steps=steps)
    return v0, chain, updates


# ---------------------------------------------------------------------------- structure
def test_a_draw_whose_stream_takes_its_new_state_draws_in_place():
    draw = ss.RandomStream(1).binomial(size=(3,), p=0.3)
    f = ss.function([], draw, mode="fast")
    assert in_place(f) == [True]
    assert any("in place" in r.detail for r in f.rewrite_report().records if r.rule == "inplace")
    assert "_draw" in f.source
    assert in_place(ss.function([], draw, mode="fast", rewrites=COPYING)) == [False]


def test_a_state_read_twice_is_copied():
    """Two draws from one generator state: each needs the old state, so both copy."""
    draw = ss.RandomStream(2).normal(size=(3,))
    rng, size, avg, std = draw.owner.inputs
    _, shifted = draw.owner.op(rng, size, avg + 1.0, std)
    f = ss.function([], [draw, shifted], mode="fast")
    assert in_place(f) == [False, False]
    a, b = f()
    np.testing.assert_allclose(b - a, 1.0, rtol=1e-12)  # the same state, the same normal numbers


def test_a_stream_without_its_update_is_copied():
    """no_default_updates: the shared generator keeps its state, so the draw must not advance it."""
    draw = ss.RandomStream(3).uniform(size=(2,))
    f = ss.function([], draw, mode="fast", no_default_updates=True)
    assert in_place(f) == [False]
    np.testing.assert_array_equal(f(), f())


def test_draws_in_a_loop_body_advance_the_loops_copy():
    """The loop copies each generator once, when it starts; its steps draw from that copy."""
    v0, chain, updates = gibbs()
    f = ss.function([v0], chain, updates=updates, mode="fast")
    assert in_place(f) == [True, True]
    assert f.source.count("_copy_generator") == 2 and f.source.count("_draw") == 2


def test_a_state_read_twice_in_a_step_is_copied():
    stream = ss.RandomStream(4)

    def step(acc):
        draw = stream.normal(size=(2,))
        rng, size, avg, std = draw.owner.inputs
        _, shifted = draw.owner.op(rng, size, avg + 1.0, std)
        return acc + shifted - draw

    out, updates = ss.scan(step, outputs_info=T.zeros(2), n_steps=3)
    f = ss.function([], out, updates=updates, mode="fast")
    assert in_place(f) == [False, False]
    np.testing.assert_allclose(f(), [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]], rtol=1e-12)


def test_a_generator_passed_as_a_non_sequence_is_copied():
    """A non-sequence is the same state at every step: each step draws the same numbers."""
    stream = ss.RandomStream(5)
    draw = stream.normal(size=(2,))
    rng = draw.owner.inputs[0]

    def step(g):
        return draw.owner.op(g, *draw.owner.inputs[1:])[1]

    out, updates = ss.scan(step, non_sequences=[rng], n_steps=3)
    f = ss.function([], out, updates=updates, mode="fast", no_default_updates=True)
    assert in_place(f) == [False]
    rows = f()
    np.testing.assert_array_equal(rows[0], rows[2])


# ---------------------------------------------------------------------------- values
DISTRIBUTIONS = {
    "binomial": lambda s: s.binomial(size=(3,), n=4, p=0.3),
    "normal": lambda s: s.normal(size=(3,), avg=1.0, std=2.0),
    "uniform": lambda s: s.uniform(size=(2, 2)),
    "integers": lambda s: s.integers(0, 9, size=(3,)),
    "choice": lambda s: s.choice(5, size=(3,), p=[0.1, 0.2, 0.3, 0.2, 0.2]),
    "multinomial": lambda s: s.multinomial(n=5, pvals=[0.2, 0.5, 0.3]),
}
MODES = ["fast"] + (["numba"] if NUMBA else [])


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("in_a_loop", [False, True], ids=["outside", "in a loop"])
def test_draws_in_place_give_the_copying_draws(distribution, mode, in_a_loop):
    """Same seed, three calls: the samples and the generators' states after each call equal
    the reference interpreter's (which copies) and the copying fast evaluator's."""
    results = {}
    for name, chosen, rewrites in [("py", "py", None), ("copying", "fast", COPYING), ("in place", mode, None)]:
        stream, updates = ss.RandomStream(6), None
        if in_a_loop:
            out, updates = ss.scan(lambda s=stream: DISTRIBUTIONS[distribution](s), n_steps=4)
        else:
            out = DISTRIBUTIONS[distribution](stream)
        f = ss.function([], out, mode=chosen, rewrites=rewrites, updates=updates)
        generators = [var for var, _ in stream.state_updates]
        results[name] = ([(f(), states(generators)) for _ in range(3)], f)
    assert all(in_place(results["in place"][1]))
    for name in ("copying", "in place"):
        for (got, got_states), (want, want_states) in zip(results[name][0], results["py"][0]):
            np.testing.assert_array_equal(got, want, err_msg=name)
            assert got_states == want_states, name
    first, second = results["py"][0][0][1], results["py"][0][1][1]
    assert first != second  # each call advanced the stream


@pytest.mark.skipif(not NUMBA, reason="numba is not installed")
def test_a_python_loop_in_mode_numba_draws_in_place():
    """choice has no numba kernel form: the loop stays Python, with the fast evaluator's draws."""
    stream = ss.RandomStream(7)
    out, updates = ss.scan(lambda acc: acc + stream.choice(4, size=(2,)), outputs_info=T.zeros(2, "int64"),
                           n_steps=5)
    f = ss.function([], out, updates=updates, mode="numba")
    assert all(line.endswith(": fast") or "fast" in line for line in f.backend_report()), f.backend_report()
    assert in_place(f) == [True] and "_draw" in f.source
    start = [v.get_value() for v in updates]
    got = f()
    for var, value in zip(updates, start):
        var.set_value(value)
    np.testing.assert_array_equal(got, ss.function([], out, updates=updates, mode="py")())


def test_the_gibbs_chain_in_place_equals_the_copying_chain():
    v0, chain, updates = gibbs(steps=200)
    values = np.ones(6)
    start = [v.get_value() for v in updates]
    want = ss.function([v0], chain, updates=updates, mode="fast", rewrites=COPYING)(values)
    want_states = states(updates)
    for var, value in zip(updates, start):
        var.set_value(value)
    got = ss.function([v0], chain, updates=updates, mode="fast")(values)
    np.testing.assert_array_equal(got, want)
    assert states(updates) == want_states
    assert 0 < want.sum() < want.size


# ---------------------------------------------------------------------------- failed calls
@pytest.mark.parametrize("mode", MODES)
def test_a_failed_call_leaves_the_stream_as_it_was(mode):
    """The draw advances its generator in place, then the call fails (a shape that does not
    broadcast): the stream's state is the one before the call, and the next call draws what a
    copying function draws."""
    stream, x = ss.RandomStream(8), T.dvector("x")
    draw = stream.normal(size=(3,))
    f = ss.function([x], draw + x, mode=mode)
    assert in_place(f) == [True]
    (rng,) = [v for v, _ in stream.state_updates]
    before = rng.get_value().bit_generator.state
    with pytest.raises(ValueError):
        f(np.ones(4))
    assert rng.get_value(borrow=True).bit_generator.state == before
    got = f(np.zeros(3))
    rng.set_value(np.random.Generator(np.random.PCG64()))  # any other state
    rng.get_value(borrow=True).bit_generator.state = before
    np.testing.assert_array_equal(got, ss.function([x], draw + x, mode="py")(np.zeros(3)))


@pytest.mark.parametrize("mode", MODES)
def test_a_loop_that_fails_leaves_its_streams_as_they_were(mode):
    """The loop's draws advance its own copies; the streams keep their states."""
    stream, xs = ss.RandomStream(9), T.dmatrix("xs")
    out, updates = ss.scan(lambda x: stream.normal(size=(3,)) + x, sequences=xs)
    f = ss.function([xs], out, updates=updates, mode=mode)
    assert in_place(f) == [True]
    before = states(updates)
    with pytest.raises(ValueError):
        f(np.ones((4, 2)))
    assert states(updates) == before
    assert f(np.ones((4, 3))).shape == (4, 3)
    assert states(updates) != before


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba is not installed")
def test_the_default_modes_numba_version_starts_from_the_states_before_the_call(monkeypatch):
    """The background compile reruns the call on copies of its values: the generators as they
    were before the call's draws advanced them, so its result agrees and it takes over; the
    live streams are not advanced by it."""
    monkeypatch.setattr(ss.config, "numba_after", 0.0)
    v0, chain, updates = gibbs()
    top = ss.RandomStream(10).normal(size=(6,))
    f = ss.function([v0], chain[-1] + top)
    values = np.ones(6)
    f(values)
    after_first = states(updates)
    assert f._evaluate.wait(120) == "numba", f.backend_report()
    assert states(updates) == after_first
