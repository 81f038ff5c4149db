"""Every ```python block of the README runs (each in a fresh namespace)."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index, capsys):
    exec(compile(BLOCKS[index], f"README.md block {index}", "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out.strip(), "each README example prints what it shows"


def test_readme_commands_match_ci():
    ci = (README.parent / ".ci" / "run").read_text()
    text = README.read_text()
    for command in ('pip install -e ".[dev]"', 'python -m pytest tests ../shared/conformance',
                    "python -m symscan demo"):
        assert command in text and command in ci, command
