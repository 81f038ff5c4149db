"""The accelerator benchmark (benchmarks/accelerator.py) at its --quick sizes, W4 and G4 only, in a
fresh process (it lets JAX choose its device before JAX's import, which must not leak into this
one): symscan's mode jax and the hand-written JAX both pass the runner's check against the numpy
loop and BPTT, the device comes first, and the table and README section list them. No timing is
asserted."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")

ROOT = Path(__file__).resolve().parents[1]


def test_accelerator_quick_run_writes_its_rows_and_section(tmp_path):
    readme, jsonl = tmp_path / "README.md", tmp_path / "rows.jsonl"
    readme.write_text("# Benchmarks\n\n## Drawing\n\nkept\n")
    command = [sys.executable, "-m", "benchmarks.accelerator", "--quick", "--only", "W4,G4", "--repeats", "1",
               "--markdown", str(readme), "--jsonl", str(jsonl)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("device: ") and "platform " in result.stdout.splitlines()[0]
    rows = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert {(r["name"], r["system"]) for r in rows} == {(n, s) for n in ("W4", "G4") for s in ("jax-mode", "jax")}
    assert all(r["median_s"] > 0 and r["platform"] for r in rows)
    text = readme.read_text()
    assert "## Drawing\n\nkept\n" in text and "## Accelerator" in text
    for name in ("W4", "G4"):
        line = next(x for x in text.splitlines() if x.startswith(f"| {name} "))
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert len(cells) == 6 and all(c != "-" for c in cells), line
