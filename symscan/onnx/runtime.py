"""mode="onnxruntime": export once, open one onnxruntime session, run it on each call."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from symscan.graph.fg import FunctionGraph
from symscan.onnx.context import failed_check


class OnnxRuntimeEvaluator:
    """Same interface as the other evaluators: (input values, shared values) -> outputs."""

    def __init__(self, function, fgraph: FunctionGraph):
        from symscan.onnx.export import export

        self.model = export(function)
        # The model's inputs, shared variables included: the session lists those that have an
        # initializer only as overridable initializers, and left unfed they would keep the export's value.
        self.input_names = [i.name for i in self.model.graph.input]
        self.shared = fgraph.shared_variables
        self.n_inputs = len(fgraph.inputs)
        self.session = _session(self.model)

    def __getstate__(self) -> dict:
        """Pickle the model, not the onnxruntime session (which does not pickle)."""
        return {key: value for key, value in self.__dict__.items() if key != "session"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.session = _session(self.model)

    def __call__(self, inputs: Sequence, shared: dict | None = None) -> list:
        shared = shared or {}
        values = list(inputs) + [shared[v] for v in self.shared]
        feeds = {name: np.asarray(value) for name, value in zip(self.input_names, values)}
        try:
            return self.session.run(None, feeds)
        except Exception as err:  # onnxruntime's own types; a failed check is scan's ValueError
            message = failed_check(str(err))
            if message is None:
                raise
            raise ValueError(message) from None


def _session(model):
    try:
        import onnxruntime as ort
    except ImportError as err:
        raise ImportError("mode='onnxruntime' needs onnxruntime: pip install 'symscan[onnx]'") from err
    options = ort.SessionOptions()
    # shared variables are inputs with initializers on purpose (no warning), and failures are
    # raised as exceptions (no log of them on stderr)
    options.log_severity_level = 4
    return ort.InferenceSession(model.SerializeToString(), sess_options=options, providers=["CPUExecutionProvider"],
                                disabled_optimizers=DISABLED_OPTIMIZERS)


DISABLED_OPTIMIZERS = ["NoopElimination", "ConstantFolding"]
"""onnxruntime 1.32's NoopElimination removes ``x + 0`` (and ``x * 1``...) and its ConstantFolding
folds a node, both without rewiring the Loop and If bodies that read the node's output from the
enclosing graph: "Missing Input" / "not a graph input" (found by the fuzzers; the model passes
onnx's full check). symscan's canonicalize and constant folding do that work before export."""
