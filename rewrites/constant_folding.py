"""``constant_folding``: a node whose inputs are all constants becomes a constant."""

from __future__ import annotations

import numpy as np

from rewrites.registry import register
from symscan.graph.basic import Constant
from symscan.tensor.basic import MAX_FOLDED_ELEMENTS, constant
from symscan.tensor.creation import Arange
from symscan.tensor.random import RandomVariable


def _known_too_big(node) -> bool:
    """Whether a result would have more than MAX_FOLDED_ELEMENTS, judged before computing it.

    The node is typed again now that its inputs are constants (a length folded from
    constants was not static when the node was built), and a float arange is measured by
    hand, so that folding never allocates a huge array at compile time.
    """
    try:
        shapes = [getattr(o.type, "shape", None) for o in node.op.make_node(*node.inputs).outputs]
    except Exception:  # the inputs are invalid: the error stays a run-time one
        return True
    if isinstance(node.op, Arange):
        start, stop, step = (float(v.data) for v in node.inputs)
        length = (stop - start) / step if step else np.inf
        shapes.append((np.inf if not np.isfinite(length) else max(0, int(np.ceil(length))),))
    return any(s is not None and None not in s and np.prod(s, dtype=float) > MAX_FOLDED_ELEMENTS for s in shapes)


@register("constant_folding", phase="canonicalize", tags=("canonicalize",))
def fold_constants(fgraph, node):
    if not node.inputs or not all(isinstance(v, Constant) for v in node.inputs):
        return None
    if node.op.inner_graphs() or isinstance(node.op, RandomVariable):
        return None
    if _known_too_big(node):
        return None
    with np.errstate(all="ignore"):
        try:
            values = node.op.perform(node, [v.data for v in node.inputs])
        except Exception:  # an error stays where the user will meet it: at run time
            return None
    if any(np.size(v) > MAX_FOLDED_ELEMENTS for v in values):
        return None
    return {out: constant(np.asarray(v, dtype=out.type.dtype), name=out.name)
            for out, v in zip(node.outputs, values)}
