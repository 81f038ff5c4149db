"""Tensor variables: graph variables that carry numpy-like operators and methods.

Each operator delegates to the function of the same name in ``symscan.tensor``; that
package imports this module, so it is looked up lazily.
"""

from __future__ import annotations

from symscan.graph.basic import Constant, SharedVariable, Variable, describe
from symscan.graph.type import TensorType


def _t():
    import symscan.tensor as tensor

    return tensor


class _TensorOperators:
    """Operators and methods shared by tensor variables, constants and shared variables."""

    __array_ufunc__ = None  # numpy defers to our reflected operators: ndarray + x -> x.__radd__

    # ---------------------------------------------------------------- type facts
    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def ndim(self) -> int:
        return self.type.ndim

    @property
    def shape(self):
        """The symbolic shape: an int64 vector (index it: ``x.shape[0]``)."""
        return _t().shape(self)

    @property
    def T(self):
        return _t().transpose(self)

    # ---------------------------------------------------------------- arithmetic
    def __add__(self, other): return _t().add(self, other)
    def __radd__(self, other): return _t().add(other, self)
    def __sub__(self, other): return _t().sub(self, other)
    def __rsub__(self, other): return _t().sub(other, self)
    def __mul__(self, other): return _t().mul(self, other)
    def __rmul__(self, other): return _t().mul(other, self)
    def __truediv__(self, other): return _t().true_div(self, other)
    def __rtruediv__(self, other): return _t().true_div(other, self)
    def __floordiv__(self, other): return _t().floor_div(self, other)
    def __rfloordiv__(self, other): return _t().floor_div(other, self)
    def __mod__(self, other): return _t().mod(self, other)
    def __rmod__(self, other): return _t().mod(other, self)
    def __pow__(self, other): return _t().pow(self, other)
    def __rpow__(self, other): return _t().pow(other, self)
    def __matmul__(self, other): return _t().matmul(self, other)
    def __rmatmul__(self, other): return _t().matmul(other, self)
    def __neg__(self): return _t().neg(self)
    def __pos__(self): return self
    def __abs__(self): return _t().abs(self)

    # ---------------------------------------------------------------- comparisons and logic
    # ``==`` and ``!=`` keep Python identity semantics (variables are dict keys); use T.eq/T.neq.
    def __lt__(self, other): return _t().lt(self, other)
    def __le__(self, other): return _t().le(self, other)
    def __gt__(self, other): return _t().gt(self, other)
    def __ge__(self, other): return _t().ge(self, other)
    def __and__(self, other): return _t().and_(self, other)
    def __rand__(self, other): return _t().and_(other, self)
    def __or__(self, other): return _t().or_(self, other)
    def __ror__(self, other): return _t().or_(other, self)
    def __xor__(self, other): return _t().xor(self, other)
    def __rxor__(self, other): return _t().xor(other, self)
    def __invert__(self): return _t().invert(self)

    def __bool__(self):
        """Theano's rule: a variable is truthy (``if not W:`` checks that an argument was given),
        but a comparison's result is refused, since ``a < b < c`` and ``if x > 0:`` would
        otherwise silently test that a variable exists."""
        elemwise = _t().elemwise
        if self.owner is not None and isinstance(self.owner.op, elemwise.Elemwise) \
                and self.owner.op.name in elemwise.COMPARISONS:
            raise TypeError(f"{describe(self)}, a comparison, has no truth value at graph-build time; combine "
                            "comparisons with T.and_/T.or_ (or & and |), choose values with "
                            "T.switch(cond, a, b), and end loops with ss.until(cond), instead of "
                            "`if`/`while`/`and`/`or` or chained comparisons")
        return True

    def __iter__(self):
        """Theano's rule: a vector whose length is known when the graph is built iterates over
        its entries, so ``n, d = X.shape`` works; anything else cannot be iterated."""
        length = self.type.shape[0] if self.type.ndim == 1 else None
        if length is None:
            raise TypeError(f"the symbolic variable {describe(self)} cannot be iterated: only vectors whose "
                            "length is known when the graph is built can (x.shape, T.specify_shape(v, (n,))); "
                            "index it (x[i]) or loop over it with ss.scan / ss.map")
        return (self[i] for i in range(length))

    def __len__(self):
        raise TypeError(f"len() of the symbolic variable {self!r} is not known at graph-build time; "
                        "use x.shape[0]")

    # ---------------------------------------------------------------- indexing
    def __getitem__(self, index): return _t().subtensor(self, index)

    # ---------------------------------------------------------------- numpy-like methods
    def sum(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        return _t().sum(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def prod(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        return _t().prod(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def mean(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        return _t().mean(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def max(self, axis=None, keepdims=False): return _t().max(self, axis=axis, keepdims=keepdims)
    def min(self, axis=None, keepdims=False): return _t().min(self, axis=axis, keepdims=keepdims)
    def all(self, axis=None, keepdims=False): return _t().all(self, axis=axis, keepdims=keepdims)
    def any(self, axis=None, keepdims=False): return _t().any(self, axis=axis, keepdims=keepdims)
    def argmax(self, axis=None, keepdims=False): return _t().argmax(self, axis=axis, keepdims=keepdims)
    def argmin(self, axis=None, keepdims=False): return _t().argmin(self, axis=axis, keepdims=keepdims)
    def cumsum(self, axis=None): return _t().cumsum(self, axis=axis)
    def cumprod(self, axis=None): return _t().cumprod(self, axis=axis)
    def astype(self, dtype): return _t().cast(self, dtype)
    def flatten(self, ndim=1): return _t().flatten(self, ndim)
    def squeeze(self, axis=None): return _t().squeeze(self, axis)
    def dot(self, other): return _t().dot(self, other)

    def var(self, axis=None, ddof=0, keepdims=False, corrected=False):
        return _t().var(self, axis=axis, ddof=ddof, keepdims=keepdims, corrected=corrected)

    def std(self, axis=None, ddof=0, keepdims=False, corrected=False):
        return _t().std(self, axis=axis, ddof=ddof, keepdims=keepdims, corrected=corrected)

    def copy(self, name: str | None = None):
        """Theano's ``x.copy()``: a new variable with the same value (and no tags), computed by
        a node of its own, so that it can be named or replaced without touching ``x``."""
        copied = _t().second(self, self)  # ``second(a, b)`` is b broadcast to a's shape, as a fresh array
        copied.name = name
        return copied

    def reshape(self, *shape, ndim=None):
        """``x.reshape((a, b))`` or ``x.reshape(a, b)``; entries may be symbolic, one may be -1."""
        if len(shape) == 1 and not isinstance(shape[0], (int,)) and not _is_scalar_variable(shape[0]):
            shape = shape[0]
        return _t().reshape(self, shape, ndim=ndim)

    def dimshuffle(self, *pattern):
        """Theano's dimshuffle: a permutation of axes with 'x' for new length-1 axes."""
        if len(pattern) == 1 and isinstance(pattern[0], (list, tuple)):
            pattern = pattern[0]
        return _t().dimshuffle(self, pattern)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = axes[0]
        return _t().transpose(self, axes or None)


def _is_scalar_variable(x) -> bool:
    return isinstance(x, Variable) and getattr(x.type, "ndim", None) == 0


class TensorVariable(_TensorOperators, Variable):
    """A symbolic n-d array."""


class TensorConstant(_TensorOperators, Constant):
    """A constant n-d array."""


class TensorSharedVariable(_TensorOperators, SharedVariable):
    """An n-d array that keeps its value between calls."""


TensorType.variable_class = TensorVariable
TensorType.constant_class = TensorConstant
TensorType.shared_class = TensorSharedVariable
