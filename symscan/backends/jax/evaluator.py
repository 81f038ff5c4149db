"""What ``ss.function`` calls in mode jax: the graph traced once per input signature into one
``jax.jit`` function.

Integer scalars among the inputs are static arguments (a step count or an index decides
shapes, which XLA needs before it runs; each new value traces again). Shared values are
arguments and their updates results, as for the other backends; a random generator enters as
a JAX key (``random.py``). A loop with until, or a length computed from input values, ends a
stage (``graph.StageEnd``). Checks that depend on input values run after XLA
(``graph.Deferred``). float64 graphs need JAX's 64-bit mode: it is switched on when this
backend loads (``jax_enable_x64``), for the whole process.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from symscan.backends.jax import branches, linalg, random  # noqa: F401 - they register their lowerings in the op table
from symscan.backends.jax.graph import StageEnd, Trace, evaluate
from symscan.graph.basic import Apply, Constant, Variable
from symscan.graph.fg import FunctionGraph
from symscan.tensor.random import GeneratorType


def _jax():
    try:
        import jax
    except ImportError as err:
        raise ImportError("mode 'jax' needs jax: pip install 'symscan[jax]' (or pip install jax)") from err
    jax.config.update("jax_enable_x64", True)
    _register_stage_result()
    return jax


class JaxEvaluator:
    """``fgraph`` as a jitted JAX function of its inputs and shared values."""

    def __init__(self, fgraph: FunctionGraph):
        self.jax = _jax()
        _warn_of_profiles(fgraph)
        self.fgraph = fgraph
        self.shared = list(fgraph.shared_variables)
        self.static = tuple(i for i, v in enumerate(fgraph.inputs)
                            if getattr(v.type, "ndim", None) == 0 and np.dtype(v.type.dtype).kind in "iub")
        self._stages: dict[int, _Stage] = {}  # per trace (its key): its checks and its end
        self._views = _views_of_loops(fgraph)
        self._n_inputs = len(fgraph.inputs)
        self._static_argnums = (0,) + tuple(i + 2 for i in self.static)
        self._jitted = self.jax.jit(self._traced, static_argnums=self._static_argnums)

    def __getstate__(self) -> dict:
        """Pickle the graph only: jitted functions and traces do not pickle."""
        return {"fgraph": self.fgraph}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["fgraph"])

    def _traced(self, static_known, known, *values):
        """One stage: the whole graph, or the graph up to where it needs a run's result
        (``graph.StageEnd``: a loop with until, a length computed from input values)."""
        import jax.numpy as jnp

        trace = Trace(staged=True, known=known, static_known=static_known)
        inputs = list(values[:self._n_inputs])
        for i in self.static:
            inputs[i] = np.asarray(inputs[i], dtype=self.fgraph.inputs[i].type.dtype)
        key = len(self._stages)  # the checks' messages stay here; the traced function returns their key
        try:
            outputs = evaluate(self.fgraph, inputs, trace, dict(zip(self.shared, values[self._n_inputs:])))
            stage = _Stage([])
        except StageEnd as end:
            outputs = end.values
            trace.deferred += end.checks
            stage = _Stage([], end.finish, end.static, end.slot, end.loop)
        stage.checks = [(d.message, d.error, d.loop) for d in trace.deferred]
        self._stages[key] = stage
        checked = [(d.conditions, d.step) for d in trace.deferred]
        passed = jnp.all(jnp.stack([d.holds() for d in trace.deferred])) if trace.deferred else None
        return _StageResult(outputs, passed, checked, key)

    def jaxpr(self, *inputs, shared: dict[Variable, object] | None = None) -> str:
        """The program XLA gets for these inputs (its first stage, with loops with until)."""
        args = self._arguments(inputs, shared or {})
        return str(self.jax.make_jaxpr(self._traced, static_argnums=self._static_argnums)((), (), *args))

    def _arguments(self, inputs: Sequence, shared: dict) -> list:
        args = [int(v) if i in self.static else v for i, v in enumerate(inputs)]
        args += [shared[s] for s in self.shared]
        return [random.key_of(v) if isinstance(v, np.random.Generator) else v for v in args]

    def __call__(self, inputs: Sequence, shared: dict[Variable, object] | None = None) -> list:
        shared = shared or {}
        args = self._arguments(inputs, shared)  # (generators as their keys, made once per call)
        static_known: tuple = ()
        known: tuple = ()
        finished: dict = {}  # loops with until that ran to their end: where their outputs are in known
        while True:
            result = self._jitted(static_known, known, *args)
            outputs, stage = result.outputs, self._stages[result.key]
            if result.passed is not None and not bool(result.passed):  # one read of every check
                _raise_the_first_failure(stage.checks, result.checked)
            if stage.finish is None:
                break
            if stage.static:
                static_known += (stage.finish(outputs),)
                continue
            known = known[:stage.slot] + (stage.finish(outputs),)
            if isinstance(known[stage.slot], tuple):
                finished[stage.loop] = stage.slot
            if self._views is not None and all(loop in finished for loop, _, _ in self._views):
                outputs = [_sliced(known[finished[loop]][k], indices) for loop, k, indices in self._views]
                break
        return self._results(outputs, args[self._n_inputs:], [shared[s] for s in self.shared])

    def _results(self, outputs: list, shared_args: list, shared_values: list) -> list:
        """numpy values (XLA's buffers, writable: ``_writable``); a generator as a Generator, a
        copy of the one passed in where its key did not change (nothing drew from it: mode py
        keeps its state)."""
        generators = {np.asarray(key).tobytes(): value for key, value in zip(shared_args, shared_values)
                      if isinstance(value, np.random.Generator)}
        results = []
        for value, var in zip(outputs, self.fgraph.outputs):
            if isinstance(var.type, GeneratorType):
                key = np.asarray(value, dtype=np.uint32)
                same = generators.get(key.tobytes())
                results.append(copy.deepcopy(same) if same is not None else random.generator_of(key))
            else:
                results.append(_writable(value))
        return results


def _sliced(rows: np.ndarray, indices: list) -> np.ndarray:
    for index in indices:
        rows = rows[index]
    return rows


class _Buffer:
    """An XLA result's buffer (or a slice of one: a loop's rows, ``_views_of_loops``) as numpy
    sees it, writable, keeping the result alive. XLA allocated it for this call alone and
    nothing else reads it after, so the caller may own it (every mode's results are writable)
    without the copy ``np.asarray``'s read-only view would need: on W9 that copy was 80 MB per
    call."""

    def __init__(self, view: np.ndarray):
        self._view = view
        self.__array_interface__ = dict(view.__array_interface__, data=(view.__array_interface__["data"][0], False))


def _writable(value) -> np.ndarray:
    """``value`` (a JAX array or a numpy constant) as a writable numpy array; ``Function``
    copies the ones that alias an input, a shared value or another result."""
    view = np.asarray(value)
    if view.flags.writeable:
        return view
    return np.asarray(_Buffer(view)) if view.size else view.copy()


@dataclass
class _StageResult:
    """What a stage's program returns: its outputs, whether all its checks passed (None when
    it has none) and each check's conditions (read only when one failed). The stage's key is
    static pytree data, so finding the stage's record needs no read from the device."""

    outputs: list
    passed: object
    checked: list
    key: int


