"""symscan: symbolic loops and recurrences (Theano's ``scan``), optimised, run and exported.

The core layers are imported before ``compile`` (see ARCHITECTURE.md); ``rewrites`` is a
top-level package imported once, absolutely, by ``symscan.compile``.
"""

from symscan import backends, gradient, graph, scan, tensor  # noqa: F401  (the core layers, before compile)
from symscan.compile import Function, UnusedInputError, function
from symscan.config import config
from symscan.drawing import draw, to_dot
from symscan.gradient import (
    DisconnectedInputError,
    GradientError,
    Lop,
    NullTypeGradError,
    Rop,
    disconnected_grad,
    grad,
    grad_clip,
    grad_scale,
    hessian,
    jacobian,
    undefined_grad,
    verify_grad,
    zero_grad,
)
from symscan.graph.clone import clone
from symscan.graph.fg import FunctionGraph, MissingInputError
from symscan.graph.type import TensorType
from symscan.latex import latex  # noqa: F811  (the function shadows the module, as scan does)
from symscan.printing import dprint
from symscan.scan import foldl, foldr, ifelse, map, reduce, scan, scan_checkpoints, until  # noqa: F811  (the function shadows the module)
from symscan.tensor.random import RandomStream
from symscan.tensor.shared import shared

__version__ = "0.1.0"


def __getattr__(name: str):
    """``ss.onnx`` imports the exporter on first use (onnx is optional and slow to import), and
    ``ss.jax`` (``to_jax``) likewise."""
    if name in ("onnx", "jax"):  # (symscan.jax imports jax only when it is used)
        import importlib

        return importlib.import_module(f"symscan.{name}")
    raise AttributeError(f"module 'symscan' has no attribute {name!r}")


__all__ = ["DisconnectedInputError", "GradientError", "Lop", "NullTypeGradError", "Rop", "disconnected_grad", "grad",
           "grad_clip", "grad_scale", "hessian", "jacobian", "undefined_grad", "verify_grad", "zero_grad",
           "Function", "FunctionGraph", "MissingInputError", "RandomStream", "TensorType", "UnusedInputError", "clone",
           "config", "dprint", "draw", "latex", "to_dot",
           "foldl", "foldr", "function", "graph", "ifelse", "map", "reduce", "scan", "scan_checkpoints", "shared",
           "tensor", "until"]
