"""Kernels as files, so that numba's own on-disk cache serves a second process.

A kernel's module source is written once to ``<cache dir>/symscan_kernel_<hash>.py`` (the hash
of the source, which holds the loop's structure, dtypes and scalar constants) and imported
from there; its ``@numba.njit(cache=True)`` then keeps the machine code beside it, per argument
types. The directory is ``$SYMSCAN_CACHE_DIR``, else ``$XDG_CACHE_HOME/symscan``, else
``~/.cache/symscan``; where it cannot be written the kernel is compiled in memory only.

The package's own jitted helpers (``small.py``, ``reductions.py``) are loaded the same way
(``helper_module``): numba would otherwise keep their machine code in the package's
``__pycache__``, which a read-only install cannot write (each process then compiles them again).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
import types
from pathlib import Path

import numpy as np

_LOADED: dict[str, dict] = {}  # module name -> its namespace (one import per process)
# the default mode builds numba versions in a background thread; re-entered: a kernel's module
# loads its helpers' modules while it is imported
_LOCK = threading.RLock()


def cache_dir() -> Path:
    root = os.environ.get("SYMSCAN_CACHE_DIR")
    if root:
        return Path(root) / "numba"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "symscan" / "numba"


def writable() -> bool:
    """Kernels can be kept as files here (else each process compiles them in memory)."""
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK)


def _backend_stamp() -> bytes:
    """This backend's code and the versions it compiles with: numba's cache keys a module by its
    own file only, so machine code compiled against an older helper (inlined into a kernel)
    would be served again; a kernel's file name changes with the stamp instead."""
    import numba

    folder = Path(__file__).resolve().parent
    code = b"".join(path.read_bytes() for path in sorted(folder.glob("*.py")))
    return code + f"numba {numba.__version__} numpy {np.__version__}".encode()


_STAMP: list[bytes] = []


def module_name(source: str) -> str:
    """The module name for a kernel's source (also names its file)."""
    if not _STAMP:
        _STAMP.append(hashlib.sha256(_backend_stamp()).digest())
    return "symscan_kernel_" + hashlib.sha256(_STAMP[0] + source.encode()).hexdigest()[:24]


def load_kernel(source: str, function: str = "kernel"):
    """The jitted function ``function`` defined in ``source`` (compiled on its first call)."""
    return vars(load_module(source))[function]


def load_module(source: str) -> types.ModuleType:
    """The module of ``source``, imported once per process from its file in the cache."""
    name = module_name(source)
    with _LOCK:
        if name not in _LOADED:
            _LOADED[name] = vars(_import(name, source))
        return sys.modules[name]


def helper_module(name: str) -> types.ModuleType:
    """This package's module ``name`` (``"small"``, ``"reductions"``) as a kernel's module is
    loaded, so that its jitted helpers keep their machine code in the cache directory."""
    return load_module((Path(__file__).resolve().parent / f"{name}.py").read_text())


def _import(name: str, source: str) -> types.ModuleType:
    try:
        path = _write(name, source)
    except OSError:  # no writable cache: compiled in memory, for this process only
        module = types.ModuleType(name)
        sys.modules[name] = module
        exec(compile(source.replace("cache=True", "cache=False"), f"<{name}>", "exec"), vars(module))
        return module
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # numba's cache finds the module by name
    spec.loader.exec_module(module)
    return module


def _write(name: str, source: str) -> Path:
    """The module file, written atomically once (its modification time keys numba's cache)."""
    folder = cache_dir()
    path = folder / f"{name}.py"
    if path.exists() and path.read_text() == source:
        return path
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
    with os.fdopen(fd, "w") as handle:
        handle.write(source)
    os.replace(tmp, path)
    return path
