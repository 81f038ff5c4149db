"""symscan.compat.theano: Theano's names for symscan's own objects, and config.floatX."""

import importlib
import inspect

import numpy as np
import pytest

import symscan as ss
import symscan.compat.theano as theano
import symscan.compat.theano.cloning
import symscan.compat.theano.tensor as T
import symscan.compile
import symscan.tensor
import symscan.tensor.linalg
import symscan.tensor.nnet
from symscan.compat.theano import tensor as T_from

import both_modes

# (name in the Theano namespace, the symscan object it must be)
THEANO_NAMES = [
    ("scan", ss.scan),
    ("map", ss.map),
    ("reduce", ss.reduce),
    ("foldl", ss.foldl),
    ("foldr", ss.foldr),
    ("function", theano.compile.function),
    ("compile.UnusedInputError", ss.UnusedInputError),
    ("clone", symscan.compat.theano.cloning.clone),  # ss.clone keeps shared roots; Theano's copies them
    ("In", symscan.compile.In),
    ("compile.In", symscan.compile.In),
    ("shared", ss.shared),
    ("dot", symscan.tensor.dot),
    ("config", ss.config),
    ("tensor.nnet.sigmoid", symscan.tensor.sigmoid),
    ("tensor.shared_randomstreams.RandomStreams", ss.RandomStream),
    ("tensor.arange", symscan.tensor.arange),
    ("tensor.specify_shape", symscan.tensor.specify_shape),
    ("tensor.reshape", symscan.tensor.reshape),
    ("tensor.var", symscan.tensor.var),
    ("tensor.std", symscan.tensor.std),
    ("tensor.ftensor3", symscan.tensor.ftensor3),
    ("tensor.dcol", symscan.tensor.dcol),
    ("tensor.drow", symscan.tensor.drow),
    ("tensor.row", symscan.tensor.row),
    ("tensor.col", symscan.tensor.col),
    ("tensor.itensor3", symscan.tensor.itensor3),
    ("scan_module.until", ss.until),
    ("scan_module.scan", ss.scan),
    ("printing.debugprint", ss.dprint),
    ("debugprint", ss.dprint),
    # Theano 1.0 tensor vocabulary: aliases of symscan's names
    ("tensor.abs_", symscan.tensor.abs),
    ("tensor.sgn", symscan.tensor.sign),
    ("tensor.sqr", symscan.tensor.square),
    ("tensor.inv", symscan.tensor.reciprocal),  # elementwise 1/x, as in Theano
    ("tensor.bitwise_and", symscan.tensor.and_),
    ("tensor.bitwise_or", symscan.tensor.or_),
    ("tensor.bitwise_xor", symscan.tensor.xor),
    ("tensor.bitwise_not", symscan.tensor.invert),
    *[(f"tensor.{name}", getattr(symscan.tensor, name)) for name in (
        "allclose argsort batched_dot batched_tensordot cosh erfinv gamma gammaln identity_like iround isclose "
        "isinf isnan log_softmax logsumexp max_and_argmax mgrid ogrid psi ptp shape_padaxis shape_padleft "
        "shape_padright sort stacklists tensordot tile").split()],
    *[(f"tensor.nnet.{name}", getattr(symscan.tensor.nnet, name)) for name in (
        "softsign hard_sigmoid ultra_fast_sigmoid sigmoid_binary_crossentropy log_softmax").split()],
    # theano.tensor.nlinalg, slinalg and extra_ops: symscan's names where they are the same function
    ("tensor.nlinalg.matrix_inverse", symscan.tensor.linalg.inv),
    ("tensor.nlinalg.det", symscan.tensor.linalg.det),
    ("tensor.nlinalg.matrix_power", symscan.tensor.linalg.matrix_power),
    ("tensor.slinalg.cholesky", symscan.tensor.linalg.cholesky),
    ("tensor.slinalg.solve", symscan.tensor.linalg.solve),
    ("tensor.slinalg.solve_symmetric", symscan.tensor.linalg.solve),
    ("tensor.extra_ops.cumsum", symscan.tensor.cumsum),
    ("tensor.extra_ops.cumprod", symscan.tensor.cumprod),
    ("tensor.extra_ops.squeeze", symscan.tensor.squeeze),
]


