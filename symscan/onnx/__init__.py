"""Export to ONNX (Scan and Loop for loops) and running in onnxruntime.

Needs the ``onnx`` extra: ``pip install 'symscan[onnx]'``.
"""

from symscan.onnx.context import ExportError
from symscan.onnx.export import default_opset, export

__all__ = ["ExportError", "default_opset", "export"]
