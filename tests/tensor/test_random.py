"""Random streams: Theano's signatures, dtypes, sizes, broadcasting of tensor parameters, seeding,
the default update that function() applies, and draws inside scan (updates of the loop).

Each draw has its own generator, spawned from the stream's seed in the order the draws are made
(see ``symscan.tensor.random``), so the expected numbers below come from numpy generators
spawned the same way.

Functions run in mode "py" and mode "fast" from the same generator states and must draw exactly
the same numbers and leave the same new states (tests/support/both_modes.py); tests that take
the ``mode`` fixture run each mode on its own."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.scan import Scan
from symscan.tensor.random import RandomVariable

import both_modes


def spawned(seed: int, count: int) -> list[np.random.Generator]:
    """The generators of a stream's first ``count`` draws."""
    return [np.random.Generator(np.random.PCG64(child)) for child in np.random.SeedSequence(seed).spawn(count)]


def generators(updates) -> list:
    return [var for var in updates if not isinstance(var.type, ss.TensorType)]


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


# ---------------------------------------------------------------------------- signatures and dtypes
def test_theano_names_are_the_same_class():
    assert T.shared_randomstreams.RandomStreams is ss.RandomStream


@pytest.mark.parametrize("make", [ss.RandomStream, T.shared_randomstreams.RandomStreams])
def test_signatures_by_keyword(make):
    stream = make(3)
    draws = [stream.binomial(size=(4,), n=3, p=0.25, dtype=None),
             stream.normal(size=(4,), avg=1.0, std=2.0, dtype=None),
             stream.uniform(size=(4,), low=-1.0, high=1.0, dtype=None),
             stream.integers(low=2, high=5, size=(4,), dtype=None),
             stream.choice(a=5, size=(4,), replace=True, p=None)]
    values = both_modes.run([], draws)
    g_bin, g_norm, g_unif, g_int, g_choice = spawned(3, 5)
    np.testing.assert_array_equal(values[0], g_bin.binomial(3, 0.25, size=(4,)))
    np.testing.assert_allclose(values[1], g_norm.normal(1.0, 2.0, size=(4,)))
    np.testing.assert_allclose(values[2], g_unif.uniform(-1.0, 1.0, size=(4,)))
    np.testing.assert_array_equal(values[3], g_int.integers(2, 5, size=(4,)))
    np.testing.assert_array_equal(values[4], g_choice.choice(5, size=(4,)))
    assert all(v.shape == (4,) for v in values)


def test_positional_defaults():
    stream = ss.RandomStream(8)
    b, n, u = stream.binomial((1000,)), stream.normal((1000,)), stream.uniform((1000,))
    i = stream.integers(4, size=(1000,))
    bv, nv, uv, iv = both_modes.run([], [b, n, u, i])
    assert set(np.unique(bv)) == {0, 1}  # n=1, p=0.5
    assert abs(nv.mean()) < 0.15 and 0.85 < nv.std() < 1.15
    assert uv.min() >= 0.0 and uv.max() < 1.0
    assert set(np.unique(iv)) == {0, 1, 2, 3}  # integers(high) draws from [0, high)


def test_default_dtypes():
    stream = ss.RandomStream(0)
    assert stream.binomial(size=(2,)).dtype == "int64"
    assert stream.integers(5, size=(2,)).dtype == "int64"
    assert stream.choice(5, size=(2,)).dtype == "int64"
    assert stream.choice(T.constant(np.array([0.5, 1.5], dtype="float32")), size=(2,)).dtype == "float32"
    assert stream.normal(size=(2,)).dtype == ss.config.floatX
    assert stream.uniform(size=(2,)).dtype == ss.config.floatX


def test_float_draws_follow_floatX(floatX):
    stream = ss.RandomStream(0)
    normal, uniform = stream.normal(size=(3,)), stream.uniform(size=(3,))
    assert normal.dtype == uniform.dtype == floatX
    values = both_modes.run([], [normal, uniform])
    assert [v.dtype for v in values] == [np.dtype(floatX)] * 2


