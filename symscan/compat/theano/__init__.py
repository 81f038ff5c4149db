"""A Theano-shaped namespace over symscan's public API.

Theano loop code ports by changing its imports::

    import symscan.compat.theano as theano
    import symscan.compat.theano.tensor as T
"""

from symscan import Lop, Rop, config, grad, shared
from symscan.compat.theano import (
           compile,
           d3viz,
           gradient,
           ifelse,
           printing,
           sandbox,
           scalar,
           scan_module,
           tensor,
           tests,
)
from symscan.compat.theano.cloning import clone
from symscan.compat.theano.compile import In, Out, Param, function
from symscan.compat.theano.scan_module import scan_checkpoints
from symscan.printing import dprint as debugprint
from symscan.scan import foldl, foldr, map, reduce, scan
from symscan.tensor import dot

__all__ = ["In", "Lop", "Out", "Param", "Rop", "clone", "compile", "config", "d3viz", "debugprint", "dot", "foldl",
           "foldr", "function", "grad", "gradient", "ifelse", "map", "printing", "reduce", "sandbox", "scalar", "scan",
           "scan_checkpoints", "scan_module",
           "shared", "tensor", "tests"]
