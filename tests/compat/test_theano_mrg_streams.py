"""MRG_RandomStreams' stream-state API (Theano's signatures and checks, not MRG's bits):
rstate, set_rstate, inc_rstate, get_substream_rstates, n_streams, seed, updates."""

import numpy as np
import pytest

import symscan as ss
from symscan.compat.theano.sandbox.rng_mrg import M1, M2, MRG_RandomStreams


def valid(states):
    states = np.atleast_2d(states)
    return (states.dtype == np.int32 and states.shape[1] == 6 and np.all(states[:, :3] < M1)
            and np.all(states[:, 3:] < M2) and np.all(states >= 0) and np.all(states[:, :3].any(axis=1))
            and np.all(states[:, 3:].any(axis=1)))


def test_rstate_is_theanos_for_the_seed():
    np.testing.assert_array_equal(MRG_RandomStreams(7).rstate, [7] * 6)
    np.testing.assert_array_equal(MRG_RandomStreams([1, 2, 3, 4, 5, 6]).rstate, [1, 2, 3, 4, 5, 6])


def test_get_substream_rstates():
    streams = MRG_RandomStreams(11)
    first = streams.rstate.copy()
    states = streams.get_substream_rstates(5, "float32")
    assert states.shape == (5, 6) and valid(states)
    np.testing.assert_array_equal(states[0], first)
    assert len({tuple(row) for row in states}) == 5
    assert valid(streams.rstate) and not np.array_equal(streams.rstate, first)  # inc_rstate moved on
    again = MRG_RandomStreams(11).get_substream_rstates(5, "float32", inc_rstate=False)
    np.testing.assert_array_equal(again, states)  # deterministic
    with pytest.raises(ValueError, match=r"n_streams must be a positive int, got 0"):
        streams.get_substream_rstates(0, "float32")
    with pytest.raises(TypeError, match=r"dtype must be a dtype name"):
        streams.get_substream_rstates(2, np.float32)


def test_set_rstate_changes_later_draws_only_and_seed_all():
    streams = MRG_RandomStreams(5)
    early = streams.uniform((4,))
    f_early = ss.function([], early)
    first = f_early()
    streams.set_rstate(99)
    late = streams.uniform((4,))
    np.testing.assert_array_equal(ss.function([], late)(), ss.function([], MRG_RandomStreams(99).uniform((4,)))())
    streams.seed(5)
    np.testing.assert_array_equal(f_early(), first)  # back to the start of the seed's draws
    with pytest.raises(ValueError, match=r"seed 0 must be an int in \[1"):
        streams.set_rstate(0)
    with pytest.raises(TypeError, match=r"seed should be 1 integer or 6 integers"):
        streams.set_rstate([1, 2])


def test_inc_rstate_moves_to_a_new_valid_stream():
    streams = MRG_RandomStreams(3)
    a = ss.function([], streams.normal((3,)))()
    streams.inc_rstate()
    assert valid(streams.rstate)
    b = ss.function([], streams.normal((3,)))()
    assert not np.allclose(a, b)


def test_n_streams_is_theanos_guess():
    streams = MRG_RandomStreams()
    assert [streams.n_streams(s) for s in [(5,), (4, 3), (1000, 1000), (ss.tensor.lscalar(),)]] == [
        5, 2, 60 * 256, 60 * 256]


def test_updates_lists_each_draws_generator():
    streams = MRG_RandomStreams(1)
    streams.uniform((2,))
    streams.binomial((2,), p=0.3)
    assert len(streams.updates()) == 2 and streams.updates() == list(streams.state_updates)
