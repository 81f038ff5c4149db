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

    def __reduce__(self):
        """A registered mode unpickles as the registered object (``f.mode is MODES["fast"]``
        holds for an unpickled function too); other modes by their fields."""
        if MODES.get(self.name) == self:
            return get_mode, (self.name,)
        return Mode, (self.name, self.rewrites, self.backend, self.description, self.excluded)

    def without(self, *names: str) -> Mode:
        """This mode with the named rewrites switched off (e.g. to test each one's absence)."""
        return replace(self, name=f"{self.name}-without-{'-'.join(names)}", excluded=self.excluded + names)


MODES = {
    "py": Mode("py", (), "reference", "reference interpreter, no rewrites"),
    "fast": Mode("fast", None, "fast", "every rewrite, then generated Python (the fast evaluator)"),
    "numba": Mode("numba", None, "numba", "every rewrite, then the fast evaluator's code with loops compiled by numba"),
    "onnxruntime": Mode("onnxruntime", None, "onnxruntime", "export to ONNX, run in onnxruntime"),
    "jax": Mode("jax", None, "jax", "every rewrite, then one jax.jit function (XLA: CPUs, GPUs, TPUs)"),
}
DEFAULT_MODE = "fast"

THEANO_MODE_NAMES = {
    "FAST_RUN": "fast",  # Theano's default: every optimisation, then compiled code
    "FAST_COMPILE": "py",  # few optimisations, Python implementations
    "DebugMode": "py",  # the reference interpreter checks each op's outputs against its type
    "DEBUG_MODE": "py",
}
"""Theano's mode names (matched in any case), mapped to the symscan mode that does what they
were for."""
_ALIASES = {name.lower(): target for name, target in THEANO_MODE_NAMES.items()}


def get_mode(mode) -> Mode:
    """The Mode for ``mode`` (None: ``config.mode``, "fast" unless changed); Theano's names
    ("FAST_RUN", "FAST_COMPILE", "DebugMode") are accepted so that ported code runs unchanged."""
    if mode is None:
        mode = config.mode if config.mode is not None else DEFAULT_MODE
    if isinstance(mode, Mode):
        return mode
    if isinstance(mode, str):
        name = _ALIASES.get(mode.lower(), mode.lower())
        if name in MODES:
            return MODES[name]
    theano = ", ".join(repr(m) for m in THEANO_MODE_NAMES)
    raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(repr(m) for m in MODES)} "
                     f"(or Theano's {theano})")
