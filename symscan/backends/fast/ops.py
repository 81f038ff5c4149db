"""Emitters for the common tensor ops: Python operators and direct numpy calls."""

from __future__ import annotations

import numpy as np

from symscan.backends import blas_threads
from symscan.backends.fast.codegen import Codegen, emit_perform, emits, scalar_results
from symscan.graph.basic import Constant
from symscan.scan.checks import AfterChecks
from symscan.tensor.assertion import Assert, check_conditions
from symscan.tensor.broadcast import SumToShape, sum_to_shape
from symscan.tensor.creation import Alloc
from symscan.tensor.elemwise import ELEMWISE_FUNCTIONS, Cast, Elemwise
from symscan.tensor.linalg import QR, SVD, Cholesky, Det, Eigh, Eigvalsh, MatrixInverse, Pinv, SlogDet, Solve
from symscan.tensor.math import Dot, MatMul, Reduce
from symscan.tensor.random import RandomVariable
from symscan.tensor.shape import DimShuffle, Join, MakeVector, Shape, SpecifyShape, check_specified_shape
from symscan.tensor.sort import ArgSort, Sort
from symscan.tensor.subtensor import ARRAY, INT, NONE, IncSubtensor, Subtensor

OPERATORS = {"add": "+", "sub": "-", "mul": "*", "true_div": "/", "floor_div": "//", "mod": "%",
             "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "neq": "!=", "and_": "&", "or_": "|",
             "xor": "^"}
"""Python operators that are exactly the numpy ufunc on arrays and numpy scalars. Not ``**``:
numpy's scalar power is a different implementation (float32 17.0 ** 18.0 differs in the last
bit from the ufunc), so pow is always ``np.power``."""

UFUNCS = {"add": "add", "sub": "subtract", "mul": "multiply", "true_div": "true_divide", "pow": "power",
          "maximum": "maximum", "minimum": "minimum", "logaddexp": "logaddexp", "neg": "negative", "exp": "exp",
          "log": "log", "log1p": "log1p", "expm1": "expm1", "sqrt": "sqrt", "sin": "sin", "cos": "cos", "tan": "tan",
          "tanh": "tanh", "abs": "absolute", "sign": "sign", "floor": "floor", "ceil": "ceil",
          "floor_div": "floor_divide", "mod": "mod", "fmod": "fmod"}
"""Elemwise names that are numpy ufuncs (they take ``out=``)."""


def ufunc_call(node, ins: list[str], out: str | None = None) -> str | None:
    name = UFUNCS.get(node.op.name)
    if name is None:
        return None
    extra = f", out={out}" if out else ""
    return f"np.{name}({', '.join(ins)}{extra})"


