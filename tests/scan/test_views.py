"""map, reduce, foldl and foldr against Python's map / functools.reduce on numpy values."""

import functools

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T


def digits_step(v, acc):
    """Non-commutative: the order of the elements shows in the result."""
    return acc * 10 + v


# ---------------------------------------------------------------------------- map
def test_map_one_sequence(mode):
    x = T.vector("x")
    out, updates = ss.map(lambda v: v * v - 1, x)
    assert len(updates) == 0
    xv = np.array([1.0, 2.0, -3.0])
    np.testing.assert_array_equal(ss.function([x], out, mode=mode)(xv), [v * v - 1 for v in xv])


def test_map_several_sequences_and_non_sequences(mode):
    a, b, c = T.vector("a"), T.ivector("b"), T.scalar("c")
    out, _ = ss.map(lambda x, y, c: x * y - c, [a, b], non_sequences=[c])
    av, bv = np.array([1.0, 2.0, 3.0, 4.0]), np.array([5, 6, 7], dtype="int32")
    expected = list(map(lambda x, y: x * y - 0.5, av, bv))
    np.testing.assert_array_equal(ss.function([a, b, c], out, mode=mode)(av, bv, 0.5), expected)


def test_map_several_outputs(mode):
    x = T.vector("x")
    (plus, times), _ = ss.map(lambda v: [v + 1, v * 3], x)
    xv = np.array([1.0, 5.0])
    got_plus, got_times = ss.function([x], [plus, times], mode=mode)(xv)
    np.testing.assert_array_equal(got_plus, xv + 1)
    np.testing.assert_array_equal(got_times, xv * 3)


def test_map_go_backwards(mode):
    x = T.vector("x")
    out, _ = ss.map(lambda v: v * 2, x, go_backwards=True)
    xv = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(ss.function([x], out, mode=mode)(xv), [v * 2 for v in reversed(xv)])


def test_map_with_taps(mode):
    x = T.vector("x")
    out, _ = ss.map(lambda prev, cur: cur - prev, [dict(input=x, taps=[-1, 0])])
    xv = np.array([1.0, 4.0, 9.0, 16.0])
    np.testing.assert_array_equal(ss.function([x], out, mode=mode)(xv), np.diff(xv))


def test_map_over_matrix_rows(mode, rng):
    m, w = T.matrix("m"), T.matrix("w")
    out, _ = ss.map(lambda row, w: T.dot(w, row), m, non_sequences=w)
    mv, wv = rng.standard_normal((4, 3)), rng.standard_normal((2, 3))
    np.testing.assert_allclose(ss.function([m, w], out, mode=mode)(mv, wv), [wv @ row for row in mv])


def test_map_name():
    x = T.vector("x")
    out, _ = ss.map(lambda v: v + 1, x, name="plus_one")
    assert "plus_one" in ss.dprint(out, file="str")


# ---------------------------------------------------------------------------- reduce
def test_reduce_returns_the_last_value(mode):
    x = T.vector("x")
    out, _ = ss.reduce(lambda v, acc: acc + v, x, T.constant(0.0))
    assert out.ndim == 0
    xv = np.array([1.0, 2.0, 3.0, 4.0])
    assert ss.function([x], out, mode=mode)(xv) == pytest.approx(xv.sum())


def test_reduce_non_commutative(mode):
    x = T.vector("x")
    out, _ = ss.reduce(digits_step, x, T.constant(0.0))
    xv = np.array([1.0, 2.0, 3.0])
    expected = functools.reduce(lambda acc, v: digits_step(v, acc), xv, 0.0)
    assert expected == 123.0
    assert ss.function([x], out, mode=mode)(xv) == expected


def test_reduce_go_backwards(mode):
    x = T.vector("x")
    out, _ = ss.reduce(digits_step, x, T.constant(0.0), go_backwards=True)
    xv = np.array([1.0, 2.0, 3.0])
    assert ss.function([x], out, mode=mode)(xv) == functools.reduce(lambda acc, v: digits_step(v, acc),
                                                                      xv[::-1], 0.0) == 321.0


def test_reduce_several_outputs(mode):
    x = T.vector("x")
    (total, product, last_square), _ = ss.reduce(lambda v, s, p: [s + v, p * v, v * v], x,
                                                 [T.constant(0.0), T.constant(1.0), None])
    xv = np.array([2.0, -3.0, 5.0])
    got = ss.function([x], [total, product, last_square], mode=mode)(xv)
    assert [float(g) for g in got] == [xv.sum(), np.prod(xv), xv[-1] ** 2]


def test_reduce_with_non_sequences_and_vector_state(mode):
    x, s0, w = T.matrix("x"), T.vector("s0"), T.scalar("w")
    out, _ = ss.reduce(lambda row, s, w: s * w + row, x, s0, non_sequences=w)
    xv, sv = np.arange(6.0).reshape(3, 2), np.array([1.0, -1.0])
    expected = functools.reduce(lambda s, row: s * 0.5 + row, xv, sv)
    np.testing.assert_allclose(ss.function([x, s0, w], out, mode=mode)(xv, sv, 0.5), expected)


