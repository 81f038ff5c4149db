"""Compilation: ``function()`` and modes (the layer that picks rewrites and a backend)."""

from symscan.compile.function import Function, UnusedInputError, function
from symscan.compile.io import In
from symscan.compile.modes import MODES, THEANO_MODE_NAMES, Mode, get_mode

__all__ = ["MODES", "THEANO_MODE_NAMES", "Function", "In", "Mode", "UnusedInputError", "function", "get_mode"]
