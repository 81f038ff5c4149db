"""benchmarks/README.md is one file written by several scripts: the forward run writes the
tables at the top (no ``## `` heading of their own), every other script one ``## `` section.
These helpers replace one section and keep every other."""

from __future__ import annotations


def _bounds(text: str, heading: str) -> tuple[int, int]:
    """Where the section whose heading line starts with ``heading`` starts and ends (at the next
    ``## `` heading, or the end): -1, -1 if absent."""
    if text.startswith(heading):
        at = 0
    else:
        at = text.find("\n" + heading)
        if at < 0:
            return -1, -1
        at += 1
    end = text.find("\n## ", at + len(heading))
    return at, (len(text) if end < 0 else end + 1)


def section_of(text: str, heading: str) -> str:
    """The section of a README text (with the blank line before it), or ""."""
    at, end = _bounds(text, heading)
    return "" if at < 0 else "\n" + text[at:end].rstrip("\n") + "\n"


def sections_after_tables(text: str) -> str:
    """Every ``## `` section (with the blank line before), or "": what a forward run keeps when it
    rewrites the tables above them."""
    at = text.find("\n## ")
    return "" if at < 0 else "\n" + text[at + 1:]


def replace_section(text: str, section: str, heading: str) -> str:
    """``text`` with its section under ``heading`` replaced by ``section`` (appended when absent);
    the sections before and after it stay."""
    at, end = _bounds(text, heading)
    if at < 0:
        return text.rstrip("\n") + "\n\n" + section
    rest = text[end:]
    return text[:at].rstrip("\n") + "\n\n" + section.rstrip("\n") + ("\n\n" + rest if rest else "\n")


def write_section(path: str, section: str, heading: str) -> None:
    """Rewrite the section under ``heading`` of the markdown file at ``path`` (created when absent)."""
    from pathlib import Path

    file = Path(path)
    old = file.read_text() if file.exists() else ""
    file.write_text(replace_section(old or "# Benchmarks\n", section, heading))
