"""Mode jax aborts the whole process (XLA's CPU compiler: ``std::length_error: SmallVector unable
to grow. Requested capacity (18446744073709551615)``) on a running maximum (or product) over a
loop that runs no steps (n_steps=0), where mode py returns an empty (0, 3) array. The vectorize
rewrites turn the loop into ``Accumulate{maximum}``; its lowering (backends/jax/ops.py,
``_accumulate``) concatenates the initial row with zero rows and slices the one row off again
(``concatenate([h[None], x[:0]])[1:]`` through ``lax.associative_scan``), and XLA aborts
compiling that (pure JAX: ``jax.jit(lambda a, b: jnp.concatenate([b[None], a[:0]])[1:])``;
jax/jaxlib 0.10.2). With ``-vectorize``, or for a running sum (``cumsum``), it returns.

Found by the fuzzer (tests/fuzz, ``--modes py jax``: seeds 12159, 22483). Run:
python tests/fuzz/repros/jax_accumulate_zero_steps_aborts.py (exits 1 while the bug is there; the
mode jax call runs in a child process, which the abort kills).
"""

import subprocess
import sys

import numpy as np

import symscan as ss
import symscan.tensor as T

x, h = T.dmatrix("x"), T.dvector("h")
out, _ = ss.scan(lambda x_t, prev: T.maximum(prev, x_t), sequences=[x], outputs_info=[h], n_steps=0)
values = [np.arange(12.0).reshape(4, 3), np.zeros(3)]
if sys.argv[1:] == ["jax"]:
    print("jax:", ss.function([x, h], out, mode="jax")(*values).shape)
    sys.exit(0)
print("py:", ss.function([x, h], out, mode="py")(*values).shape)
child = subprocess.run([sys.executable, __file__, "jax"], capture_output=True, text=True)
print(child.stdout.strip() or f"jax: the process died (exit code {child.returncode}): "
      + (child.stderr.strip().splitlines() or [""])[-1][:200])
sys.exit(0 if child.returncode == 0 else 1)
