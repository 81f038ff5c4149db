"""``theano.tensor``: symscan.tensor under Theano's names (``nnet``, ``shared_randomstreams``...)."""

from symscan.compat.theano.gradient import Lop, Rop, consider_constant, grad, hessian, jacobian, verify_grad  # noqa: F401
from symscan.tensor import *  # noqa: F403  (the whole tensor namespace, as theano.tensor had)
from symscan.tensor import nnet, shared_randomstreams  # noqa: F401
