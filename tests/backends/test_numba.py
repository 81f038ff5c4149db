"""Mode "numba": loops compiled into numba kernels, checked against mode "py" and mode "fast";
the per-loop fallback and its reason; errors as mode fast gives them; the on-disk cache; the
default mode's tier."""

import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T

pytest.importorskip("numba")

LOOPS = ["-push_out_seq", "-scan_to_accumulate", "-scan_to_linear_recurrence"]
"""Keep loops as loops (no rewrite turns them into whole-array operations)."""


def _agree(inputs, outputs, values, rewrites=None, **kwargs):
    """Mode numba gives mode py's and mode fast's results (same dtype and shape, values to
    1e-12; numba's scalar libm and its sequential sums may differ from numpy's in the last
    bit); returns the numba function."""
    numba_f = ss.function(inputs, outputs, mode="numba", rewrites=rewrites, **kwargs)
    fast = ss.function(inputs, outputs, mode="fast", rewrites=rewrites, **kwargs)
    py = ss.function(inputs, outputs, mode="py", **kwargs)
    got, want, fast_got = (f(*values) for f in (numba_f, py, fast))
    for g, w, q in zip(*(r if isinstance(r, list) else [r] for r in (got, want, fast_got))):
        assert np.asarray(g).dtype == np.asarray(w).dtype and np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(g, q, rtol=1e-13, atol=1e-15)
    return numba_f


def _runs_in_numba(f) -> bool:
    return all(line.endswith(": numba") for line in f.backend_report()) and f.backend_report()


def test_elman_rnn_loop_is_one_kernel(rng):
    X, W, b, h0 = T.tensor3("X"), T.matrix("W"), T.vector("b"), T.matrix("h0")
    hs, _ = ss.scan(lambda x, h, W, b: T.tanh(x + T.dot(h, W) + b), sequences=X, outputs_info=h0,
                    non_sequences=[W, b])
    values = [rng.normal(size=(20, 4, 6)), rng.normal(size=(6, 6)) / 3, rng.normal(size=6), np.zeros((4, 6))]
    f = _agree([X, W, b, h0], hs, values)
    assert _runs_in_numba(f), f.backend_report()


def test_taps_mit_sot_and_two_outputs(rng):
    u, x0, y0, W = T.matrix("u"), T.matrix("x0"), T.vector("y0"), T.matrix("W")

    def step(u_tm2, u_t, x_tm3, x_tm1, y_tm1, W):
        x_t = T.tanh(T.dot(x_tm1, W) + u_t + u_tm2 + y_tm1)
        return [x_t, T.dot(x_tm3, W)]

    (xs, ys), _ = ss.scan(step, sequences=dict(input=u, taps=[-2, 0]),
                          outputs_info=[dict(initial=x0, taps=[-3, -1]), y0], non_sequences=W)
    values = [rng.normal(size=(12, 5)), rng.normal(size=(3, 5)), rng.normal(size=5), rng.normal(size=(5, 5)) / 3]
    f = _agree([u, x0, y0, W], [xs, ys], values, rewrites=LOOPS)
    assert _runs_in_numba(f), f.backend_report()


@pytest.mark.parametrize("go_backwards", [False, True])
def test_until_stops_the_kernel(go_backwards):
    x0, limit = T.scalar("x0"), T.scalar("limit")
    out, _ = ss.scan(lambda x, lim: (1.5 * x + 1, ss.until(1.5 * x + 1 > lim)), outputs_info=x0,
                     non_sequences=limit, n_steps=50, go_backwards=go_backwards)
    f = _agree([x0, limit], out, [np.float64(1.0), np.float64(100.0)])
    assert _runs_in_numba(f), f.backend_report()
    assert f(np.float64(1.0), np.float64(1e300)).shape == (50,)


def test_ring_of_the_last_step_and_map_of_unknown_row_shape(rng):
    A, k = T.vector("A"), T.iscalar("k")
    result, _ = ss.scan(lambda p, A: T.sin(p) * A, outputs_info=T.ones_like(A), non_sequences=A, n_steps=k)
    f = _agree([A, k], result[-1], [np.linspace(0.5, 1.5, 7), np.int32(9)], rewrites=LOOPS)
    assert _runs_in_numba(f), f.backend_report()
    assert "rings=1" in str(f.fgraph.outputs[0].owner.inputs[0].owner.op)
    M = T.matrix("M")
    rows, _ = ss.scan(lambda r: T.exp(r) * 2.0, sequences=M)
    g = _agree([M], [rows, rows[-1]], [rng.normal(size=(6, 3))], rewrites=LOOPS)
    assert _runs_in_numba(g), g.backend_report()


