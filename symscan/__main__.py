"""``python -m symscan demo``: the whole pipeline on the Theano guide's RNN with taps.

Build the loop, print its graph before and after the rewrites (with the rewrite report),
run it in mode "py" and "fast" (and "numba" where installed) and compare with a numpy loop,
export it to ONNX and run it in onnxruntime, import the loop as written back from ONNX and
optimise it (``ss.onnx.optimize``), and print a short table of times.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def _taps_rnn():
    import symscan as ss
    import symscan.tensor as T

    def step(u_tm4, u_t, x_tm3, x_tm1, y_tm1, W, W_in_1, W_in_2, W_feedback, W_out):
        x_t = T.tanh(T.dot(x_tm1, W) + T.dot(u_t, W_in_1) + T.dot(u_tm4, W_in_2) + T.dot(y_tm1, W_feedback))
        return [x_t, T.dot(x_tm3, W_out)]

    Ws = [T.matrix(n) for n in ("W", "W_in_1", "W_in_2", "W_feedback", "W_out")]
    u, x0, y0 = T.matrix("u"), T.matrix("x0"), T.vector("y0")
    (xs, ys), _ = ss.scan(step, sequences=dict(input=u, taps=[-4, 0]),
                          outputs_info=[dict(initial=x0, taps=[-3, -1]), y0], non_sequences=Ws, name="rnn")
    return [u, x0, y0] + Ws, [xs, ys]


def _numpy_rnn(u, x0, y0, W, W_in_1, W_in_2, W_feedback, W_out):
    x, y, xs, ys = list(x0), y0, [], []
    for t in range(4, len(u)):
        x_t = np.tanh(x[-1] @ W + u[t] @ W_in_1 + u[t - 4] @ W_in_2 + y @ W_feedback)
        y = x[-3] @ W_out
        x.append(x_t)
        xs.append(x_t)
        ys.append(y)
    return [np.array(xs), np.array(ys)]


def _timed(fn, values, repeats: int = 5) -> float:
    fn(*values)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*values)
        best = min(best, time.perf_counter() - start)
    return best


def demo() -> int:
    import symscan as ss

    inputs, outputs = _taps_rnn()
    r = np.random.default_rng(0)
    size, steps = 20, 200
    values = ([r.normal(size=(steps + 4, size)), r.normal(size=(3, size)), r.normal(size=size)]
              + [r.normal(size=(size, size)) * 0.2 for _ in range(5)])
    expected = _numpy_rnn(*values)
    py, fast = ss.function(inputs, outputs, mode="py"), ss.function(inputs, outputs, mode="fast")
    print("== the loop as written (mode 'py') ==")
    ss.dprint(py)
    print("== after the rewrites (mode 'fast') ==")
    ss.dprint(fast)
    print(fast.rewrite_report())
    ok = True
    for mode, f in (("py", py), ("fast", fast)):
        match = all(np.allclose(g, e, rtol=1e-10) for g, e in zip(f(*values), expected))
        print(f"mode={mode!r}: matches numpy: {match}")
        ok = ok and match
    times = {"numpy loop": _timed(_numpy_rnn, values), "py": _timed(py, values), "fast": _timed(fast, values)}
    try:
        model = ss.onnx.export(fast)
        ort_f = ss.function(inputs, outputs, mode="onnxruntime")
    except ImportError as err:
        print(f"ONNX export skipped: {err}")
    else:
        loops = sorted({n.op_type for n in model.graph.node if n.op_type in ("Scan", "Loop")})
        match = all(np.allclose(g, e, rtol=1e-9) for g, e in zip(ort_f(*values), expected))
        print(f"exported to ONNX (opset {model.opset_import[0].version}, loop as {', '.join(loops)}); "
              f"onnxruntime matches numpy: {match}")
        ok = ok and match
        times["onnxruntime"] = _timed(ort_f, values)
        ok = _onnx_import_part(py, values, expected, times) and ok
    ok = _numba_part(inputs, outputs, values, expected, times) and ok
    print(f"\n{'system':<14} ms per call ({steps} steps, size {size})")
    for name, seconds in times.items():
        print(f"{name:<14} {seconds * 1e3:8.3f}")
    return 0 if ok else 1


def _onnx_import_part(py, values, expected, times: dict) -> bool:
    """The loop as written, exported, imported back and optimised by symscan, run in onnxruntime."""
    import onnxruntime as ort

    import symscan as ss
    from symscan.onnx.runtime import DISABLED_OPTIMIZERS

    plain = ss.onnx.export(py)
    optimized, report = ss.onnx.optimize(plain, with_report=True)
    print(f"ONNX in, optimised, ONNX out: {report.summary()}")
    session = ort.InferenceSession(optimized.SerializeToString(), providers=["CPUExecutionProvider"],
                                   disabled_optimizers=DISABLED_OPTIMIZERS)
    names = [i.name for i in optimized.graph.input]

    def run(*arrays):
        return session.run(None, dict(zip(names, arrays)))

    match = all(np.allclose(g, e, rtol=1e-9) for g, e in zip(run(*values), expected))
    print(f"onnxruntime on the optimised model matches numpy: {match}")
    times["ort optimised"] = _timed(run, values)
    return match


def _numba_part(inputs, outputs, values, expected, times: dict) -> bool:
    """Mode numba, where the extra is installed: the loop as one compiled kernel."""
    import importlib.util

    import symscan as ss

    if importlib.util.find_spec("numba") is None:
        print("mode 'numba' skipped: numba is not installed (pip install -e \".[numba]\")")
        return True
    f = ss.function(inputs, outputs, mode="numba")
    match = all(np.allclose(g, e, rtol=1e-10) for g, e in zip(f(*values), expected))
    print(f"mode='numba' ({'; '.join(f.backend_report())}): matches numpy: {match}")
    times["numba"] = _timed(f, values)
    return match


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m symscan")
    parser.add_argument("command", choices=["demo"], help="demo: build, optimise, run and export a loop")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo()
    return 2


if __name__ == "__main__":
    sys.exit(main())
