"""symscan as an ONNX backend (``onnx.backend.base.Backend``): ``prepare(model)`` imports and
compiles the model, ``rep.run(inputs)`` runs it. ONNX's backend test suite drives it.

An input that symscan must know when it builds the graph (a Slice's axes fed as a graph input,
say) makes the model compile once per value of such inputs, as JAX's static arguments do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import onnx
from onnx.backend.base import Backend as OnnxBackend
from onnx.backend.base import BackendRep, namedtupledict

from symscan.onnx.importer import StaticInputsNeeded
from symscan.onnx.importer.model import as_model
from symscan.onnx.pipeline import import_function


class SymscanRep(BackendRep):
    """A prepared model: compiled functions keyed by the values of its static inputs."""

    def __init__(self, model: onnx.ModelProto, mode=None):
        self.model, self.mode = model, mode
        defaults = {t.name for t in model.graph.initializer}
        self.input_names = [i.name for i in model.graph.input if i.name not in defaults]
        self.output_names = [o.name for o in model.graph.output]
        self.static_names: list[str] = []
        self.functions: dict = {}
        self._function_for({})  # import errors show at prepare; static inputs wait for their values

    def _function_for(self, values: dict):
        key = tuple((name, values[name].dtype.str, values[name].shape, values[name].tobytes())
                    for name in self.static_names if name in values)
        if key in self.functions:
            return self.functions[key]
        while True:
            static = {name: values[name] for name in self.static_names if name in values}
            if len(static) < len(self.static_names):
                return None  # prepare: the static inputs' values come with run()
            try:
                function = import_function(self.model, mode=self.mode, static_inputs=static)
            except StaticInputsNeeded as err:
                new = [n for n in err.input_names if n not in self.static_names]
                if not new:
                    raise
                self.static_names += new
                continue
            self.functions[key] = function
            return function

    def run(self, inputs, **kwargs) -> tuple:
        """``inputs``: a list in the model's input order (inputs with initializers left out), or a
        dict by name."""
        if isinstance(inputs, Mapping):
            values = {name: np.asarray(v) for name, v in inputs.items()}
        else:
            values = {name: np.asarray(v) for name, v in zip(self.input_names, _as_list(inputs))}
        missing = [name for name in self.input_names if name not in values]
        if missing:
            raise ValueError(f"run: no value for the model inputs {missing}; feed every input "
                             f"({self.input_names}) in order, or a dict by name")
        function = self._function_for(values)
        fed = [values[name] for name in self.input_names if name not in self.static_names]
        outputs = function(*fed)
        return namedtupledict("Outputs", self.output_names)(*[np.asarray(v) for v in outputs])


def _as_list(inputs) -> list:
    return list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]


class Backend(OnnxBackend):
    """symscan as an ONNX backend; ``mode`` (``prepare(model, mode="numba")``) as in ``ss.function``."""

    @classmethod
    def prepare(cls, model, device: str = "CPU", mode=None, **kwargs) -> SymscanRep:
        if not cls.supports_device(device):
            raise ValueError(f"symscan runs on the CPU; device {device!r} is not supported")
        return SymscanRep(as_model(model), mode=mode)

    @classmethod
    def is_compatible(cls, model, device: str = "CPU", **kwargs) -> bool:
        try:
            cls.prepare(model, device)
        except (NotImplementedError, TypeError, ValueError):
            return False
        return True

    @classmethod
    def run_node(cls, node: onnx.NodeProto, inputs: Sequence, device: str = "CPU", outputs_info=None,
                 opset_version: int | None = None, **kwargs) -> tuple:
        """One node on its inputs (a model of that node alone, typed from the input values)."""
        values = [np.asarray(v) for v in inputs]
        declared = [onnx.helper.make_tensor_value_info(name, onnx.helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
                    for name, v in zip(node.input, values) if name]
        results = [onnx.helper.make_tensor_value_info(name, onnx.TensorProto.UNDEFINED, None) for name in node.output]
        graph = onnx.helper.make_graph([node], "run_node", declared, results)
        opset = opset_version or onnx.defs.onnx_opset_version()
        model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)])
        return cls.prepare(model, device, **kwargs).run([v for name, v in zip(node.input, values) if name])

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device.upper().startswith("CPU")


prepare = Backend.prepare
run_model = Backend.run_model
run_node = Backend.run_node
supports_device = Backend.supports_device
