"""The op table of mode jax: ``@jax_lowers(OpClass)`` functions ``(node, inputs, trace) ->
outputs`` for nodes with at least one traced input (``graph.py`` computes the others with
numpy). Each result is cast to its node's dtype, so numpy's type promotion (the reference)
decides every dtype, not JAX's."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from symscan.backends.jax.graph import Deferred, NotLowerable, Trace, evaluate, is_traced
from symscan.graph.basic import Apply
from symscan.graph.fg import FunctionGraph
from symscan.scan.checks import AfterChecks, CheckRowShape, CheckSequenceLength, CheckStepShape, InitialRows, StepCount
from symscan.scan.op import Scan
from symscan.scan.recurrences import Accumulate, LinearRecurrence
from symscan.tensor.assertion import Assert
from symscan.tensor.broadcast import SumToShape
from symscan.tensor.composite import Composite
from symscan.tensor.creation import Alloc, Arange
from symscan.tensor.elemwise import Cast, Elemwise
from symscan.tensor.gradient_markers import GradientMarker
from symscan.tensor.math import CumOp, Dot, MatMul, Outer, Reduce
from symscan.tensor.shape import DimShuffle, Flatten, Join, MakeVector, Reshape, Shape, SpecifyShape
from symscan.tensor.subtensor import ARRAY, INT, IncSubtensor, Subtensor, build_index

JAX_OPS: dict[type, Callable] = {}


def jax_lowers(*op_classes: type) -> Callable:
    def register(fn: Callable) -> Callable:
        for cls in op_classes:
            JAX_OPS[cls] = fn
        return fn
    return register


def lower(node: Apply, inputs: list, trace: Trace) -> list:
    """The node's outputs for traced ``inputs``, each of its output's dtype."""
    fn = next((JAX_OPS[cls] for cls in type(node.op).__mro__ if cls in JAX_OPS), None)
    if fn is None:
        raise NotLowerable(f"mode jax cannot lower {node.op} ({type(node.op).__name__}) yet; run this function "
                           "in mode 'fast' or 'numba'")
    results = fn(node, inputs, trace)
    return [_as_type(r, out) for r, out in zip(results, node.outputs, strict=True)]


def _as_type(value, var):
    import jax.numpy as jnp

    dtype = getattr(var.type, "dtype", None)
    if dtype is None or not hasattr(value, "dtype") or value.dtype == np.dtype(dtype):
        return value
    return jnp.asarray(value).astype(dtype)


def _stand_in(value):
    """A numpy array of ``value``'s shape and dtype for an op's own checks of shapes (never
    written or read: its pages are never touched)."""
    if not is_traced(value):
        return value
    return np.empty(value.shape, dtype=value.dtype)


def _checked_shape(node, inputs) -> tuple:
    """The shape of the op's numpy result on stand-ins: numpy's own checks and errors run."""
    return np.shape(node.op.perform(node, [_stand_in(v) for v in inputs])[0])


# ---------------------------------------------------------------------------- elementwise
def _elemwise_functions() -> dict[str, Callable]:
    import jax
    import jax.numpy as jnp
    import jax.scipy.special as special

    def second(a, b):
        return jnp.broadcast_to(b, jnp.broadcast_shapes(jnp.shape(a), jnp.shape(b)))

    def psi(x):  # scipy's poles: -inf at +0, +inf at -0 (XLA gives NaN)
        return jnp.where(x == 0, jnp.where(jnp.signbit(x), jnp.inf, -jnp.inf), special.digamma(x))

    def gammaln(x):  # scipy's -inf at -inf (XLA gives +inf)
        return jnp.where(x == -jnp.inf, -jnp.inf, special.gammaln(x))

    def erfcinv(y):
        return -special.ndtri(y / 2) / np.sqrt(2.0).astype(jnp.result_type(y, np.float32))

    def chi2sf(x, k):
        return special.gammaincc(k / 2, x / 2)

    table = {"second": second, "sigmoid": jax.nn.sigmoid, "softplus": jax.nn.softplus, "erf": special.erf,
             "erfc": special.erfc, "erfinv": special.erfinv, "gammaln": gammaln, "psi": psi,
             "gamma": special.gamma, "erfcinv": erfcinv, "chi2sf": chi2sf,
             "switch": jnp.where, "and_": jnp.bitwise_and, "or_": jnp.bitwise_or, "xor": jnp.bitwise_xor}
    from symscan.tensor.elemwise import ELEMWISE_FUNCTIONS

    for name, (_, fn) in ELEMWISE_FUNCTIONS.items():
        if name not in table and hasattr(jnp, getattr(fn, "__name__", "")):
            table[name] = getattr(jnp, fn.__name__)
    return table


_ELEMWISE: dict[str, Callable] = {}


def elemwise_function(name: str) -> Callable:
    if not _ELEMWISE:
        _ELEMWISE.update(_elemwise_functions())
    if name not in _ELEMWISE:
        raise NotLowerable(f"mode jax has no lowering of the elementwise op {name!r} yet; run this function in "
                           "mode 'fast' or 'numba'")
    return _ELEMWISE[name]


_ROLE_INPUTS = {"switch": 1, "second": 1}
"""Ops whose first inputs are not operands (a condition, a shape to fill): they keep their dtype."""


@jax_lowers(Elemwise)
def _elemwise(node, inputs, trace):
    """Operands are promoted as numpy promotes them (JAX's own rules differ: int64 + float32 is
    float32 there), then the op; integer powers, divisions and remainders keep numpy's results."""
    import jax.numpy as jnp

    name, skip = node.op.name, _ROLE_INPUTS.get(node.op.name, 0)
    _check_broadcast(inputs)
    operands = inputs[skip:]
    dtype = np.result_type(*(np.dtype(v.dtype) for v in operands)) if operands else None
    out = np.dtype(node.outputs[0].dtype)
    if dtype is not None and dtype.kind in "iub" and out.kind in "fc":  # int / int, exp(int): numpy's float
        dtype = out
    if dtype is not None and dtype.kind in "iufcb":
        operands = [jnp.asarray(v).astype(dtype) for v in operands]
    args = list(inputs[:skip]) + operands
    if dtype is not None and dtype.kind in "iu" and name in ("pow", "floor_div", "mod", "fmod"):
        return [_integer_op(name, args, node, trace)]
    return [elemwise_function(name)(*args)]


