"""``theano.printing``: ``debugprint`` is symscan's ``dprint``."""

from symscan.printing import dprint as debugprint

__all__ = ["debugprint"]