def test_binomial_dtype_casts():
    stream = ss.RandomStream(1)
    draw = stream.binomial(size=(5,), n=1, p=0.5, dtype="float64")
    assert draw.dtype == "float64"
    value = both_modes.run([], draw)
    assert value.dtype == np.float64
    np.testing.assert_array_equal(value, spawned(1, 1)[0].binomial(1, 0.5, size=(5,)).astype("float64"))
    assert stream.binomial(size=(5,), n=4, dtype="int32").dtype == "int32"


# ---------------------------------------------------------------------------- sizes
def test_symbolic_size_from_a_shape():
    x = T.matrix("x")
    stream = ss.RandomStream(4)
    draw = stream.uniform(size=x.shape)
    assert draw.ndim == 2
    f = both_modes.function([x], draw)
    expected = spawned(4, 1)[0]
    for shape in [(2, 3), (4, 1)]:
        value = f(np.zeros(shape))
        assert value.shape == shape
        np.testing.assert_allclose(value, expected.uniform(0.0, 1.0, size=shape))


def test_tuple_sizes_static_and_mixed():
    x = T.matrix("x")
    stream = ss.RandomStream(5)
    static = stream.normal(size=(2, 3))
    mixed = stream.normal(size=(x.shape[0], 3))
    assert static.type.shape == (2, 3)
    assert mixed.type.shape == (None, 3)
    assert stream.normal(size=3).type.shape == (3,)
    a, b = both_modes.function([x], [static, mixed])(np.zeros((4, 7)))
    assert a.shape == (2, 3) and b.shape == (4, 3)


def test_no_size_draws_one_scalar():
    draw = ss.RandomStream(6).normal()
    assert draw.type.shape == ()
    assert both_modes.run([], draw).shape == ()


# ---------------------------------------------------------------------------- tensor parameters
def test_probability_vector_broadcasts_like_numpy():
    p = T.vector("p")
    stream = ss.RandomStream(7)
    draw = stream.binomial(size=(3, 4), p=p)
    assert draw.type.shape == (3, 4)
    pv = np.array([0.0, 1.0, 0.0, 1.0])
    np.testing.assert_array_equal(both_modes.run([p], draw, pv), np.tile(pv.astype("int64"), (3, 1)))


def test_parameters_without_size_give_the_broadcast_shape():
    n, p = T.lvector("n"), T.matrix("p")
    stream = ss.RandomStream(9)
    draw = stream.binomial(n=n, p=p)
    assert draw.ndim == 2
    nv, pv = np.array([0, 5, 10]), np.full((2, 3), 0.5)
    value = both_modes.run([n, p], draw, nv, pv)
    np.testing.assert_array_equal(value, spawned(9, 1)[0].binomial(nv, pv))
    assert value.shape == (2, 3) and (value[:, 0] == 0).all()


def test_normal_with_tensor_mean_and_std():
    avg, std = T.vector("avg"), T.scalar("std")
    draw = ss.RandomStream(10).normal(avg=avg, std=std)
    av = np.array([0.0, 100.0, -100.0])
    value = both_modes.run([avg, std], draw, av, 0.5)
    np.testing.assert_allclose(value, spawned(10, 1)[0].normal(av, 0.5))


def test_choice_with_probabilities():
    p = T.vector("p")
    draw = ss.RandomStream(12).choice(4, size=(6,), p=p)
    np.testing.assert_array_equal(both_modes.run([p], draw, np.array([0.0, 0.0, 1.0, 0.0])), [2] * 6)


def test_choice_without_replacement_is_a_permutation():
    draw = ss.RandomStream(13).choice(5, size=(5,), replace=False)
    assert sorted(both_modes.run([], draw).tolist()) == [0, 1, 2, 3, 4]