def _check_broadcast(inputs: list) -> None:
    """numpy's error where the operands' shapes do not broadcast (JAX raises a TypeError)."""
    shapes = [np.shape(v) for v in inputs]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError("operands could not be broadcast together with shapes "
                         + " ".join(str(s).replace(" ", "") for s in shapes)) from None


def _integer_op(name: str, args: list, node, trace: Trace):
    """numpy's integer results: x // 0 and x % 0 are 0, and a negative power raises."""
    import jax.numpy as jnp

    x, y = args
    if name == "pow":
        message = "Integers to negative integer powers are not allowed."
        trace.deferred.append(Deferred(message, ValueError, [jnp.all(y >= 0)]))
        return jnp.power(x, jnp.maximum(y, 0))
    safe = jnp.where(y == 0, jnp.ones_like(y), y)
    result = elemwise_function(name)(x, safe)
    return jnp.where(y == 0, jnp.zeros_like(result), result)


@jax_lowers(Cast)
def _cast(node, inputs, trace):
    return [inputs[0]]  # (lower() casts every result to its node's dtype)


@jax_lowers(Composite)
def _composite(node, inputs, trace):
    import jax.numpy as jnp

    results = evaluate(node.op.inner, list(inputs), trace)
    shape = jnp.broadcast_shapes(*(jnp.shape(v) for v in inputs))
    return [jnp.broadcast_to(r, shape) for r in results]


def _promoted(inputs: list, node) -> list:
    """The inputs in the node's output dtype (numpy computes mixed products and joins there)."""
    import jax.numpy as jnp

    return [jnp.asarray(v).astype(node.outputs[0].dtype) for v in inputs]


