"""A kernel's compile pipeline: numba's own, with LLVM optimising the kernel at a lower level.

A kernel is one large function (a whole loop and its steps) into which numba links the helpers
it calls (fused chains, small products, numpy loops), each already optimised in its own library
at numba's level 3. Module optimisation at level 3 then works through all of it again, in every
kernel: in a cold compile it is the largest part of LLVM's time. Only the kernel's own lowering
runs at ``config.numba_kernel_opt``; the helpers, where the elementwise loops run, keep level 3.
Level 1 cut the LLVM time of the LSTM gradient's kernels by 15-40% and the CPU time of its
cold compile by about 8% (medians of five fresh processes, on a loaded machine), with the
run times of G5, G10, K1 and W4 unchanged (paired medians within 5%). Level 0 is not offered:
numba then cannot cache a kernel (dynamic globals are left in it).
"""

from __future__ import annotations

import functools

from numba.core import config as numba_config
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import register_pass
from numba.core.typed_passes import NativeLowering


@register_pass(mutates_CFG=True, analysis_only=False)
class KernelLowering(NativeLowering):
    """numba's lowering, with its LLVM passes (function and module) at the compiler's level.
    Passes run under numba's global compiler lock, so the level set here is seen by this
    lowering only (and by what it compiles on the way)."""

    _name = "symscan_kernel_lowering"

    def run_pass(self, state):
        saved = numba_config.OPT
        numba_config.OPT = numba_config._OptLevel(state.kernel_opt)
        try:
            return super().run_pass(state)
        finally:
            numba_config.OPT = saved


class KernelCompiler(CompilerBase):
    """numba's nopython pipeline with ``KernelLowering`` in place of its lowering."""

    opt = 1

    def define_pipelines(self):
        self.state.kernel_opt = self.opt
        passes = DefaultPassBuilder.define_nopython_pipeline(self.state)
        passes.passes = [(KernelLowering if cls is NativeLowering else cls, text) for cls, text in passes.passes]
        passes.finalize()
        return [passes]


@functools.cache
def kernel_compiler(level: int) -> type:
    """The pipeline class (``numba.njit(pipeline_class=...)``) optimising at LLVM level ``level``."""
    return type(f"KernelCompilerO{level}", (KernelCompiler,), {"opt": level})
