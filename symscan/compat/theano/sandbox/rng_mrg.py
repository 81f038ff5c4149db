"""``theano.sandbox.rng_mrg.MRG_RandomStreams``: Theano's other random stream class, with its
signatures and checks, drawing from symscan's random streams.

Its API, not its bits: the same seed gives the same draws from run to run, but not Theano's
numbers (MRG31k3p); ``nstreams``, which only split MRG's generator for GPUs, is accepted and
changes nothing. ``rstate`` and ``get_substream_rstates`` give states of MRG's shape and range
(six int32, three below M1 and three below M2, not all zero), derived from the seed, which
seed symscan's generators rather than being MRG's own.
"""

from __future__ import annotations

import numpy as np

from symscan.config import config
from symscan.graph.basic import Variable, describe
from symscan.tensor import cos, gt, log, log1p, sqrt, switch
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.creation import arange
from symscan.tensor.elemwise import abs, cast, eq
from symscan.tensor.math import argmax
from symscan.tensor.random import RandomStream
from symscan.tensor.shape import shape_vector, specify_shape, stack

M1, M2 = 2147483647, 2147462579
"""The moduli of MRG31k3p: Theano's bounds on the seed's entries."""

TRUNCATED_STD = 0.87962566103423978
"""The standard deviation of Theano's normal truncated at 2 standard deviations."""


def _seed_entropy(seed) -> int | list[int]:
    """Theano's checks of a seed (an int, or 6 ints: three below M1 and not all 0, three below
    M2 and not all 0); the entropy of symscan's generators."""
    if isinstance(seed, (int, np.integer)):
        if not 0 < seed < M2:
            raise ValueError(f"MRG_RandomStreams: seed {seed} must be an int in [1, {M2})")
        return int(seed)
    if isinstance(seed, (list, tuple, np.ndarray)) and len(seed) == 6:
        seed = [int(s) for s in seed]
        for part, bound in ((seed[:3], M1), (seed[3:], M2)):
            if not any(part) or not all(0 <= s < bound for s in part):
                raise ValueError(f"MRG_RandomStreams: seed {seed}: its first 3 entries and its last 3 must each "
                                 f"be in [0, {M1}) and [0, {M2}) and not all 0")
        return seed
    raise TypeError(f"MRG_RandomStreams: seed should be 1 integer or 6 integers, got {seed!r}")


def _rstate_of(seed) -> np.ndarray:
    """Theano's rstate for a checked seed: an int replicated 6 times, or the 6 ints."""
    return np.asarray([seed] * 6 if isinstance(seed, int) else seed, dtype="int32")


def _next_rstate(rstate: np.ndarray) -> np.ndarray:
    """A valid state derived from ``rstate`` (where MRG would jump its generator ahead)."""
    words = np.random.SeedSequence([int(v) for v in rstate]).generate_state(6, np.uint64)
    return np.concatenate([1 + words[:3] % (M1 - 1), 1 + words[3:] % (M2 - 1)]).astype("int32")


MAX_STREAMS = 60 * 256
"""Theano's cap on the number of streams it guessed (tuned for GPUs of its day)."""


def _no_other_kwargs(method: str, kwargs: dict) -> None:
    kwargs.pop("target", None)  # Theano's device placement
    if kwargs:
        raise TypeError(f"MRG_RandomStreams.{method}() got unexpected keyword arguments {sorted(kwargs)}")


def _float_dtype(*params) -> str:
    """Theano's default: the upcast of floatX and of the parameters' dtypes; Python numbers do
    not count (Theano typed them in floatX)."""
    dtypes = [p.dtype for p in params if isinstance(p, (Variable, np.ndarray, np.generic))]
    return np.result_type(config.floatX, *dtypes).name


def _size(size, ndim: int | None, method: str):
    """``size`` as a shape vector; ``ndim`` supplies the length of a symbolic vector whose
    length is not known when the graph is built, and must agree with one that is."""
    if size is None:
        return None
    if isinstance(size, Variable) and size.ndim == 1 and size.type.shape[0] is None:
        if ndim is None:
            raise ValueError(f"MRG_RandomStreams.{method}: size {describe(size)} has no known length; pass ndim")
        size = specify_shape(size, (ndim,))
    vector = shape_vector(size, f"MRG_RandomStreams.{method} size")
    if ndim is not None and vector.type.shape[0] != ndim:
        raise ValueError(f"MRG_RandomStreams.{method}: ndim={ndim} but size {size!r} has "
                         f"{vector.type.shape[0]} entries")
    return vector


