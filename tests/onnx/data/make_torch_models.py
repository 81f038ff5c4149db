"""Builds the torch-exported ONNX models of tests/onnx/test_import_torch.py (needs torch 2.13:
``.venv/bin/pip install torch==2.13.0``; CI does not run this script, the test reads the files
it wrote):

    .venv/bin/python tests/onnx/data/make_torch_models.py

Each model is ``torch_<name>.onnx`` with ``torch_<name>.npz`` beside it: the example inputs
(``in_<input name>``) and torch's outputs for them (``out_<output name>``), float32 as torch
computes. Every model passes ``onnx.checker.check_model(full_check=True)`` and onnxruntime
reproduces torch's outputs on it.

What torch 2.13's exporters do with loops (found while writing this):

- TorchScript exporter (``torch.onnx.export(..., dynamo=False)``, deprecated but present;
  a ``torch.jit.script`` function or a scripted module): a ``for i in range(x.size(0))`` loop
  and a ``while`` loop become ONNX ``Loop`` (with ``dynamic_axes`` the trip count is
  ``Shape`` -> ``Gather``, else a constant). Per-step results do not become Loop scan outputs:
  ``hs.append(h)`` + ``torch.stack(hs)`` is a loop-carried sequence (``SequenceEmpty``,
  ``SequenceInsert``, ``ConcatFromSequence``); ``out[i] = acc`` into a preallocated tensor
  is a loop-carried tensor updated by ``ScatterND``; ``hs = torch.cat([hs, h[None]])`` is a
  loop-carried tensor that grows each step. A ``torch.jit.script``-ed module whose forward
  takes ``*args`` does not script ("Compiled functions can't take variable number of
  arguments"); a tensor counter ``n += 1`` exports with the warning "ONNX Preprocess -
  Removing mutation from node aten::add_ on block input: 'n.11'. This changes graph
  semantics." (the result is right; the models here count with a Python int).
- torch.export-based exporter (``dynamo=True``, the default): a Python ``for`` loop is unrolled
  at the example's length (``dynamic_shapes`` on the loop's length: ``torch.export.export``
  refuses, "Constraints violated (T)! ... You marked T as dynamic but your code specialized it
  to be a constant (6)", and ``torch.onnx.export`` writes the unrolled model with the input's
  length fixed, ``x: float[6, 3]``); a ScriptFunction is refused ("Expected `mod` to be an instance of
  `torch.nn.Module`, got <class 'torch.jit.torch.jit.ScriptFunction'>").
  ``torch._higher_order_ops.while_loop`` becomes an ONNX ``Loop`` and
  ``torch._higher_order_ops.scan`` an ONNX ``Scan`` with scan outputs (the per-step values,
  with a dynamic length); both are written here too (``torch_dynamo_*``).
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Tuple  # noqa: UP035  (TorchScript reads the annotations)

import numpy as np
import onnx
import onnxruntime as ort
import torch

HERE = Path(__file__).resolve().parent
OPSET = 18


# ---------------------------------------------------------------------------- TorchScript exporter
class ElmanFinal(torch.nn.Module):
    """(a) Elman RNN, the final state: W and U are parameters (initializers in the model)."""

    def __init__(self, n_in: int, n_hidden: int):
        super().__init__()
        self.W = torch.nn.Parameter(torch.randn(n_in, n_hidden) / 2)
        self.U = torch.nn.Parameter(torch.randn(n_hidden, n_hidden) / 3)

    def forward(self, x, h0):
        h = h0
        for i in range(x.size(0)):
            h = torch.tanh(x[i] @ self.W + h @ self.U)
        return h


class ElmanStacked(ElmanFinal):
    """(a) Elman RNN, the final state and every step's, stacked from a list."""

    def forward(self, x, h0) -> Tuple[torch.Tensor, torch.Tensor]:  # noqa: UP006
        h = h0
        hs = []
        for i in range(x.size(0)):
            h = torch.tanh(x[i] @ self.W + h @ self.U)
            hs.append(h)
        return h, torch.stack(hs)


class ElmanCat(ElmanFinal):
    """(a) Elman RNN, the final state and every step's, concatenated as the loop goes."""

    def forward(self, x, h0) -> Tuple[torch.Tensor, torch.Tensor]:  # noqa: UP006
        h = h0
        hs = torch.zeros((0, h0.size(0), h0.size(1)))
        for i in range(x.size(0)):
            h = torch.tanh(x[i] @ self.W + h @ self.U)
            hs = torch.cat([hs, h.unsqueeze(0)], 0)
        return h, hs


@torch.jit.script
def while_doubling(s, limit) -> Tuple[torch.Tensor, int]:  # noqa: UP006
    """(b) double s until its sum reaches limit; n counts the steps."""
    n = 0
    while bool(s.sum() < limit):
        s = s * 2
        n += 1
    return s, n


@torch.jit.script
def cumsum_final(x):
    """(c) a cumulative sum loop, the total only."""
    acc = torch.zeros_like(x[0])
    for i in range(x.size(0)):
        acc = acc + x[i]
    return acc


@torch.jit.script
def cumsum_stacked(x) -> Tuple[torch.Tensor, torch.Tensor]:  # noqa: UP006
    """(c) a cumulative sum loop, every partial sum written into a preallocated tensor."""
    acc = torch.zeros_like(x[0])
    out = torch.zeros_like(x)
    for i in range(x.size(0)):
        acc = acc + x[i]
        out[i] = acc
    return acc, out


