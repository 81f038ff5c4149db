"""``theano.tensor.shared_randomstreams``: ``RandomStreams`` is symscan's ``RandomStream``."""

from symscan.tensor.shared_randomstreams import RandomStreams

__all__ = ["RandomStreams"]
