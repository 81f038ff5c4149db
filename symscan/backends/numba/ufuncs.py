"""numpy's own inner loops for transcendental functions, called from numba kernels.

numba computes ``np.tanh`` of an array one element at a time through libm (about 6x slower
than numpy's SIMD loop on this machine: 12 ms vs 2 ms for W4's 1000 steps of 16x128), and its
results may differ from numpy's in the last bit. numpy's ufunc object holds a C pointer to
each typed inner loop; that pointer is registered with LLVM under a symbol name, so a kernel
calls the very loop numpy runs, and numba's on-disk cache stays valid in another process
(the symbol is registered again when this module loads a helper, before any kernel links).
Each loop is checked bit for bit against numpy once per process, called through its pointer
with ctypes (nothing to compile); where the check fails (a numpy whose ufunc struct differs),
kernels use numba's own function instead.
"""

from __future__ import annotations

import ctypes

import numpy as np

from symscan.backends.numba.cache import load_kernel

FAST_LOOPS = ("exp", "log", "log1p", "expm1", "tanh", "sin", "cos", "tan")
"""Unary float ufuncs whose numpy loop beats numba's element-at-a-time libm calls."""

_CHECKED: dict[tuple[str, str], object] = {}


class _UFuncHead(ctypes.Structure):
    """The start of numpy's ``PyUFuncObject`` (public in numpy/ufuncobject.h)."""

    _fields_ = [("ob_refcnt", ctypes.c_ssize_t), ("ob_type", ctypes.c_void_p), ("nin", ctypes.c_int),
                ("nout", ctypes.c_int), ("nargs", ctypes.c_int), ("identity", ctypes.c_int),
                ("functions", ctypes.POINTER(ctypes.c_void_p)), ("data", ctypes.POINTER(ctypes.c_void_p)),
                ("ntypes", ctypes.c_int)]


def symbol(name: str, dtype: str) -> str:
    return f"symscan_npy_{name}_{dtype}"


def register(name: str, dtype: str) -> None:
    """Make numpy's ``name`` loop for ``dtype`` callable from compiled code by its symbol."""
    import llvmlite.binding as llvm

    ufunc, char = getattr(np, name), np.dtype(dtype).char
    head = _UFuncHead.from_address(id(ufunc))
    if (head.nin, head.nout, head.ntypes) != (1, 1, len(ufunc.types)):
        raise RuntimeError(f"numpy's ufunc struct is not as expected for {name}")
    index = ufunc.types.index(f"{char}->{char}")
    llvm.add_symbol(symbol(name, dtype), head.functions[index])


def helper_source(name: str, dtype: str) -> str:
    return f'''import numpy as np
import numba
from numba import types
from symscan.backends.numba.ufuncs import register

register({name!r}, {dtype!r})
_loop = types.ExternalFunction({symbol(name, dtype)!r}, types.void(types.intp, types.intp, types.intp,
                                                                   types.intp))


@numba.njit(cache=True, nogil=True)
def apply(x):
    return apply_into(x, np.empty(x.shape, x.dtype))


@numba.njit(cache=True, nogil=True)
def apply_into(x, out):
    if x.shape != out.shape or not out.flags.c_contiguous:
        raise ValueError("symscan: a numpy loop's output row does not fit")
    x = np.ascontiguousarray(x)
    frame = np.empty(5, np.intp)  # the loop's arguments: 2 pointers, the length, 2 strides
    frame[0] = x.ctypes.data
    frame[1] = out.ctypes.data
    frame[2] = x.size
    frame[3] = x.itemsize
    frame[4] = x.itemsize
    base = frame.ctypes.data
    _loop(base, base + 2 * frame.itemsize, base + 3 * frame.itemsize, 0)
    return out
'''


def numpy_loop(name: str, dtype: str, into: bool = False):
    """The compiled helper applying numpy's loop to a float array (``into``: the variant
    writing into a given array of the same shape), or None (not available, or not bit for bit
    numpy's result)."""
    key = (name, dtype)
    if key not in _CHECKED:
        _CHECKED[key] = _checked_helper(name, dtype) if name in FAST_LOOPS and dtype in ("float32", "float64") \
            else None
    if _CHECKED[key] is None or not into:
        return _CHECKED[key]
    return load_kernel(helper_source(name, dtype), "apply_into")


def _checked_helper(name: str, dtype: str):
    """The helper, once numpy's loop called through its pointer (ctypes: nothing to compile)
    gave numpy's own results on a probe."""
    try:
        register(name, dtype)
        probe = np.linspace(-3, 3, 37, dtype=dtype)
        with np.errstate(all="ignore"):
            if not np.array_equal(_call_loop(name, dtype, probe), getattr(np, name)(probe), equal_nan=True):
                return None
        return load_kernel(helper_source(name, dtype), "apply")
    except Exception:  # noqa: BLE001 - any failure means: use numba's own function
        return None


def _call_loop(name: str, dtype: str, x: np.ndarray) -> np.ndarray:
    """numpy's typed inner loop for ``name`` applied to a contiguous 1-d ``x`` through its C pointer."""
    ufunc, char = getattr(np, name), np.dtype(dtype).char
    head = _UFuncHead.from_address(id(ufunc))
    loop = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
        head.functions[ufunc.types.index(f"{char}->{char}")])
    out = np.empty_like(x)
    args = (ctypes.c_void_p * 2)(x.ctypes.data, out.ctypes.data)
    dims = (ctypes.c_ssize_t * 1)(x.size)
    steps = (ctypes.c_ssize_t * 2)(x.itemsize, out.itemsize)
    loop(ctypes.addressof(args), ctypes.addressof(dims), ctypes.addressof(steps), None)
    return out
