"""Graphviz's ``dot``: the layered layout engine behind every picture.

Two ways to reach it, tried in order:

- ``pygraphviz`` (the ``draw`` extra): its wheels bundle graphviz itself, layout and cairo
  renderers included, so no system install is needed; ``dot`` runs in-process.
- a ``dot`` binary on the PATH (Debian's ``graphviz`` package, Homebrew, conda...), run as a
  subprocess.

Graphviz reports harmless warnings (fontconfig, HTML cells) on stderr; they are collected
and kept out of the user's terminal (``last_warnings``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

PYGRAPHVIZ, BINARY = "pygraphviz", "binary"

INSTALL_HINT = ('ss.draw lays pictures out with graphviz\'s dot: install it with pip install "symscan[draw]" '
                "(pygraphviz, which bundles graphviz), or install graphviz so that `dot` is on the PATH")

DOT_TIMEOUT = 600  # s, for the dot binary: a picture that takes longer is not worth waiting for
last_warnings: list[str] = []  # graphviz's stderr from the latest run, for debugging


@dataclass(frozen=True)
class Engine:
    """How dot is reached: ``kind`` is PYGRAPHVIZ or BINARY; ``name`` says which graphviz."""

    kind: str
    name: str
    path: str = ""  # the binary, for BINARY


def _import_pygraphviz():
    """The pygraphviz module, or None when it is not installed (tests replace this)."""
    try:
        import pygraphviz
    except ImportError:
        return None
    return pygraphviz


def _which_dot() -> str | None:
    return shutil.which("dot")


@lru_cache(maxsize=8)
def _binary_version(path: str) -> str:
    result = subprocess.run([path, "-V"], capture_output=True, text=True, timeout=30)
    words = (result.stderr or result.stdout).split()
    return words[words.index("version") + 1] if "version" in words else "?"


def find_engine(prefer: str | None = None) -> Engine:
    """The engine to use: pygraphviz when installed, else the ``dot`` binary on the PATH.

    ``prefer`` (PYGRAPHVIZ or BINARY) asks for one of them; it falls back to the other.
    """
    if prefer not in (None, PYGRAPHVIZ, BINARY):
        raise ValueError(f"engine: expected {PYGRAPHVIZ!r}, {BINARY!r} or None, got {prefer!r}")
    order = [BINARY, PYGRAPHVIZ] if prefer == BINARY else [PYGRAPHVIZ, BINARY]
    for kind in order:
        if kind == PYGRAPHVIZ and (pgv := _import_pygraphviz()) is not None:
            return Engine(PYGRAPHVIZ, f"graphviz dot {pgv.__graphviz_version__} (pygraphviz {pgv.__version__})")
        if kind == BINARY and (path := _which_dot()) is not None:
            return Engine(BINARY, f"graphviz dot {_binary_version(path)} ({path})", path)
    raise ImportError(INSTALL_HINT)


@contextmanager
def _quiet_stderr():
    """Collect what C code writes to file descriptor 2 (graphviz and fontconfig warnings)."""
    del last_warnings[:]
    with tempfile.TemporaryFile() as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            last_warnings.extend(sink.read().decode("utf-8", "replace").splitlines())


def run_dot(source: str, fmt: str = "json", engine: Engine | None = None) -> bytes:
    """Lay ``source`` (DOT text) out with dot and render it in format ``fmt`` (json, png, svg...)."""
    engine = engine or find_engine()
    if engine.kind == PYGRAPHVIZ:
        pgv = _import_pygraphviz()
        try:
            with _quiet_stderr():
                return pgv.AGraph(string=source).draw(format=fmt, prog="dot")
        except (ValueError, OSError) as error:  # pygraphviz.DotError is a ValueError
            raise _dot_failed(engine, str(error)) from None
    try:
        result = subprocess.run([engine.path, f"-T{fmt}"], input=source.encode("utf-8"), capture_output=True,
                                timeout=DOT_TIMEOUT)
    except (subprocess.TimeoutExpired, OSError) as error:
        raise _dot_failed(engine, str(error)) from None
    last_warnings[:] = result.stderr.decode("utf-8", "replace").splitlines()
    if result.returncode != 0:
        raise _dot_failed(engine, f"exit status {result.returncode}")
    return result.stdout


def _dot_failed(engine: Engine, what: str) -> RuntimeError:
    """One error type for every way dot can fail, with graphviz's own words: the DOT is ours,
    so a failure is symscan's bug, and the report needs ``Drawing.dot()`` to reproduce it."""
    said = "; ".join(line for line in last_warnings if line.strip())[:500]
    return RuntimeError(f"ss.draw: {engine.name} could not lay the picture out ({what}"
                        f"{': ' + said if said else ''}); please report it to symscan with the DOT text "
                        "from ss.to_dot(obj, ...) (or Drawing.dot())")


def layout_json(source: str, engine: Engine | None = None) -> dict:
    """dot's layout of ``source`` as parsed ``-Tjson0`` (json without the xdot drawing operations,
    which nothing reads, and 5-10x faster to write): bounding box, clusters, nodes, splines."""
    return json.loads(run_dot(source, "json0", engine))
