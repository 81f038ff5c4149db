"""map, reduce, foldl and foldr: scan with fixed conventions (Theano's scan views)."""

from __future__ import annotations

from collections.abc import Callable

from symscan.scan.basic import scan


def map(fn: Callable, sequences, non_sequences=None, truncate_gradient: int = -1, go_backwards: bool = False,
        mode=None, name: str | None = None):
    """Apply fn to each step of the sequences: Python's map over the leading axis."""
    return scan(fn, sequences=sequences, outputs_info=None, non_sequences=non_sequences,
                truncate_gradient=truncate_gradient, go_backwards=go_backwards, mode=mode, name=name)


def reduce(fn: Callable, sequences, outputs_info, non_sequences=None, go_backwards: bool = False, mode=None,
           name: str | None = None):
    """Like Python's reduce: the scan's outputs at the last step only."""
    outputs, updates = scan(fn, sequences=sequences, outputs_info=outputs_info, non_sequences=non_sequences,
                            go_backwards=go_backwards, mode=mode, name=name, return_list=True)
    if outputs is None:  # fn returned only updates
        return None, updates
    last = [out[-1] for out in outputs]
    return (last[0] if len(last) == 1 else last), updates


def foldl(fn: Callable, sequences, outputs_info, non_sequences=None, mode=None, name: str | None = None):
    """Haskell's foldl: reduce from the first element to the last."""
    return reduce(fn, sequences, outputs_info, non_sequences, go_backwards=False, mode=mode, name=name)


def foldr(fn: Callable, sequences, outputs_info, non_sequences=None, mode=None, name: str | None = None):
    """Haskell's foldr: reduce from the last element to the first."""
    return reduce(fn, sequences, outputs_info, non_sequences, go_backwards=True, mode=mode, name=name)
