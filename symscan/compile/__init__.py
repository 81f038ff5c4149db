"""Compilation: ``function()`` and modes (the layer that picks rewrites and a backend)."""

from symscan.compile.function import Function, function
from symscan.compile.modes import MODES, Mode, get_mode

__all__ = ["MODES", "Function", "Mode", "function", "get_mode"]
