"""The differential fuzzer in the test suite: the regression list, then a profile of random
programs (about a minute, the same programs on every run) through hypothesis, which shrinks a
failing program before reporting it. ``python -m tests.fuzz --minutes N`` runs longer."""

import pytest
from fuzz_choosers import HypothesisChooser
from fuzz_compare import MODES, check_program
from fuzz_generate import generate
from fuzz_program import format_program
from fuzz_regressions import REGRESSIONS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PROFILE_EXAMPLES = 1300
"""About a minute on the project's 2-core machine (hypothesis's programs are small: ~40 ms each
in the nine modes)."""


def _report(found, program=None) -> str:
    lines = [f"{d.mode}: {d.kind}: {d.detail}" for d in found]
    return "\n".join(lines + (["program:", format_program(program)] if program else []))


@pytest.mark.parametrize("program", [program for _, program in REGRESSIONS],
                         ids=[why for why, _ in REGRESSIONS])
def test_regression(program):
    found = check_program(program, list(MODES))
    assert not found, _report(found, program)


@st.composite
def programs(draw):
    """Random programs; a failing one is shown as a ``Program(...)`` to paste into the regressions."""
    return generate(HypothesisChooser(draw), seed=draw(st.integers(0, 2**16)))


@settings(max_examples=PROFILE_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_random_programs(program):
    found = check_program(program, list(MODES))
    assert not found, _report(found)  # hypothesis prints the (shrunk) program
