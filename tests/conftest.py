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
