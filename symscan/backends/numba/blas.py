"""Matrix products in kernels through a private OpenBLAS that uses the CPU's AVX-512 kernels.

scipy's OpenBLAS (which numba's ``np.dot`` calls) picks its kernels when it loads; on AMD Zen 4
it picks the AVX2 ("Haswell") ones though the CPU has AVX-512, and a loop of small products
(W4: 16x128 by 128x128 per step) then runs 2.3x slower than it could (12.2 ms against 5.3 ms
for 1000 steps here). A copy of that library, loaded under another path with
``OPENBLAS_CORETYPE=SkylakeX`` set while it loads, is a second instance with the AVX-512
kernels; the environment is restored at once and scipy's own instance is untouched. Its
``cblas_?gemm`` is registered with LLVM by symbol name (so numba's disk cache stays valid in
another process), it runs one thread (the products in a loop are small), and it is checked
against numpy once per process. Where the CPU has no AVX-512, or OpenBLAS already chose
AVX-512 kernels, or anything fails, kernels keep numba's ``np.dot``.

The user's settings come first (``refusal``): ``config.numba_private_blas`` off
(``SYMSCAN_PRIVATE_BLAS=0``), or ``OPENBLAS_CORETYPE`` set, and the copy is neither written
nor loaded. A coretype someone set (older OpenBLAS builds compute wrong results or crash with
some kernels on some CPUs) is never overridden, and a copy loaded with that same coretype
would only repeat scipy's own instance, which reads it too.
"""

from __future__ import annotations

import ctypes
import glob
import os
import shutil

import numpy as np

from symscan.backends.numba.cache import cache_dir, load_kernel
from symscan.config import config

AVX512 = ("avx512f", "avx512dq", "avx512bw", "avx512vl")
_STATE: dict[str, object] = {}


def _scipy_openblas() -> str | None:
    import scipy

    found = glob.glob(os.path.join(os.path.dirname(scipy.__file__), "..", "scipy.libs", "libscipy_openblas*.so"))
    return found[0] if len(found) == 1 else None


def _worth_it(path: str) -> bool:
    """The CPU has AVX-512 and scipy's OpenBLAS did not choose AVX-512 kernels for it."""
    import llvmlite.binding as llvm

    features = llvm.get_host_cpu_features()
    if not all(features.get(f, False) for f in AVX512):
        return False
    import scipy.linalg.cython_blas  # noqa: F401 - scipy's own instance, as numba loads it

    own = ctypes.CDLL(path)  # the loaded instance (same path): its choice of kernels
    own.scipy_openblas_get_corename.restype = ctypes.c_char_p
    return own.scipy_openblas_get_corename().decode().lower() in ("haswell", "zen", "sandybridge")


def refusal() -> str | None:
    """Why the private instance must not be used (the user's settings), or None."""
    if not config.numba_private_blas:
        return "config.numba_private_blas is off"
    if os.environ.get("OPENBLAS_CORETYPE"):
        return f"OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']} is set (never overridden)"
    return None


def register() -> bool:
    """Load the private instance (once per process) and register its gemm symbols."""
    if "ok" in _STATE:
        return bool(_STATE["ok"])
    if refusal() is not None:  # decided again at the next call: the user may change the setting
        return False
    _STATE["ok"] = False
    path = _scipy_openblas()
    if path is None or not _worth_it(path):
        return False
    copy = cache_dir() / "libsymscan_openblas_avx512.so"
    if not copy.exists():
        copy.parent.mkdir(parents=True, exist_ok=True)
        tmp = copy.with_suffix(f".{os.getpid()}.tmp")
        shutil.copyfile(path, tmp)
        os.replace(tmp, copy)
    saved = os.environ.get("OPENBLAS_CORETYPE")
    os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
    try:
        lib = ctypes.CDLL(str(copy), mode=ctypes.RTLD_LOCAL)
    finally:
        if saved is None:
            del os.environ["OPENBLAS_CORETYPE"]
        else:
            os.environ["OPENBLAS_CORETYPE"] = saved
    lib.scipy_openblas_set_num_threads(1)
    import llvmlite.binding as llvm

    for letter in "sd":
        llvm.add_symbol(f"symscan_cblas_{letter}gemm", ctypes.cast(getattr(lib, f"scipy_cblas_{letter}gemm"),
                                                                   ctypes.c_void_p).value)
    _STATE["ok"], _STATE["lib"] = True, lib
    return True


def helper_source(dtype: str) -> str:
    letter = "d" if dtype == "float64" else "s"
    scalar = "double" if dtype == "float64" else "float32"
    return f'''import numpy as np
import numba
from numba import types
from symscan.backends.numba.blas import register

register()
_gemm = types.ExternalFunction("symscan_cblas_{letter}gemm", types.void(
    types.intc, types.intc, types.intc, types.intc, types.intc, types.intc, types.{scalar}, types.voidptr,
    types.intc, types.voidptr, types.intc, types.{scalar}, types.voidptr, types.intc))


@numba.njit(cache=True, nogil=True)
def _layout(x):
    """(the array as given or as a C copy, CBLAS transpose flag, leading dimension)"""
    if x.flags.c_contiguous:
        return np.ascontiguousarray(x), 111, max(x.shape[1], 1)
    if x.flags.f_contiguous:  # a transposed view: its transpose is C-contiguous
        return np.ascontiguousarray(x.T), 112, max(x.shape[0], 1)
    return np.ascontiguousarray(x), 111, max(x.shape[1], 1)


@numba.njit(cache=True, nogil=True)
def matmul_into(a, b, out):
    """out = a @ b for 2-d a and b (out C-contiguous, of shape (a.shape[0], b.shape[1]))."""
    if a.shape[1] != b.shape[0]:
        raise ValueError("dot: the contracted lengths differ")
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    if m == 0 or n == 0:
        return out
    if k == 0:
        out[...] = 0
        return out
    a, trans_a, lda = _layout(a)
    b, trans_b, ldb = _layout(b)
    _gemm(101, trans_a, trans_b, m, n, k, 1.0, a.ctypes.data, lda, b.ctypes.data, ldb, 0.0, out.ctypes.data, n)
    return out


@numba.njit(cache=True, nogil=True)
def matmul(a, b):
    return matmul_into(a, b, np.empty((a.shape[0], b.shape[1]), dtype=np.{dtype}))
'''


def matmul_helper(dtype: str, into: bool = False):
    """The compiled ``matmul`` (or ``matmul_into``) of 2-d float arrays through the private
    instance, or None (kernels then use np.dot)."""
    if refusal() is not None:
        return None
    key = f"checked {dtype}"
    if key not in _STATE:
        _STATE[key] = _checked(dtype) if dtype in ("float32", "float64") else False
    if not _STATE[key]:
        return None
    return load_kernel(helper_source(dtype), "matmul_into" if into else "matmul")


def _checked(dtype: str) -> bool:
    try:
        if not register():
            return False
        matmul = load_kernel(helper_source(dtype), "matmul")
        rng = np.random.default_rng(0)
        a, b = rng.normal(size=(7, 33)).astype(dtype), rng.normal(size=(33, 5)).astype(dtype)
        tolerance = 1e-12 if dtype == "float64" else 1e-5
        return all(np.allclose(matmul(x, y), np.dot(x, y), rtol=tolerance, atol=tolerance)
                   for x, y in ((a, b), (np.asfortranarray(a), b), (a, np.asfortranarray(b)), (a[::2], b[:, ::2])))
    except Exception:  # noqa: BLE001 - any failure: kernels keep numba's np.dot
        return False
