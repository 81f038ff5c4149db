"""The modes every differential test runs in: numba's and jax's where they are installed (the dev
extra installs both); ``SYMSCAN_TEST_MODES`` (comma-separated, e.g. ``py,jax``) names them
instead. What mode jax cannot pass as written is listed in ``jax_limits.py``."""

import importlib.util
import os

NUMBA = importlib.util.find_spec("numba") is not None
JAX = importlib.util.find_spec("jax") is not None
_CHOSEN = [m for m in os.environ.get("SYMSCAN_TEST_MODES", "").split(",") if m]
MODES_TESTED = _CHOSEN or ["py", "fast"] + (["numba"] if NUMBA else []) + (["jax"] if JAX else [])
