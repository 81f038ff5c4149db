"""``x * log(x)`` and ``x * log(y)`` that are 0 where ``x`` is 0 (Theano's ``tensor.xlogx``):
entropies and cross-entropies of distributions with zero entries.

Each is a composition (so every backend and the gradient come for free): ``log`` reads 1
where ``x`` is 0, so no NaN is computed, in the values or in their gradients.
"""

from __future__ import annotations

from symscan.graph.basic import Variable
from symscan.tensor.basic import as_tensor_variable
from symscan.tensor.elemwise import eq, log, mul, switch


def xlogx(x) -> Variable:
    """``x * log(x)``, 0 where ``x`` is 0. Gradient ``1 + log(x)`` (Theano's); at ``x == 0``,
    where no derivative exists, it is 0 (Theano's formula gives -inf there)."""
    x = as_tensor_variable(x)
    return mul(x, log(switch(eq(x, 0), 1, x)))


def xlogy0(x, y) -> Variable:
    """``x * log(y)``, 0 where ``x`` is 0 (whatever ``y``). Gradients ``log(y)`` and ``x / y``
    (Theano's) wherever ``x`` is not 0; where it is, 0 for ``y`` and ``log(y)`` for ``x``
    (0 when ``y`` is 0 too)."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    return mul(x, log(switch(eq(x, 0), 1, y)))


__all__ = ["xlogx", "xlogy0"]