@emits(Elemwise)
def emit_elemwise(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    name, out = node.op.name, outs[0]
    slot = gen.out_slots.get(node.outputs[0])
    if slot is not None and name in UFUNCS and node.outputs[0].ndim > 0:
        # computed straight into the buffer row (when the loop chose to: rows big enough), and
        # only when broadcasting gives exactly the row's shape
        guard = f"{slot} is not None and " + _fits(node, ins, f"{slot}.shape", size=False)
        gen.line(f"{out} = {ufunc_call(node, ins, slot)} if {guard} else {_plain(node, ins)}")
        return
    position = node.tag.get("inplace")
    if position is not None and node.outputs[0].ndim > 0 and name in UFUNCS:
        # overwrite the input only when broadcasting leaves its shape unchanged
        target = ins[position]
        guard = _fits(node, ins, f"{target}.shape", skip=position)
        gen.line(f"{out} = {ufunc_call(node, ins, target)} if {guard} else {_plain(node, ins)}")
        return
    gen.line(f"{out} = {_plain(node, ins)}")
    if name not in OPERATORS and name not in UFUNCS and name not in ("neg", "invert"):
        scalar_results(gen, node, outs)  # np.where, np.clip, ... give 0-d arrays


IN_PLACE_MIN_SIZE = 1024
"""Smaller arrays are computed into fresh memory: numpy's cached small allocations cost less
than the ``out=`` call and its guard (measured: W5's 50-vectors lose 10 %, W4's 16x128 gain 9 %)."""


def _fits(node, ins: list[str], shape: str, skip: int | None = None, size: bool = True) -> str:
    """A run-time test that the target is large enough to be worth writing into (``size``)
    and every operand broadcasts into ``shape`` without growing it."""
    ndim = node.outputs[0].ndim
    target = shape.removesuffix(".shape")
    tests = [f"{target}.size >= {IN_PLACE_MIN_SIZE}"] if size else []
    for i, (var, name) in enumerate(zip(node.inputs, ins)):
        if i == skip or var.ndim == 0:
            continue
        tests.append(f"{name}.shape == {shape}" if var.ndim == ndim else f"{name}.shape == {shape}[{ndim - var.ndim}:]")
    return " and ".join(tests) or "True"


def _plain(node, ins: list[str]) -> str:
    name = node.op.name
    if name in ("maximum", "minimum") and _same_dtype_scalars(node):
        # np.maximum on numpy scalars costs a ufunc dispatch; a comparison is exact (NaN wins)
        a, b = ins
        cmp = ">=" if name == "maximum" else "<="
        return f"({a} if {a} {cmp} {b} or {a} != {a} else {b})"
    if name in OPERATORS:
        return f"({ins[0]} {OPERATORS[name]} {ins[1]})"
    if name == "neg":
        return f"(-{ins[0]})"
    if name == "invert" and node.outputs[0].ndim == 0 and node.outputs[0].dtype == "bool":
        # ~ on a numpy bool costs a ufunc dispatch (~0.4 us, an imported while loop's until(not c)
        # pays it every step); a truth test ~0.02 us
        return f"(np.False_ if {ins[0]} else np.True_)"
    if name == "invert":
        return f"(~{ins[0]})"
    call = ufunc_call(node, ins)
    if call is not None:
        return call
    return f"{_function(name)}({', '.join(ins)})"



def _function(name: str) -> str:
    """The global name under which ELEMWISE_FUNCTIONS[name] is reachable (see evaluator)."""
    return f"_elemwise_{name}"


def _same_dtype_scalars(node) -> bool:
    out = node.outputs[0]
    return out.ndim == 0 and all(v.ndim == 0 and v.dtype == out.dtype for v in node.inputs)


@emits(Cast)
def emit_cast(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    gen.line(f"{outs[0]} = {ins[0]}.astype({node.op.dtype!r})")


@emits(Dot)
def emit_dot(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    """Inside a loop ``np.dot`` (the loop runs on one BLAS thread); outside, a matrix product
    gets the BLAS threads its size deserves (blas_threads.py)."""
    a, b = node.inputs
    outside = not getattr(gen, "loop_depth", 0) and max(a.ndim, b.ndim) >= 2 and min(a.ndim, b.ndim) >= 1
    if a.ndim <= 2 and b.ndim <= 2:
        gen.line(f"{outs[0]} = {_blas_name(gen, 'dot') if outside else 'np.dot'}({ins[0]}, {ins[1]})")
    elif outside and b.ndim <= 2:  # perform's one flattened product
        perform, bound_node = gen.bind(node.op.perform, "perform"), gen.bind(node, "node")
        size = f"{_blas_name(gen, 'dot_size')}({ins[0]}, {ins[1]})"
        gen.line(f"{outs[0]}, = {_blas_name(gen, 'product')}({perform}, {size}, {bound_node}, [{ins[0]}, {ins[1]}])")
    else:
        emit_perform(gen, node, ins, outs)


@emits(MatMul)
def emit_matmul(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    """``np.matmul`` in loops, else with the BLAS threads each product's size deserves."""
    matmul = _blas_name(gen, "matmul") if not getattr(gen, "loop_depth", 0) else "np.matmul"
    gen.line(f"{outs[0]} = {matmul}({ins[0]}, {ins[1]})")
    scalar_results(gen, node, outs)


def _blas_name(gen: Codegen, function: str) -> str:
    """The global name of ``blas_threads.<function>`` in the generated code."""
    name = f"_blas_{function}"
    gen.namespace.setdefault(name, getattr(blas_threads, function))
    return name


LINALG_CALLS = {MatrixInverse: "np.linalg.inv", Det: "np.linalg.det", SlogDet: "np.linalg.slogdet",
                Solve: "np.linalg.solve"}


@emits(MatrixInverse, Det, SlogDet, Solve)
def emit_linalg(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    """One numpy.linalg call; a singular matrix's LinAlgError gets the node's context from the
    evaluator. (solve_triangular / cho_solve run their ``perform``: scipy, batched there.)"""
    gen.line(f"{', '.join(outs)}{',' * (len(outs) > 1)} = {LINALG_CALLS[type(node.op)]}({', '.join(ins)})")
    scalar_results(gen, node, outs)


@emits(Cholesky)
def emit_cholesky(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    if node.op.lower:
        gen.line(f"{outs[0]} = np.linalg.cholesky({ins[0]})")
    else:  # the upper factor reads a's upper triangle: the lower factor of a^T, transposed
        gen.line(f"{outs[0]} = np.swapaxes(np.linalg.cholesky(np.swapaxes({ins[0]}, -1, -2)), -1, -2)")


DECOMPOSITION_CALLS = {
    Eigh: lambda op, a: f"np.linalg.eigh({a}, UPLO={op.UPLO!r})",
    Eigvalsh: lambda op, a: f"np.linalg.eigvalsh({a}, UPLO={op.UPLO!r})",
    QR: lambda op, a: f"np.linalg.qr({a}, mode={op.mode!r})",
    SVD: lambda op, a: f"np.linalg.svd({a}, full_matrices={op.full_matrices}, compute_uv={op.compute_uv})",
    Pinv: lambda op, a: f"np.linalg.pinv({a})",
}
"""The numpy.linalg call of each decomposition, from the op's options and its input's name."""


@emits(*DECOMPOSITION_CALLS)
def emit_decomposition(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    """One numpy.linalg call, batched as the op's ``perform``; a LinAlgError gets the node's
    context from the evaluator."""
    call = DECOMPOSITION_CALLS[type(node.op)](node.op, ins[0])
    gen.line(f"{', '.join(outs)}{',' * (len(outs) > 1)} = {call}")


@emits(Reduce)
def emit_reduce(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    fn = {"sum": "sum", "prod": "prod", "max": "max", "min": "min", "mean": "mean", "all": "all",
          "any": "any"}[node.op.kind]
    gen.line(f"{outs[0]} = np.{fn}({ins[0]}, axis={node.op.axis!r}, keepdims={node.op.keepdims!r})")


@emits(Sort, ArgSort)
def emit_sort(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    fn = "sort" if isinstance(node.op, Sort) else "argsort"
    gen.line(f"{outs[0]} = np.{fn}({ins[0]}, axis={node.op.axis!r}, kind='stable')")


@emits(Subtensor)
def emit_subtensor(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    gen.line(f"{outs[0]} = {ins[0]}[{index_text(node.op.spec, ins[1:])}]")


def index_text(spec, values: list[str], call: bool = False) -> str:
    """The numpy index of ``spec`` over these value names; ``call``: slices as ``slice(...)``
    objects, for an index passed to a function (``np.add.at``)."""
    values, parts = iter(values), []
    for entry in spec:
        if entry == INT:
            parts.append(next(values))
        elif entry == NONE:
            parts.append("None")
        elif entry[0] == "slice":
            bounds = [next(values) if present else "" for present in entry[1:]]
            if call:
                parts.append(f"slice({', '.join(b or 'None' for b in bounds)})")
            else:
                parts.append(":".join(bounds) if entry[3] else ":".join(bounds[:2]))
        elif entry[0] == "ellipsis":
            parts.append("Ellipsis" if call else "...")
        else:
            parts.append(f"np.asarray({next(values)})")
    return ", ".join(parts) + ("," if len(parts) == 1 else "")


@emits(IncSubtensor)
def emit_inc_subtensor(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    """Into the base itself where the inplace rewrite allowed it (no copy of the base)."""
    if node.tag.get("inplace") != 0:
        emit_perform(gen, node, ins, outs)
        return
    x, y = ins[:2]
    if node.op.set_instead_of_inc:
        gen.line(f"{x}[{index_text(node.op.spec, ins[2:])}] = {y}")
    elif ARRAY in node.op.spec:  # repeated positions accumulate
        index = index_text(node.op.spec, ins[2:], call=True)
        gen.line(f"np.add.at({x}, ({index}), np.asarray({y}, dtype={node.outputs[0].dtype!r}))")
    else:
        gen.line(f"{x}[{index_text(node.op.spec, ins[2:])}] += {y}")
    gen.line(f"{outs[0]} = {x}")


@emits(Alloc)
def emit_alloc(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    """A fill of the constant 0 is ``np.zeros`` (calloc: pages nothing writes are never
    touched), of another scalar ``np.full``; an array value keeps the reference's copy."""
    value, dtype = node.inputs[0], node.outputs[0].dtype
    shape = "(" + "".join(f"int({n}), " for n in ins[1:]) + ")"
    if isinstance(value, Constant) and value.ndim == 0 and value.data == 0 and not np.signbit(value.data):
        gen.line(f"{outs[0]} = np.zeros({shape}, dtype={dtype!r})")
    elif value.ndim == 0:
        gen.line(f"{outs[0]} = np.full({shape}, {ins[0]}, dtype={dtype!r})")
    else:
        emit_perform(gen, node, ins, outs)


@emits(SpecifyShape)
def emit_specify_shape(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    """The reference check (same message), then the input itself (the inplace rewrite knows
    the result is its input: ``rewrites.inplace.VIEW_OPS``)."""
    check, bound_node = gen.bind(check_specified_shape, "check"), gen.bind(node, "node")
    gen.line(f"{check}({bound_node}, {ins[0]}, {ins[1]})")
    gen.line(f"{outs[0]} = {ins[0]}")


def elemwise_namespace() -> dict[str, object]:
    """Globals for the elementwise functions that are not plain operators or ufuncs."""
    return {_function(name): fn for name, (_, fn) in ELEMWISE_FUNCTIONS.items()}


@emits(Assert)
def emit_assert(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    """The reference check (same message), then the value itself (a view op for inplace)."""
    check = gen.bind(check_conditions, "check")
    message, error = gen.bind(node.op.message, "message"), gen.bind(node.op.error, "error")
    gen.line(f"{check}({message}, ({''.join(c + ', ' for c in ins[1:])}), {error})")
    gen.line(f"{outs[0]} = {ins[0]}")


@emits(AfterChecks)
def emit_after_checks(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    gen.line(f"{outs[0]} = {ins[0]}")  # the checks are the other inputs, computed before this line


@emits(SumToShape)
def emit_sum_to_shape(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    """``x`` itself when it has the target shape (the usual case: nothing was broadcast)."""
    fn = gen.bind(sum_to_shape, "sum_to_shape")
    target = f"tuple({ins[1]}.tolist())" if node.op.from_shape else f"np.shape({ins[1]})"
    gen.line(f"{outs[0]} = {ins[0]} if np.shape({ins[0]}) == {target} else {fn}(np.asarray({ins[0]}), {target})")


@emits(Shape)
def emit_shape(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    gen.line(f"{outs[0]} = np.array(np.shape({ins[0]}), dtype=np.int64)")


@emits(MakeVector)
def emit_make_vector(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    gen.line(f"{outs[0]} = np.array([{', '.join(ins)}], dtype=np.{node.op.dtype}).reshape({len(ins)})")


@emits(DimShuffle)
def emit_dimshuffle(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    """A transposed view with axes inserted by indexing; dropping axes (checked) stays generic."""
    op = node.op
    if op.dropped:
        emit_perform(gen, node, ins, outs)
        return
    kept = [a for a in op.new_order if a != "x"]
    value = f"np.asarray({ins[0]})"
    if kept != sorted(kept):
        value += f".transpose({tuple(kept)})"
    if "x" in op.new_order:
        value += "[" + ", ".join("None" if a == "x" else ":" for a in op.new_order) + ",]"
    gen.line(f"{outs[0]} = {value}")


@emits(Join)
def emit_join(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    dtype = node.outputs[0].dtype
    cast = "" if all(v.dtype == dtype for v in node.inputs) else f".astype(np.{dtype}, copy=False)"
    gen.line(f"{outs[0]} = np.concatenate([{', '.join(ins)}], axis={node.op.axis}){cast}")


@emits(RandomVariable)
def emit_random(gen: Codegen, node, ins: list[str], outs: list[str]) -> None:
    """A draw from the generator itself where the inplace rewrite allowed it (its old state
    is read by nothing else); else ``perform``, which draws from a copy."""
    if node.tag.get("inplace") != 0:
        emit_perform(gen, node, ins, outs)
        return
    rng, size, *params = ins
    gen.line(f"{outs[1]} = {gen.bind(node.op.draw, 'draw')}({rng}, {size}, [{', '.join(params)}])")
    gen.line(f"{outs[0]} = {rng}")
