"""The pullback of ``maximum`` (and ``minimum``) inside a scan masks the gradient with
``eq(out, x)``, where ``out`` is the output saved by the forward loop and ``x`` the operand
recomputed by the backward loop. When the two computations round differently the mask is
False everywhere and the gradient through that step is lost (or goes to the other operand):

- mode "fast": push_out moves ``dot(W, s)`` out of the backward loop and computes it for all
  steps at once (``np.dot(states, W.T)``), which rounds differently from the forward's per-step
  ``np.dot(W, s)``; with the push_out tag off the gradient is right;
- mode "onnxruntime": ``maximum(tanh(x[t]), x[t-1])`` with a symbolic n_steps: the backward
  loop's ``tanh`` differs from the saved forward value in the last bit.

Mode "py" agrees with central finite differences in both cases. No maximum ties here: the
operands differ by far more than the finite-difference step.

Fixed while the fuzzer was being written: the pullback is now ``[g * ge(x, y), g * ge(y, x)]``
(symscan/gradient/ops/elemwise.py), which no longer compares with the saved output; the script
exits 0, and its two programs are regressions in fuzz_grad_regressions.py.

Found by the gradient fuzzer (tests/fuzz/fuzz_grad.py). Run:
python tests/fuzz/repros/grad_maximum_recomputed_operand.py (exits 1 while the bug is there).
"""

import sys

import numpy as np

import symscan as ss
import symscan.tensor as T


def central(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for k in range(x.size):
        plus, minus = x.copy(), x.copy()
        plus.flat[k] += eps
        minus.flat[k] -= eps
        g.flat[k] = (f(plus) - f(minus)) / (2 * eps)
    return g


bug = False

# 1. mode "fast": y_t = maximum(dot(W, s_(t-2)), -5), the mit-sot s_t = w; d sum(y) / dw
w, h, W = T.dvector("w"), T.dmatrix("h"), T.dmatrix("W")
(y, _), _ = ss.scan(lambda s_2: [T.maximum(T.dot(W, s_2), -5.0), w],
                    outputs_info=[None, dict(initial=h, taps=[-2])], n_steps=4)
cost = y.sum()
g = ss.grad(cost, w)
rng = np.random.default_rng(5)
W_value, w_value, h_value = rng.uniform(-1, 1, (3, 3)), rng.uniform(-1, 1, 3), np.zeros((2, 3))
fd = central(lambda v: ss.function([w, h, W], cost, mode="py")(v, h_value, W_value), w_value)
print("finite differences:", fd)
for label, options in [("py", dict(mode="py")), ("fast", dict(mode="fast")),
                       ("fast, push_out off", dict(mode="fast", rewrites=["-push_out"]))]:
    got = ss.function([w, h, W], g, **options)(w_value, h_value, W_value)
    ok = np.allclose(got, fd, rtol=1e-5, atol=1e-5)
    bug |= not ok
    print(f"{label}: {got}" + ("" if ok else "   <- BUG: differs from finite differences"))

# 2. mode "onnxruntime": y_t = maximum(tanh(x_t), x_(t-1)) with a symbolic n_steps; d sum(y) / dx
x, n = T.dvector("x"), T.iscalar("n")
y2, _ = ss.scan(lambda prev, cur: T.maximum(T.tanh(cur), prev), sequences=[dict(input=x, taps=[-1, 0])], n_steps=n)
cost2 = y2.sum()
g2 = ss.grad(cost2, x)
x_value = np.array([0.9, 0.7, -0.3, 0.2, 0.8])
fd2 = central(lambda v: ss.function([x, n], cost2, mode="py")(v, 4), x_value)
print("finite differences:", fd2)
for mode in ("py", "fast", "onnxruntime"):
    got = ss.function([x, n], g2, mode=mode)(x_value, 4)
    ok = np.allclose(got, fd2, rtol=1e-5, atol=1e-5)
    bug |= not ok
    print(f"{mode}: {got}" + ("" if ok else "   <- BUG: differs from finite differences"))
sys.exit(1 if bug else 0)
