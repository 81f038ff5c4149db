"""The updates dict that scan returns (Theano's OrderedUpdates)."""

from __future__ import annotations

from symscan.graph.basic import SharedVariable, Variable, describe


class ScanUpdates(dict):
    """{shared variable: new value}; keys must be shared variables, and merging two of these
    must not give one variable two different new values."""

    def __setitem__(self, key, value) -> None:
        if not isinstance(key, SharedVariable):
            shown = describe(key) if isinstance(key, Variable) else repr(key)
            raise TypeError(f"updates keys must be shared variables, got {shown}")
        if key in self and self[key] is not value:
            raise ValueError(f"{describe(key)} would get two different updates")
        super().__setitem__(key, value)

    def update(self, other=(), **kwargs) -> None:
        for key, value in (other.items() if hasattr(other, "items") else other):
            self[key] = value

    def __add__(self, other) -> ScanUpdates:
        merged = ScanUpdates(self)
        merged.update(other)
        return merged
