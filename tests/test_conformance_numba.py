"""The public conformance suite, run again with mode "numba" as the default mode (where numba
is installed): its loops then run as numba kernels (``SYMSCAN_MODE``, see symscan/config.py)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from modes_tested import NUMBA

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = ROOT.parent / "shared" / "conformance"


@pytest.mark.skipif(not NUMBA, reason="numba is not installed (extra 'numba')")
@pytest.mark.skipif(not CONFORMANCE.is_dir(), reason="the conformance suite is not next to the project")
def test_conformance_suite_passes_in_mode_numba():
    env = dict(os.environ, SYMSCAN_MODE="numba")
    result = subprocess.run([sys.executable, "-m", "pytest", str(CONFORMANCE), "-q", "-p", "no:randomly"],
                            cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert " passed" in result.stdout.splitlines()[-1]
