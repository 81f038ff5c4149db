"""The generator's only source of randomness: a chooser. ``RandomChooser`` (a seeded
``random.Random``) is fast and used by the ``--minutes`` CLI; ``HypothesisChooser`` draws from
hypothesis's ``st.data()`` so that pytest can shrink a failing program.

Every draw shrinks towards the first option, ``lo`` and False, so generators list options
simplest first.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol, TypeVar

Option = TypeVar("Option")


class Chooser(Protocol):
    def integer(self, lo: int, hi: int) -> int:
        """An int in [lo, hi]."""

    def chance(self, p: float) -> bool:
        """True with probability about ``p``."""

    def choice(self, options: Sequence[Option]) -> Option:
        """One of ``options``."""


class RandomChooser:
    def __init__(self, seed: int):
        self.random = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.random.randint(lo, hi)

    def chance(self, p: float) -> bool:
        return self.random.random() < p

    def choice(self, options: Sequence[Option]) -> Option:
        return options[self.random.randrange(len(options))]


class HypothesisChooser:
    """Draws with ``draw``: ``st.composite``'s argument, or ``st.data()``'s ``.draw``."""

    def __init__(self, draw):
        from hypothesis import strategies as st

        self.draw, self.st = draw, st

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(self.st.integers(lo, hi))

    def chance(self, p: float) -> bool:
        # an integer rather than st.booleans() so that p is honoured; 0 (False) is the simplest
        return self.draw(self.st.integers(0, 99)) >= round(100 * (1 - p))

    def choice(self, options: Sequence[Option]) -> Option:
        return options[self.draw(self.st.integers(0, len(options) - 1))]
