"""Shared fixtures. The suite runs with the rewriter's debug checks on."""

import numpy as np
import pytest

import symscan as ss

ss.config.debug_checks = True


@pytest.fixture
def rng():
    return np.random.default_rng(20261121)


@pytest.fixture(params=["py", "fast"])
def mode(request):
    """Every mode that must agree with the reference interpreter."""
    return request.param


def pytest_configure(config):
    """Test modules mirror the packages without ``__init__.py``, so basenames repeat
    (tests/graph/test_basic.py, tests/tensor/test_basic.py); importlib mode imports each
    file under its own path instead of failing with "import file mismatch"."""
    config.option.importmode = "importlib"


@pytest.fixture
def registry():
    """The rewrite registry, restored after the test (tests may register throw-away rules)."""
    import rewrites

    saved = dict(rewrites.REGISTRY)
    yield rewrites.REGISTRY
    rewrites.REGISTRY.clear()
    rewrites.REGISTRY.update(saved)


@pytest.fixture(params=["float64", "float32"])
def floatX(request):
    """``config.floatX`` set to each float dtype for the test, and restored afterwards."""
    saved = ss.config.floatX
    ss.config.floatX = request.param
    yield request.param
    ss.config.floatX = saved
