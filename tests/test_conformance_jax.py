"""The public conformance suite, run again with mode "jax" as the default mode (where jax is
installed): every function of it is one jitted XLA program (``SYMSCAN_MODE``, see
symscan/config.py)."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = ROOT.parent / "shared" / "conformance"


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed (extra 'jax')")
@pytest.mark.skipif(not CONFORMANCE.is_dir(), reason="the conformance suite is not next to the project")
def test_conformance_suite_passes_in_mode_jax():
    env = dict(os.environ, SYMSCAN_MODE="jax")
    result = subprocess.run([sys.executable, "-m", "pytest", str(CONFORMANCE), "-q", "-p", "no:randomly"],
                            cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert " passed" in result.stdout.splitlines()[-1]