@pytest.mark.parametrize("shape", [(9,), (9, 2)])
def test_last_step_of_a_mit_sot_reaching_beyond_the_window_locals(shape):
    """Taps further back than the window locals (MAX_WINDOW) read a taps buffer; with only the
    last step read (a ring of one), the result is that buffer's newest row (it was NaN)."""
    x0 = T.tensor("float64", shape=(None,) * len(shape), name="x0")
    k = T.iscalar("k")
    outs, _ = ss.scan(lambda a, b: T.tanh(a * 0.5 + b), outputs_info=[dict(initial=x0, taps=[-9, -1])], n_steps=k)
    for steps in (1, 12):
        f = _agree([x0, k], outs[-1], [np.linspace(-1.0, 1.0, int(np.prod(shape))).reshape(shape), np.int32(steps)])
        assert _runs_in_numba(f), f.backend_report()


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_integer_state_keeps_its_dtype_and_wraps_as_numpy():
    """numba adds int32 scalars as int64; the kernel keeps the state int32, so it wraps."""
    x0 = T.iscalar("x0")
    out, _ = ss.scan(lambda x: x * np.int32(3) + np.int32(1), outputs_info=x0, n_steps=40)
    f = _agree([x0], out, [np.int32(7)], rewrites=LOOPS)
    assert f(np.int32(7)).dtype == np.int32
    assert _runs_in_numba(f), f.backend_report()


def test_float32_loop(rng):
    x, h0 = T.fmatrix("x"), T.fvector("h0")
    hs, _ = ss.scan(lambda x_t, h: T.tanh(x_t * h + np.float32(0.5)), sequences=x, outputs_info=h0)
    f = _agree([x, h0], hs, [rng.normal(size=(9, 4)).astype("float32"), np.ones(4, dtype="float32")],
               rewrites=LOOPS)
    assert f(np.ones((2, 4), "float32"), np.ones(4, "float32")).dtype == np.float32


def test_a_loop_numba_cannot_run_stays_python_with_the_reason():
    srng = ss.RandomStream(seed=3)
    out, updates = ss.scan(lambda acc: acc + srng.choice(np.arange(4.0), size=()), outputs_info=T.constant(0.0),
                           n_steps=5)
    f = ss.function([], out, updates=updates, mode="numba")
    (line,) = f.backend_report()
    assert line.endswith(")") and ": fast (" in line and "choice" in line
    g = ss.function([], out, updates=updates, mode="fast")
    assert f().shape == g().shape == (5,)


def test_a_failing_check_gives_mode_fasts_error():
    """A step whose row changes shape: the kernel's check fails, and the error is mode fast's
    (the call is run again there), naming the output and the step."""
    x0, n = T.vector("x0"), T.iscalar("n")
    out, _ = ss.scan(lambda x: T.concatenate([x, x])[: x.shape[0] + 1], outputs_info=x0, n_steps=n)
    f = ss.function([x0, n], out, mode="numba")
    fast = ss.function([x0, n], out, mode="fast")
    with pytest.raises(ValueError) as fast_error:
        fast(np.ones(3), np.int32(4))
    with pytest.raises(ValueError) as numba_error:
        f(np.ones(3), np.int32(4))
    assert str(numba_error.value) == str(fast_error.value)


def test_an_index_out_of_range_in_a_loop_raises_as_in_mode_fast():
    x, i = T.matrix("x"), T.iscalar("i")
    out, _ = ss.scan(lambda row, i: row[i] * 2.0, sequences=x, non_sequences=i)
    f = _agree([x, i], out, [np.ones((4, 3)), np.int32(-1)], rewrites=LOOPS)
    assert _runs_in_numba(f), f.backend_report()
    with pytest.raises(IndexError):
        f(np.ones((4, 3)), np.int32(3))


def _kernel_sources(monkeypatch) -> list[str]:
    """The kernel sources the evaluator hands to numba from now on (recorded as it loads them)."""
    from symscan.backends.numba import evaluator

    sources, load = [], evaluator.load_kernel
    monkeypatch.setattr(evaluator, "load_kernel", lambda source, *a: sources.append(source) or load(source, *a))
    return sources


