"""Import of ONNX models: ``load(model) -> (inputs, outputs)`` as symscan variables.

One converter per ONNX op type (``context.converts``), in modules by family; Loop, Scan and
If in ``control``. Whatever has no symscan form raises ``ModelImportError`` naming the op and
the node.
"""

from symscan.onnx.importer.context import ModelImportError, StaticInputsNeeded, supported_ops
from symscan.onnx.importer.model import load

__all__ = ["ModelImportError", "StaticInputsNeeded", "load", "supported_ops"]
