"""``theano.sandbox``: only ``rng_mrg`` (``MRG_RandomStreams``), which Theano programs import."""

from symscan.compat.theano.sandbox import rng_mrg

__all__ = ["rng_mrg"]
