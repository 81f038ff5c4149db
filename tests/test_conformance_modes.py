"""The public conformance suite, run again with mode "numba" and with mode "jax" as the default
mode (where each is installed): its loops then run as numba kernels, or each function as one
jitted XLA program (``SYMSCAN_MODE``, see symscan/config.py)."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = ROOT.parent / "shared" / "conformance"


@pytest.mark.parametrize("mode", ["numba", "jax"])
@pytest.mark.skipif(not CONFORMANCE.is_dir(), reason="the conformance suite is not next to the project")
def test_conformance_suite_passes_in_mode(mode):
    if importlib.util.find_spec(mode) is None:  # (each mode's package is the extra of its name)
        pytest.skip(f"{mode} is not installed (extra {mode!r})")
    env = dict(os.environ, SYMSCAN_MODE=mode)
    result = subprocess.run([sys.executable, "-m", "pytest", str(CONFORMANCE), "-q", "-p", "no:randomly"],
                            cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert " passed" in result.stdout.splitlines()[-1]
