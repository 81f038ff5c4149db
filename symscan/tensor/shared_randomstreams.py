"""Theano's ``tensor.shared_randomstreams`` name for random streams."""

from symscan.tensor.random import RandomStream

RandomStreams = RandomStream

__all__ = ["RandomStreams"]
