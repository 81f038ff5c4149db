"""``theano.clone``: ``ss.clone`` with Theano's ``share_inputs=False``, which copies every root.

``ss.clone(share_inputs=False)`` gives the copy fresh input variables but keeps shared variables
and constants (state and values, not structure). Theano copies every root instead: shared
variables become new variables over the same storage (``SharedVariable.alias``: setting one
sets the other), constants new constants, and the graphs of the replacement values are copied
too, so the copy shares no variable with the original or with ``replace``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

from symscan.graph import SharedVariable, Variable, graph_inputs
from symscan.graph.clone import clone as _clone

_DEPRECATED = object()


def clone(output: Variable | Sequence[Variable], replace: Mapping | Sequence | None = None, strict: bool = True,
          share_inputs: bool = True, copy_inputs=_DEPRECATED) -> Variable | list[Variable]:
    """Theano 1.0's ``clone`` (``copy_inputs`` is its deprecated name for ``share_inputs``)."""
    if copy_inputs is not _DEPRECATED:
        warnings.warn("clone(copy_inputs=...) is deprecated: use share_inputs=...", DeprecationWarning, stacklevel=2)
        share_inputs = copy_inputs
    if share_inputs:
        return _clone(output, replace, strict)
    pairs = list(replace.items()) if isinstance(replace, Mapping) else list(replace or [])
    if any(not isinstance(pair, (tuple, list)) or len(pair) != 2 for pair in pairs):
        return _clone(output, replace, strict)  # ss.clone names the malformed entry
    outputs = list(output) if isinstance(output, (list, tuple)) else [output]
    keys = [old for old, _ in pairs if isinstance(old, Variable)]
    values = [new for _, new in pairs if isinstance(new, Variable)]
    variables = [out for out in outputs if isinstance(out, Variable)]
    replaced = set(keys)
    roots = [root for root in graph_inputs(variables, stop_at=replaced) if root not in replaced]
    copies = {root: _copy_root(root) for root in dict.fromkeys(roots + graph_inputs(values))}
    fresh_values = dict(zip(map(id, values), _clone(values, copies))) if values else {}
    fresh_pairs = [(old, fresh_values.get(id(new), new)) for old, new in pairs]
    return _clone(output, list(copies.items()) + fresh_pairs, strict)


def _copy_root(root: Variable) -> Variable:
    if isinstance(root, SharedVariable):
        return root.alias()
    return root.clone()  # a fresh variable, or a constant with the same value (Constant.clone)


__all__ = ["clone"]
