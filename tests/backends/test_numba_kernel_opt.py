"""Mode numba's kernels at their own LLVM level (symscan/backends/numba/pipeline.py,
``config.numba_kernel_opt``): the kernel's lowering runs at it, numba's level is restored
after, the numbers agree with mode "py" at every level, and a bad level is refused."""

from __future__ import annotations

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T

pytest.importorskip("numba")

from tests.backends.test_numba_fused import kernel_sources, lstm_gradient  # noqa: E402


@pytest.fixture
def level():
    """Sets the kernels' level for one test."""
    saved = ss.config.numba_kernel_opt
    yield lambda value: setattr(ss.config, "numba_kernel_opt", value)
    ss.config.numba_kernel_opt = saved


def test_the_kernel_is_optimised_at_its_level_and_numbas_level_is_restored(monkeypatch, tmp_path, level):
    from numba.core import codegen
    from numba.core import config as numba_config

    monkeypatch.setenv("SYMSCAN_CACHE_DIR", str(tmp_path))  # an empty cache: the kernel compiles
    seen, optimise = [], codegen.CPUCodeLibrary._optimize_final_module
    monkeypatch.setattr(codegen.CPUCodeLibrary, "_optimize_final_module",
                        lambda library: seen.append((library.name, int(numba_config.OPT))) or optimise(library))
    level(1)
    x = T.vector("x")
    out, _ = ss.scan(lambda v, s: T.tanh(s * 1.2345 + v), sequences=x, outputs_info=T.constant(0.0))
    f = ss.function([x], out, mode="numba", rewrites=["-vectorize", "-scan_to_accumulate"])
    np.testing.assert_allclose(f(np.arange(5.0)), ss.function([x], out, mode="py")(np.arange(5.0)), rtol=1e-15)
    assert f.backend_report() == ["scan: numba"]
    assert ("kernel", 1) in seen and ("kernel", 3) not in seen
    assert numba_config.OPT == 3


def test_an_lstm_gradient_at_level_2_agrees_with_mode_py(monkeypatch, level):
    """Level 1 (the default) runs in every numba test, level 3 is numba's own pipeline."""
    sources = kernel_sources(monkeypatch)
    level(2)
    rng = np.random.default_rng(2)
    values = [rng.normal(size=(4, 2, 3)), rng.normal(size=(3, 12)), rng.normal(size=(3, 12)),
              rng.normal(size=12), rng.normal(size=(2, 3)), rng.normal(size=(2, 3))]
    f = lstm_gradient("numba")
    for got, want in zip(f(*values), lstm_gradient("py")(*values)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)
    assert f.backend_report() == ["scan: numba", "grad_of_scan: numba"]
    assert len(sources) == 2 and all("kernel_compiler(2)" in source for source in sources)


@pytest.mark.parametrize("opt", [1, 3])
def test_level_3_is_numbas_own_pipeline(monkeypatch, level, opt):
    sources = kernel_sources(monkeypatch)
    level(opt)
    x = T.vector("x")
    out, _ = ss.scan(lambda v, s: T.tanh(s * 2.5 + v), sequences=x, outputs_info=T.constant(0.0))
    f = ss.function([x], out, mode="numba", rewrites=["-vectorize", "-scan_to_accumulate"])
    np.testing.assert_allclose(f(np.arange(4.0)), ss.function([x], out, mode="py")(np.arange(4.0)), rtol=1e-15)
    (source,) = sources
    assert ("pipeline_class=_KernelCompiler" in source) == (opt != 3)
    assert ("kernel_compiler(1)" in source) == (opt == 1)


@pytest.mark.parametrize("bad", [0, 4, "max", "fast"])
def test_a_level_other_than_1_to_3_is_refused(bad):
    with pytest.raises(ValueError, match=r"numba_kernel_opt.*1, 2 or 3, got"):
        ss.config.numba_kernel_opt = bad
    assert ss.config.numba_kernel_opt in (1, 2, 3)
