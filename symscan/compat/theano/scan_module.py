"""``theano.scan_module``: ``until``, ``scan`` and ``scan_checkpoints`` (Theano's argument order)."""

from symscan.scan import scan, until
from symscan.scan import scan_checkpoints as _scan_checkpoints


def scan_checkpoints(fn, sequences=None, outputs_info=None, non_sequences=None, name="checkpointscan_fn",
                     n_steps=None, save_every_N=10, padding=True, no_padding=None):
    """Theano's signature (``name`` before ``n_steps``; 1.0's ``no_padding`` too) over
    ``ss.scan_checkpoints``."""
    return _scan_checkpoints(fn, sequences, outputs_info, non_sequences, n_steps, save_every_N, padding, name=name,
                             no_padding=no_padding)


__all__ = ["scan", "scan_checkpoints", "until"]
