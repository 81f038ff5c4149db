"""Build time: the rewrites that recognise recurrences and index arithmetic need no sympy.

sympy alone takes longer to import than symscan, so the first ``ss.function`` of a program
must not load it. Structural checks only (no timing is asserted): a fresh interpreter builds
the workloads that used to need it and sympy stays out of ``sys.modules``. Then the numeric
helpers that replaced it: the affine-form reader, the closed forms (against a numpy loop over
long step counts) and the integer polynomials of save_mem's indices.
"""

import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from rewrites.affine import NotAffine, affine_form, as_graph, closed_form, rational_roots
from rewrites.save_mem import IndexPolynomial, index_polynomial
from symscan.graph.traversal import toposort
from symscan.scan.args import ScanArgs
from symscan.scan.op import Scan

ROOT = Path(__file__).resolve().parents[2]

FRESH_BUILD = """
import sys
import symscan as ss
import symscan.tensor as T
from benchmarks.workloads import all_workloads

workloads = {w.name: w for w in all_workloads(quick=True)}
for name in ("W1", "W7"):
    w = workloads[name]
    f = ss.function(w.inputs, w.outputs)
    print(name, "|".join(r.detail for r in f.rewrite_report() if r.fired))
A, k = T.vector("A"), T.iscalar("k")
result, _ = ss.scan(lambda prior, A: prior * A, outputs_info=T.ones_like(A), non_sequences=A, n_steps=k)
f = ss.function([A, k], result[2 * k - k - 1], rewrites=["save_mem"])
print("k-1", "|".join(r.detail for r in f.rewrite_report() if r.fired))
print("sympy" in sys.modules)
"""


def test_a_fresh_build_of_the_closed_form_and_save_mem_workloads_does_not_import_sympy():
    done = subprocess.run([sys.executable, "-c", FRESH_BUILD], capture_output=True, text=True, check=True,
                          cwd=ROOT)
    w1, w7, symbolic_index, sympy_loaded = done.stdout.strip().splitlines()
    assert "closed form x_t = (1/2) x_(t-2) + (1/2) x_(t-1) + (1)" in w7
    assert "keeps its last 1 step" in w1 and "keeps its last 1 step" in symbolic_index
    assert sympy_loaded == "False"


# ---------------------------------------------------------------------------- affine forms
def _scan_args(out):
    """The ``ScanArgs`` of the one Scan node ``out`` is computed from."""
    (node,) = [n for n in toposort([out]) if isinstance(n.op, Scan)]
    return ScanArgs.from_node(node)


def _mit_sot_body(fn):
    """The new value of a mit-sot with taps [-2, -1] and its past values ({inner input: lag})."""
    out, _ = ss.scan(fn, outputs_info=dict(initial=T.vector("init"), taps=[-2, -1]), n_steps=5)
    (entry,) = _scan_args(out).recurrent
    return entry.inner_out, {v: -tap for v, tap in zip(entry.inner_in, entry.taps)}


def test_numeric_coefficients_are_exact_fractions():
    out, past = _mit_sot_body(lambda a2, a1: 0.5 * a1 + 0.14 * a2 + 1.0)
    form = affine_form(out, past, "float64")
    assert form.coefficients == {1: Fraction(1, 2), 2: Fraction(7, 50)} and form.forcing == 1


@pytest.mark.parametrize("fn, coefficients, forcing", [
    (lambda a2, a1: -(a1 - 3.0 * a2), {1: -1, 2: 3}, 0),
    (lambda a2, a1: (a1 + 2.0) * 0.25 - a2 / 4, {1: Fraction(1, 4), 2: Fraction(-1, 4)}, Fraction(1, 2)),
    (lambda a2, a1: a1 * 2 - a1 + 0 * a2 + 7, {1: 1, 2: 0}, 7),
    (lambda a2, a1: a2 - 1, {1: 0, 2: 1}, -1),
])
def test_affine_forms_over_numbers(fn, coefficients, forcing):
    out, past = _mit_sot_body(fn)
    form = affine_form(out, past, "float64")
    assert form.coefficients == coefficients and form.forcing == forcing


def test_coefficients_of_leaves_are_graphs_over_them():
    """``(x + b) * a``: the coefficient is ``a`` itself, the forcing evaluates to a*b."""
    a, b, x0, u = T.scalar("a"), T.scalar("b"), T.scalar("x0"), T.vector("u")
    out, _ = ss.scan(lambda u, x, a, b: (x + b) * a - u / 2, sequences=u, outputs_info=x0, non_sequences=[a, b])
    args = _scan_args(out)
    (entry,) = args.recurrent
    form = affine_form(entry.inner_out, {entry.inner_in[0]: 1}, "float64")
    inner_a, inner_b = (n.inner for n in args.non_seqs)
    (inner_u,) = args.sequences[0].inner
    assert form.coefficients[1] is inner_a
    forcing = ss.function([inner_a, inner_b, inner_u], form.forcing, mode="py")(3.0, 5.0, 4.0)
    assert forcing == pytest.approx(3.0 * 5.0 - 4.0 / 2)
    assert form.shown((1,)) == "x_t = (a) x_(t-1) + (((b * a) - (u[t] / 2)))"


