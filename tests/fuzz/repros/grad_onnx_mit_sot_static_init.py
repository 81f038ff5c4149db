"""The gradient graph of a mit-sot whose initial value has a static shape with more rows than
its taps need (here 3 rows for tap -2) is an invalid ONNX model: mode "onnxruntime" fails with
"Node input 'slice' is not a graph input, initializer, or output of a previous node", while
modes "py" and "fast" compute it. The forward alone exports fine, and so does the gradient when
the initial value's shape is not static or has exactly the rows the taps need.

Found by the gradient fuzzer (tests/fuzz/fuzz_grad.py). Run:
python tests/fuzz/repros/grad_onnx_mit_sot_static_init.py (exits 1 while the bug is there).
Fixed: the model was valid (onnx's full check passes); onnxruntime's ConstantFolding folded a
node that a Loop body reads, without rewiring the body. Mode "onnxruntime" turns it off.
"""

import sys

import numpy as np

import symscan as ss
import symscan.tensor as T

h = T.tensor("float64", shape=(3,), name="h")  # static: 3 initial rows, tap -2 reads the last 2
out, _ = ss.scan(lambda h_2: 0.5 * h_2, outputs_info=[dict(initial=h, taps=[-2])], n_steps=2)
g = ss.grad(out.sum(), h)

value = np.array([0.3, -0.2, 0.7])
print("forward onnxruntime:", ss.function([h], out, mode="onnxruntime")(value))
expected = ss.function([h], g, mode="py")(value)
print("gradient py:", expected, " fast:", ss.function([h], g, mode="fast")(value))
try:
    got = ss.function([h], g, mode="onnxruntime")(value)
except Exception as err:
    print(f"BUG: gradient onnxruntime: {type(err).__name__}: {err}")
    sys.exit(1)
print("gradient onnxruntime:", got)
sys.exit(0 if np.allclose(got, expected) else 1)