class MRG_RandomStreams(RandomStream):  # noqa: N801  (Theano's name)
    """Theano's ``MRG_RandomStreams(seed=12345)``: ``uniform``, ``normal``,
    ``truncated_normal``, ``binomial``, ``multinomial``, ``choice`` and
    ``multinomial_wo_replacement`` with Theano's signatures (``size, ..., ndim, dtype,
    nstreams``) and defaults; ``seed()`` reseeds every draw, ``set_rstate``/``inc_rstate`` the
    draws to come; ``rstate``, ``get_substream_rstates``, ``n_streams``, ``updates()`` and
    ``state_updates`` as Theano's (states of MRG's shape, see the module)."""

    def __init__(self, seed=12345):
        self.default_instance_seed = seed
        entropy = _seed_entropy(seed)
        super().__init__(entropy)
        self.rstate = _rstate_of(entropy)

    def seed(self, seed=None) -> None:
        """Reseed every draw made so far (with the constructor's seed when ``seed`` is None)."""
        entropy = _seed_entropy(self.default_instance_seed if seed is None else seed)
        super().seed(entropy)
        self.rstate = _rstate_of(entropy)

    def set_rstate(self, seed) -> None:
        """Start the draws made from now on from ``seed`` (Theano's checks); draws made before
        keep their generators (``seed()`` reseeds those too)."""
        entropy = _seed_entropy(seed)
        self.rstate = _rstate_of(entropy)
        self._seed_sequence = np.random.SeedSequence(entropy)

    def inc_rstate(self) -> None:
        """Move ``rstate`` (and the draws made from now on) to the next stream's start."""
        self.rstate = _next_rstate(self.rstate)
        self._seed_sequence = np.random.SeedSequence([int(v) for v in self.rstate])

    def get_substream_rstates(self, n_streams: int, dtype: str, inc_rstate: bool = True) -> np.ndarray:
        """An (n_streams, 6) int32 matrix of distinct stream states, the first ``rstate``;
        then ``inc_rstate()`` unless told not to (Theano's signature; ``dtype`` names the
        draw's dtype and changes nothing here)."""
        if not isinstance(dtype, str):
            raise TypeError(f"MRG_RandomStreams.get_substream_rstates: dtype must be a dtype name, got {dtype!r}")
        if isinstance(n_streams, bool) or not isinstance(n_streams, (int, np.integer)) or n_streams < 1:
            raise ValueError(f"MRG_RandomStreams.get_substream_rstates: n_streams must be a positive int, "
                             f"got {n_streams!r}")
        rows = [self.rstate]
        for _ in range(int(n_streams) - 1):
            rows.append(_next_rstate(rows[-1]))
        if inc_rstate:
            self.inc_rstate()
        return np.stack(rows)

    def n_streams(self, size) -> int:
        """Theano's guess: a sixth of a static size's entries (all of them up to 6), at most
        60 * 256; that cap for a size not known when the graph is built."""
        if isinstance(size, (tuple, list)) and all(isinstance(n, (int, np.integer)) for n in size):
            count = int(np.prod(size, dtype=np.int64))
            return min(count // 6 if count > 6 else count, MAX_STREAMS)
        return MAX_STREAMS

    def updates(self) -> list:
        """The (generator, advanced generator) pairs of the draws made so far."""
        return list(self.state_updates)

    def uniform(self, size, low=0.0, high=1.0, ndim=None, dtype=None, nstreams=None, **kwargs) -> Variable:
        _no_other_kwargs("uniform", kwargs)
        dtype = dtype or _float_dtype(low, high)
        return super().uniform(_size(size, ndim, "uniform"), low, high, dtype)

    def normal(self, size, avg=0.0, std=1.0, ndim=None, dtype=None, nstreams=None, truncate: bool = False,
               **kwargs) -> Variable:
        """With ``truncate``, Theano's draw within 2 standard deviations: a Box-Muller sample
        beyond them is redrawn with a radius of at most 2 (the same angle)."""
        _no_other_kwargs("normal", kwargs)
        dtype = dtype or _float_dtype(avg, std)
        if not truncate:
            return super().normal(_size(size, ndim, "normal"), avg, std, dtype)
        size = _size(size, ndim, "normal")
        radius = sqrt(-2.0 * log1p(-self.uniform(size, dtype=dtype)))  # 1 - u is in (0, 1]
        angle_cos = cos(self.uniform(size, 0.0, 2.0 * np.pi, dtype=dtype))
        short_radius = sqrt(-2.0 * log(self.uniform(size, np.exp(-2.0), 1.0, dtype=dtype)))
        z = radius * angle_cos
        return cast(switch(gt(abs(z), 2.0), short_radius * angle_cos, z) * std + avg, dtype)

    def truncated_normal(self, size, avg=0.0, std=1.0, ndim=None, dtype=None, nstreams=None, **kwargs) -> Variable:
        """Theano's: a normal truncated at 2 standard deviations, scaled to have ``std``."""
        return self.normal(size, avg, std / TRUNCATED_STD, ndim, dtype, nstreams, truncate=True, **kwargs)

    def binomial(self, size=None, n=1, p=0.5, ndim=None, dtype="int64", nstreams=None, **kwargs) -> Variable:
        _no_other_kwargs("binomial", kwargs)
        return super().binomial(_size(size, ndim, "binomial"), n, p, dtype)

    def multinomial(self, size=None, n=1, pvals=None, ndim=None, dtype="int64", nstreams=None,
                    **kwargs) -> Variable:
        """Counts of ``n`` draws over each row of ``pvals`` (a matrix, as in Theano)."""
        _no_other_kwargs("multinomial", kwargs)
        if pvals is None:
            raise TypeError("MRG_RandomStreams.multinomial: you have to specify pvals")
        if size is not None or ndim is not None:
            raise ValueError("MRG_RandomStreams.multinomial does not use size or ndim (one draw per row of pvals); "
                             "leave them out")
        return super().multinomial(None, n, pvals, dtype=dtype)

    def choice(self, size=1, a=None, replace=True, p=None, ndim=None, dtype="int64", nstreams=None,
               **kwargs) -> Variable:
        """Theano's: for each row of the matrix ``p``, ``size`` indices drawn without
        replacement (so only ``replace=False``), each with probability proportional to the
        row's remaining entries; the result is (rows, size). The draws are the ``size`` largest
        keys ``log(u) / p`` (Efraimidis and Spirakis), which has that distribution."""
        _no_other_kwargs("choice", kwargs)
        if replace:
            raise NotImplementedError("MRG_RandomStreams.choice only draws without replacement: pass replace=False")
        if a is not None or p is None:
            raise TypeError("MRG_RandomStreams.choice: leave a out (the draws are column indices of p) and give p")
        if ndim is not None:
            raise ValueError("MRG_RandomStreams.choice does not use ndim; leave it out")
        p = as_tensor_variable(p)
        if p.ndim != 2:
            raise NotImplementedError(f"MRG_RandomStreams.choice takes p as a matrix (one row per draw), got "
                                      f"{describe(p)}")
        if not isinstance(size, (int, np.integer)):
            raise NotImplementedError(f"MRG_RandomStreams.choice: size must be a Python int here, got {size!r}")
        u = self.uniform(p.shape, dtype=_float_dtype(p))
        positive = gt(p, 0)
        keys = switch(positive, log1p(-u) / switch(positive, p, 1), -np.inf)
        columns = arange(p.shape[1]).dimshuffle("x", 0)
        picks = []
        for _ in range(int(size)):
            pick = argmax(keys, axis=1)
            picks.append(pick)
            keys = switch(eq(columns, pick.dimshuffle(0, "x")), -np.inf, keys)
        return cast(stack(picks, axis=1), dtype)

    def multinomial_wo_replacement(self, size=None, n=1, pvals=None, ndim=None, dtype="int64", nstreams=None,
                                   **kwargs) -> Variable:
        """Deprecated in Theano 1.0 for ``choice(size=n, replace=False, p=pvals)``."""
        if size is not None:
            raise ValueError("MRG_RandomStreams.multinomial_wo_replacement does not use size; give n")
        return self.choice(n, None, False, pvals, ndim, dtype, nstreams, **kwargs)


__all__ = ["MRG_RandomStreams"]
