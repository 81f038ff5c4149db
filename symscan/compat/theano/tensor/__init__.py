"""``theano.tensor``: symscan.tensor under Theano's names, and Theano's submodules ``nnet``
(whose ``softmax`` is Theano's), ``shared_randomstreams``, ``xlogx``, ``nlinalg``, ``slinalg``
and ``extra_ops``."""

import builtins as _builtins

from symscan.compat.theano.gradient import Lop, Rop, consider_constant, grad, hessian, jacobian, verify_grad  # noqa: F401
from symscan.graph.basic import describe as _describe
from symscan.tensor import *  # noqa: F403  (the whole tensor namespace, as theano.tensor had)

# The star import bound symscan.tensor's own modules to these names, and ``from package import
# name`` would return them rather than import this package's submodules.
del extra_ops, nnet, shared_randomstreams, xlogx  # noqa: F821
from symscan.compat.theano.tensor import extra_ops, nlinalg, nnet, shared_randomstreams, slinalg, xlogx  # noqa: E402

# Theano's own names for symscan.tensor functions (``inv`` is elementwise 1/x, as in Theano)
abs_ = abs  # noqa: F405
inv = reciprocal  # noqa: F405
diag = nlinalg.diag  # Theano's T.diag: a vector's diagonal matrix, or a matrix's diagonal


# ---------------------------------------------------------------------------- broadcastable patterns
# Theano's types carried a broadcastable flag per axis, and only flagged axes broadcast. symscan's
# types carry static lengths instead, and a length-1 axis broadcasts whether or not its length is
# known at build time (as in numpy): there is no flag to add or remove. These functions check
# their axes as Theano did; ``addbroadcast`` also checks, when it runs, that the axes have length 1.
def _broadcast_axes(x, axes, opname: str) -> list:
    for axis in axes:
        if isinstance(axis, bool) or not isinstance(axis, int) or not -x.ndim <= axis < x.ndim:
            raise ValueError(f"{opname}: axis {axis!r} is out of range for {x.ndim}-d {_describe(x)}; "
                             f"give axes in [-{x.ndim}, {x.ndim})")
    return sorted({axis % x.ndim for axis in axes})


def unbroadcast(x, *axes):
    """``x`` itself (after checking ``axes``): symscan has no broadcastable flag to clear."""
    x = as_tensor_variable(x)  # noqa: F405
    _broadcast_axes(x, axes, "unbroadcast")
    return x


def addbroadcast(x, *axes):
    """``x`` with length 1 on ``axes`` in its type, checked when it runs (Theano's Rebroadcast)."""
    x = as_tensor_variable(x)  # noqa: F405
    axes = _broadcast_axes(x, axes, "addbroadcast")
    if _builtins.all(x.type.shape[axis] == 1 for axis in axes):  # ``all`` here is the tensor reduction
        return x
    return specify_shape(x, [1 if i in axes else x.shape[i] for i in range(x.ndim)])  # noqa: F405


def patternbroadcast(x, broadcastable):
    """``addbroadcast`` on the axes whose entry of ``broadcastable`` is true (one per axis)."""
    x = as_tensor_variable(x)  # noqa: F405
    if len(broadcastable) != x.ndim:
        raise ValueError(f"patternbroadcast: the pattern {tuple(broadcastable)} has {len(broadcastable)} entries "
                         f"for {x.ndim}-d {_describe(x)}; give one bool per axis")
    return addbroadcast(x, *[i for i, flag in enumerate(broadcastable) if flag])
