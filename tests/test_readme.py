"""Every ```python block of the README runs (each in a fresh namespace)."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index, capsys, tmp_path):
    """Each block runs from a file of its own, as a user's script would (onnxscript's @script
    reads its function's source)."""
    import runpy

    path = tmp_path / f"readme_block_{index}.py"
    path.write_text(BLOCKS[index])
    runpy.run_path(str(path), run_name="__readme__")
    assert capsys.readouterr().out.strip(), "each README example prints what it shows"


def test_readme_commands_match_ci():
    ci = (README.parent / ".ci" / "run").read_text()
    text = README.read_text()
    for command in ('pip install -e ".[dev]"', 'python -m pytest tests ../shared/conformance',
                    "python -m symscan demo"):
        assert command in text and command in ci, command


def test_benchmark_commands_run(tmp_path):
    """The README's benchmark commands, at smoke-test sizes (PyTensor/JAX are used if installed)."""
    import subprocess
    import sys

    root = README.parent
    quick = [sys.executable, "-m", "benchmarks", "--quick", "--only", "W1,W7", "--systems", "fast,numpy",
             "--no-memory", "--jsonl", str(tmp_path / "r.jsonl"), "--markdown", str(tmp_path / "r.md")]
    result = subprocess.run(quick, cwd=root, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "| W1 " in (tmp_path / "r.md").read_text()
    effect = subprocess.run([sys.executable, "-m", "benchmarks.rewrites_effect", "--quick"], cwd=root,
                            capture_output=True, text=True, timeout=300)
    assert effect.returncode == 0, effect.stderr
    assert "peak memory" in effect.stdout and "ratio_off_over_on" in effect.stdout


def test_readme_lists_exactly_the_imported_onnx_ops():
    """The table of imported ONNX ops (``python -m benchmarks.onnx_coverage``) stays true."""
    import symscan as ss

    text = README.read_text()
    table = text[text.index("| ops | imported (node tests that run it) |"):]
    rows = [line for line in table.splitlines()[2:] if line.startswith("| ") and not line.startswith("| not imported")]
    listed = {entry.split(" (")[0] for row in rows[:5] for entry in row.split(" | ")[1].rstrip(" |").split(", ")}
    assert listed == set(ss.onnx.supported_ops())


def _svg_labels(path) -> list[str]:
    import xml.etree.ElementTree as ET

    texts = ET.parse(path).getroot().iter("{http://www.w3.org/2000/svg}text")
    return sorted("".join(t.itertext()) for t in texts)


def test_readme_picture_is_current(tmp_path):
    """The README's picture (docs/rnn_gradient.svg) is what ``ss.draw`` draws today: redrawn into
    tmp_path, it carries the same labels (``python -m benchmarks.drawing --picture
    docs/rnn_gradient.svg`` redraws the committed one)."""
    from benchmarks.drawing import PICTURE, write_picture

    assert f"]({PICTURE.relative_to(README.parent)})" in README.read_text()
    fresh = write_picture(tmp_path / "rnn_gradient.svg")
    labels = _svg_labels(fresh)
    loops = [label for label in labels if "scan · T steps" in label]
    assert len(loops) == 2 and any(label.startswith("grad of scan") for label in loops), labels  # both loops, closed
    assert labels == _svg_labels(PICTURE), "redraw it: python -m benchmarks.drawing --picture docs/rnn_gradient.svg"
