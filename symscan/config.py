"""Library-wide settings, read when graphs are built (Theano's ``config``)."""

from __future__ import annotations

import os

_FLOAT_DTYPES = ("float32", "float64")


class ScanConfig:
    """Theano's ``config.scan``: ``allow_gc`` is accepted for compatibility (symscan frees loop
    memory after each call either way)."""

    def __init__(self) -> None:
        self.allow_gc = False


THEANO_WARN_FLAGS = {
    "ignore_bug_before": "0.9", "argmax_pushdown_bug": False, "gpusum_01_011_0111_bug": False,
    "sum_sum_bug": False, "sum_div_dimshuffle_bug": False, "subtensor_merge_bug": False,
    "gpu_set_subtensor1": False, "vm_gc_bug": False, "signal_conv2d_interface": False, "reduce_join": False,
    "inc_set_subtensor1": False, "round": False, "inc_subtensor1_opt": True, "identify_1pexp_bug": False,
}
"""Theano 1.0's ``config.warn`` flags and defaults: warnings about bugs of old Theano versions."""


class WarnConfig:
    """Theano's ``config.warn``: its flags are accepted and kept, so that programs that turn
    them off at import time run (symscan never had those bugs, so nothing reads them). A name
    Theano did not have is an AttributeError, reading or setting, so that a typo is not lost."""

    def __init__(self) -> None:
        for name, default in THEANO_WARN_FLAGS.items():
            object.__setattr__(self, name, default)

    def __setattr__(self, name: str, value) -> None:
        if name not in THEANO_WARN_FLAGS:
            raise AttributeError(f"config.warn has no flag {name!r}; Theano's are: {', '.join(THEANO_WARN_FLAGS)}")
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str):  # only called for names that are not set
        raise AttributeError(f"config.warn has no flag {name!r}; Theano's are: {', '.join(THEANO_WARN_FLAGS)}")