def lookup(dotted: str):
    obj = theano
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("dotted, expected", THEANO_NAMES, ids=[name for name, _ in THEANO_NAMES])
def test_theano_name_is_the_symscan_object(dotted, expected):
    assert lookup(dotted) is expected


def test_the_three_import_forms_give_the_same_tensor_module():
    assert T is theano.tensor
    assert T_from is theano.tensor
    assert importlib.import_module("symscan.compat.theano.tensor") is theano.tensor
    assert importlib.import_module("symscan.compat.theano.scan_module") is theano.scan_module
    assert importlib.import_module("symscan.compat.theano.printing") is theano.printing
    assert importlib.import_module("symscan.compat.theano.compile") is theano.compile


THEANO_SUBMODULES = ("extra_ops", "nnet", "shared_randomstreams", "xlogx")
"""Modules of symscan.tensor that theano.tensor has as its own (Theano's softmax, ...)."""


def test_theano_tensor_has_every_symscan_tensor_name():
    missing = [name for name in symscan.tensor.__all__
               if name not in THEANO_SUBMODULES and getattr(T, name, None) is not getattr(symscan.tensor, name)]
    assert missing == []
    for name in THEANO_SUBMODULES:
        module = getattr(T, name)
        assert module is importlib.import_module(f"symscan.compat.theano.tensor.{name}")
        # each has every public name of symscan's module of that name (some Theano's own)
        assert set(getattr(symscan.tensor, name).__all__) <= set(module.__all__)


def test_nnet_logsoftmax_is_theanos_row_wise_form():
    x = T.dvector("x")
    out = T.nnet.logsoftmax(x)
    assert out.type.shape[0] == 1 and out.ndim == 2
    value = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(out.eval({x: value})[0], np.log(np.exp(value) / np.exp(value).sum()))
    with pytest.raises(ValueError, match="log_softmax"):
        T.nnet.logsoftmax(T.dtensor3())


def test_all_lists_only_names_that_exist():
    for module in (theano, theano.compile, theano.scan_module, theano.printing,
                   theano.tensor.nlinalg, theano.tensor.slinalg, theano.tensor.extra_ops):
        assert module.__all__
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"


# The signatures the guide's reference section gives, parameter by parameter.
GUIDE_SIGNATURES = {
    "map": "fn, sequences, non_sequences=None, truncate_gradient=-1, go_backwards=False, mode=None, name=None",
    "reduce": "fn, sequences, outputs_info, non_sequences=None, go_backwards=False, mode=None, name=None",
    "foldl": "fn, sequences, outputs_info, non_sequences=None, mode=None, name=None",
    "foldr": "fn, sequences, outputs_info, non_sequences=None, mode=None, name=None",
    "scan": ("fn, sequences=None, outputs_info=None, non_sequences=None, n_steps=None, truncate_gradient=-1, "
             "go_backwards=False, mode=None, name=None, profile=False, allow_gc=None, strict=False"),
}


def parse_guide_signature(text: str) -> list[tuple]:
    parameters = []
    for part in text.split(", "):
        name, _, default = part.partition("=")
        parameters.append((name, eval(default) if default else inspect.Parameter.empty))
    return parameters


@pytest.mark.parametrize("name", sorted(GUIDE_SIGNATURES))
def test_loop_functions_take_the_guides_parameters(name):
    """The guide's parameters come first, in its order and with its defaults (symscan may add
    keyword parameters after them, such as scan's return_list)."""
    expected = parse_guide_signature(GUIDE_SIGNATURES[name])
    actual = [(p.name, p.default) for p in inspect.signature(getattr(theano, name)).parameters.values()]
    assert actual[:len(expected)] == expected
    assert all(default is not inspect.Parameter.empty for _, default in actual[len(expected):])