def test_parameters_that_cannot_broadcast_to_size_fail_at_build_time():
    p = T.tensor("float64", shape=(5,), name="p5")
    with pytest.raises(ValueError, match=r"binomial: the parameter 'p5' \(float64\[5\]\) cannot broadcast to size"):
        ss.RandomStream(0).binomial(size=(3, 4), p=p)
    with pytest.raises(ValueError, match="cannot broadcast"):
        ss.RandomStream(0).normal(size=(3,), avg=T.matrix("avg"))


def test_choice_of_a_matrix_is_an_error():
    with pytest.raises(ValueError, match="choice: a must be an int or a vector, got 'a'"):
        ss.RandomStream(0).choice(T.matrix("a"))


# ---------------------------------------------------------------------------- seeds and updates
def test_same_seed_same_draws_across_streams():
    values = []
    for _ in range(2):
        stream = ss.RandomStream(2024)
        values.append(both_modes.run([], [stream.normal(size=(3,)), stream.integers(100, size=(3,))]))
    np.testing.assert_array_equal(values[0][0], values[1][0])
    np.testing.assert_array_equal(values[0][1], values[1][1])
    other = ss.RandomStream(2025)
    assert not np.array_equal(both_modes.run([], other.normal(size=(3,))), values[0][0])


def test_draws_of_one_stream_are_independent():
    stream = ss.RandomStream(3)
    first, second = stream.normal(size=(4,)), stream.normal(size=(4,))
    a, b = both_modes.run([], [first, second])
    assert not np.array_equal(a, b)


def test_function_applies_the_default_update(mode):
    stream = ss.RandomStream(14)
    draw = stream.normal(size=(3,))
    f = ss.function([], draw, mode=mode)
    expected = spawned(14, 1)[0]
    calls = [f() for _ in range(3)]
    for value in calls:
        np.testing.assert_allclose(value, expected.normal(size=(3,)))
    assert not np.array_equal(calls[0], calls[1])


def test_reseeding_restarts_the_draws():
    stream = ss.RandomStream(15)
    f = both_modes.function([], stream.uniform(size=(2,)))
    first = f()
    f()
    stream.seed(15)
    np.testing.assert_array_equal(f(), first)


def test_evaluation_never_mutates_the_input_generator():
    stream = ss.RandomStream(16)
    draw = stream.normal(size=(3,))
    rng_var, _ = stream.state_updates[0]
    generator = rng_var.get_value(borrow=True)
    state = generator.bit_generator.state
    new_generator, value = RandomVariable("normal", "float64").perform(
        draw.owner, [generator, np.array([3]), np.float64(0.0), np.float64(1.0)])
    assert generator.bit_generator.state == state
    assert new_generator is not generator and new_generator.bit_generator.state != state
    np.testing.assert_allclose(value, spawned(16, 1)[0].normal(size=(3,)))


# ---------------------------------------------------------------------------- draws inside scan
def noise_scan(seed=21, n_steps=4):
    stream = ss.RandomStream(seed)
    out, updates = ss.scan(lambda: stream.normal(size=(2,)), n_steps=n_steps)
    return out, updates


def test_draws_inside_scan_become_updates_of_the_scan():
    out, updates = noise_scan()
    (rng,) = generators(updates)
    assert rng.default_update is None  # scan owns the update now
    node = updates[rng].owner
    assert isinstance(node.op, Scan) and rng in node.inputs
    assert out.owner is node  # a map output is the buffer itself


def test_scan_draws_with_updates_change_between_calls(mode):
    out, updates = noise_scan()
    f = ss.function([], out, updates=updates, mode=mode)
    expected = spawned(21, 1)[0]
    first, second = f(), f()
    np.testing.assert_allclose(first, np.stack([expected.normal(size=(2,)) for _ in range(4)]))
    np.testing.assert_allclose(second, np.stack([expected.normal(size=(2,)) for _ in range(4)]))
    assert not np.array_equal(first, second)
    assert not np.array_equal(first[0], first[1])  # each step draws anew