class Config:
    """``floatX`` is the dtype of the untyped constructors (``T.vector``, ``T.scalar``, ...);
    ``mode`` is the default of ``function(mode=None)``, as in Theano.

    ``$SYMSCAN_MODE`` sets ``mode`` for a whole process (e.g. to run a test suite in mode
    "numba"), as ``THEANO_FLAGS=mode=...`` did.

    ``numba_after``: seconds a function with loops runs in the default mode before its
    numba version is built in the background to take over (None: never; ``$SYMSCAN_NUMBA_AFTER``,
    "off" for None).

    ``numba_private_blas``: mode numba's kernels multiply matrices through a private copy of
    scipy's OpenBLAS loaded with its AVX-512 kernels, where scipy's own instance chose AVX2 ones
    (symscan/backends/numba/blas.py). False keeps numba's ``np.dot`` (``$SYMSCAN_PRIVATE_BLAS=0``);
    a set ``$OPENBLAS_CORETYPE`` keeps it too, whatever this says. Read when a function is
    compiled; the copy, once loaded, stays loaded in the process.

    ``blas_threads``: how many threads numpy's and scipy's OpenBLAS give a matrix product
    (symscan/backends/blas_threads.py). "auto" (the default): one for small products and for
    the products of a loop, for a large one as many as there are idle cores, and as many for a
    loop whose steps hold large ones (timed on one thread first, kept while they pay); a number
    n: n where auto gives the idle cores, one for the rest; "off" (or 0): symscan never changes
    the library's setting. It only ever lowers the library's count (OPENBLAS_NUM_THREADS,
    OMP_NUM_THREADS and threadpoolctl limits stay ceilings); ``$SYMSCAN_BLAS_THREADS``.

    ``compile_messages``: a numba compile that runs longer than ``compile_message_after``
    seconds says so while it runs (the function, the loop, the time so far: a line on stderr,
    a display in a notebook), and the default mode notes when its background compile takes
    over. False (``$SYMSCAN_QUIET=1``) keeps them all quiet; ``$SYMSCAN_COMPILE_MESSAGE_AFTER``
    sets the delay (default 1 s).

    ``heap_keep``: while a compiled function runs, large arrays come from the heap rather than
    from fresh mmaps, and up to this many bytes of freed heap stay with the process for the next
    call, so large traces are not page-faulted in again at every call (glibc only; see
    symscan/backends/heap.py). Default 1 GiB; 0 or "off" turns it off (``$SYMSCAN_HEAP_KEEP``).

    ``numba_kernel_opt``: the LLVM optimisation level (1 to 3) of mode numba's loop kernels
    themselves; the helpers they call keep numba's level 3 (symscan/backends/numba/pipeline.py).
    The default 1 compiles faster at the same run time; 3 is numba's own
    (``$SYMSCAN_NUMBA_KERNEL_OPT``). Read when a kernel is generated (a kernel's cached machine
    code is kept per level).

    ``debug_checks`` makes the rewriter re-check graph invariants after each rewrite; the
    test suite turns it on.

    ``scan`` and ``warn`` hold Theano's flags of those sections, for programs that set them.
    """

    def __init__(self) -> None:
        self._floatX = "float64"
        self.debug_checks = False
        # the mode function() uses when none is given (a name or a Mode)
        self.mode = os.environ.get("SYMSCAN_MODE") or "fast"
        self.numba_after = _seconds_or_none(os.environ.get("SYMSCAN_NUMBA_AFTER", "0.5"))
        self.numba_private_blas = _on(os.environ.get("SYMSCAN_PRIVATE_BLAS", "1"))
        self.blas_threads = os.environ.get("SYMSCAN_BLAS_THREADS", "auto")
        self.compile_messages = not _on(os.environ.get("SYMSCAN_QUIET", "0"))
        self.compile_message_after = float(os.environ.get("SYMSCAN_COMPILE_MESSAGE_AFTER", "1.0"))
        self.heap_keep = os.environ.get("SYMSCAN_HEAP_KEEP", str(2**30))
        self.numba_kernel_opt = os.environ.get("SYMSCAN_NUMBA_KERNEL_OPT", "1")
        self.scan = ScanConfig()
        self.warn = WarnConfig()

    @property
    def blas_threads(self) -> str | int:
        return self._blas_threads

    @blas_threads.setter
    def blas_threads(self, value: str | int) -> None:
        self._blas_threads = _blas_threads(value)

    @property
    def heap_keep(self) -> int:
        return self._heap_keep

    @heap_keep.setter
    def heap_keep(self, value: str | int) -> None:
        text = str(value).strip().lower()
        if text in ("off", "false", "no"):
            text = "0"
        if not text.isdigit() or int(text) > 2**31 - 1:
            raise ValueError(f"config.heap_keep (or $SYMSCAN_HEAP_KEEP) must be a number of bytes up to 2**31 - 1 "
                             f"(glibc's limit; 0 or 'off' turns it off), got {value!r}")
        self._heap_keep = int(text)

    @property
    def numba_kernel_opt(self) -> int:
        return self._numba_kernel_opt

    @numba_kernel_opt.setter
    def numba_kernel_opt(self, value: int | str) -> None:
        if str(value).strip() not in ("1", "2", "3"):
            raise ValueError(f"config.numba_kernel_opt (or $SYMSCAN_NUMBA_KERNEL_OPT) must be an LLVM optimisation "
                             f"level 1, 2 or 3, got {value!r}: 1 (the default) compiles fastest, 3 is numba's own")
        self._numba_kernel_opt = int(str(value).strip())

    @property
    def floatX(self) -> str:
        return self._floatX

    @floatX.setter
    def floatX(self, value: str) -> None:
        if value not in _FLOAT_DTYPES:
            raise ValueError(f"config.floatX must be one of {_FLOAT_DTYPES}, got {value!r}")
        self._floatX = value


def _on(text: str) -> bool:
    return text.strip().lower() not in ("0", "off", "false", "no")


def _blas_threads(value: str | int) -> str | int:
    """"auto", or a number of threads (0 for "off")."""
    text = str(value).strip().lower()
    if text == "auto":
        return "auto"
    if text == "off":
        return 0
    if text.isdigit():
        return int(text)
    raise ValueError(f"config.blas_threads (or $SYMSCAN_BLAS_THREADS) must be 'auto', 'off' or a number of threads "
                     f"(0 is off), got {value!r}")


def _seconds_or_none(text: str) -> float | None:
    return None if text.strip().lower() in ("off", "none", "") else float(text)


config = Config()
