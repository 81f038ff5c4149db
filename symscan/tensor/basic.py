"""Making tensor variables: constructors, conversion of Python/numpy values, operand promotion."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from symscan.config import config
from symscan.graph.basic import Constant, Variable, describe
from symscan.graph.type import TensorType, normalize_dtype
from symscan.tensor.variable import TensorConstant, TensorVariable


class NotConstantError(ValueError):
    """The variable's value is not known at graph-build time."""


# ---------------------------------------------------------------------------- constructors
def tensor(dtype=None, shape: Sequence = (), name: str | None = None) -> TensorVariable:
    """A symbolic input of ``dtype`` (default ``config.floatX``) and static ``shape``."""
    return TensorType(dtype or config.floatX, tuple(shape)).make_variable(name=name)


# ---------------------------------------------------------------------------- conversion
def _is_python_scalar(x) -> bool:
    """Python bool/int/float/complex, which numpy treats as "weak" (NEP 50); not numpy scalars."""
    return type(x) in (bool, int, float, complex)


def constant(value, name: str | None = None, dtype=None) -> TensorConstant:
    """A constant with numpy's dtype rules (``0`` is int64, ``0.0`` float64, arrays keep theirs)."""
    if isinstance(value, Variable):
        raise TypeError(f"constant() got the symbolic variable {value!r}; only numeric values are constants")
    try:
        data = np.asarray(value) if dtype is None else _cast_exactly(value, normalize_dtype(dtype))
    except (OverflowError, ValueError) as err:
        raise TypeError(f"cannot make a constant of {value!r}: {err}") from err
    if data.dtype.kind not in "biufc":
        raise TypeError(f"cannot make a constant of {type(value).__name__} {value!r} (dtype {data.dtype}); "
                        "constants must be numeric")
    return TensorConstant(TensorType(data.dtype, data.shape), data, name=name)


def _cast_exactly(value, dtype: str) -> np.ndarray:
    """``value`` as ``dtype``, refusing casts that change a value (truncation, wrap-around,
    overflow to inf, a dropped imaginary part); rounding a float to a narrower float is fine."""
    source = np.asarray(value)
    target = np.dtype(dtype)
    with np.errstate(all="ignore"):
        data = source.astype(target)
    if source.dtype.kind == "c" and target.kind != "c":
        lossy = bool(np.any(source.imag != 0)) or not np.array_equal(data, source.real)
    elif target.kind in "biu":
        lossy = not np.array_equal(data, source)
    else:
        lossy = bool(np.any(np.isfinite(source) & ~np.isfinite(data)))
    if lossy:
        raise ValueError(f"{value!r} does not fit {dtype}")
    return data


def as_tensor_variable(x, name: str | None = None, dtype=None) -> TensorVariable:
    """``x`` if it is a tensor variable, else a constant of it (lists of variables are stacked)."""
    if isinstance(x, Variable):
        if not isinstance(x.type, TensorType):
            raise TypeError(f"expected a tensor, got {describe(x)}")
        if dtype is not None and x.dtype != normalize_dtype(dtype):
            raise TypeError(f"expected {normalize_dtype(dtype)}, got {describe(x)}; cast it with .astype()")
        return x
    if isinstance(x, (list, tuple)) and any(isinstance(e, Variable) for e in x):
        from symscan.tensor.shape import stack

        return stack(list(x))
    return constant(x, name=name, dtype=dtype)


def as_operands(args: Sequence, opname: str) -> list[TensorVariable]:
    """Convert the operands of a numpy-style op, treating Python scalars as weak (NEP 50).

    A Python number takes the dtype numpy would give it next to the other operands
    (``x_float32 * 2`` stays float32) and must fit that dtype exactly (``x_int8 + 1000`` is
    an error here, at build time).
    """
    strong = [as_tensor_variable(a) for a in args if not _is_python_scalar(a)]
    strong_dtypes = [v.dtype for v in strong]
    converted, strong_iter = [], iter(strong)
    for a in args:
        if not _is_python_scalar(a):
            converted.append(next(strong_iter))
            continue
        if not strong_dtypes:
            converted.append(constant(a))
            continue
        dtype = np.result_type(*strong_dtypes, a)
        if dtype.kind in "iu" and not np.iinfo(dtype).min <= a <= np.iinfo(dtype).max:
            others = ", ".join(describe(v) for v in strong)
            raise ValueError(f"{opname}: the Python int {a} does not fit {dtype}, the dtype of {others}; "
                             f"cast the tensor to a wider dtype or pass T.constant({a}, dtype=...)")
        converted.append(constant(a, dtype=dtype))
    return converted


# ---------------------------------------------------------------------------- static values
MAX_FOLDED_ELEMENTS = 100_000
"""Values computed when a graph is built (constant folding, the ONNX importer's static values)
stay at most this large: a folded constant lives in the graph (and in exports)."""



def get_scalar_constant_value(var) -> np.generic:
    """The value of a 0-d (or single-element) variable when it is known at build time.

    Understands constants, casts and shapes with static lengths (``x.shape[i]``). Raises
    ``NotConstantError`` otherwise.
    """
    if _is_python_scalar(var) or isinstance(var, np.generic):
        return np.asarray(var)[()]
    if isinstance(var, np.ndarray) and var.size == 1:
        return var.reshape(())[()]
    if isinstance(var, Constant):
        if var.data.size == 1:
            return var.data.reshape(())[()]
        raise NotConstantError(f"{describe(var)} has {var.data.size} elements, not one")
    if isinstance(var, Variable) and var.owner is not None:
        static = getattr(var.owner.op, "static_value", None)
        if static is not None:
            value = static(var.owner, var.index)
            if value is not None:
                return value
    raise NotConstantError(f"{describe(var) if isinstance(var, Variable) else var!r} is not a build-time constant")


def static_int(var) -> int | None:
    """The build-time integer value of ``var``, or None when it is only known at run time."""
    try:
        value = get_scalar_constant_value(var)
    except NotConstantError:
        return None
    return int(value) if np.asarray(value).dtype.kind in "biu" else None