@pytest.mark.parametrize("row_length", [3, None])
def test_only_an_index_that_may_be_out_of_range_makes_the_kernel_check_bounds(monkeypatch, row_length):
    """numba's bounds checks add a fifth to a cold compile: a constant index into a static
    length (a shape vector's entries, always) needs none, an unknown length keeps them."""
    sources = _kernel_sources(monkeypatch)
    x = T.tensor("float64", shape=(None, row_length), name="x")
    out, _ = ss.scan(lambda row: row[1] * row.shape[0] + row[-1], sequences=x)
    f = _agree([x], out, [np.arange(12.0).reshape(4, 3)], rewrites=LOOPS)
    assert _runs_in_numba(f), f.backend_report()
    (source,) = sources
    assert ("boundscheck=True" in source) == (row_length is None), source


def test_a_constant_index_beyond_the_rows_length_still_raises():
    """(with the row's length static, building the graph raises already)"""
    x = T.matrix("x")
    out, _ = ss.scan(lambda row: row[-4] * 2.0, sequences=x)
    f = ss.function([x], out, mode="numba", rewrites=LOOPS)
    assert _runs_in_numba(f), f.backend_report()
    with pytest.raises(IndexError):
        f(np.ones((4, 3)))


def test_a_reversing_transpose_in_a_kernel_is_a_view(monkeypatch, rng):
    """(numba compiles ``np.transpose(x, axes)`` in seconds on first use; ``.T`` costs nothing)"""
    sources = _kernel_sources(monkeypatch)
    X, W = T.tensor3("X"), T.matrix("W")
    out, _ = ss.scan(lambda x, W: T.dot(x.T, W) + x.dimshuffle(1, 0).sum(), sequences=X, non_sequences=W)
    f = _agree([X, W], out, [rng.normal(size=(5, 4, 3)), rng.normal(size=(4, 2))], rewrites=LOOPS)
    assert _runs_in_numba(f), f.backend_report()
    assert ").T" in sources[0] and "np.transpose(" not in sources[0]


def _child(cache: str, code: str) -> str:
    env = dict(os.environ, SYMSCAN_CACHE_DIR=cache)
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                            cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def test_a_second_process_loads_the_kernel_from_the_disk_cache(tmp_path):
    code = """
        import numpy as np, symscan as ss, symscan.tensor as T
        from symscan.backends.numba import cache
        x = T.vector("x")
        out, _ = ss.scan(lambda v, s: T.tanh(s + v), sequences=x, outputs_info=T.constant(0.0))
        f = ss.function([x], out, mode="numba", rewrites=["-vectorize", "-scan_to_accumulate"])
        f(np.arange(5.0))
        (kernel,) = [m["kernel"] for m in cache._LOADED.values() if "kernel" in m]
        print(kernel.stats.cache_hits and sum(kernel.stats.cache_hits.values()),
              sum(kernel.stats.cache_misses.values()))
    """
    first = _child(str(tmp_path), code)
    second = _child(str(tmp_path), code)
    assert first.split()[1] != "0"  # compiled (a miss) in the first process
    assert second.split() == ["1", "0"]  # loaded, not compiled, in the second


HELPERS_CHILD = """
    import sys, time, numpy as np, symscan as ss, symscan.tensor as T
    from symscan.backends.numba import cache
    X, W, h0 = T.tensor3("X"), T.matrix("W"), T.matrix("h0")
    def step(x, h, W):  # a small product and a max over an axis: helpers of small.py, reductions.py
        h = T.tanh(x + T.dot(h, W) * SCALE)
        return h - T.max(h, axis=1, keepdims=True)
    hs, _ = ss.scan(step, sequences=X, outputs_info=h0, non_sequences=W)
    f = ss.function([X, W, h0], hs, mode="numba")
    rng = np.random.default_rng(0)
    f(rng.normal(size=(5, 3, 4)), rng.normal(size=(4, 4)), np.zeros((3, 4)))
    assert f.backend_report() == ["scan: numba"], f.backend_report()
    (kernel,) = [m["kernel"] for m in cache._LOADED.values() if "kernel" in m]
    counts = [sum(kernel.stats.cache_misses.values())]
    for name in ("small", "reductions"):
        module = cache.helper_module(name)
        assert module.__file__.startswith(str(cache.cache_dir())), module.__file__
        stats = [v.stats for v in vars(module).values() if hasattr(v, "stats")]
        counts += [sum(sum(s.cache_hits.values()) for s in stats), sum(sum(s.cache_misses.values()) for s in stats)]
    print(*counts)
"""


