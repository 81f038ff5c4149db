"""Mode jax aborts the whole process (XLA's CPU compiler: ``Check failed ... Invalid binary
instruction opcode map`` in ``AlgebraicSimplifierVisitor::HandleReverse``) compiling the gradient
of ``m[-2:]`` for a loop of two steps, where mode py returns it. The gradient adds the cost's
weights into zeros of the whole output (``IncSubtensor{?:}`` lowered as ``.at[-2:].add``: a
scatter-add with no index dimensions) and then reverses it for the loop's backward pass; XLA
aborts compiling a reverse of such a scatter (pure JAX:
``jax.jit(lambda w: jnp.zeros((2, 2)).at[-2:].add(w)[::-1])``, also ``.at[...]``; jax/jaxlib
0.10.2). The gradient fuzzer (``--grad --modes py jax``) met it in ~3% of its programs (17 of
616), with and without ``until``.

Run: python tests/fuzz/repros/jax_grad_scatter_reverse_aborts.py (exits 1 while the bug is
there; the mode jax call runs in a child process, which the abort kills).
"""

import subprocess
import sys

import numpy as np

import symscan as ss
import symscan.tensor as T

h = T.dvector("h")
m, _ = ss.scan(lambda prev: prev, outputs_info=[h], n_steps=2)
g = ss.grad((m[-2:] * np.array([[0.7, 1.1], [0.9, 1.3]])).sum(), h)
values = [np.ones(2)]
if sys.argv[1:] == ["jax"]:
    print("jax:", ss.function([h], g, mode="jax")(*values))
    sys.exit(0)
print("py:", ss.function([h], g, mode="py")(*values))
child = subprocess.run([sys.executable, __file__, "jax"], capture_output=True, text=True)
print(child.stdout.strip() or f"jax: the process died (exit code {child.returncode}): "
      + next((line for line in child.stderr.splitlines() if "Check failed" in line or "Invalid" in line),
             "")[:200])
sys.exit(0 if child.returncode == 0 else 1)
