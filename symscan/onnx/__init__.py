"""ONNX: export (Scan and Loop for loops), running in onnxruntime, and import of ONNX models.

Needs the ``onnx`` extra: ``pip install 'symscan[onnx]'``. ``import_function``, ``optimize``
and ``Backend`` compile symscan functions, so they are loaded on first use
(``symscan.onnx.pipeline`` and ``symscan.onnx.backend`` sit above ``symscan.compile``).
"""

from symscan.onnx.context import ExportError
from symscan.onnx.export import default_opset, export
from symscan.onnx.importer import ModelImportError, StaticInputsNeeded, load, supported_ops

_LATER = {"import_function": "symscan.onnx.pipeline", "optimize": "symscan.onnx.pipeline",
          "OptimizeReport": "symscan.onnx.pipeline", "Backend": "symscan.onnx.backend"}


def __getattr__(name: str):
    if name in _LATER:
        import importlib

        return getattr(importlib.import_module(_LATER[name]), name)
    raise AttributeError(f"module 'symscan.onnx' has no attribute {name!r}")


__all__ = ["Backend", "ExportError", "ModelImportError", "OptimizeReport", "StaticInputsNeeded", "default_opset",
           "export", "import_function", "load", "optimize", "supported_ops"]