@pytest.mark.parametrize("fn, reason", [
    (lambda a2, a1: a1 * a2, "of values that both depend on the state"),
    (lambda a2, a1: 1.0 / a1 + a2, "of values that both depend on the state"),
    (lambda a2, a1: a1 * T.tanh(a2), "the state goes through Elemwise{tanh}"),
    (lambda a2, a1: a1 / 0.0, "divides by the constant 0"),
])
def test_non_affine_bodies_say_why(fn, reason):
    out, past = _mit_sot_body(fn)
    with pytest.raises(NotAffine, match=reason):
        affine_form(out, past, "float64")


@pytest.mark.parametrize("dtype, fn, coefficient", [
    ("int32", lambda x, c: x * 3 + c, 3),
    ("float64", lambda x, c: x / 4 + c, Fraction(1, 4)),
])
def test_first_order_coefficients_by_state_dtype(dtype, fn, coefficient):
    x0, c = T.tensor(dtype, (), "x0"), T.tensor(dtype, (), "c")
    out, _ = ss.scan(fn, outputs_info=x0, non_sequences=c, n_steps=4)
    (entry,) = _scan_args(out).recurrent
    form = affine_form(entry.inner_out, {entry.inner_in[0]: 1}, dtype)
    assert form.coefficients == {1: coefficient} and form.forcing.name == "c"


def test_an_integer_state_has_no_fractional_constants():
    with pytest.raises(NotAffine, match="of an integer state is not an integer"):
        as_graph(Fraction(1, 2), "int32")
    assert as_graph(Fraction(3), "int8").dtype == "int8"


# ---------------------------------------------------------------------------- closed forms
def _loop(coefficients: dict, initial: list, forcing: float, steps: int) -> np.ndarray:
    x = list(initial)
    for n in range(len(initial), steps):
        x.append(sum(float(a) * x[n - lag] for lag, a in coefficients.items()) + forcing)
    return np.array(x)


def _evaluate(modes, values: list, n: np.ndarray) -> np.ndarray:
    total = np.zeros(n.shape)
    for mode in modes:
        weight = sum(float(w) * v for w, v in zip(mode.weights, values))
        total = total + weight * n ** mode.power * float(mode.root) ** n
    return total


CLOSED = {  # coefficients by lag: distinct real, repeated, ±1 roots
    "roots 1, 1/2": {1: 1.5, 2: -0.5},
    "roots 7/10, -1/5": {1: 0.5, 2: 0.14},
    "roots 1, -1/2 (W7)": {1: 0.5, 2: 0.5},
    "double root 1": {1: 2.0, 2: -1.0},
    "double root 1/2": {1: 1.0, 2: -0.25},
    "double root -1": {1: -2.0, 2: -1.0},
    "roots ±1": {2: 1.0},
    "first order 1/2": {1: 0.5},
    "first order 1": {1: 1.0},
    "first order -0.999": {1: -0.999},
}


@pytest.mark.parametrize("forced", [False, True])
@pytest.mark.parametrize("case", list(CLOSED))
def test_closed_form_matches_the_loop_over_many_steps(case, forced):
    coefficients = CLOSED[case]
    span = max(coefficients)
    numbers = tuple((lag, Fraction(repr(a))) for lag, a in coefficients.items())
    modes = closed_form(numbers, span, forced)
    assert modes is not None
    initial, forcing = [0.3, -1.7][:span], 0.9 if forced else 0.0
    expected = _loop(coefficients, initial, forcing, 3000)
    got = _evaluate(modes, initial + ([forcing] if forced else []), np.arange(3000.0))
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("coefficients, why", [
    ({1: 1.8, 2: -0.9}, "complex roots"),
    ({1: 1.0, 2: -0.5}, "complex roots"),
    ({1: -0.5, 2: 0.3}, "irrational roots"),
    ({1: 1.0, 2: 1.0}, "irrational roots above 1"),
    ({1: 2.5, 2: -1.0}, "a root above 1"),
    ({1: 1.1}, "a root above 1"),
    ({1: 1.0005, 2: -0.25025}, "distinct roots 1e-3 apart (0.5, 0.5005)"),
    ({1: 0.5, 2: 0.2, 3: -0.1}, "third order"),
])
def test_no_closed_form_where_the_loop_keeps_better_numbers(coefficients, why):
    numbers = tuple((lag, Fraction(repr(a))) for lag, a in coefficients.items())
    assert closed_form(numbers, max(coefficients), True) is None, why


def test_rational_roots_with_multiplicity():
    assert rational_roots([Fraction(1, 2), Fraction(7, 50)]) == [Fraction(-1, 5), Fraction(7, 10)]
    assert rational_roots([Fraction(2), Fraction(-1)]) == [1, 1]
    assert rational_roots([Fraction(0), Fraction(1)]) == [-1, 1]
    assert rational_roots([Fraction(1), Fraction(1)]) is None  # (1 ± √5) / 2
    assert rational_roots([Fraction(1), Fraction(-1)]) is None  # complex


# ---------------------------------------------------------------------------- save_mem's indices
def test_index_polynomials_expand_to_n_minus_one():
    k, i = T.iscalar("k"), T.iscalar("i")
    n_minus_one = IndexPolynomial({("n",): 1, (): -1})
    for index in (k - 1, (k + 2) - 3, 2 * k - k - 1, T.cast(k, "int64") - 1, k * i - i * k + k - 1, -(1 - k)):
        assert index_polynomial(index, k, None) == n_minus_one
    assert index_polynomial(k * k - 1, k, None) == IndexPolynomial({("n", "n"): 1, (): -1})
    assert index_polynomial(i - 1, k, None) == IndexPolynomial({(id(i),): 1, (): -1})
    assert index_polynomial(k - k, k, None) == {}