def test_the_packages_helpers_are_cached_beside_the_kernels_and_reused(tmp_path):
    """small.py's and reductions.py's jitted helpers keep their machine code in the kernel cache,
    not in the package (a read-only install would compile them in every process); a second
    process compiling another kernel that calls them loads them from there."""
    from symscan.backends.numba import cache

    package_cache = os.path.join(os.path.dirname(cache.__file__), "__pycache__")
    start = time.time()
    first = _child(str(tmp_path), HELPERS_CHILD.replace("SCALE", "2.0")).split()
    second = _child(str(tmp_path), HELPERS_CHILD.replace("SCALE", "3.0")).split()
    kernel, small_hits, small_misses, reductions_hits, reductions_misses = map(int, first)
    assert kernel and small_misses and reductions_misses and not small_hits and not reductions_hits
    kernel, small_hits, small_misses, reductions_hits, reductions_misses = map(int, second)
    assert kernel  # another kernel, compiled; the helpers it calls loaded
    assert small_hits and reductions_hits and not small_misses and not reductions_misses
    written = {p.name.split(".")[1].split("-")[0] for p in (tmp_path / "numba" / "__pycache__").glob("*.nbi")}
    assert {"small_product", "reduce_matrix_into"} <= written
    touched = [name for name in (os.listdir(package_cache) if os.path.isdir(package_cache) else [])
               if name.endswith((".nbi", ".nbc")) and os.path.getmtime(os.path.join(package_cache, name)) >= start]
    assert not touched


def test_default_mode_hands_over_to_numba_when_the_loop_has_run_long_enough(rng, monkeypatch):
    monkeypatch.setattr(ss.config, "numba_after", 0.0)
    X, W, h0 = T.tensor3("X"), T.matrix("W"), T.matrix("h0")
    hs, _ = ss.scan(lambda x, h, W: T.tanh(x + T.dot(h, W)), sequences=X, outputs_info=h0, non_sequences=W)
    f = ss.function([X, W, h0], hs)
    values = [rng.normal(size=(10, 3, 4)), rng.normal(size=(4, 4)), np.zeros((3, 4))]
    first = f(*values)
    assert f.backend_report()[-1] in ("tier: compiling", "tier: numba")
    assert f._evaluate.wait(120) == "numba"
    # equal to rounding, as the tier checks (small products loop in the kernel, in another
    # order of additions than BLAS's: backends/numba/small.py)
    np.testing.assert_allclose(f(*values), first, rtol=1e-12, atol=1e-15)
    assert f._evaluate.compiled is not None


def test_an_explicit_mode_fast_stays_fast(rng, monkeypatch):
    """Only the default mode (no ``mode`` given) hands over: ``mode="fast"`` is what it says."""
    monkeypatch.setattr(ss.config, "numba_after", 0.0)
    X, h0 = T.matrix("X"), T.vector("h0")
    hs, _ = ss.scan(lambda x, h: T.tanh(x + h), sequences=X, outputs_info=h0)
    f = ss.function([X, h0], hs, mode="fast")
    f(rng.normal(size=(4, 3)), np.zeros(3))
    assert f.backend_report() == [] and not hasattr(f._evaluate, "wait")


def test_default_mode_without_loops_never_tiers(monkeypatch):
    monkeypatch.setattr(ss.config, "numba_after", 0.0)
    x = T.vector("x")
    f = ss.function([x], T.exp(x).sum())
    f(np.ones(3))
    assert f.backend_report() == []


@pytest.mark.parametrize("draw", ["normal", "uniform", "integers", "binomial"])
def test_a_sampler_loop_draws_numpys_stream(draw):
    """The kernel draws from (a copy of) the generator in place: the same numbers as mode fast,
    and the same new generator state."""
    srng = ss.RandomStream(seed=11)
    make = {"normal": lambda: srng.normal(size=(3,), avg=1.0, std=2.0), "uniform": lambda: srng.uniform(size=(3,)),
            "integers": lambda: srng.integers(0, 9, size=(3,)).astype("float64"),
            "binomial": lambda: srng.binomial(size=(3,), n=5, p=0.25).astype("float64")}[draw]
    out, updates = ss.scan(lambda acc: acc + make(), outputs_info=T.zeros(3), n_steps=6)
    f = ss.function([], out, updates=updates, mode="numba")
    assert _runs_in_numba(f), f.backend_report()
    (gen_var,) = [v for v in updates]
    start = gen_var.get_value()
    got = f()
    after = gen_var.get_value()
    gen_var.set_value(start)
    want = ss.function([], out, updates=updates, mode="fast")()
    np.testing.assert_array_equal(got, want)
    assert after.bit_generator.state == gen_var.get_value().bit_generator.state