# ---------------------------------------------------------------------------- math
@jax_lowers(Reduce)
def _reduce(node, inputs, trace):
    import jax.numpy as jnp

    from symscan.tensor.math import REDUCE_FUNCTIONS

    fn, x = getattr(jnp, REDUCE_FUNCTIONS[node.op.kind]), jnp.asarray(inputs[0])
    if node.op.kind in ("sum", "prod", "mean"):  # numpy sums small ints in int64, means in float64
        x = x.astype(node.outputs[0].dtype)
    return [fn(x, axis=node.op.axis, keepdims=node.op.keepdims)]


@jax_lowers(CumOp)
def _cumulative(node, inputs, trace):
    import jax.numpy as jnp

    x = jnp.asarray(inputs[0]).astype(node.outputs[0].dtype)  # numpy accumulates small ints in int64
    return [getattr(jnp, node.op.kind)(x, axis=node.op.axis)]


@jax_lowers(Dot)
def _dot(node, inputs, trace):
    import jax.numpy as jnp

    return [jnp.dot(*_promoted(inputs, node))]


@jax_lowers(MatMul)
def _matmul(node, inputs, trace):
    import jax.numpy as jnp

    return [jnp.matmul(*_promoted(inputs, node))]


@jax_lowers(Outer)
def _outer(node, inputs, trace):
    import jax.numpy as jnp

    return [jnp.outer(*_promoted(inputs, node))]


# ---------------------------------------------------------------------------- shapes
@jax_lowers(Shape)
def _shape(node, inputs, trace):
    return [np.array(np.shape(inputs[0]), dtype=np.int64)]  # concrete: shapes are static under jit


@jax_lowers(MakeVector)
def _make_vector(node, inputs, trace):
    import jax.numpy as jnp

    return [jnp.stack(_promoted(inputs, node)) if inputs else jnp.zeros(0, dtype=node.outputs[0].dtype)]


def _static_ints(values, what: str, node, trace: Trace) -> tuple:
    """Integers XLA needs before it runs (a length, a shape, a bound): see ``Trace.concrete``."""
    return tuple(int(n) for n in np.atleast_1d(trace.concrete(values, what, node)))


@jax_lowers(Reshape)
def _reshape(node, inputs, trace):
    import jax.numpy as jnp

    shape = np.asarray(_static_ints(inputs[1], "target shape", node, trace), dtype=np.int64)
    return [jnp.reshape(inputs[0], _checked_shape(node, [inputs[0], shape.reshape(np.shape(inputs[1]))]))]


@jax_lowers(Flatten)
def _flatten(node, inputs, trace):
    import jax.numpy as jnp

    return [jnp.reshape(inputs[0], _checked_shape(node, inputs))]


@jax_lowers(DimShuffle)
def _dimshuffle(node, inputs, trace):
    import jax.numpy as jnp

    op, x = node.op, inputs[0]
    kept = [a for a in op.new_order if a != "x"]
    return [jnp.reshape(jnp.transpose(x, kept + list(op.dropped)), _checked_shape(node, inputs))]


@jax_lowers(Join)
def _join(node, inputs, trace):
    import jax.numpy as jnp

    shape = _checked_shape(node, inputs)
    parts = [v for v in _promoted(inputs, node) if np.size(v)]  # (XLA 0.10 aborts on some joins of empty parts)
    return [jnp.concatenate(parts, axis=node.op.axis) if parts else jnp.zeros(shape, dtype=node.outputs[0].dtype)]


@jax_lowers(SumToShape)
def _sum_to_shape(node, inputs, trace):
    import jax.numpy as jnp

    x, like = inputs
    if node.op.from_shape:
        like = trace.concrete(like, "target shape", node)
    shape = _checked_shape(node, [x, like])
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and x.shape[lead + i] != 1)
    return [jnp.reshape(jnp.sum(x, axis=axes), shape) if axes else jnp.reshape(x, shape)]


