"""The reference interpreter: topological order, then ``op.perform`` node by node.

It is the oracle every other backend is checked against, so it stays small and checks
that each op returns what its node's type promised.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from symscan.backends.scan_loop import run_scan
from symscan.graph.basic import Apply, Constant, Variable
from symscan.graph.fg import FunctionGraph
from symscan.scan.ifelse import IfElse
from symscan.scan.op import Scan


class ReferenceEvaluator:
    """Evaluate ``fgraph`` for input values (and shared-variable values) one op at a time."""

    def __init__(self, fgraph: FunctionGraph, profile: dict[str, dict] | None = None):
        self.fgraph = fgraph
        self.order = fgraph.toposort()
        # One record per profiled Scan node, nested ones included: bodies share this dict.
        self.profile: dict[str, dict] = {} if profile is None else profile
        self.profile_keys = {node: self._reserve_profile_key(node) for node in self.order
                             if isinstance(node.op, Scan) and node.op.info.profile}
        # Loop bodies get their own evaluator, built once (nested loops recurse here).
        self.bodies = {node: ReferenceEvaluator(node.op.inner, self.profile)
                       for node in self.order if isinstance(node.op, Scan)}
        # Each IfElse's branches too: only the chosen one runs.
        self.branches = {node: [ReferenceEvaluator(g, self.profile) for g in node.op.inner_graphs()]
                         for node in self.order if isinstance(node.op, IfElse)}

    def __call__(self, inputs: Sequence, shared: dict[Variable, object] | None = None) -> list:
        values: dict[Variable, object] = dict(zip(self.fgraph.inputs, inputs, strict=True))
        values.update(shared or {})
        for node in self.order:
            args = [_value_of(v, values) for v in node.inputs]
            try:
                if node in self.bodies:
                    results = self._run_loop(node, args)
                elif node in self.branches:
                    then_branch, else_branch = self.branches[node]
                    results = (then_branch if args[0] else else_branch)(args[1:])
                else:
                    results = node.op.perform(node, args)
            except Exception as err:
                raise with_node_context(err, node) from err
            if len(results) != len(node.outputs):
                raise AssertionError(f"{node.op} returned {len(results)} value(s) for a node with "
                                     f"{len(node.outputs)} output(s): a bug in the op")
            for var, result in zip(node.outputs, results):
                check_value(var, result, node)
                values[var] = result
        return [_value_of(v, values) for v in self.fgraph.outputs]

    def _reserve_profile_key(self, node: Apply) -> str:
        """The scan's name (or "scan"), numbered when two profiled scans share it."""
        base = node.op.info.name or "scan"
        key, count = base, 1
        while key in self.profile:
            count += 1
            key = f"{base} #{count}"
        self.profile[key] = {"calls": 0, "seconds": 0.0}
        return key

    def _run_loop(self, node: Apply, args: list) -> list:
        """Run a Scan node; with ``scan(profile=True)`` record its calls and time."""
        if node not in self.profile_keys:
            return run_scan(node, args, self.bodies[node])
        start = time.perf_counter()
        results = run_scan(node, args, self.bodies[node])
        record = self.profile[self.profile_keys[node]]
        record["calls"] += 1
        record["seconds"] += time.perf_counter() - start
        return results


def _value_of(var: Variable, values: dict):
    if isinstance(var, Constant):
        return var.data
    return values[var]


def check_value(var: Variable, value, node: Apply) -> None:
    """An op returned what its output type promised (dtype, ndim, static lengths)."""
    vtype = var.type
    if not hasattr(vtype, "dtype"):
        return
    # a Python number is no array (and ``None != dtype`` is False: numpy reads None as float64)
    dtype = value.dtype if isinstance(value, (np.ndarray, np.generic)) else None
    shape = np.shape(value)
    if (dtype is None or dtype != vtype.numpy_dtype or len(shape) != vtype.ndim
            or any(s is not None and s != n for s, n in zip(vtype.shape, shape))):
        raise AssertionError(f"{node.op} returned {type(value).__name__} of dtype {dtype} and shape {shape} "
                             f"for an output of type {vtype}: a bug in the op")


def with_node_context(err: Exception, node: Apply) -> Exception:
    """The same kind of error, saying which node failed and on what input types."""
    inputs = ", ".join(f"{v!r}: {v.type}" for v in node.inputs)
    context = f"(while evaluating {node.op} on {inputs})"
    try:
        return type(err)(f"{err} {context}")
    except Exception:
        err.add_note(context) if hasattr(err, "add_note") else None
        return err
