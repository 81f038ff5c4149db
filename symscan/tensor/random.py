"""Random streams: draws whose generator state is a shared variable updated by each call.

Each draw gets its own generator (spawned from the stream's seed, so a seed reproduces
every draw) held by a shared variable whose ``default_update`` is the advanced state:
``function`` applies it, and ``scan`` turns it into an update of the loop.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from symscan.config import config
from symscan.graph.basic import Apply, Op, SharedVariable, Variable, describe
from symscan.graph.type import TensorType, Type, normalize_dtype
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.elemwise import broadcast_static_shapes
from symscan.tensor.shape import shape_vector, static_entries


@dataclass(frozen=True)
class GeneratorType(Type):
    """The type of a ``numpy.random.Generator`` (a random stream's state)."""

    def filter(self, value, what: str = "value", strict: bool = False):
        if not isinstance(value, np.random.Generator):
            raise TypeError(f"{what} must be a numpy.random.Generator, got {type(value).__name__}")
        return value

    def copy_value(self, value):
        return copy.deepcopy(value)

    def __str__(self) -> str:
        return "Generator"


@dataclass(frozen=True)
class RandomVariable(Op):
    """A draw from ``distribution``: outputs the advanced generator and the sample.

    ``perform`` draws from a copy of the input generator, so the input is never mutated.
    Inputs: generator, size (an int64 vector, when ``has_size``), then the parameters.
    """

    distribution: str
    dtype: str
    has_size: bool = True
    replace: bool = True

    def make_node(self, rng, size, *params) -> Apply:
        params = [as_tensor_variable(p) for p in params]
        if self.has_size:
            shape = tuple(None if e is None else e for e in static_entries(size)) or (None,) * size.type.shape[0]
            if self.distribution != "choice":  # choice's a and p do not broadcast against size
                _check_broadcasts_to(params, shape, self.distribution)
        else:
            shape = broadcast_static_shapes([p for p in params if p is not None], self.distribution)
        if self.distribution == "choice":
            shape = shape if self.has_size else ()
        inputs = [rng, size] + params
        return Apply(self, inputs, [GeneratorType(), TensorType(self.dtype, shape)])

    def perform(self, node, inputs):
        rng, size, *params = inputs
        generator = copy.deepcopy(rng)
        size = tuple(int(s) for s in size) if self.has_size else None
        if self.distribution == "choice":
            a, *p = params
            draw = generator.choice(a, size=size, replace=self.replace, p=p[0] if p else None)
        else:
            draw = getattr(generator, self.distribution)(*params, size=size)
        return [generator, np.asarray(draw).astype(self.dtype, copy=False)]

    def __str__(self) -> str:
        return f"RandomVariable{{{self.distribution}, {self.dtype}}}"


def _check_broadcasts_to(params: list[Variable], shape: tuple, distribution: str) -> None:
    """numpy draws need each parameter to broadcast to ``size``; known lengths are checked now."""
    for p in params:
        lengths = zip(reversed(p.type.shape), reversed(shape))
        if p.ndim > len(shape) or any(a is not None and b is not None and a not in (1, b) for a, b in lengths):
            shown = tuple("?" if n is None else n for n in shape)
            raise ValueError(f"{distribution}: the parameter {describe(p)} cannot broadcast to size {shown}; "
                             "give a size whose trailing lengths match the parameter's, or size=None")


def _size_vector(size) -> tuple[Variable, bool]:
    if size is None:
        return as_tensor_variable(np.zeros(0, dtype="int64")), False
    return shape_vector(size, "random size"), True


class RandomStream:
    """Theano's RandomStreams: ``binomial``, ``normal``, ``uniform``, ``integers``, ``choice``."""

    def __init__(self, seed: int | None = None):
        self._seed_sequence = np.random.SeedSequence(seed)
        self.state_updates: list[tuple[SharedVariable, Variable]] = []

    def seed(self, seed: int | None = None) -> None:
        """Reseed every generator of this stream, as if it had been made with ``seed``."""
        self._seed_sequence = np.random.SeedSequence(seed)
        for rng, _ in self.state_updates:
            rng.set_value(self._spawn())

    def _spawn(self) -> np.random.Generator:
        return np.random.Generator(np.random.PCG64(self._seed_sequence.spawn(1)[0]))

    def _draw(self, distribution: str, size, params: list, dtype: str, replace: bool = True) -> Variable:
        size_vector, has_size = _size_vector(size)
        rng = SharedVariable(GeneratorType(), self._spawn(), name=f"rng_{distribution}")
        op = RandomVariable(distribution, normalize_dtype(dtype), has_size, replace)
        new_rng, draw = op(rng, size_vector, *params)
        rng.default_update = new_rng
        self.state_updates.append((rng, new_rng))
        return draw

    def binomial(self, size=None, n=1, p=0.5, dtype=None) -> Variable:
        return self._draw("binomial", size, [n, p], dtype or "int64")

    def normal(self, size=None, avg=0.0, std=1.0, dtype=None) -> Variable:
        return self._draw("normal", size, [avg, std], dtype or config.floatX)

    def uniform(self, size=None, low=0.0, high=1.0, dtype=None) -> Variable:
        return self._draw("uniform", size, [low, high], dtype or config.floatX)

    def integers(self, low, high=None, size=None, dtype=None) -> Variable:
        low, high = (0, low) if high is None else (low, high)
        return self._draw("integers", size, [low, high], dtype or "int64")

    def choice(self, a, size=None, replace: bool = True, p=None) -> Variable:
        a = as_tensor_variable(a)
        if a.ndim > 1:
            raise ValueError(f"choice: a must be an int or a vector, got {describe(a)}")
        dtype = "int64" if a.ndim == 0 else a.dtype
        return self._draw("choice", size, [a] + ([p] if p is not None else []), dtype, replace)


RandomStreams = RandomStream