def test_scan_draws_without_updates_repeat_and_keep_the_state(mode):
    out, updates = noise_scan()
    (rng,) = generators(updates)
    state = rng.get_value().bit_generator.state
    f = ss.function([], out, mode=mode)
    first, second = f(), f()
    np.testing.assert_array_equal(first, second)
    assert rng.get_value().bit_generator.state == state
    expected = spawned(21, 1)[0]
    np.testing.assert_allclose(first, np.stack([expected.normal(size=(2,)) for _ in range(4)]))


def gibbs(seed, n_vis=6, n_hid=4, n_steps=5):
    """The guide's Gibbs sampler, with W, bvis, bhid passed as non_sequences."""
    r = np.random.default_rng(0)
    values = r.normal(size=(n_vis, n_hid)), r.normal(size=n_vis), r.normal(size=n_hid)
    W, bvis, bhid = (ss.shared(v, name=name) for v, name in zip(values, ["W", "bvis", "bhid"]))
    trng = T.shared_randomstreams.RandomStreams(seed)

    def one_step(vsample, W_, bvis_, bhid_):
        hmean = T.nnet.sigmoid(T.dot(vsample, W_) + bhid_)
        hsample = trng.binomial(size=hmean.shape, n=1, p=hmean)
        vmean = T.nnet.sigmoid(T.dot(hsample, W_.T) + bvis_)
        return trng.binomial(size=vsample.shape, n=1, p=vmean, dtype=ss.config.floatX)

    sample = T.vector("sample")
    chain, updates = ss.scan(one_step, outputs_info=sample, non_sequences=[W, bvis, bhid], n_steps=n_steps)
    return sample, chain, updates, values


def gibbs_numpy(seed, values, v, calls, n_steps=5):
    """The same chain with numpy: the hidden draw's generator is spawned first, the visible one second."""
    Wv, bv, bh = values
    g_hidden, g_visible = spawned(seed, 2)
    chains = []
    for _ in range(calls):
        state, chain = v, []
        for _ in range(n_steps):
            hmean = sigmoid(state @ Wv + bh)
            hsample = g_hidden.binomial(1, hmean, size=hmean.shape)
            vmean = sigmoid(hsample @ Wv.T + bv)
            state = g_visible.binomial(1, vmean, size=state.shape).astype("float64")
            chain.append(state)
        chains.append(np.array(chain))
    return chains


def test_gibbs_sampler_is_reproducible_for_a_seed(mode):
    v0 = np.zeros(6)
    sample, chain, updates, values = gibbs(1234)
    gibbs10 = ss.function([sample], chain, updates=updates, mode=mode)
    got = [gibbs10(v0), gibbs10(v0)]
    expected = gibbs_numpy(1234, values, v0, calls=2)
    for g, e in zip(got, expected):
        assert g.dtype == np.float64 and g.shape == (5, 6)
        np.testing.assert_array_equal(g, e)
    assert not np.array_equal(got[0], got[1])
    sample, chain, updates, _ = gibbs(1234)  # a second sampler with the same seed: the same first chain
    np.testing.assert_array_equal(ss.function([sample], chain, updates=updates, mode=mode)(v0), got[0])


def test_gibbs_sampler_without_updates_repeats_its_chain():
    v0 = np.ones(6)
    sample, chain, updates, values = gibbs(99)
    assert len(generators(updates)) == 2
    f = both_modes.function([sample], chain[-1])
    first = f(v0)
    np.testing.assert_array_equal(f(v0), first)
    np.testing.assert_array_equal(first, gibbs_numpy(99, values, v0, calls=1)[0][-1])


# ---------------------------------------------------------------------------- multinomial
def test_multinomial_counts_match_numpys_draws():
    stream = ss.RandomStream(31)
    pvals = np.array([0.2, 0.3, 0.5])
    draw = stream.multinomial(size=(4, 2), n=10, pvals=pvals)
    assert draw.type == ss.TensorType("int64", (4, 2, 3))
    got = both_modes.run([], draw)
    np.testing.assert_array_equal(got, spawned(31, 1)[0].multinomial(10, pvals, size=(4, 2)))
    assert (got.sum(axis=-1) == 10).all()