@jax_lowers(Alloc)
def _alloc(node, inputs, trace):
    import jax.numpy as jnp

    shape = tuple(int(trace.concrete(n, "length", node)) for n in inputs[1:])
    np.broadcast_to(_stand_in(inputs[0]), shape)  # Alloc's perform's errors, without allocating
    return [jnp.broadcast_to(inputs[0], shape)]


@jax_lowers(Arange)
def _arange(node, inputs, trace):
    """Its bounds decide its length: they must be static (``Trace.concrete``)."""
    return node.op.perform(node, [trace.concrete(v, "bounds", node) for v in inputs])


# ---------------------------------------------------------------------------- indexing
def _with_static_bounds(node, values: list, trace: Trace) -> list:
    """``values`` with each slice bound concrete (``Trace.concrete``); ints and arrays may stay traced."""
    it, result = iter(values), []
    for entry in node.op.spec:
        if isinstance(entry, tuple) and entry[0] == "slice":
            result += [trace.concrete(next(it), "slice bounds", node) for present in entry[1:] if present]
        elif entry in (INT, ARRAY):
            result.append(next(it))
    return result


def _index(node, values: list) -> tuple:
    """The index tuple: ints and arrays may be traced, slice bounds are concrete
    (``_with_static_bounds``)."""
    from symscan.tensor.subtensor import ELLIPSIS, NONE

    it, index = iter(values), []
    for entry in node.op.spec:
        if entry == NONE:
            index.append(None)
        elif entry == ELLIPSIS:
            index.append(Ellipsis)
        elif entry[0] == "slice":
            parts = [int(next(it)) if present else None for present in entry[1:]]
            index.append(slice(*parts))
        else:
            value = next(it)
            index.append(value if is_traced(value) else (int(value) if entry == INT else np.asarray(value)))
    return tuple(index)


def _check_indices(node, x, values, trace: Trace) -> None:
    """numpy's index errors: an index known now is checked now; one computed from input values
    is checked after the call (XLA clamps an out-of-range index where numpy raises)."""
    import jax.numpy as jnp

    from symscan.tensor.subtensor import ELLIPSIS, NONE

    if all(not is_traced(v) for v in values):
        _stand_in(x)[build_index(node.op.spec, [np.asarray(v) for v in values])]
        return
    it, axis, in_range = iter(values), 0, []
    for entry in node.op.spec:
        if entry == NONE:
            continue
        if entry == ELLIPSIS:
            raise NotLowerable(f"mode jax cannot lower {node.op} with an ellipsis and traced indices yet")
        if entry[0] == "slice":
            for present in entry[1:]:
                if present:
                    next(it)
        else:
            value, length = next(it), x.shape[axis]
            if is_traced(value):
                holds = (value >= -length) & (value < length)
                in_range.append(holds if jnp.ndim(holds) == 0 else jnp.all(holds))  # one flag, not an array
            elif entry == ARRAY or entry == INT:  # numpy's error, from a stand-in of this axis alone
                np.empty((1,) * axis + (length,), dtype=np.int8)[(slice(None),) * axis + (np.asarray(value),)]
        axis += 1
    if in_range:
        trace.deferred.append(Deferred(f"{node.op}: an index is out of bounds", IndexError, in_range))


@jax_lowers(Subtensor)
def _subtensor(node, inputs, trace):
    import jax.numpy as jnp

    x, *values = inputs
    values = _with_static_bounds(node, values, trace)
    _check_indices(node, x, values, trace)
    return [jnp.asarray(x)[_index(node, values)]]


@jax_lowers(IncSubtensor)
def _inc_subtensor(node, inputs, trace):
    import jax.numpy as jnp

    x, y, *values = inputs
    values = _with_static_bounds(node, values, trace)
    _check_indices(node, x, values, trace)
    index = _index(node, values)
    plain = tuple(entry for entry in index if entry is not None)  # (new axes only shape y)
    block = _contiguous_block(plain, np.shape(x))
    if block is not None:  # a block of x: an update of that block (XLA 0.10 aborts on some such scatters)
        from jax import lax

        old = jnp.asarray(x)[plain]
        indexed_shape = np.broadcast_to(np.empty((), dtype=np.int8), np.shape(x))[index].shape
        new = jnp.broadcast_to(jnp.asarray(y), indexed_shape).reshape(old.shape).astype(old.dtype)
        return [lax.dynamic_update_slice(jnp.asarray(x), new if node.op.set_instead_of_inc else old + new, block)]
    at = jnp.asarray(x).at[index]
    return [at.set(y) if node.op.set_instead_of_inc else at.add(jnp.asarray(y).astype(x.dtype))]


