"""Modes: which rewrites run and which backend evaluates (the only place that decides)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mode:
    """``rewrites``: the default selection (None = every registered rewrite, () = none)."""

    name: str
    rewrites: tuple | None
    backend: str
    description: str


MODES = {
    "py": Mode("py", (), "reference", "reference interpreter, no rewrites"),
    # Until the fast evaluator lands, "fast" rewrites the graph and runs the reference interpreter.
    "fast": Mode("fast", None, "reference", "every rewrite, then the evaluator"),
    "onnxruntime": Mode("onnxruntime", None, "onnxruntime", "export to ONNX, run in onnxruntime"),
}
DEFAULT_MODE = "fast"


def get_mode(mode) -> Mode:
    """The Mode for ``mode`` (None: the default, "fast")."""
    if mode is None:
        return MODES[DEFAULT_MODE]
    if isinstance(mode, Mode):
        return mode
    if isinstance(mode, str) and mode.lower() in MODES:
        return MODES[mode.lower()]
    raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(repr(m) for m in MODES)}")
