"""Fewer functions for numba to compile in a cold start (issue 25): a fused chain's broadcast
shape comes from functions of two shapes, shared by every chain of every kernel, one compiled
signature each whatever the arrays' layouts; ``MakeVector`` builds its array from a tuple."""

from __future__ import annotations

import re

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T

pytest.importorskip("numba")

from tests.backends.test_numba_fused import kernel_sources, lstm_gradient, lstm_values  # noqa: E402


def shape_functions(sources: list[str]) -> set[str]:
    return set(re.findall(r"\b(_fshape_[0-9a-f]+)\(", "".join(sources)))


def test_lstm_gradient_shapes_come_from_a_few_shared_functions(monkeypatch):
    from symscan.backends.numba import cache

    sources = kernel_sources(monkeypatch)
    f = lstm_gradient("numba")
    values = lstm_values()
    for got, want in zip(f(*values), lstm_gradient("py")(*values)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-15)
    names = shape_functions(sources)
    # pairs of ranks (2, 2), (2, 1), (1, 1) at most; before: one function per mix of the chains' ranks
    assert 1 <= len(names) <= 3
    for source in sources:
        for params in re.findall(r"def (?:_fshape_[0-9a-f]+)\((.*?)\)", source.replace("\\n", "\n")):
            assert params == "s0, s1"
    compiled = {name: value for namespace in cache._LOADED.values() for name, value in namespace.items()
                if name in names and hasattr(value, "signatures")}
    assert set(compiled) == names
    for name, dispatcher in compiled.items():  # shapes, not arrays: one signature, whatever the layouts
        assert len(dispatcher.signatures) <= 1, (name, dispatcher.signatures)  # (none: served from the disk cache)
    for source in sources:  # called with shapes, or with a shape already broadcast
        body = source[source.index("def kernel("):]
        lines = [line.split(" = ", 1)[1] for line in body.splitlines() if "= _fshape_" in line]
        assert lines
        for expr in lines:
            arguments = re.sub(r"_fshape_[0-9a-f]+\(|\)", " ", expr).replace(",", " ").split()
            assert len(arguments) >= 2 and all(a.endswith(".shape") for a in arguments), expr


@pytest.mark.parametrize("step, calls", [(lambda row, acc: T.tanh(acc * 2.0 + row), 1),
                                         (lambda row, acc: T.tanh(acc * 2.0) * row.sum(), 0)])
def test_a_chain_calls_one_two_shape_function_per_extra_array(monkeypatch, step, calls):
    """Two arrays: one call; one array (and a 0-d value): its own shape, no call."""
    sources = kernel_sources(monkeypatch)
    x, a = T.tensor3("x"), T.matrix("a")
    out, _ = ss.scan(step, sequences=x, outputs_info=a)
    f = ss.function([x, a], out, mode="numba")
    assert f.backend_report() == ["scan: numba"]
    values = [np.random.default_rng(4).standard_normal((5, 3, 4)), np.full((3, 4), 0.5)]
    np.testing.assert_array_equal(f(*values), ss.function([x, a], out, mode="fast")(*values))
    (source,) = sources
    body = source[source.index("def kernel("):]
    assert len(re.findall(r"_fshape_[0-9a-f]+\(", body)) == calls


@pytest.mark.parametrize("shapes", [((3, 4), (4,), (3, 1)), ((1, 4), (3, 4), (4,)), ((3, 4), (5,), (3, 4))])
def test_folded_broadcast_shapes_agree_with_numpy(shapes):
    """Arrays broadcast two at a time: mode fast's result, and its error where they do not broadcast."""
    x, a, b, c = T.tensor3("x"), T.matrix("a"), T.vector("b"), T.matrix("c")
    out, _ = ss.scan(lambda row, a, b, c: T.tanh(row + a * 2.0 + b - c), sequences=x, non_sequences=[a, b, c])
    rng = np.random.default_rng(5)
    values = [rng.standard_normal((2, 3, 4))] + [rng.standard_normal(s) for s in shapes]
    numba_f, fast_f = ss.function([x, a, b, c], out, mode="numba"), ss.function([x, a, b, c], out, mode="fast")
    try:
        want = fast_f(*values)
    except ValueError as error:
        with pytest.raises(ValueError) as numba_error:
            numba_f(*values)
        assert str(numba_error.value) == str(error)
        return
    np.testing.assert_array_equal(numba_f(*values), want)


def test_make_vector_in_a_kernel_from_a_tuple(monkeypatch):
    sources = kernel_sources(monkeypatch)
    x, h = T.matrix("x"), T.vector("h")

    def step(row, h):
        pair = T.stack([row[0] * h[1], h.shape[0].astype("float64")])
        return h + pair.sum()

    out, _ = ss.scan(step, sequences=x, outputs_info=h)
    f = ss.function([x, h], out, mode="numba")
    values = [np.random.default_rng(6).standard_normal((4, 3)), np.arange(2.0)]
    np.testing.assert_array_equal(f(*values), ss.function([x, h], out, mode="py")(*values))
    assert f.backend_report() == ["scan: numba"]
    body = sources[0][sources[0].index("def kernel("):]
    assert "np.array([" not in body
