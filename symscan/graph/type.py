"""Types: what values a variable may hold, and how a runtime value is checked against that."""

from __future__ import annotations

import copy
import reprlib
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from symscan.config import config
from symscan.graph.basic import Constant, SharedVariable, Variable

SUPPORTED_DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
)


def normalize_dtype(dtype) -> str:
    """The canonical name of a numpy dtype, or a TypeError for dtypes symscan does not hold.

    ``"floatX"`` means ``config.floatX``, as in Theano.
    """
    if isinstance(dtype, str) and dtype == "floatX":
        dtype = config.floatX
    try:
        name = np.dtype(dtype).name
    except TypeError as err:
        raise TypeError(f"{dtype!r} is not a dtype; use one of {', '.join(SUPPORTED_DTYPES)}") from err
    if name not in SUPPORTED_DTYPES:
        raise TypeError(f"dtype {name!r} is not supported; use one of {', '.join(SUPPORTED_DTYPES)}")
    return name


def _python_value_fits(arr: np.ndarray, dtype: np.dtype) -> bool:
    """Whether a Python scalar/list converts to ``dtype`` without losing anything.

    Python numbers carry no precision intent (NEP 50 "weak" scalars): a float goes into any
    float dtype whose range holds it (rounding is fine, overflowing to inf is not), an int into
    any int dtype whose range holds it, never a float into an int. An empty list fits anything.
    """
    src, dst = arr.dtype.kind, dtype.kind
    if arr.size == 0:
        return True
    if dst in "fc":
        if not (src in "biuf" or (src == "c" and dst == "c")):
            return False
        with np.errstate(over="ignore"):
            converted = arr.astype(dtype)
        return bool(np.all(np.isfinite(converted) | ~np.isfinite(arr)))
    if dst in "iu":
        if src not in "biu":
            return False
        info = np.iinfo(dtype)
        return arr.size == 0 or (int(arr.min()) >= info.min and int(arr.max()) <= info.max)
    return src == "b"


class Type:
    """Base of all types. Subclasses check runtime values with ``filter``."""

    variable_class: ClassVar[type] = Variable
    constant_class: ClassVar[type] = Constant
    shared_class: ClassVar[type] = SharedVariable

    def make_variable(self, owner=None, index=None, name: str | None = None) -> Variable:
        return self.variable_class(self, owner=owner, index=index, name=name)

    def filter(self, value, what: str = "value", strict: bool = False):
        raise NotImplementedError

    def copy_value(self, value):
        """An independent copy of a value of this type (shared variables hand out copies)."""
        return copy.deepcopy(value)

    def may_share_memory(self, a, b) -> bool:
        """Whether changing ``b`` could change ``a`` (then a shared variable copies ``a``)."""
        return a is b


@dataclass(frozen=True)
class TensorType(Type):
    """An n-d array type: a dtype and a static shape with ``None`` for unknown lengths.

    The tensor layer plugs in the variable classes that carry Python operators
    (``variable_class`` etc.); the graph layer itself knows nothing of operators.
    """

    dtype: str
    shape: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "dtype", normalize_dtype(self.dtype))
        shape = tuple(None if s is None else int(s) for s in self.shape)
        if any(s is not None and s < 0 for s in shape):
            raise ValueError(f"static shape {shape} has a negative length")
        object.__setattr__(self, "shape", shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def numpy_dtype(self) -> np.dtype:
        return np.dtype(self.dtype)

    def copy_value(self, value) -> np.ndarray:
        return np.array(value, copy=True)

    def may_share_memory(self, a, b) -> bool:
        return a is b or np.may_share_memory(a, np.asarray(b))

    def clone(self, dtype: str | None = None, shape: tuple | None = None) -> TensorType:
        return TensorType(self.dtype if dtype is None else dtype, self.shape if shape is None else shape)

    def is_super(self, other: TensorType) -> bool:
        """Every value of ``other`` is a value of this type."""
        return (isinstance(other, TensorType) and other.dtype == self.dtype and other.ndim == self.ndim
                and all(s is None or s == o for s, o in zip(self.shape, other.shape)))

    def conflicts_with(self, other: TensorType) -> bool:
        """No value can be of both types (different dtype, ndim or known lengths)."""
        return (other.dtype != self.dtype or other.ndim != self.ndim
                or any(s is not None and o is not None and s != o for s, o in zip(self.shape, other.shape)))

    def filter(self, value, what: str = "value", strict: bool = False) -> np.ndarray:
        """Check ``value`` against this type and return it as an ndarray of this dtype.

        numpy values may be cast only where numpy's "safe" casting allows; Python scalars and
        lists convert when no information is lost. Errors name ``what`` and give the fix.
        """
        arr = self._as_array(value, what)
        if arr.dtype != self.numpy_dtype:
            weak = not isinstance(value, (np.ndarray, np.generic))
            ok = (not strict) and (_python_value_fits(arr, self.numpy_dtype) if weak
                                   else np.can_cast(arr.dtype, self.numpy_dtype, "safe"))
            if not ok:
                kind = f"Python value {reprlib.repr(value)}" if weak else f"{arr.dtype} array"
                raise TypeError(f"{what} must be {self.dtype} (type {self}), got a {kind}; "
                                f"convert it first, e.g. np.asarray(value, dtype='{self.dtype}')")
            arr = arr.astype(self.numpy_dtype)
        if arr.ndim != self.ndim:
            raise ValueError(f"{what} must have {self.ndim} dimension(s) (type {self}), "
                             f"got shape {arr.shape}; reshape it or declare the input with {arr.ndim} dims")
        for axis, (want, got) in enumerate(zip(self.shape, arr.shape)):
            if want is not None and want != got:
                raise ValueError(f"{what} must have length {want} on axis {axis} (type {self}), "
                                 f"got shape {arr.shape}")
        return arr

    @staticmethod
    def _as_array(value, what: str) -> np.ndarray:
        if isinstance(value, Variable):
            raise TypeError(f"{what} got the symbolic variable {value!r}; pass a numpy value, "
                            "or use givens= to substitute one variable for another")
        try:
            arr = np.asarray(value)
        except (ValueError, TypeError) as err:
            raise TypeError(f"{what} could not be converted to an array: {err}") from err
        if arr.dtype.kind not in "biufc":
            raise TypeError(f"{what} must be numeric, got {type(value).__name__} of dtype {arr.dtype}")
        return arr

    def __str__(self) -> str:
        dims = ", ".join("?" if s is None else str(s) for s in self.shape)
        return f"{self.dtype}[{dims}]"

    def __repr__(self) -> str:
        return f"TensorType({self.dtype}, shape={self.shape})"