@functools.cache
def _register_stage_result() -> None:
    import jax

    jax.tree_util.register_dataclass(_StageResult, data_fields=["outputs", "passed", "checked"],
                                     meta_fields=["key"])


@dataclass
class _Stage:
    """What a trace leaves besides its program: its checks' (message, error class, loop), and
    where it ends early (``graph.StageEnd``), what turns its results into the next stage's
    known values."""

    checks: list
    finish: Callable | None = None
    static: bool = False
    slot: int | None = None
    loop: Apply | None = None  # the loop with until the stage ends at


def _views_of_loops(fgraph: FunctionGraph) -> list | None:
    """Per output, (a loop with until, its output's position, the basic slices taken of it),
    when every output is one (W6: a while loop's rows but the first), else None: once those
    loops have run, the outputs are numpy views of their rows, with no stage more to run."""
    from symscan.scan.op import Scan
    from symscan.tensor.subtensor import ELLIPSIS, NONE, Subtensor, build_index

    views = []
    for var in fgraph.outputs:
        indices = []
        while var.owner is not None and isinstance(var.owner.op, Subtensor):
            spec, (x, *parts) = var.owner.op.spec, var.owner.inputs
            basic = all(e in (NONE, ELLIPSIS) or e[0] == "slice" for e in spec)
            if not basic or not all(isinstance(p, Constant) for p in parts):
                return None
            index = build_index(spec, [p.data for p in parts])
            if any(isinstance(i, slice) and i.step == 0 for i in index):
                return None  # (numpy raises on it)
            indices.insert(0, index)
            var = x
        node = var.owner
        if node is None or not isinstance(node.op, Scan) or not node.op.info.as_while:
            return None
        views.append((node, node.outputs.index(var), indices))
    return views


def _raise_the_first_failure(checks: list, checked: list) -> None:
    """mode py's error: the first failed check in the graph's order; of a loop's failed checks,
    the one that failed at the earliest step."""
    failed = [i for i, (conditions, _) in enumerate(checked)
              if not all(bool(np.all(np.asarray(c))) for c in conditions)]
    if not failed:
        return
    first = failed[0]
    loop = checks[first][2]
    if loop is not None:
        first = min((i for i in failed if checks[i][2] == loop), key=lambda i: (int(checked[i][1]), i))
    message, error, _ = checks[first]
    raise error(message)


def _warn_of_profiles(fgraph: FunctionGraph) -> None:
    """XLA runs the function as one program: no loop in it can be timed alone, so a loop built
    with ``profile=True`` runs unprofiled (``f.profile`` is None), as Theano's profile flag
    could be ignored."""
    import warnings

    from symscan.scan.op import Scan

    for node in fgraph.toposort():
        if isinstance(node.op, Scan) and node.op.info.profile:
            warnings.warn(f"mode jax cannot time {node.op} alone (scan(profile=True)): XLA runs the function as "
                          "one program, so f.profile stays None; build it in mode 'fast' to profile it",
                          stacklevel=4)
            return
        for inner in node.op.inner_graphs():
            _warn_of_profiles(inner)
