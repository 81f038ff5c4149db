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
    Where the ``inplace`` rewrite marked the node (``node.tag["inplace"] = 0``: nothing else
    reads the old state, Theano's ``random_make_inplace``), the fast evaluator draws from
    the input itself (``draw``) and outputs it advanced (copying a Generator takes ~80 us, a
    small draw ~3 us).
    Inputs: generator, size (an int64 vector, when ``has_size``), then the parameters.
    """

    distribution: str
    dtype: str
    has_size: bool = True
    replace: bool = True

    def make_node(self, rng, size, *params) -> Apply:
        params = [as_tensor_variable(p) for p in params]
        shape = self._draw_shape(size, params)
        inputs = [rng, size] + params
        return Apply(self, inputs, [GeneratorType(), TensorType(self.dtype, shape)])

    def _draw_shape(self, size, params: list[Variable]) -> tuple:
        """The static shape of a draw: ``size`` (or the parameters' broadcast shape), plus the
        outcomes axis of a multinomial; a parameter that cannot broadcast to ``size`` is an error."""
        size_shape = tuple(static_entries(size)) if self.has_size else None
        if self.distribution == "choice":  # a and p do not broadcast against size
            return size_shape if self.has_size else ()
        batch = [(p.type.shape, describe(p)) for p in params]
        outcomes = ()
        if self.distribution == "multinomial":
            n, pvals = params
            batch = [(n.type.shape, describe(n)), (pvals.type.shape[:-1], f"the rows of {describe(pvals)}")]
            outcomes = pvals.type.shape[-1:]
        if not self.has_size:
            return broadcast_shapes(batch, self.distribution) + outcomes
        _check_broadcasts_to(batch, size_shape, self.distribution)
        return size_shape + outcomes

    def perform(self, node, inputs):
        rng, size, *params = inputs
        generator = copy.deepcopy(rng)
        return [generator, self.draw(generator, size, params)]

    def draw(self, generator: np.random.Generator, size, params: list) -> np.ndarray:
        """The sample, drawn from ``generator`` itself (which it advances)."""
        size = tuple(int(s) for s in size) if self.has_size else None
        if self.distribution == "choice":
            a, *p = params
            draw = generator.choice(a, size=size, replace=self.replace, p=p[0] if p else None)
        elif self.distribution == "multinomial":
            n, pvals = params
            draw = generator.multinomial(n, _multinomial_pvals(pvals), size=size)
        else:
            draw = getattr(generator, self.distribution)(*params, size=size)
        return np.asarray(draw).astype(self.dtype, copy=False)

    def __str__(self) -> str:
        return f"RandomVariable{{{self.distribution}, {self.dtype}}}"


def generator_states(values) -> list[tuple[np.random.Generator, dict]]:
    """Each generator among ``values`` with its state: what ``restore_generator_states``
    puts back after a call whose draws advanced them in place failed (1.5 us where a copy
    takes 80)."""
    return [(v, v.bit_generator.state) for v in values if isinstance(v, np.random.Generator)]


def restore_generator_states(saved: list[tuple[np.random.Generator, dict]]) -> None:
    for generator, state in saved:
        generator.bit_generator.state = state


def _multinomial_pvals(pvals) -> np.ndarray:
    """``pvals`` in float64 for numpy, which refuses rows whose first probabilities sum above 1.
    Rows of float32 (or float16) probabilities that do so only by their rounding (within 1e-5,
    e.g. a float32 softmax) are scaled back, as Theano did."""
    p = np.asarray(pvals)
    wide = p.astype(np.float64)
    if p.dtype.kind != "f" or p.dtype.itemsize >= 8 or p.shape[-1] < 2:
        return wide
    head = wide[..., :-1].sum(axis=-1, keepdims=True)
    return wide / np.where((head > 1.0) & (head <= 1.0 + 1e-5), head, 1.0)


def broadcast_shapes(shapes: list[tuple[tuple, str]], distribution: str) -> tuple:
    """numpy broadcasting of static shapes (each given with how errors name it)."""
    ndim = max((len(shape) for shape, _ in shapes), default=0)
    result = []
    for axis in range(ndim):
        lengths = [shape[axis - ndim + len(shape)] if axis - ndim + len(shape) >= 0 else 1 for shape, _ in shapes]
        known = {n for n in lengths if n is not None and n != 1}
        if len(known) > 1:
            raise ValueError(f"{distribution}: the parameters {', '.join(what for _, what in shapes)} cannot "
                             f"broadcast (lengths {sorted(known)} on axis {axis}); reshape one of them")
        result.append(known.pop() if known else (None if None in lengths else 1))
    return tuple(result)


def _check_broadcasts_to(params: list[tuple[tuple, str]], shape: tuple, distribution: str) -> None:
    """numpy draws need each parameter to broadcast to ``size``; known lengths are checked now."""
    for p_shape, what in params:
        lengths = zip(reversed(p_shape), reversed(shape))
        if len(p_shape) > len(shape) or any(a is not None and b is not None and a not in (1, b) for a, b in lengths):
            shown = tuple("?" if n is None else n for n in shape)
            raise ValueError(f"{distribution}: the parameter {what} cannot broadcast to size {shown}; "
                             "give a size whose trailing lengths match the parameter's, or size=None")


def _size_vector(size) -> tuple[Variable, bool]:
    if size is None:
        return as_tensor_variable(np.zeros(0, dtype="int64")), False
    return shape_vector(size, "random size"), True


class RandomStream:
    """Theano's RandomStreams: ``binomial``, ``normal``, ``uniform``, ``integers``, ``choice``,
    ``multinomial``."""

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

    def multinomial(self, size=None, n=1, pvals=None, ndim: int | None = None, dtype="int64") -> Variable:
        """Theano's multinomial: counts of ``n`` trials over the outcomes of each row of
        ``pvals`` (default ``[0.5, 0.5]``), one draw per entry of ``size`` (default: the
        broadcast shape of ``n`` and of ``pvals`` without its last axis); the result has that
        shape plus the outcomes axis. ``ndim``, when given, must be the number of axes of that
        batch shape (Theano inferred it from ``size``)."""
        n = as_tensor_variable(n)
        pvals = as_tensor_variable([0.5, 0.5] if pvals is None else pvals)
        if pvals.ndim < 1 or pvals.dtype[0] not in "fiu":
            raise TypeError(f"multinomial: pvals must be a vector (or a stack of vectors) of probabilities, "
                            f"got {describe(pvals)}")
        if n.dtype[0] not in "iu":
            raise TypeError(f"multinomial: n (the number of trials) must be an integer, got {describe(n)}; "
                            "cast it with .astype('int64')")
        draw = self._draw("multinomial", size, [n, pvals], dtype)
        if ndim is not None and ndim != draw.ndim - 1:
            raise ValueError(f"multinomial: ndim={ndim}, but size={size!r} with n {n.type} and pvals {pvals.type} "
                             f"gives {draw.ndim - 1} batch axes (the result has one more, the outcomes); "
                             "pass a size of ndim entries or leave ndim out")
        return draw

    def choice(self, a, size=None, replace: bool = True, p=None) -> Variable:
        a = as_tensor_variable(a)
        if a.ndim > 1:
            raise ValueError(f"choice: a must be an int or a vector, got {describe(a)}")
        dtype = "int64" if a.ndim == 0 else a.dtype
        return self._draw("choice", size, [a] + ([p] if p is not None else []), dtype, replace)


RandomStreams = RandomStream