def _contiguous_block(index: tuple, shape: tuple) -> tuple | None:
    """The start of each axis when ``index`` is slices of step 1 only (a block; axes it leaves
    out are whole), else None."""
    if any(not isinstance(entry, slice) for entry in index) or len(index) > len(shape):
        return None
    starts = []
    for entry, length in zip(index, shape):
        start, _, step = entry.indices(length)
        if step != 1:
            return None
        starts.append(start)
    return tuple(starts) + (0,) * (len(shape) - len(index))


# ---------------------------------------------------------------------------- checks
@jax_lowers(GradientMarker, AfterChecks)
def _first_input(node, inputs, trace):
    return [inputs[0]]


@jax_lowers(CheckSequenceLength, CheckStepShape, CheckRowShape, SpecifyShape, StepCount, InitialRows)
def _checked_on_shapes(node, inputs, trace):
    """The op's own check runs on a stand-in for the value it checks (only its shape is read);
    what else it reads (a step count, a shape) must be static (``Trace.concrete``)."""
    n = len(inputs)
    read = {StepCount: range(1), CheckRowShape: range(2, n), SpecifyShape: range(1, n)}.get(type(node.op), ())
    inputs = [trace.concrete(v, "values read", node) if i in read else v for i, v in enumerate(inputs)]
    stand_ins = [_stand_in(v) for v in inputs]
    results = node.op.perform(node, stand_ins)
    if isinstance(node.op, StepCount):
        return results
    if isinstance(node.op, InitialRows):
        import jax.numpy as jnp

        rows = jnp.asarray(inputs[0])[None] if node.op.sit_sot else jnp.asarray(inputs[0])
        return [rows[:results[0].shape[0]]]
    return [inputs[0] if r is stand_ins[0] else r for r in results]


@jax_lowers(Assert)
def _assert(node, inputs, trace):
    x, *conditions = inputs
    known = [c for c in conditions if not is_traced(c)]
    if known:
        node.op.perform(node, [_stand_in(x)] + known)
    traced = [c for c in conditions if is_traced(c)]
    if traced:
        trace.deferred.append(Deferred(node.op.message, node.op.error, traced))
    return [x]


# ---------------------------------------------------------------------------- loops and branches
@jax_lowers(Scan)
def _scan(node, inputs, trace):
    from symscan.backends.jax.loops import run_scan

    return run_scan(node, inputs, trace)


@jax_lowers(Accumulate)
def _accumulate(node, inputs, trace):
    """Rows ``s_0 = initial, s_t = s_(t-1) op values_t`` as one XLA cumulative op (``cumsum``, or
    an associative scan of the op): no loop."""
    import jax.numpy as jnp
    from jax import lax

    from symscan.scan.checks import check_row_shape

    op, (initial, values, steps) = node.op, inputs
    steps = _static_ints(steps, "step count", node, trace)[0]
    initial = jnp.asarray(initial)
    if steps:
        check_row_shape(op.name, op.label, initial.shape, values.shape[1:] if op.per_step else values.shape)
    dtype = np.dtype(node.outputs[0].dtype)
    name = _combining_op(op, dtype)
    if steps == 0:  # (XLA 0.10 aborts on the join with an empty operand, sliced)
        return [initial.astype(dtype) if op.last else initial.astype(dtype)[None]]
    initial = initial.astype(dtype)
    if _sequential_is_faster():
        return [accumulate_in_sequence([(elemwise_function(name), initial, op)], values, steps)[0]]
    operand = jnp.broadcast_to(values if op.per_step else values[None], (steps,) + initial.shape).astype(dtype)
    rows = jnp.concatenate([initial[None], operand])
    rows = jnp.cumsum(rows, axis=0) if name == "add" else lax.associative_scan(elemwise_function(name), rows, axis=0)
    return [rows[-1] if op.last else rows]


