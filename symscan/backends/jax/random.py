"""Random draws in mode jax, from ``jax.random``.

A stream's state is a ``numpy.random.Generator`` held by a shared variable (``tensor/random.py``).
Under XLA it is a JAX key's data (``uint32[2]``, threefry): ``key_of`` derives it from the
generator's state, without advancing it, when a call starts; each draw splits the key, draws
from one half and outputs the other as the advanced state; ``generator_of`` turns the final key
back into a Generator for the shared variable. So a seed reproduces a chain, updates advance it
and a function without updates repeats it, as in the other modes, but the values are JAX's
draws, not numpy's: the same seed gives other numbers in mode jax than in modes py, fast and
numba.
"""

from __future__ import annotations

import hashlib

import numpy as np

from symscan.backends.jax.graph import Deferred, NotLowerable, is_traced
from symscan.backends.jax.ops import jax_lowers
from symscan.tensor.random import RandomVariable


def key_of(generator: np.random.Generator) -> np.ndarray:
    """A JAX key's data determined by ``generator``'s state (which is left as it is)."""
    digest = hashlib.blake2b(repr(generator.bit_generator.state).encode(), digest_size=8).digest()
    return np.frombuffer(digest, dtype=np.uint32).copy()


def generator_of(key_data) -> np.random.Generator:
    """A generator whose state is determined by a JAX key's data (``key_of`` reads it back)."""
    words = np.asarray(key_data, dtype=np.uint32)
    return np.random.Generator(np.random.PCG64(int(words[0]) << 32 | int(words[1])))


@jax_lowers(RandomVariable)
def _draw(node, inputs, trace):
    import jax
    import jax.numpy as jnp

    op = node.op
    key_data, size, *params = inputs
    if isinstance(key_data, np.random.Generator):  # a constant generator
        key_data = key_of(key_data)
    size = trace.concrete(size, "size", node)
    new_key, key = jax.random.split(jax.random.wrap_key_data(jnp.asarray(key_data, dtype=jnp.uint32)))
    shape = tuple(int(s) for s in size) if op.has_size else None
    params = [p if is_traced(p) else np.asarray(p) for p in params]
    if shape is not None and op.distribution not in ("choice", "multinomial"):
        _check_broadcasts(params, shape)
    draw, checks = _DISTRIBUTIONS.get(op.distribution, _unknown)(op, key, shape, params)
    if shape is None or int(np.prod(shape)) > 0:  # (numpy checks nothing for an empty draw)
        for check in checks:
            message, condition, error = check if len(check) == 3 else check + (ValueError,)
            trace.deferred.append(Deferred(f"{message} (while drawing {op})", error, [condition]))
    return [jax.random.key_data(new_key), jnp.asarray(draw).astype(op.dtype)]


def _check_broadcasts(params: list, shape: tuple) -> None:
    """numpy's error where a parameter cannot broadcast to the draw's size."""
    for p in params:
        try:
            fits = np.broadcast_shapes(np.shape(p), shape) == tuple(shape)
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"shape mismatch: objects cannot be broadcast to a single shape. Mismatch is between "
                             f"a parameter of shape {np.shape(p)} and size {tuple(shape)}.")


def _batch(shape, params) -> tuple:
    import jax.numpy as jnp

    return jnp.broadcast_shapes(*(p.shape for p in params)) if shape is None else shape


def _normal(op, key, shape, params):
    import jax

    mean, std = params
    shape = _batch(shape, params)
    return mean + std * jax.random.normal(key, shape, dtype=_float(op)), [("scale < 0", ~(std < 0))]


def _uniform(op, key, shape, params):
    import jax
    import jax.numpy as jnp

    low, high = params
    shape = _batch(shape, params)
    width = high - low
    checks = [("high - low range exceeds valid bounds", jnp.all(jnp.isfinite(width)), OverflowError),
              ("high - low < 0", jnp.all(~(width < 0)))]
    return low + width * jax.random.uniform(key, shape, dtype=_float(op)), checks


def _binomial(op, key, shape, params):
    import jax
    import jax.numpy as jnp

    n, p = params
    if np.dtype(n.dtype).kind == "f":  # numpy's: n must be integers
        what = "array data" if np.ndim(n) else "scalar"
        raise TypeError(f"Cannot cast {what} from dtype('{n.dtype}') to dtype('int64') according to the rule 'safe'")
    shape = _batch(shape, params)
    draw = jax.random.binomial(key, jnp.broadcast_to(n, shape).astype(np.float64), jnp.broadcast_to(p, shape), shape)
    return draw, [("n < 0", ~(n < 0)), ("p < 0, p > 1 or p is NaN", (p >= 0) & (p <= 1))]


def _integers(op, key, shape, params):
    import jax
    import jax.numpy as jnp

    low, high = params
    shape = _batch(shape, params)
    return jax.random.randint(key, shape, low, high, dtype=jnp.int64), [("low >= high", low < high)]


def _multinomial(op, key, shape, params):
    import jax
    import jax.numpy as jnp

    n, pvals = params
    batch = jnp.broadcast_shapes(n.shape, pvals.shape[:-1]) if shape is None else shape
    p = pvals.astype(np.float64)
    draw = jax.random.multinomial(key, jnp.broadcast_to(n, batch).astype(np.float64),
                                  jnp.broadcast_to(p, batch + p.shape[-1:]), shape=batch + p.shape[-1:])
    checks = [("n < 0", ~(n < 0)), ("pvals < 0, pvals > 1 or pvals contains NaNs", jnp.all((p >= 0) & (p <= 1))),
              ("sum(pvals[:-1]) > 1.0", jnp.all(p[..., :-1].sum(-1) <= 1.0 + 1e-12))]
    return draw, checks


def _choice(op, key, shape, params):
    import jax
    import jax.numpy as jnp

    a, *p = params
    if a.ndim == 0 and not is_traced(a):
        population = int(a)
    elif a.ndim == 1:
        population = a
    else:
        raise NotLowerable(f"mode jax needs the population size of {op} before the call")
    draw = jax.random.choice(key, population, () if shape is None else shape, replace=op.replace,
                             p=p[0] if p else None)
    checks = [("Probabilities are not non-negative", jnp.all(p[0] >= 0)),
              ("probabilities do not sum to 1", jnp.abs(p[0].sum() - 1) <= 1e-8)] if p else []
    return draw, checks


def _unknown(op, key, shape, params):
    raise NotLowerable(f"mode jax cannot draw from {op} yet; run this function in mode 'fast' or 'numba'")


def _float(op):
    return op.dtype if np.dtype(op.dtype).kind == "f" else np.float64


_DISTRIBUTIONS = {"normal": _normal, "uniform": _uniform, "binomial": _binomial, "integers": _integers,
                  "multinomial": _multinomial, "choice": _choice}
