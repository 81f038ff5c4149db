"""The pullback of a fused elementwise chain (``Composite``): the chain's own pullbacks.

The inner graph is spelled out over stand-ins of the node's inputs (so that differentiating
it walks the chain only, not the graph above the node), differentiated with ``grad`` and the
Elemwise pullbacks, and the stand-ins are then replaced by the node's inputs. Where an inner
output has the node's full shape, the node's output stands for it: the gradient reads the
fused result instead of computing the chain again.
"""

from __future__ import annotations

from symscan.gradient.grad import grad
from symscan.gradient.registry import pullback
from symscan.graph.basic import Variable
from symscan.graph.clone import clone_replace
from symscan.graph.traversal import graph_inputs
from symscan.graph.type import TensorType
from symscan.tensor.broadcast import sum_to
from symscan.tensor.composite import Composite


@pullback(Composite)
def composite_pullback(node, cotangents):
    stand_ins = [TensorType(v.dtype, v.type.shape).make_variable(name=v.name) for v in node.inputs]
    chain = clone_replace(node.op.inner.outputs, dict(zip(node.op.inner.inputs, stand_ins)))
    known = {out: sum_to(g, out) for out, g in zip(chain, cotangents) if g is not None}
    if not known:
        return [None] * len(node.inputs)
    grads = grad(None, stand_ins, known_grads=known, disconnected_inputs="ignore", return_disconnected="None",
                 null_gradients="return", add_names=False)
    back = dict(zip(stand_ins, node.inputs))
    back.update({out: fused for out, fused in zip(chain, node.outputs) if _full(out, fused, stand_ins)})
    present = [g for g in grads if isinstance(g, Variable)]
    rebuilt = iter(clone_replace(present, back))
    return [next(rebuilt) if isinstance(g, Variable) else g for g in grads]


def _full(out: Variable, fused: Variable, stand_ins: list) -> bool:
    """``out`` has the fused output's shape: it reads every input that can shape the result."""
    if out.ndim != fused.ndim:
        return False
    read = set(graph_inputs([out]))
    return all(v in read for v in stand_ins if v.ndim > 0)
