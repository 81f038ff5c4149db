"""``theano.tensor.xlogx``: ``xlogx`` and ``xlogy0`` (0 where x is 0)."""

from symscan.tensor.xlogx import xlogx, xlogy0

__all__ = ["xlogx", "xlogy0"]
