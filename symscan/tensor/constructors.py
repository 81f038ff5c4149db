"""Theano's named constructors of symbolic inputs: ``T.vector``, ``T.fmatrix``, ``T.drow``,
``T.itensor3``, the plurals ``T.fvectors('a', 'b')`` ...

A name is a dtype prefix (none: ``config.floatX``) and a kind; rows and columns have a static
length of 1 on the axis Theano called broadcastable.
"""

from __future__ import annotations

from collections.abc import Callable

from symscan.config import config
from symscan.tensor.basic import tensor
from symscan.tensor.variable import TensorVariable

KINDS = {"scalar": (), "vector": (None,), "matrix": (None, None), "row": (1, None), "col": (None, 1),
         "tensor3": (None,) * 3, "tensor4": (None,) * 4, "tensor5": (None,) * 5, "tensor6": (None,) * 6,
         "tensor7": (None,) * 7}
"""Each kind's static shape (None: any length)."""

PREFIXES = {"b": "int8", "w": "int16", "i": "int32", "l": "int64", "f": "float32", "d": "float64",
            "c": "complex64", "z": "complex128"}
"""Theano's dtype prefixes: ``T.ftensor3`` is a float32 tensor3, ``T.icol`` an int32 column."""

PLURAL_PREFIXES = ("", "f", "d", "i", "l")
"""The prefixes Theano made plurals for (``T.dmatrices``, ``T.iscalars``, ...)."""


def _constructor(kind: str, dtype: str | None) -> Callable[..., TensorVariable]:
    shape = KINDS[kind]

    def make(name: str | None = None, dtype: str | None = dtype) -> TensorVariable:
        return tensor(dtype or config.floatX, shape, name)

    make.__name__ = make.__qualname__ = kind if dtype is None else _prefix_of(dtype) + kind
    make.__doc__ = f"A symbolic {kind} ({len(shape)}-d, static shape {shape}) of dtype {dtype or 'config.floatX'}."
    return make


def _prefix_of(dtype: str) -> str:
    return next(prefix for prefix, d in PREFIXES.items() if d == dtype)


def _plural(make: Callable[..., TensorVariable]) -> Callable:
    """``make`` for several variables: ``fvectors('a', 'b')`` gives two, ``fvectors(3)`` three
    unnamed ones, ``fvectors('a')`` the one variable."""

    def make_many(*names):
        if len(names) == 1 and isinstance(names[0], int):
            return [make() for _ in range(names[0])]
        if len(names) == 1 and isinstance(names[0], (list, tuple)):
            names = tuple(names[0])
        made = [make(name) for name in names]
        return made[0] if len(made) == 1 else made

    make_many.__name__ = make_many.__qualname__ = _plural_name(make.__name__)
    make_many.__doc__ = f"Several ``{make.__name__}`` variables: one per name given, or as many as an int says."
    return make_many


def _plural_name(name: str) -> str:
    return name[:-len("matrix")] + "matrices" if name.endswith("matrix") else name + "s"


def _all_constructors() -> dict[str, Callable]:
    made = {}
    for kind in KINDS:
        made[kind] = _constructor(kind, None)
        for prefix, dtype in PREFIXES.items():
            made[prefix + kind] = _constructor(kind, dtype)
        for prefix in PLURAL_PREFIXES:
            made[_plural_name(prefix + kind)] = _plural(made[prefix + kind])
    return made


_CONSTRUCTORS = _all_constructors()
globals().update(_CONSTRUCTORS)
__all__ = sorted(_CONSTRUCTORS)
