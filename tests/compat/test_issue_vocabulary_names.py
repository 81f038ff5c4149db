"""Every name the vocabulary issue lists is reachable: Theano 1.0's 41 missing tensor functions,
sort/argsort/logsumexp/log_softmax/diag/unbroadcast, the nlinalg, slinalg, extra_ops and nnet
lists, theano.In/Out and MRG_RandomStreams, through ``symscan.compat.theano``; and the names
API.md puts in ``symscan.tensor`` and ``symscan.tensor.linalg`` there."""

import importlib

import pytest

import symscan.compat.theano as theano
import symscan.tensor

THEANO_MISSING_41 = (
    "abs_ allclose angle batched_dot batched_tensordot binary_crossentropy bitwise_and bitwise_not bitwise_or "
    "bitwise_xor categorical_crossentropy chi2sf cosh erfinv gamma gammaln hard_sigmoid identity_like imag inv "
    "iround isclose isinf isnan max_and_argmax mgrid ogrid psi ptp real sgn shape_padaxis shape_padleft "
    "shape_padright sigmoid_binary_crossentropy softsign sqr stacklists tensordot tile ultra_fast_sigmoid").split()
NNET_OF_THE_41 = ("binary_crossentropy categorical_crossentropy hard_sigmoid sigmoid_binary_crossentropy softsign "
                  "ultra_fast_sigmoid").split()
"""Theano kept these in ``theano.tensor.nnet``; the others are ``theano.tensor``'s."""

MODULES = {
    "nlinalg": "alloc_diag det diag eig eigh extract_diag matrix_dot matrix_inverse matrix_power norm pinv qr svd "
               "tensorinv tensorsolve trace",
    "slinalg": "cholesky eigvalsh expm kron solve solve_lower_triangular solve_symmetric solve_upper_triangular",
    "extra_ops": "bincount compress cumprod cumsum diff fill_diagonal fill_diagonal_offset ravel_multi_index repeat "
                 "searchsorted squeeze to_one_hot unravel_index unique bartlett",
    "nnet": "relu elu selu softsign softmax_graph logsoftmax crossentropy_softmax_1hot h_softmax",
}

API_TENSOR = ("gamma gammaln psi erfinv erfc cosh sinh arcsin arccos arctan arctanh isnan isinf isclose allclose sgn "
              "sqr logsumexp log_softmax sort argsort tensordot batched_dot tile repeat diff real imag angle chi2sf "
              "erfcinv unique bartlett").split()
API_LINALG = ("solve solve_triangular cholesky cho_solve inv det slogdet eigh eigvalsh qr svd pinv trace diagonal "
              "diag kron matrix_power norm expm eig lstsq tensorinv tensorsolve").split()


def test_the_41_are_in_theano_tensor_or_its_nnet():
    assert len(THEANO_MISSING_41) == 41
    T = theano.tensor
    for name in THEANO_MISSING_41:
        value = getattr(T.nnet if name in NNET_OF_THE_41 else T, name, None)
        assert callable(value) or hasattr(value, "__getitem__"), name  # mgrid/ogrid are indexed: T.mgrid[0:3]


def test_the_other_theano_names():
    T = theano.tensor
    for name in ("sort", "argsort", "diag", "unbroadcast"):
        assert callable(getattr(T, name, None)), name
    assert callable(T.nnet.logsoftmax) and callable(T.nnet.log_softmax)
    assert callable(theano.In) and callable(theano.Out)
    from symscan.compat.theano.sandbox.rng_mrg import MRG_RandomStreams

    assert theano.sandbox.rng_mrg.MRG_RandomStreams is MRG_RandomStreams
    for method in ("uniform normal binomial multinomial choice multinomial_wo_replacement truncated_normal seed "
                   "set_rstate inc_rstate get_substream_rstates n_streams updates").split():
        assert callable(getattr(MRG_RandomStreams, method)), method


@pytest.mark.parametrize("module", list(MODULES))
def test_theano_submodules_have_every_listed_name(module):
    by_attribute = getattr(theano.tensor, module)
    by_import = importlib.import_module(f"symscan.compat.theano.tensor.{module}")
    assert by_attribute is by_import
    for name in MODULES[module].split():
        assert callable(getattr(by_import, name, None)), f"theano.tensor.{module}.{name}"
        assert name in by_import.__all__ or module == "nnet" and name == "logsoftmax", name


def test_api_md_names_in_symscan_tensor():
    for name in API_TENSOR:
        assert callable(getattr(symscan.tensor, name, None)), f"symscan.tensor.{name}"
    for name in API_LINALG:
        assert callable(getattr(symscan.tensor.linalg, name, None)), f"symscan.tensor.linalg.{name}"


def test_from_imports_as_the_issue_writes_them():
    from symscan.compat.theano.tensor import nlinalg, slinalg  # noqa: F401  (`from theano.tensor import nlinalg`)

    assert theano.tensor.nnet.relu is not None and theano.tensor.slinalg.solve is symscan.tensor.linalg.solve
