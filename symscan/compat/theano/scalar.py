"""``theano.scalar``: ``upcast``, the dtype that values of several dtypes combine into."""

from __future__ import annotations

import numpy as np

from symscan.graph.type import normalize_dtype


def upcast(dtype, *dtypes) -> str:
    """Theano's ``scalar.upcast`` under its default ``cast_policy`` ("custom"): numpy's
    promotion of arrays (not of Python scalars) of these dtypes, so ``upcast("float32",
    "int64")`` is "float64"; "floatX" means ``config.floatX``."""
    return np.result_type(*(np.dtype(normalize_dtype(d)) for d in (dtype, *dtypes))).name


__all__ = ["upcast"]
