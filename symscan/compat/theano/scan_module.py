"""``theano.scan_module``: ``until`` and ``scan``."""

from symscan.scan import scan, until

__all__ = ["scan", "until"]
