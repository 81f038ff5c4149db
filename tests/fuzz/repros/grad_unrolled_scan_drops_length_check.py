"""The forward of a scan with n_steps=1 (or -1: one step, unrolled) over a sequence too short
for its taps raises ValueError in every mode, but its gradient with respect to the initial
value (the sequence itself not differentiated) returns a value in modes "fast" and
"onnxruntime": the rewrites of the canonicalize tag drop the sequence-length check from the
gradient graph (with that tag off, "fast" raises like "py"). A rewrite must not turn an error
into a result.

Found by the gradient fuzzer (tests/fuzz/fuzz_grad.py). Run:
python tests/fuzz/repros/grad_unrolled_scan_drops_length_check.py (exits 1 while the bug is there).
"""

import sys

import numpy as np

import symscan as ss
import symscan.tensor as T

x, h = T.dvector("x"), T.dscalar("h")
# taps [0, 1] need n_steps + 1 = 2 elements; x has 1
out, _ = ss.scan(lambda x_0, x_1, prev: prev + x_0 * x_1, sequences=[dict(input=x, taps=[0, 1])],
                 outputs_info=h, n_steps=1)
cost = out.sum()
g = ss.grad(cost, h)
values = [np.zeros(1), 0.5]
bug = False
for label, options in [("py", dict(mode="py")), ("fast", dict(mode="fast")),
                       ("fast, canonicalize off", dict(mode="fast", rewrites=["-canonicalize"])),
                       ("onnxruntime", dict(mode="onnxruntime"))]:
    for what, output in (("forward", cost), ("gradient", g)):
        try:
            result = f"returns {ss.function([x, h], output, **options)(*values)}"
            bug |= what == "gradient"
            result += "   <- BUG: the forward raises" if what == "gradient" else ""
        except ValueError as err:
            result = f"ValueError: {str(err)[:70]}"
        print(f"{label} {what}: {result}")
sys.exit(1 if bug else 0)
