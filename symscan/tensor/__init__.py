"""Symbolic tensors (``theano.tensor``-like): constructors, conversion and ops.

Every op follows numpy: results, dtype promotion (NEP 50 for Python scalars) and
broadcasting. Shapes and dtypes that cannot work are errors when the graph is built.
"""

from symscan.tensor import linalg, nnet, shared_randomstreams, xlogx
from symscan.tensor.basic import NotConstantError, as_tensor_variable, constant, get_scalar_constant_value, tensor
from symscan.tensor.constructors import *  # noqa: F403  (scalar, vector, fmatrix, drow, itensor3, ...: see __all__)
from symscan.tensor.contraction import batched_dot, batched_tensordot, tensordot
from symscan.tensor.creation import (
    alloc,
    arange,
    bartlett,
    eye,
    identity_like,
    mgrid,
    ogrid,
    ones,
    ones_like,
    stacklists,
    tile,
    zeros,
    zeros_like,
)
from symscan.tensor.elemwise import (
    abs,
    add,
    and_,
    angle,
    arccos,
    arcsin,
    arctan,
    arctanh,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    cast,
    ceil,
    chi2sf,
    clip,
    cos,
    eq,
    erf,
    erfc,
    erfcinv,
    erfinv,
    exp,
    expm1,
    fill,
    floor,
    floor_div,
    fmod,
    gamma,
    gammaln,
    ge,
    gt,
    imag,
    invert,
    isinf,
    isnan,
    le,
    log,
    log1p,
    logaddexp,
    lt,
    maximum,
    minimum,
    mod,
    mul,
    neg,
    neq,
    or_,
    pow,
    psi,
    real,
    round,
    second,
    sigmoid,
    sign,
    sin,
    softplus,
    sqrt,
    sub,
    switch,
    tan,
    tanh,
    true_div,
    where,
    xor,
)
from symscan.tensor.extra_ops import diff, repeat
from symscan.tensor.math import (
    all,
    any,
    argmax,
    argmin,
    cumprod,
    cumsum,
    dot,
    logsumexp,
    matmul,
    max,
    max_and_argmax,
    mean,
    min,
    outer,
    prod,
    ptp,
    sum,
)
from symscan.tensor.moments import std, var
from symscan.tensor.nnet import log_softmax, softmax
from symscan.tensor.random import RandomStream
from symscan.tensor.shape import (
    concatenate,
    dimshuffle,
    expand_dims,
    flatten,
    join,
    make_vector,
    reshape,
    shape,
    shape_padaxis,
    shape_padleft,
    shape_padright,
    specify_shape,
    squeeze,
    stack,
    transpose,
)
from symscan.tensor.sort import argsort, sort
from symscan.tensor.special import allclose, cosh, iround, isclose, reciprocal, sinh, square
from symscan.tensor.subtensor import inc_subtensor, set_subtensor, subtensor
from symscan.tensor.unique import unique
from symscan.tensor.variable import TensorConstant, TensorSharedVariable, TensorVariable

true_divide = true_div
sgn, sqr = sign, square
"""Theano's names of ``sign`` and ``square``."""
__all__ = [name for name in dir() if not name.startswith("_")]
