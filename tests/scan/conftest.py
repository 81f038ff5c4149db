"""The scan suite runs in mode "py", in mode "fast", and in "fast" with each rewrite switched
off alone, so that no rewrite is needed for (or hides a bug in) another one's results; and in
mode "numba" where numba is installed."""

import pytest

import rewrites
from symscan.compile.modes import MODES

from modes_tested import MODES_TESTED

PLAIN = tuple(MODES_TESTED)


@pytest.fixture(params=list(PLAIN) + [f"fast-without-{name}" for name in sorted(rewrites.REGISTRY)])
def mode(request):
    if request.param in PLAIN:
        return request.param
    return MODES["fast"].without(request.param.removeprefix("fast-without-"))


@pytest.fixture(params=list(PLAIN) + [f"fast-without-{name}" for name in sorted(rewrites.REGISTRY)])
def default_mode(request):
    """``config.mode`` (what function() uses when no mode is given) set like ``mode``."""
    import symscan as ss

    saved = ss.config.mode
    ss.config.mode = (request.param if request.param in PLAIN
                      else MODES["fast"].without(request.param.removeprefix("fast-without-")))
    yield ss.config.mode
    ss.config.mode = saved
