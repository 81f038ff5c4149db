"""Modes: which rewrites run and which backend evaluates (the only place that decides)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from symscan.config import config


@dataclass(frozen=True)
class Mode:
    """``rewrites``: the default selection (None = every registered rewrite, () = none);
    ``excluded``: rewrite names never run in this mode (see ``without``)."""

    name: str
    rewrites: tuple | None
    backend: str
    description: str
    excluded: tuple = ()

    def without(self, *names: str) -> Mode:
        """This mode with the named rewrites switched off (e.g. to test each one's absence)."""
        return replace(self, name=f"{self.name}-without-{'-'.join(names)}", excluded=self.excluded + names)


MODES = {
    "py": Mode("py", (), "reference", "reference interpreter, no rewrites"),
    # Until the fast evaluator lands, "fast" rewrites the graph and runs the reference interpreter.
    "fast": Mode("fast", None, "fast", "every rewrite, then generated Python (the fast evaluator)"),
    "onnxruntime": Mode("onnxruntime", None, "onnxruntime", "export to ONNX, run in onnxruntime"),
}
DEFAULT_MODE = "fast"


def get_mode(mode) -> Mode:
    """The Mode for ``mode`` (None: ``config.mode``, "fast" unless changed)."""
    if mode is None:
        mode = config.mode if config.mode is not None else DEFAULT_MODE
    if isinstance(mode, Mode):
        return mode
    if isinstance(mode, str) and mode.lower() in MODES:
        return MODES[mode.lower()]
    raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(repr(m) for m in MODES)}")
