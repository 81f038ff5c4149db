"""Python functions copied into a kernel's module and jitted there, so that the kernel's source,
hence numba's disk-cache key (``cache.py``), changes when they do."""

from __future__ import annotations

import inspect
from collections.abc import Callable


def module_function(gen, fn: Callable, constants: dict | None = None, callees: tuple = ()) -> str:
    """``fn``'s source jitted in the kernel's module once, after the module constants it reads
    and the functions it calls (``callees``, copied the same way); returns its name."""
    for callee in callees:
        module_function(gen, callee)
    header = f"def {fn.__name__}("
    if not any(line.startswith(header) for line in gen.module_lines):
        gen.module_lines += [f"{name} = {value!r}" for name, value in (constants or {}).items()]
        gen.module_lines += ["@numba.njit(cache=True, nogil=True)"] + inspect.getsource(fn).splitlines() + [""]
    return fn.__name__