# ---------------------------------------------------------------------------- torch.export exporter
class DynamoElmanScan(torch.nn.Module):
    """(a) Elman RNN with torch._higher_order_ops.scan: the final state and every step's."""

    def __init__(self, n_in: int, n_hidden: int):
        super().__init__()
        self.W = torch.nn.Parameter(torch.randn(n_in, n_hidden) / 2)
        self.U = torch.nn.Parameter(torch.randn(n_hidden, n_hidden) / 3)

    def forward(self, x, h0):
        from torch._higher_order_ops.scan import scan

        def step(h, x_t):
            h = torch.tanh(x_t @ self.W + h @ self.U)
            return h, h.clone()

        return scan(step, h0, x)


class DynamoWhileDoubling(torch.nn.Module):
    """(b) with torch._higher_order_ops.while_loop."""

    def forward(self, s, limit):
        from torch._higher_order_ops.while_loop import while_loop

        def cond(s, n):
            return s.sum() < limit

        def body(s, n):
            return s * 2, n + 1

        return while_loop(cond, body, (s, torch.zeros((), dtype=torch.int64)))


class DynamoCumsumScan(torch.nn.Module):
    """(c) with torch._higher_order_ops.scan: the total and every partial sum."""

    def forward(self, x):
        from torch._higher_order_ops.scan import scan

        def step(acc, x_t):
            acc = acc + x_t
            return acc, acc.clone()

        return scan(step, torch.zeros_like(x[0]), x)


# ---------------------------------------------------------------------------- building
def examples() -> list[dict]:
    torch.manual_seed(0)
    T, batch, n_in, n_hidden = 7, 2, 3, 4
    elman_inputs = {"x": torch.randn(T, batch, n_in), "h0": torch.randn(batch, n_hidden) / 2}
    doubling_inputs = {"s": torch.rand(3) + 0.1, "limit": torch.tensor(100.0)}
    cumsum_inputs = {"x": torch.randn(10)}
    time_axis = {"x": {0: "T"}}
    return [
        dict(name="elman_final", model=torch.jit.script(ElmanFinal(n_in, n_hidden)), inputs=elman_inputs,
             outputs=["h"], dynamic_axes=time_axis),
        dict(name="elman_stacked", model=torch.jit.script(ElmanStacked(n_in, n_hidden)), inputs=elman_inputs,
             outputs=["h", "hs"], dynamic_axes=time_axis),
        dict(name="elman_cat", model=torch.jit.script(ElmanCat(n_in, n_hidden)), inputs=elman_inputs,
             outputs=["h", "hs"], dynamic_axes=time_axis),
        dict(name="while_doubling", model=while_doubling, inputs=doubling_inputs, outputs=["s_final", "n"]),
        dict(name="cumsum_final", model=cumsum_final, inputs=cumsum_inputs, outputs=["total"],
             dynamic_axes=time_axis),
        dict(name="cumsum_stacked", model=cumsum_stacked, inputs=cumsum_inputs, outputs=["total", "partial"],
             dynamic_axes=time_axis),
        dict(name="dynamo_elman_scan", model=DynamoElmanScan(n_in, n_hidden), inputs=elman_inputs,
             outputs=["h", "hs"], dynamo=True, dynamic_shapes={"x": {0: torch.export.Dim("T", min=2)}, "h0": None}),
        dict(name="dynamo_while_doubling", model=DynamoWhileDoubling(), inputs=doubling_inputs,
             outputs=["s_final", "n"], dynamo=True),
        dict(name="dynamo_cumsum_scan", model=DynamoCumsumScan(), inputs=cumsum_inputs, outputs=["total", "partial"],
             dynamo=True, dynamic_shapes={"x": {0: torch.export.Dim("T", min=2)}}),
    ]


def export(example: dict, path: Path) -> onnx.ModelProto:
    args = tuple(example["inputs"].values())
    names = list(example["inputs"])
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the TorchScript exporter's deprecation
        if example.get("dynamo"):
            example["model"].eval()
            program = torch.onnx.export(example["model"], args, dynamo=True, opset_version=OPSET, input_names=names,
                                        output_names=example["outputs"], dynamic_shapes=example.get("dynamic_shapes"),
                                        verbose=False)
            program.save(str(path), external_data=False)
        else:
            torch.onnx.export(example["model"], args, str(path), dynamo=False, opset_version=OPSET, input_names=names,
                              output_names=example["outputs"], dynamic_axes=example.get("dynamic_axes"))
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    return model


def torch_outputs(example: dict) -> list[np.ndarray]:
    with torch.no_grad():
        out = example["model"](*example["inputs"].values())
    out = list(out) if isinstance(out, (tuple, list)) else [out]
    return [np.asarray(o.numpy() if isinstance(o, torch.Tensor) else o) for o in out]


def main() -> None:
    logging.getLogger("torch").setLevel(logging.ERROR)
    for example in examples():
        path = HERE / f"torch_{example['name']}.onnx"
        model = export(example, path)
        feeds = {name: t.numpy() for name, t in example["inputs"].items()}
        expected = torch_outputs(example)
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        for name, got, want in zip(example["outputs"], session.run(None, feeds), expected):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"{path.name} {name}")
        np.savez(HERE / f"torch_{example['name']}.npz", **{f"in_{k}": v for k, v in feeds.items()},
                 **{f"out_{k}": v for k, v in zip(example["outputs"], expected)})
        ops = sorted({n.op_type for n in model.graph.node})
        print(f"{path.name}: {path.stat().st_size} bytes, top-level ops {ops}")


if __name__ == "__main__":
    main()