def test_reduce_mit_sot(mode):
    """A mit-sot state: the last value of a Fibonacci-like sequence driven by x."""
    x, f0 = T.vector("x"), T.vector("f0")
    out, _ = ss.reduce(lambda v, a, b: a + b * v, x, dict(initial=f0, taps=[-2, -1]))
    xv, fv = np.array([1.0, 2.0, 0.5, 3.0]), np.array([1.0, 1.0])
    hist = list(fv)
    for v in xv:
        hist.append(hist[-2] + hist[-1] * v)
    assert ss.function([x, f0], out, mode=mode)(xv, fv) == pytest.approx(hist[-1])


def test_reduce_with_shared_updates(mode):
    count = ss.shared(np.int64(0), name="count")
    x = T.vector("x")
    out, updates = ss.reduce(lambda v, acc: (acc + v, {count: count + 1}), x, T.constant(0.0))
    f = ss.function([x], out, updates=updates, mode=mode)
    assert f(np.array([1.0, 2.0, 3.0])) == 6.0
    assert count.get_value() == 3


def test_reduce_with_only_updates(mode):
    total = ss.shared(np.float64(0.0), name="total")
    x = T.vector("x")
    out, updates = ss.reduce(lambda v: {total: total * 2 + v}, x, None)
    assert out is None
    ss.function([x], [], updates=updates, mode=mode)(np.array([1.0, 2.0, 3.0]))
    assert total.get_value() == functools.reduce(lambda acc, v: acc * 2 + v, [1.0, 2.0, 3.0], 0.0)


# ---------------------------------------------------------------------------- foldl and foldr
def test_foldl_non_commutative(mode):
    x = T.vector("x")
    out, _ = ss.foldl(lambda v, acc: acc - v, x, T.constant(100.0))
    xv = np.array([1.0, 10.0, 20.0])
    assert ss.function([x], out, mode=mode)(xv) == functools.reduce(lambda acc, v: acc - v, xv, 100.0)


def test_foldl_and_foldr_see_opposite_orders(mode):
    x = T.vector("x")
    left, _ = ss.foldl(digits_step, x, T.constant(0.0))
    right, _ = ss.foldr(digits_step, x, T.constant(0.0))
    xv = np.array([4.0, 5.0, 6.0, 7.0])
    got_left, got_right = ss.function([x], [left, right], mode=mode)(xv)
    assert got_left == functools.reduce(lambda acc, v: digits_step(v, acc), xv, 0.0) == 4567.0
    assert got_right == functools.reduce(lambda acc, v: digits_step(v, acc), xv[::-1], 0.0) == 7654.0


def test_foldr_matrix_product_order(mode, rng):
    """Matrix products do not commute: foldr multiplies from the last matrix first."""
    ms, v0 = T.tensor3("ms"), T.vector("v0")
    right, _ = ss.foldr(lambda m, v: T.dot(m, v), ms, v0)
    left, _ = ss.foldl(lambda m, v: T.dot(m, v), ms, v0)
    mv, vv = rng.standard_normal((3, 2, 2)), rng.standard_normal(2)
    got_right, got_left = ss.function([ms, v0], [right, left], mode=mode)(mv, vv)
    np.testing.assert_allclose(got_right, mv[0] @ (mv[1] @ (mv[2] @ vv)))
    np.testing.assert_allclose(got_left, mv[2] @ (mv[1] @ (mv[0] @ vv)))


def test_foldr_several_outputs_and_non_sequence(mode):
    x, k = T.vector("x"), T.scalar("k")
    (digits, count), _ = ss.foldr(lambda v, acc, n, k: [acc * k + v, n + 1], x,
                                  [T.constant(0.0), T.constant(np.int64(0))], non_sequences=k)
    xv = np.array([1.0, 2.0, 3.0])
    got_digits, got_count = ss.function([x, k], [digits, count], mode=mode)(xv, 10.0)
    assert got_digits == 321.0 and got_count == 3


def test_foldl_several_sequences_truncate(mode):
    a, b = T.vector("a"), T.vector("b")
    out, _ = ss.foldl(lambda x, y, acc: acc * 2 + x * y, [a, b], T.constant(0.0))
    av, bv = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, -1.0])
    expected = functools.reduce(lambda acc, xy: acc * 2 + xy[0] * xy[1], zip(av, bv), 0.0)
    assert ss.function([a, b], out, mode=mode)(av, bv) == expected


def test_foldr_several_sequences_each_from_its_end(mode):
    """Backwards, each sequence starts from its own last element."""
    a, b = T.vector("a"), T.vector("b")
    out, _ = ss.foldr(lambda x, y, acc: acc * 100 + x * 10 + y, [a, b], T.constant(0.0))
    av, bv = np.array([1.0, 2.0, 3.0]), np.array([7.0, 8.0])
    pairs = [(av[-1], bv[-1]), (av[-2], bv[-2])]
    expected = functools.reduce(lambda acc, xy: acc * 100 + xy[0] * 10 + xy[1], pairs, 0.0)
    assert ss.function([a, b], out, mode=mode)(av, bv) == expected
