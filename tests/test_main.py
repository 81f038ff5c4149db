"""``python -m symscan demo`` runs and checks itself against numpy."""

import subprocess
import sys

from symscan.__main__ import main


def test_demo_passes_in_process(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "matches numpy: True" in out
    assert "matches numpy: False" not in out
    assert "Elemwise{tanh}" in out


def test_demo_as_a_module():
    result = subprocess.run([sys.executable, "-m", "symscan", "demo"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "mode='fast'" in result.stdout


def test_unknown_command_is_refused():
    result = subprocess.run([sys.executable, "-m", "symscan", "nonsense"], capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "invalid choice" in result.stderr
