"""The modes every differential test runs in: numba's where it is installed."""

import importlib.util

NUMBA = importlib.util.find_spec("numba") is not None
MODES_TESTED = ["py", "fast"] + (["numba"] if NUMBA else [])