def _combining_op(op: Accumulate, dtype: np.dtype) -> str:
    """The elementwise op an Accumulate combines rows with (its logical form for bools)."""
    from symscan.scan.recurrences import _LOGICAL

    return _LOGICAL.get(op.op, op.op) if dtype.kind == "b" else op.op


def _sequential_is_faster() -> bool:
    """On a CPU, XLA's loop of one op per row beats its cumulative ops (a reduce-window or a
    parallel prefix, made for GPUs and TPUs): 0.5 against 0.9 ms for 100,000 sums."""
    import jax

    return jax.default_backend() == "cpu"


def accumulate_in_sequence(accumulations: list, values, steps: int) -> list:
    """Each ``(combine, initial, op)`` of one ``values`` and step count as one ``lax.scan``:
    several accumulations of one sequence (W8's running sum and running max) share its loop."""
    import jax.numpy as jnp
    from jax import lax

    per_step = accumulations[0][2].per_step

    def step(accs, value):
        new = [combine(acc, value if per_step else values).astype(acc.dtype)
               for acc, (combine, _, _) in zip(accs, accumulations)]
        return new, [None if op.last else row for row, (_, _, op) in zip(new, accumulations)]

    lasts, rows = lax.scan(step, [initial for _, initial, _ in accumulations], values[:steps] if per_step else None,
                           length=steps)
    return [last if op.last else jnp.concatenate([initial[None], r])
            for last, r, (_, initial, op) in zip(lasts, rows, accumulations)]


def accumulations_together(order: list) -> dict:
    """On a CPU, per Accumulate node with a time axis, the later ones of the same values and
    step count (lowered with it, in one loop, when their inputs are ready by then)."""
    if not _sequential_is_faster():
        return {}
    groups: dict = {}
    for node in order:
        if isinstance(node.op, Accumulate) and node.op.per_step:
            groups.setdefault((node.inputs[1], node.inputs[2]), []).append(node)
    return {nodes[0]: nodes[1:] for nodes in groups.values() if len(nodes) > 1}


def lower_accumulations(nodes: list, inputs: list, trace: Trace) -> list | None:
    """The outputs (each its node's dtype) of Accumulate ``nodes`` (one values and step count)
    from one loop, or None when each is lowered alone: no step, an operand not traced, or a row
    shape error (raised by its own node, as mode py raises it)."""
    import jax.numpy as jnp

    from symscan.scan.checks import check_row_shape

    values, steps = inputs[0][1], inputs[0][2]
    if not is_traced(values):
        return None
    steps = _static_ints(steps, "step count", nodes[0], trace)[0]
    if not steps:
        return None
    accumulations = []
    for node, (initial, _, _) in zip(nodes, inputs):
        op, dtype = node.op, np.dtype(node.outputs[0].dtype)
        initial = jnp.asarray(initial)
        try:
            check_row_shape(op.name, op.label, initial.shape, values.shape[1:])
        except ValueError:
            return None
        accumulations.append((elemwise_function(_combining_op(op, dtype)), initial.astype(dtype), op))
    return [[out] for out in accumulate_in_sequence(accumulations, values, steps)]


@jax_lowers(LinearRecurrence)
def _recurrence(node, inputs, trace):
    """The scan the op stands for (``op.expand``), lowered as any scan: in sequence, as the loop
    rounds (a parallel prefix would reorder the products)."""
    return evaluate(_expansion(node), list(inputs), trace)


_EXPANSIONS: dict = {}


def _expansion(node) -> FunctionGraph:
    key = (node.op, tuple(v.type for v in node.inputs))
    if key not in _EXPANSIONS:
        inputs = [v.type.make_variable(name=v.name) for v in node.inputs]
        _EXPANSIONS[key] = FunctionGraph(inputs, [node.op.expand(*inputs)], clone=False)
    return _EXPANSIONS[key]
