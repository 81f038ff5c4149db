"""``shared()``: variables that keep a value between function calls."""

from __future__ import annotations

import numpy as np

from symscan.graph.type import TensorType
from symscan.tensor.variable import TensorSharedVariable


def shared(value, name: str | None = None, strict: bool = False, borrow: bool = False) -> TensorSharedVariable:
    """A shared variable holding ``value`` (a copy of it unless ``borrow``).

    Its dtype is ``value``'s (a Python int is int64, a float float64); its lengths are not
    fixed, so ``set_value`` may change them but not the number of dimensions. With
    ``strict=True`` new values must already have exactly that dtype. As in Theano,
    ``borrow=True`` lets the variable use a numpy array as it is (no copy): the caller's
    array and the shared value may then be the same memory, until an update replaces it.
    """
    data = np.asarray(value) if borrow else np.array(value, copy=True)
    if data.dtype.kind not in "biufc":
        raise TypeError(f"shared({name or ''}): the value must be numeric, got {type(value).__name__} "
                        f"of dtype {data.dtype}")
    return TensorSharedVariable(TensorType(data.dtype, (None,) * data.ndim), data, name=name, strict=strict)
