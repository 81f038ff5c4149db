"""symscan: symbolic loops and recurrences (Theano's ``scan``), optimised, run and exported.

The core layers are imported before ``compile`` (see ARCHITECTURE.md); ``rewrites`` is a
top-level package imported once, absolutely, by ``symscan.compile``.
"""

from symscan import (  # noqa: I001  (core layers first)
           backends,  # noqa: F401
           graph,
           tensor,
)
from symscan.compile import Function, function
from symscan.config import config
from symscan.graph.fg import FunctionGraph, MissingInputError
from symscan.graph.type import TensorType
from symscan.printing import dprint
from symscan.tensor.shared import shared

__version__ = "0.1.0"

__all__ = ["Function", "FunctionGraph", "MissingInputError", "TensorType", "config", "dprint", "function",
           "graph", "shared", "tensor"]
