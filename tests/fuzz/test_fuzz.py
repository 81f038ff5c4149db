"""The differential fuzzer in the test suite: the regression list, then a profile of random
programs (about a minute, the same programs on every run) through hypothesis, which shrinks a
failing program before reporting it. ``python -m tests.fuzz --minutes N`` runs longer.

The same for gradients (fuzz_grad.py): its regression list (open bugs as strict xfails) and a
profile of about 20 s. ``python -m tests.fuzz --grad --minutes N`` runs longer.

Modes numba and jax (where installed) run the regression lists, and small profiles of their own
(``NUMBA_PROFILE_EXAMPLES``, ``JAX_PROFILE_EXAMPLES``): the big profiles run ``DEFAULT_MODES``,
every other mode. A program mode jax cannot lower (``NotLowerable``) is skipped there."""

import pytest
from fuzz_choosers import HypothesisChooser
from fuzz_compare import DEFAULT_MODES, JAX, MODES, NUMBA, check_program
from fuzz_generate import generate
from fuzz_grad import check_gradient
from fuzz_grad_regressions import GRAD_REGRESSIONS, KNOWN_BUGS, known_bug
from fuzz_program import format_program
from fuzz_regressions import REGRESSIONS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PROFILE_EXAMPLES = 1300
"""About a minute on the project's 2-core machine (hypothesis's programs are small: ~40 ms each
in the nine modes of ``DEFAULT_MODES``)."""
NUMBA_PROFILE_EXAMPLES = 40
"""Mode numba's own profile (where numba is installed): each new loop is compiled into a
kernel (0.1-3 s; numba's on-disk cache serves the next run), so a few programs only, in mode
numba alone against the reference (and against mode py for gradients). ``python -m tests.fuzz
--modes numba --minutes N`` (``--grad`` too) runs longer."""
JAX_PROFILE_EXAMPLES = 40
"""Mode jax's own profile (where jax is installed): each program is traced and compiled by XLA
(~0.1 s), so a few programs, in mode jax alone (against mode py for gradients), ~5 s. ``python
-m tests.fuzz --modes jax --minutes N`` (``--grad`` too) runs longer."""


def _report(found, program=None) -> str:
    lines = [f"{d.mode}: {d.kind}: {d.detail}" for d in found]
    return "\n".join(lines + (["program:", format_program(program)] if program else []))


@pytest.mark.parametrize("program", [program for _, program in REGRESSIONS],
                         ids=[why for why, _ in REGRESSIONS])
def test_regression(program):
    found = check_program(program, list(MODES))  # numba and jax too: a few programs
    assert not found, _report(found, program)


@st.composite
def programs(draw):
    """Random programs; a failing one is shown as a ``Program(...)`` to paste into the regressions."""
    return generate(HypothesisChooser(draw), seed=draw(st.integers(0, 2**16)))


@settings(max_examples=PROFILE_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_random_programs(program):
    found = check_program(program, DEFAULT_MODES)
    assert not found, _report(found)  # hypothesis prints the (shrunk) program


@pytest.mark.skipif(not NUMBA, reason="mode numba needs numba (pip install -e \".[numba]\")")
@settings(max_examples=NUMBA_PROFILE_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_numba_random_programs(program):
    found = check_program(program, ["numba"])
    assert not found, _report(found)


@pytest.mark.skipif(not JAX, reason="mode jax needs jax (pip install -e \".[jax]\")")
@settings(max_examples=JAX_PROFILE_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_jax_random_programs(program):
    found = check_program(program, ["jax"])
    assert not found, _report(found)


# ---------------------------------------------------------------------------- gradients (fuzz_grad.py)
GRAD_PROFILE_EXAMPLES = 80
"""About 20 s on the project's 2-core machine (hypothesis's programs grow: the last ten take half
of it): each program's gradient compiled and run in the nine modes, plus finite differences of
the reference."""


NUMBA_GRAD_PROFILE_EXAMPLES = 20
"""Mode numba's gradients: a few programs, as ``NUMBA_PROFILE_EXAMPLES``."""
JAX_GRAD_PROFILE_EXAMPLES = 20
"""Mode jax's gradients: a few programs, as ``JAX_PROFILE_EXAMPLES``."""


class KnownBugStillThere(Exception):
    """The only failure a known bug's entry may xfail with: it failed, and only as that bug."""


def _grad_params():
    for why, program, bug in GRAD_REGRESSIONS:
        xfail = bug and pytest.mark.xfail(strict=True, raises=KnownBugStillThere, reason=KNOWN_BUGS[bug].reason)
        marks = [xfail] if bug else []
        yield pytest.param(program, bug, marks=marks, id=why)


@pytest.mark.parametrize("program, bug", list(_grad_params()))
def test_grad_regression(program, bug):
    found = check_gradient(program, list(MODES))  # numba and jax too
    if bug and found and all(known_bug(program, d) == bug for d in found):
        raise KnownBugStillThere(_report(found, program))
    assert not found, _report(found, program)  # a known bug's entry failing otherwise fails outright


@settings(max_examples=GRAD_PROFILE_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_grad_random_programs(program):
    """Gradients of random programs; open bugs (``KNOWN_BUGS``) are not held against them."""
    found = [d for d in check_gradient(program, DEFAULT_MODES) if known_bug(program, d) is None]
    assert not found, _report(found)


@pytest.mark.skipif(not NUMBA, reason="mode numba needs numba (pip install -e \".[numba]\")")
@settings(max_examples=NUMBA_GRAD_PROFILE_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_numba_grad_random_programs(program):
    """Mode numba's gradients against mode py's and the finite differences (see
    ``NUMBA_PROFILE_EXAMPLES``)."""
    found = [d for d in check_gradient(program, ["numba"]) if known_bug(program, d) is None]
    assert not found, _report(found)


@pytest.mark.skipif(not JAX, reason="mode jax needs jax (pip install -e \".[jax]\")")
@settings(max_examples=JAX_GRAD_PROFILE_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_jax_grad_random_programs(program):
    """Mode jax's gradients against mode py's and the finite differences (see
    ``JAX_PROFILE_EXAMPLES``)."""
    found = [d for d in check_gradient(program, ["jax"]) if known_bug(program, d) is None]
    assert not found, _report(found)
