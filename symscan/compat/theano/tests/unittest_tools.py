"""``theano.tests.unittest_tools``: ``verify_grad`` with a seeded generator, ``seed_rng``,
``fetch_seed``, as ported Theano tests call them."""

import numpy as np

from symscan.gradient import verify_grad as _verify_grad

_SEED = [42]


def fetch_seed(pseed=None) -> int:
    """The tests' seed (Theano read it from its config; here a module setting)."""
    return _SEED[0] if pseed is None else int(pseed)


def seed_rng(pseed=None) -> int:
    """Seed numpy's global generator with the tests' seed; returns it."""
    seed = fetch_seed(pseed)
    np.random.seed(seed)
    return seed


def verify_grad(op, pt, n_tests: int = 2, rng=None, *args, **kwargs) -> None:
    """``symscan.verify_grad`` with a generator seeded by ``fetch_seed`` when none is given."""
    if rng is None:
        rng = np.random.default_rng(fetch_seed())
    _verify_grad(op, pt, n_tests, rng, *args, **kwargs)