def test_a_draw_with_parameters_numpy_refuses_raises_numpys_error():
    srng, s = ss.RandomStream(seed=2), T.scalar("s")
    out, updates = ss.scan(lambda acc, s: acc + srng.normal(avg=0.0, std=s), outputs_info=T.constant(0.0),
                           non_sequences=s, n_steps=4)
    f = ss.function([s], out, updates=updates, mode="numba")
    assert _runs_in_numba(f), f.backend_report()
    assert f(np.float64(1.0)).shape == (4,)
    with pytest.raises(ValueError, match="scale < 0"):
        f(np.float64(-1.0))


def test_gibbs_sampling_with_a_probability_per_unit(rng):
    """The Theano guide's sampler: binomial draws with one probability per unit (numpy walks
    the broadcast parameters in C order; the kernel draws element by element the same way)."""
    W, bv, bh, v0 = T.matrix("W"), T.vector("bvis"), T.vector("bhid"), T.vector("v0")
    srng = ss.RandomStream(seed=7)

    def gibbs(v, W, bv, bh):
        h = srng.binomial(size=bh.shape, n=1, p=T.sigmoid(T.dot(v, W) + bh)).astype("float64")
        return srng.binomial(size=v.shape, n=1, p=T.sigmoid(T.dot(h, W.T) + bv)).astype("float64")

    chain, updates = ss.scan(gibbs, outputs_info=v0, non_sequences=[W, bv, bh], n_steps=8)
    f = ss.function([W, bv, bh, v0], chain, updates=updates, mode="numba")
    assert _runs_in_numba(f), f.backend_report()
    values = [rng.normal(size=(5, 3)), rng.normal(size=5), rng.normal(size=3), np.ones(5)]
    starts = {var: var.get_value() for var in updates}
    got = f(*values)
    after = {var: var.get_value().bit_generator.state for var in updates}
    for var, value in starts.items():
        var.set_value(value)
    np.testing.assert_array_equal(got, ss.function([W, bv, bh, v0], chain, updates=updates, mode="fast")(*values))
    assert after == {var: var.get_value().bit_generator.state for var in updates}
    assert 0 < got.sum() < got.size  # both outcomes occur: the draws are not all alike


@pytest.mark.parametrize("n_steps", [4, -3, 0])
def test_a_loop_inside_a_loop_is_one_kernel(rng, n_steps):
    """The inner loop is written inline in the outer kernel: sit-sot and mit-sot states, a map
    of rows, a negative step count (backwards), no step at all."""
    M, k = T.matrix("M"), T.iscalar("k")

    def row_step(row, k):
        sums, _ = ss.scan(lambda v, acc: acc + T.tanh(v), sequences=row, outputs_info=T.constant(0.0))
        fib, _ = ss.scan(lambda a, b: a + 0.5 * b, outputs_info=dict(initial=row[:2], taps=[-2, -1]), n_steps=k)
        return [sums[-1], fib.sum()]

    (last, fibs), _ = ss.scan(row_step, sequences=M, non_sequences=k)
    values = [rng.normal(size=(5, 6)), np.int32(n_steps)]
    f = _agree([M, k], [last, fibs], values, rewrites=LOOPS)
    assert _runs_in_numba(f), f.backend_report()