# Theano 1.0's signatures of the other ported functions (the leading parameters, in order).
THEANO_SIGNATURES = {
    "function": ("inputs, outputs=None, mode=None, updates=None, givens=None, no_default_updates=False, "
                 "accept_inplace=False, name=None, rebuild_strict=True, allow_input_downcast=None, profile=None, "
                 "on_unused_input=None"),
    "clone": "output, replace=None, strict=True, share_inputs=True",
    "shared": "value, name=None, strict=False",
    "tensor.reshape": "x, newshape, ndim=None",
    "tensor.specify_shape": "x, shape",
    "tensor.var": "input, axis=None, ddof=0, keepdims=False, corrected=False",
    "tensor.std": "input, axis=None, ddof=0, keepdims=False, corrected=False",
    "tensor.TensorVariable.var": "self, axis=None, ddof=0, keepdims=False, corrected=False",
    "tensor.TensorVariable.std": "self, axis=None, ddof=0, keepdims=False, corrected=False",
    "tensor.TensorVariable.copy": "self, name=None",
    "tensor.shared_randomstreams.RandomStreams.multinomial":
        "self, size=None, n=1, pvals=None, ndim=None, dtype='int64'",
}


@pytest.mark.parametrize("name", sorted(THEANO_SIGNATURES))
def test_ported_functions_take_theanos_parameters(name):
    expected = parse_guide_signature(THEANO_SIGNATURES[name])
    actual = [(p.name, p.default) for p in inspect.signature(lookup(name)).parameters.values()]
    assert actual[:len(expected)] == expected
    assert all(default is not inspect.Parameter.empty for _, default in actual[len(expected):])


def test_shared_takes_borrow():
    assert inspect.signature(theano.shared).parameters["borrow"].default is False


# ---------------------------------------------------------------------------- config.floatX
def test_floatX_sets_the_dtype_of_untyped_constructors(floatX):
    assert theano.config.floatX == floatX
    for constructor, ndim in [(T.scalar, 0), (T.vector, 1), (T.matrix, 2), (T.tensor3, 3), (T.tensor4, 4)]:
        var = constructor("x")
        assert (var.dtype, var.ndim) == (floatX, ndim)
    assert T.iscalar().dtype == "int32" and T.dvector().dtype == "float64" and T.fmatrix().dtype == "float32"


def test_floatX_sets_the_dtype_of_random_draws(floatX):
    trng = T.shared_randomstreams.RandomStreams(3)
    normal, uniform = trng.normal(size=(3,)), trng.uniform(size=(2, 2))
    assert normal.dtype == floatX and uniform.dtype == floatX
    out = both_modes.run([], [normal, uniform])  # theano.function is ss.function; "fast" draws what "py" draws
    assert [o.dtype for o in out] == [np.dtype(floatX)] * 2
    assert trng.binomial(size=(2,), n=1, p=0.5, dtype=theano.config.floatX).dtype == floatX


def test_floatX_flows_through_scan_and_function(floatX, mode):
    x0 = T.vector("x0")
    doubled, _ = theano.scan(lambda prev: prev * 2, outputs_info=x0, n_steps=3)
    assert doubled.dtype == floatX
    out = theano.function([x0], doubled, mode=mode)(np.array([1.0, -0.5], dtype=floatX))
    assert out.dtype == np.dtype(floatX)
    np.testing.assert_array_equal(out, [[2.0, -1.0], [4.0, -2.0], [8.0, -4.0]])


def test_setting_floatX_through_theano_config(floatX):
    """Assigning theano.config.floatX is seen by symscan (the fixture restores it)."""
    other = "float32" if floatX == "float64" else "float64"
    theano.config.floatX = other
    assert ss.config.floatX == other
    assert T.vector().dtype == other


def test_floatX_rejects_other_dtypes(floatX):
    with pytest.raises(ValueError, match="floatX"):
        theano.config.floatX = "int32"
    assert theano.config.floatX == floatX


# ---------------------------------------------------------------------------- printing
def test_debugprint_shows_the_loop():
    k, A = T.iscalar("k"), T.vector("A")
    result, updates = theano.scan(lambda prior, A: T.tanh(prior * A), outputs_info=T.ones_like(A),
                                  non_sequences=A, n_steps=k)  # (the guide's prior * A needs no loop)
    power = theano.function([A, k], result[-1], updates=updates)
    text = theano.printing.debugprint(power, file="str")
    assert "Scan{" in text
    assert "loop body" in text