def test_multinomial_of_a_matrix_of_probabilities_draws_one_row_each():
    """Theano: size=None, pvals of shape (B, L) -> counts of shape (B, L), row i from pvals[i]."""
    P, n = T.matrix("P"), T.lvector("n")
    draw = ss.RandomStream(32).multinomial(n=n, pvals=P)
    assert draw.type.shape == (None, None)
    pvals = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.5, 0.5, 0.0]])
    got = both_modes.run([P, n], draw, pvals, np.array([3, 7, 100]))
    np.testing.assert_array_equal(got[:2], [[3, 0, 0], [0, 0, 7]])  # certain outcomes
    assert got[2].sum() == 100 and got[2, 2] == 0
    np.testing.assert_array_equal(got, spawned(32, 1)[0].multinomial([3, 7, 100], pvals))


def test_multinomial_defaults_are_theanos():
    stream = ss.RandomStream(33)
    draw = stream.multinomial()  # n=1, pvals=[0.5, 0.5]: one trial, two outcomes
    assert draw.dtype == "int64" and draw.type.shape == (2,)
    got = both_modes.run([], draw)
    assert got.sum() == 1 and set(got.tolist()) == {0, 1}
    assert stream.multinomial(pvals=[0.1, 0.9], dtype="int32").dtype == "int32"


def test_multinomial_of_float32_probabilities_summing_above_one_by_rounding():
    p = np.array([0.6, 0.4000001, 0.0], dtype="float32")  # the first two exceed 1 in float64
    assert p[:2].astype(np.float64).sum() > 1.0
    got = both_modes.run([], ss.RandomStream(34).multinomial(size=(5,), n=4, pvals=p))
    assert (got.sum(axis=-1) == 4).all() and (got[:, 2] == 0).all()


def test_multinomial_with_a_symbolic_size_and_ndim():
    x = T.matrix("x")
    draw = ss.RandomStream(35).multinomial(size=x.shape[:1], n=2, pvals=[0.25, 0.75], ndim=1)
    got = both_modes.run([x], draw, np.zeros((6, 1)))
    assert got.shape == (6, 2) and (got.sum(axis=1) == 2).all()


def test_multinomial_inside_scan_advances_each_step(mode):
    stream = ss.RandomStream(36)
    P = T.matrix("P")
    counts, updates = ss.scan(lambda p: stream.multinomial(n=1000, pvals=p), sequences=[P])
    f = ss.function([P], counts, updates=updates, mode=mode)
    pvals = np.array([[0.5, 0.5], [0.5, 0.5], [0.9, 0.1]])
    first, second = f(pvals), f(pvals)
    expected = spawned(36, 1)[0]
    np.testing.assert_array_equal(first, np.stack([expected.multinomial(1000, row) for row in pvals]))
    np.testing.assert_array_equal(second, np.stack([expected.multinomial(1000, row) for row in pvals]))
    assert not np.array_equal(first, second)


def test_multinomial_bad_arguments():
    stream = ss.RandomStream(0)
    with pytest.raises(TypeError, match="pvals must be a vector.*'p'"):
        stream.multinomial(pvals=T.scalar("p"))
    with pytest.raises(TypeError, match=r"n \(the number of trials\) must be an integer, got 'n'"):
        stream.multinomial(n=T.scalar("n"))
    with pytest.raises(ValueError, match=r"multinomial: the parameter the rows of 'P' \(float64\[3, 2\]\) cannot "
                                         r"broadcast to size \(4,\)"):
        stream.multinomial(size=(4,), pvals=T.tensor("float64", (3, 2), name="P"))
    with pytest.raises(ValueError, match="ndim=2, but.*gives 1 batch axes"):
        stream.multinomial(size=(3,), ndim=2)
    with pytest.raises(ValueError, match="pvals"):
        both_modes.run([], stream.multinomial(size=(2,), pvals=[0.7, 0.7, 0.1]))  # numpy's check at run time
