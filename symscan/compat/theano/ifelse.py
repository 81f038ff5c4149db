"""``theano.ifelse``: the lazy conditional, ``from theano.ifelse import ifelse``."""

from symscan.scan.ifelse import IfElse, ifelse

__all__ = ["IfElse", "ifelse"]
