"""``theano.compile``: Theano's ``function`` (its signature and defaults) over ``ss.function``.

Differences from ``ss.function``: the parameter order (``mode`` third, as in Theano) and
``on_unused_input``'s default, Theano's ``"raise"``. Theano's mode names ("FAST_RUN",
"FAST_COMPILE", "DebugMode") are understood by ``ss.function`` itself.
"""

from __future__ import annotations

from symscan.compile import THEANO_MODE_NAMES, Function, UnusedInputError
from symscan.compile import function as _function

THEANO_ON_UNUSED_INPUT = "raise"
"""What ``on_unused_input=None`` means: Theano's ``config.on_unused_input`` default."""


def function(inputs, outputs=None, mode=None, updates=None, givens=None, no_default_updates: bool | list = False,
             accept_inplace: bool = False, name: str | None = None, rebuild_strict: bool = True,
             allow_input_downcast: bool | None = None, profile: bool | None = None,
             on_unused_input: str | None = None) -> Function:
    """Theano 1.0's ``theano.function``. ``accept_inplace`` and ``rebuild_strict`` are accepted
    and change nothing (symscan graphs hold no user inplace ops, and ``givens`` always keep
    types); ``profile`` is accepted too: loops built with ``scan(profile=True)`` are timed."""
    return _function(inputs, outputs, updates=updates, givens=givens, mode=mode, name=name,
                     allow_input_downcast=allow_input_downcast,
                     on_unused_input=THEANO_ON_UNUSED_INPUT if on_unused_input is None else on_unused_input,
                     no_default_updates=no_default_updates)


__all__ = ["THEANO_MODE_NAMES", "UnusedInputError", "function"]
