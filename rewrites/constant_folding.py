"""``constant_folding``: a node whose inputs are all constants becomes a constant."""

from __future__ import annotations

import numpy as np

from rewrites.registry import register
from symscan.graph.basic import Constant
from symscan.tensor.basic import constant
from symscan.tensor.random import RandomVariable

MAX_FOLDED_ELEMENTS = 100_000
"""Larger results stay computed: a folded constant lives in the graph (and in exports)."""


@register("constant_folding", phase="canonicalize", tags=("canonicalize",))
def fold_constants(fgraph, node):
    if not node.inputs or not all(isinstance(v, Constant) for v in node.inputs):
        return None
    if node.op.inner_graphs() or isinstance(node.op, RandomVariable):
        return None
    static = [getattr(o.type, "shape", None) for o in node.outputs]
    if any(s is not None and None not in s and int(np.prod(s)) > MAX_FOLDED_ELEMENTS for s in static):
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
