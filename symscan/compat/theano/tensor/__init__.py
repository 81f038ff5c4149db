"""``theano.tensor``: symscan.tensor under Theano's names, and Theano's submodules ``nnet``
(whose ``softmax`` is Theano's), ``shared_randomstreams`` and ``xlogx``."""

from symscan.compat.theano.gradient import Lop, Rop, consider_constant, grad, hessian, jacobian, verify_grad  # noqa: F401
from symscan.tensor import *  # noqa: F403  (the whole tensor namespace, as theano.tensor had)

# The star import bound symscan.tensor's own modules to these names, and ``from package import
# name`` would return them rather than import this package's submodules.
del nnet, shared_randomstreams, xlogx  # noqa: F821
from symscan.compat.theano.tensor import nnet, shared_randomstreams, xlogx  # noqa: E402

# Theano's own names for symscan.tensor functions (``inv`` is elementwise 1/x, as in Theano)
abs_ = abs  # noqa: F405
sgn = sign  # noqa: F405
sqr = square  # noqa: F405
inv = reciprocal  # noqa: F405