def test_a_nested_loop_that_fails_its_check_gives_mode_fasts_error():
    M, k = T.matrix("M"), T.iscalar("k")

    def row_step(row, k):
        out, _ = ss.scan(lambda v: v * 2.0, sequences=row, n_steps=k)
        return out.sum()

    sums, _ = ss.scan(row_step, sequences=M, non_sequences=k)
    f, fast = (ss.function([M, k], sums, mode=m, rewrites=LOOPS) for m in ("numba", "fast"))
    assert _runs_in_numba(f), f.backend_report()
    np.testing.assert_array_equal(f(np.ones((3, 4)), np.int32(2)), fast(np.ones((3, 4)), np.int32(2)))
    with pytest.raises(ValueError) as fast_error:
        fast(np.ones((3, 4)), np.int32(9))
    with pytest.raises(ValueError) as numba_error:
        f(np.ones((3, 4)), np.int32(9))
    assert str(numba_error.value) == str(fast_error.value)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_sigmoid_in_a_loop_is_the_stable_form(dtype):
    """Far out in both tails too (the reference computes e / (1 + e) below 0)."""
    x, h0 = T.matrix("x", dtype=dtype), T.vector("h0", dtype=dtype)
    hs, _ = ss.scan(lambda x_t, h: T.sigmoid(x_t + h) * np.asarray(0.5, dtype) + T.sigmoid(x_t[0]),
                    sequences=x, outputs_info=h0)
    values = [np.array([[-800.0, -30.0, 0.0], [30.0, 800.0, -1e-8], [1.0, -1.0, 2.0]], dtype=dtype),
              np.zeros(3, dtype=dtype)]
    f = _agree([x, h0], hs, values, rewrites=LOOPS)
    assert _runs_in_numba(f), f.backend_report()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_products_in_a_loop_match_numpys_for_every_layout(rng, dtype):
    """Products in kernels may go through the private AVX-512 OpenBLAS (symscan/backends/
    numba/blas.py): transposed (Fortran-ordered) and strided operands, and empty ones."""
    X, W, h0 = T.tensor3("X", dtype=dtype), T.matrix("W", dtype=dtype), T.matrix("h0", dtype=dtype)
    hs, _ = ss.scan(lambda x, h, W: T.tanh(T.dot(h, W.T) + T.dot(x, W[:, ::-1]) + x), sequences=X,
                    outputs_info=h0, non_sequences=W)
    for shape in [(6, 3, 4), (2, 0, 4)]:
        values = [rng.normal(size=shape).astype(dtype), (rng.normal(size=(4, 4)) / 3).astype(dtype),
                  np.zeros(shape[1:], dtype=dtype)]
        f = _agree([X, W, h0], hs, values, rewrites=LOOPS)
        assert _runs_in_numba(f), f.backend_report()


def test_the_private_blas_product_equals_numpys(rng):
    from symscan.backends.numba import blas

    matmul = blas.matmul_helper("float64")
    if matmul is None:
        pytest.skip(blas.refusal() or "no AVX-512, or OpenBLAS already uses its AVX-512 kernels here")
    a, b = rng.normal(size=(5, 7)), rng.normal(size=(7, 3))
    for x, y in [(a, b), (np.asfortranarray(a), b), (a, b.T.copy().T), (a[:, ::1][::2], b), (a[:, :0], b[:0])]:
        np.testing.assert_allclose(matmul(x, y), np.dot(x, y), rtol=1e-13, atol=1e-13)
    with pytest.raises(ValueError):
        matmul(a, a)


def test_fuzzed_dtype_cases_agree_with_mode_py(quiet_numpy):
    """Cases a sweep of ops and dtypes found (tests/fuzz README): float32 ** int32 is computed
    in float64 as numpy does; the sign of uint8; a reduction and a new axis of a 0-d value."""
    b, g0 = T.ivector("b"), T.fscalar("g0")
    pq, _ = ss.scan(lambda b_t, g: [T.cast(T.minimum(g ** b_t + g / b_t, 8.0), "float32"), g ** b_t],
                    sequences=b, outputs_info=[g0, None])
    _agree([b, g0], pq, [np.array([100, 3], "int32"), np.float32(7.1)], rewrites=LOOPS)
    u = T.tensor("uint8", shape=(None,), name="u")
    signs, _ = ss.scan(lambda u_t, acc: acc + T.sign(u_t), sequences=u, outputs_info=T.constant(np.uint8(0)))
    f = _agree([u], signs, [np.array([200, 1, 1], "uint8")], rewrites=LOOPS)
    assert "sign of unsigned" in f.backend_report()[0]
    x, h0 = T.vector("x"), T.scalar("h0")
    hs, _ = ss.scan(lambda x_t, h: (h * x_t).sum() + h.dimshuffle("x").sum() + 1.0, sequences=x, outputs_info=h0)
    g = _agree([x, h0], hs, [np.array([0.5, 1.0, 2.0]), np.float64(1.0)], rewrites=LOOPS)
    assert _runs_in_numba(g), g.backend_report()


def test_an_integer_power_raises_numpys_error():
    x, h0 = T.ivector("x"), T.iscalar("h0")
    out, _ = ss.scan(lambda x_t, h: h ** x_t, sequences=x, outputs_info=h0)
    f = ss.function([x, h0], out, mode="numba", rewrites=LOOPS)
    with pytest.raises(ValueError, match="negative integer powers"):
        f(np.array([2, -1], "int32"), np.int32(2))
