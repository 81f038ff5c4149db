"""The modes every differential test runs in: numba's where it is installed; ``SYMSCAN_TEST_MODES``
(comma-separated, e.g. ``py,fast,numba,jax``) names them instead."""

import importlib.util
import os

NUMBA = importlib.util.find_spec("numba") is not None
_CHOSEN = [m for m in os.environ.get("SYMSCAN_TEST_MODES", "").split(",") if m]
MODES_TESTED = _CHOSEN or ["py", "fast"] + (["numba"] if NUMBA else [])
