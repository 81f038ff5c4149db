"""The numba op table: emitters writing code that numba compiles (inside a loop kernel).

Numba types scalars by its own rules (int32 + int32 is int64 there), so every 0-d result is
converted to its symscan dtype (``np.float32(...)``: free when the type already agrees), and
the state a loop carries keeps its dtype. An op, or a form of an op, without an emitter here
raises ``NotCompilable``: the loop then runs in the fast evaluator, with the reason reported.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from symscan.backends.fast.codegen import emits
from symscan.backends.numba import small, step_arrays
from symscan.backends.numba.blas import matmul_helper
from symscan.backends.numba.reductions import KINDS
from symscan.backends.numba.special import COMPLEX_PARTS, SPECIAL_NAMES, special_expression
from symscan.backends.numba.ufuncs import numpy_loop
from symscan.graph.basic import Constant
from symscan.scan.args import SequenceEntry
from symscan.scan.checks import AfterChecks, StepCount
from symscan.tensor.assertion import Assert
from symscan.tensor.broadcast import SumToShape
from symscan.tensor.creation import Alloc, Arange
from symscan.tensor.elemwise import Cast, Elemwise
from symscan.tensor.linalg import QR, SVD, Cholesky, Det, Eigh, Eigvalsh, MatrixInverse, Pinv, SlogDet, Solve
from symscan.tensor.math import Dot, MatMul, Outer, Reduce
from symscan.tensor.random import RandomVariable
from symscan.tensor.shape import DimShuffle, Join, MakeVector, Shape, SpecifyShape
from symscan.tensor.sort import ArgSort, Sort
from symscan.tensor.subtensor import INT, NONE, IncSubtensor, Subtensor

NUMBA_EMITTERS: dict[type, Callable] = {}


class NotCompilable(Exception):
    """The loop has something numba cannot run as written here; the message says what."""


def numba_emits(*op_classes: type) -> Callable:
    return emits(*op_classes, table=NUMBA_EMITTERS)


def refuse(gen, node, ins, outs) -> None:
    """The table's fallback: an op without a numba emitter."""
    raise NotCompilable(f"no numba form for {node.op}")


OPERATORS = {"add": "+", "sub": "-", "mul": "*", "true_div": "/", "floor_div": "//", "mod": "%",
             "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "neq": "!=", "and_": "&", "or_": "|",
             "xor": "^"}
UFUNCS = {"pow": "power", "maximum": "maximum", "minimum": "minimum", "logaddexp": "logaddexp", "exp": "exp",
          "log": "log", "log1p": "log1p", "expm1": "expm1", "sqrt": "sqrt", "sin": "sin", "cos": "cos",
          "tan": "tan", "tanh": "tanh", "abs": "absolute", "sign": "sign", "floor": "floor", "ceil": "ceil",
          "fmod": "fmod", "isinf": "isinf", "isnan": "isnan", "arcsin": "arcsin", "arccos": "arccos",
          "arctan": "arctan", "arctanh": "arctanh"}
"""Elemwise names numba implements as the numpy ufunc, on arrays and on scalars."""


def as_dtype(expr: str, dtype: str) -> str:
    """A scalar expression converted to a symscan dtype (numba's own promotion differs)."""
    return f"np.{'bool_' if dtype == 'bool' else dtype}({expr})"


def _scalar(var) -> bool:
    return var.type.ndim == 0


@numba_emits(Elemwise)
def emit_elemwise(gen, node, ins: list[str], outs: list[str]) -> None:
    name, out = node.op.name, node.outputs[0]
    scalars = all(_scalar(v) for v in node.inputs)
    _check_numba_dtypes(node)
    ins = _cast_operands(node, ins)
    if name in OPERATORS:
        expr = f"({ins[0]} {OPERATORS[name]} {ins[1]})"
    elif name == "neg":
        expr = f"(-{ins[0]})"
    elif name == "invert":
        expr = f"(~{ins[0]})"
    elif name in UFUNCS and step_arrays.buffer_row(gen, out) is not None and \
            (helper := _numpy_loop(gen, node, into=True)):
        operand = ins[0]
        if not operand.isidentifier():  # (an inlined expression: computed once)
            operand = gen.fresh()
            gen.line(f"{operand} = {ins[0]}")
        step_arrays.into_buffer_row(gen, out, outs[0], f"{operand}.shape")  # the row it is stored in
        gen.line(f"{helper}({operand}, {outs[0]})")
        return
    elif name in UFUNCS and (helper := _numpy_loop(gen, node)):
        expr = f"{helper}({ins[0]})"
    elif name in UFUNCS:
        expr = f"np.{UFUNCS[name]}({', '.join(ins)})"
    elif name == "switch":
        expr = f"({ins[1]} if {ins[0]} else {ins[2]})" if scalars else f"np.where({', '.join(ins)})"
    elif name == "sigmoid" and out.dtype.startswith("float") and node.inputs[0].dtype == out.dtype:
        expr = _sigmoid(gen, node, ins[0])
    elif name == "clip":  # numpy's definition, NaN included
        expr = f"np.minimum(np.maximum({ins[0]}, {ins[1]}), {ins[2]})"
    elif name == "second" and scalars:
        expr = ins[1]
    elif name == "second" and node.inputs[1].ndim == 0:  # fill: the scalar in a's shape
        expr = f"np.full({ins[0]}.shape, {as_dtype(ins[1], out.dtype)})"
    elif name in SPECIAL_NAMES:
        expr = special_expression(gen, node, ins)
    elif name == "second" and node.inputs[0].ndim == node.inputs[1].ndim:  # b broadcast to both shapes
        value = gen.fresh("fill")
        gen.line(f"{value} = {ins[1]}")
        gen.line(f"{outs[0]} = np.empty(np.broadcast_shapes({ins[0]}.shape, {value}.shape), dtype=np.{out.dtype})")
        gen.line(f"{outs[0]}[...] = {value}")
        return
    else:
        raise NotCompilable(f"no numba form for {node.op} on {[str(v.type) for v in node.inputs]}")
    if out.type.ndim == 0:
        expr = as_dtype(expr, out.dtype)
    gen.assign(node, outs[0], expr)


COMPARISONS = ("lt", "le", "gt", "ge", "eq", "neq")
PREDICATES = ("isinf", "isnan")
"""Boolean results of operands that keep their own dtype."""


def _check_numba_dtypes(node) -> None:
    """What numba would compute differently from numpy: half floats and complex numbers (no
    numba arithmetic), an integer power (numpy refuses negative exponents, numba returns
    garbage), the sign of unsigned ints (numba wraps it)."""
    name, dtypes = node.op.name, [v.dtype for v in node.inputs + node.outputs]
    if name in COMPLEX_PARTS and "float16" not in dtypes:  # numba's np.real/imag/angle are exact
        return
    if any(d == "float16" or d.startswith("complex") for d in dtypes):
        raise NotCompilable(f"{node.op} on {dtypes}: numba has no float16/complex arithmetic here")
    if name == "pow" and not node.outputs[0].dtype.startswith("float"):
        raise NotCompilable("an integer power (numpy checks the exponent's sign)")
    if name == "sign" and node.inputs[0].dtype.startswith(("uint", "bool")):
        raise NotCompilable("sign of unsigned values")


def _cast_operands(node, ins: list[str]) -> list[str]:
    """Operands converted to the dtype numpy computes in (the result's; for a comparison the
    operands' common dtype), before the op: numba would compute float32 ** int32 in float32
    and only then widen."""
    import numpy as np

    name = node.op.name
    if name in COMPLEX_PARTS or name in PREDICATES:  # the complex input, or the float operand, as it is
        return ins
    if name in COMPARISONS:
        target = np.result_type(*[v.dtype for v in node.inputs]).name
    else:
        target = node.outputs[0].dtype
    skip = {0} if name in ("switch", "second") else set()
    cast = []
    for i, (var, text) in enumerate(zip(node.inputs, ins)):
        if i in skip or var.dtype == target:
            cast.append(text)
        elif var.ndim == 0:
            cast.append(as_dtype(text, target))
        else:
            cast.append(f"{text}.astype(np.{'bool_' if target == 'bool' else target})")
    return cast


def _sigmoid(gen, node, x: str) -> str:
    """The reference's stable form: 1 / (1 + e) for x >= 0, e / (1 + e) below, e = exp(-|x|)
    (numpy's own exp loop on arrays)."""
    out, e = node.outputs[0], gen.fresh("e")
    one = as_dtype("1", out.dtype)
    if out.ndim == 0:
        gen.line(f"{e} = np.exp(-abs({x}))")
        return f"({one} / ({one} + {e}) if {x} >= 0 else {e} / ({one} + {e}))"
    exp = "np.exp" if numpy_loop("exp", out.dtype) is None else _module_loop(gen, "exp", out.dtype)
    gen.line(f"{e} = {exp}(-np.abs({x}))")
    return f"np.where({x} >= 0, {one} / ({one} + {e}), {e} / ({one} + {e}))"


def _module_loop(gen, name: str, dtype: str, into: bool = False) -> str:
    """A module-level name for numpy's ``name`` loop (``ufuncs.numpy_loop``), defined once."""
    local = f"_npy_{name}_{dtype}" + ("_into" if into else "")
    line = f"{local} = numpy_loop({name!r}, {dtype!r}{', True' if into else ''})"
    if line not in gen.module_lines:
        gen.module_lines += ["from symscan.backends.numba.ufuncs import numpy_loop", line]
    return local


def _numpy_loop(gen, node, into: bool = False) -> str | None:
    """The module-level name of numpy's own loop for a unary float op on an array (see
    ``ufuncs``; ``into``: the variant writing into a given array), or None."""
    x, out = node.inputs[0], node.outputs[0]
    if len(node.inputs) != 1 or out.ndim == 0 or x.dtype != out.dtype or numpy_loop(node.op.name, out.dtype) is None:
        return None
    return _module_loop(gen, node.op.name, out.dtype, into)


@numba_emits(Cast)
def emit_cast(gen, node, ins: list[str], outs: list[str]) -> None:
    dtype = node.op.dtype
    if node.outputs[0].type.ndim == 0:
        gen.line(f"{outs[0]} = {as_dtype(ins[0], dtype)}")
    else:
        gen.line(f"{outs[0]} = {ins[0]}.astype(np.{'bool_' if dtype == 'bool' else dtype})")


SMALL_PRODUCTS = {(2, 2): "matmul", (2, 1): "matvec", (1, 2): "vecmat", (1, 1): "vdot"}
"""The loop form of a product by the operands' ndims (``small.py``)."""


@numba_emits(Dot, MatMul)
def emit_dot(gen, node, ins: list[str], outs: list[str]) -> None:
    """A float64 product of a size ``small.small_product`` accepts (known at run time) loops in
    the kernel; a larger one calls BLAS (the private instance for two matrices, see blas.py)."""
    a, b = node.inputs
    dtype = node.outputs[0].dtype
    if not (dtype in ("float32", "float64") and 1 <= a.ndim <= 2 and 1 <= b.ndim <= 2):
        raise NotCompilable(f"{node.op} of {a.type} and {b.type}: numba's dot takes 1-d/2-d floats")
    # numpy converts both operands to the result's dtype first, then multiplies in it
    a_name, b_name = (name if var.dtype == dtype else f"{name}.astype(np.{dtype})"
                      for var, name in zip(node.inputs, ins))
    expr = f"np.dot({a_name}, {b_name})"
    matmul = a.ndim == b.ndim == 2 and matmul_helper(dtype) is not None
    looped = f"{small_module(gen)}.{SMALL_PRODUCTS[a.ndim, b.ndim]}({a_name}, {b_name})"
    if node.outputs[0].ndim == 0:
        expr = as_dtype(expr, dtype)
        looped = as_dtype(looped, dtype)
    elif b.ndim == 2 and _dot_into_kept(gen, node, a_name, b_name, outs[0], matmul):
        return
    elif matmul:
        expr = f"{_module_matmul(gen, dtype)}({a_name}, {b_name})"
    if dtype not in small.DTYPES:
        gen.line(f"{outs[0]} = {expr}")
        return
    gen.line(f"if {small_module(gen)}.small_product({a_name}, {b_name}):")
    gen.line(f"    {outs[0]} = {looped}")
    gen.line("else:")
    gen.line(f"    {outs[0]} = {expr}")


def small_module(gen) -> str:
    """The module-level name of ``small.py`` in a kernel's module."""
    _import_helpers(gen, "small")
    return "_small"


def _module_matmul(gen, dtype: str, into: bool = False) -> str:
    """A module-level name for the private BLAS's product (``blas.matmul_helper``)."""
    local = f"_matmul_{dtype}" + ("_into" if into else "")
    line = f"{local} = matmul_helper({dtype!r}{', True' if into else ''})"
    if line not in gen.module_lines:
        gen.module_lines += ["from symscan.backends.numba.blas import matmul_helper", line]
    return local


def _dot_into_kept(gen, node, a: str, b: str, out: str, matmul: bool) -> bool:
    """A product into an array the kernel keeps (its buffer row, a carried or a scratch array:
    ``step_arrays.place``); False (nothing written) where it needs a new array."""
    ndim, dtype = node.outputs[0].ndim, node.outputs[0].dtype
    shape = f"({a}.shape[0], {b}.shape[1])" if ndim == 2 else f"({b}.shape[1],)"
    if not step_arrays.place(gen, node.outputs[0], out, shape, dtype):
        return False
    if dtype in small.DTYPES:
        gen.line(f"if {small_module(gen)}.small_product({a}, {b}):")
        gen.line(f"    {small_module(gen)}.{'matmul' if ndim == 2 else 'vecmat'}_into({a}, {b}, {out})")
        gen.line("else:")
        gen.indent += 1
    if matmul:
        gen.line(f"{_module_matmul(gen, dtype, True)}({a}, {b}, {out})")
    else:
        gen.line(f"np.dot({a}, {b}, {out})")
    if dtype in small.DTYPES:
        gen.indent -= 1
    return True


@numba_emits(Reduce)
def emit_reduce(gen, node, ins: list[str], outs: list[str]) -> None:
    op, x, out = node.op, node.inputs[0], node.outputs[0]
    fn = {"sum": "sum", "prod": "prod", "max": "max", "min": "min", "mean": "mean", "all": "all", "any": "any"}
    whole = op.axis is None or tuple(sorted(op.axis)) == tuple(range(x.ndim))
    if x.ndim == 0 and not op.keepdims and op.kind in fn:  # the value itself, in the result's dtype
        gen.line(f"{outs[0]} = {as_dtype(ins[0], out.dtype)}")
        return
    if whole and not op.keepdims and x.ndim > 0:
        gen.line(f"{outs[0]} = {as_dtype(f'np.{fn[op.kind]}({ins[0]})', out.dtype)}")
        return
    if whole and x.ndim > 0 and op.kind in fn:  # keepdims: the value in an array of ones' shape
        value = as_dtype(f"np.{fn[op.kind]}({ins[0]})", out.dtype)
        gen.line(f"{outs[0]} = np.full({(1,) * x.ndim!r}, {value}, dtype=np.{out.dtype})")
        return
    if op.kind == "sum" and not op.keepdims and len(op.axis) == 1 and x.ndim > 1 and x.dtype.startswith("float"):
        gen.line(f"{outs[0]} = np.sum({ins[0]}, axis={op.axis[0]})")
        return
    if op.kind in KINDS and x.ndim == 2 and len(op.axis) == 1 and x.dtype != "bool" \
            and not x.dtype.startswith("complex") and x.dtype != "float16":
        _reduce_matrix(gen, node, ins[0], outs[0])
        return
    raise NotCompilable(f"no numba form for {op} of {x.type}")


def _reduce_matrix(gen, node, x: str, out: str) -> None:
    """One axis of a matrix reduced by ``reductions.reduce_matrix_into`` (keepdims: a view)."""
    op, dtype = node.op, node.outputs[0].dtype
    axis = op.axis[0] % 2
    _import_reductions(gen)
    reduced = gen.fresh("reduced") if op.keepdims else out
    gen.line(f"{reduced} = np.empty({x}.shape[{1 - axis}], dtype=np.{dtype})")
    gen.line(f"_reductions.reduce_matrix_into({x}, {axis}, {KINDS[op.kind]}, {reduced})")
    if op.keepdims:
        gen.line(f"{out} = {reduced}[None, :]" if axis == 0 else f"{out} = {reduced}[:, None]")


SORTABLE = ("float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


@numba_emits(Sort, ArgSort)
def emit_sort(gen, node, ins: list[str], outs: list[str]) -> None:
    """numba's argsort takes a 1-d array; its mergesort is numpy's stable order (NaN last), and
    the sorted values are taken through it, so that signed zeros keep their order as numpy's
    stable sort does (numba's np.sort is a quicksort)."""
    x = node.inputs[0]
    if x.ndim != 1 or x.dtype not in SORTABLE:
        raise NotCompilable(f"{node.op} of {x.type}: numba's argsort takes a 1-d array of ints or floats")
    order = f"np.argsort({ins[0]}, kind='mergesort')"
    if isinstance(node.op, Sort):
        gen.line(f"{outs[0]} = {ins[0]}[{order}]")
    else:
        gen.line(f"{outs[0]} = {order}.astype(np.int64)")


@numba_emits(Subtensor)
def emit_subtensor(gen, node, ins: list[str], outs: list[str]) -> None:
    gen.line(f"{outs[0]} = {ins[0]}[{basic_index(gen, node, ins[1:])}]")
    if node.outputs[0].ndim == 0:
        gen.line(f"{outs[0]} = {as_dtype(outs[0], node.outputs[0].dtype)}")


def basic_index(gen, node, values: list[str]) -> str:
    """An index of ints, slices and new axes (out of range: numba's bounds check raises). The
    kernel is bounds-checked only for an int that may be out of range: checks cost a fifth of
    an LSTM gradient's cold compile, and most ints are constants into static lengths (a shape
    vector's entries)."""
    parts, values = [], iter(values)
    for entry, axis_length, index in _index_entries(node):
        if entry == INT:
            parts.append(f"int({next(values)})")
            if not _in_range(index, axis_length):
                gen.bounds_checked = True
        elif entry == NONE:
            parts.append("None")
        elif entry[0] == "slice":
            bounds = [f"int({next(values)})" if present else "" for present in entry[1:]]
            parts.append(":".join(bounds) if entry[3] else ":".join(bounds[:2]))
        else:
            raise NotCompilable(f"index entry {entry[0]}: numba indexes by ints, slices and new axes here")
    return ", ".join(parts) + ("," if len(parts) == 1 else "")


def _index_entries(node):
    """Each entry of the node's index with the static length of the axis it takes (None:
    unknown or no axis) and its constant value (None: not a constant int)."""
    base, indices = node.inputs[0], node.inputs[2 if isinstance(node.op, IncSubtensor) else 1:]
    axis, position = 0, 0
    for entry in node.op.spec:
        if entry == NONE:
            yield entry, None, None
            continue
        length = base.type.shape[axis] if axis < base.ndim else None
        axis += 1
        if entry == INT:
            given = indices[position]
            position += 1
            yield entry, length, int(given.data) if isinstance(given, Constant) and given.ndim == 0 else None
        else:
            position += sum(bool(present) for present in entry[1:])
            yield entry, length, None


def _in_range(index: int | None, length: int | None) -> bool:
    """Whether a constant index is proven within a static length (numba need not check it)."""
    return index is not None and length is not None and -length <= index < length


@numba_emits(IncSubtensor)
def emit_inc_subtensor(gen, node, ins: list[str], outs: list[str]) -> None:
    from symscan.backends.numba.fused import emit_assign

    x, y, *values = ins
    index = basic_index(gen, node, values)
    op = "=" if node.op.set_instead_of_inc else "+="
    if node.tag.get("inplace") == 0 and node.inputs[0].ndim:
        gen.line(f"{outs[0]} = {x}")  # the inplace rewrite found nothing else reading the base
    else:
        _base_copy(gen, node, x, outs[0])
    target_ndim = node.inputs[0].ndim - sum(entry == INT for entry in node.op.spec)
    if NONE not in node.op.spec and target_ndim:
        view = gen.fresh("view")
        gen.line(f"{view} = {outs[0]}[{index}]")
        if emit_assign(gen, view, target_ndim, y, node.inputs[1].ndim, op):
            return
    gen.line(f"{outs[0]}[{index}] {op} {y}")


def _base_copy(gen, node, x: str, out: str) -> None:
    """``out``: a copy of the base ``x``, into an array the kernel keeps where it can
    (``step_arrays.place``)."""
    from symscan.backends.numba import fused

    ndim = node.inputs[0].ndim
    if ndim and step_arrays.place(gen, node.outputs[0], out, f"{x}.shape", node.outputs[0].dtype):
        fused.emit_assign(gen, out, ndim, x, ndim)
    else:
        gen.line(f"{out} = {x}.copy()")


@numba_emits(DimShuffle)
def emit_dimshuffle(gen, node, ins: list[str], outs: list[str]) -> None:
    """Dropped axes are indexed at 0 (after checking they have length 1), then the kept
    axes transposed, then new axes inserted."""
    op, value = node.op, ins[0]
    if op.input_ndim == 0:  # a numba scalar: new axes by filling an array
        shape = (1,) * len(op.new_order)
        gen.line(f"{outs[0]} = " + (f"np.full({shape!r}, {ins[0]})" if shape else ins[0]))
        return
    for axis in op.dropped:
        gen.line(f"if {ins[0]}.shape[{axis}] != 1:")
        gen.line(f"    raise ValueError('{op}: a dropped axis has a length other than 1')")
    if op.dropped:
        value = f"{value}[{', '.join('0' if a in op.dropped else ':' for a in range(op.input_ndim))},]"
    kept = [a for a in op.new_order if a != "x"]
    ranks = sorted(kept)
    order = tuple(ranks.index(a) for a in kept)
    if order == tuple(reversed(range(len(order)))) and len(order) > 1:
        value = f"({value}).T"  # numba compiles np.transpose(x, axes) in seconds, .T in none
    elif order != tuple(range(len(order))):
        value = f"np.transpose({value}, {order})"
    if "x" in op.new_order:
        value += "[" + ", ".join("None" if a == "x" else ":" for a in op.new_order) + ",]"
    if node.outputs[0].ndim == 0:
        value = as_dtype(value, node.outputs[0].dtype)
    gen.line(f"{outs[0]} = {value}")


@numba_emits(Shape)
def emit_shape(gen, node, ins: list[str], outs: list[str]) -> None:
    if node.inputs[0].ndim == 0:
        gen.line(f"{outs[0]} = np.empty(0, dtype=np.int64)")
    else:
        gen.line(f"{outs[0]} = np.array({ins[0]}.shape, dtype=np.int64)")


@numba_emits(MakeVector)
def emit_make_vector(gen, node, ins: list[str], outs: list[str]) -> None:
    dtype = node.op.dtype
    if not ins:
        gen.line(f"{outs[0]} = np.empty(0, dtype=np.{dtype})")
        return
    # from a tuple, not a list: numba types a list through its reflected-list machinery, and a
    # tuple of ints shares the conversion ``Shape`` compiles (np.array(x.shape))
    values = ", ".join(as_dtype(i, dtype) for i in ins) + ","
    gen.line(f"{outs[0]} = np.array(({values}), dtype=np.{dtype})")


@numba_emits(Alloc)
def emit_alloc(gen, node, ins: list[str], outs: list[str]) -> None:
    value, *lengths = ins
    shape = ", ".join(f"int({n})" for n in lengths) + ("," if len(lengths) == 1 else "")
    dtype = node.outputs[0].dtype
    gen.line(f"{outs[0]} = np.empty(({shape}), dtype=np.{dtype})")
    gen.line(f"{outs[0]}[...] = {value}")


@numba_emits(AfterChecks, SpecifyShape)
def emit_first_input(gen, node, ins: list[str], outs: list[str]) -> None:
    if isinstance(node.op, SpecifyShape):
        raise NotCompilable("specify_shape inside a loop")  # its check would need the reference message
    gen.line(f"{outs[0]} = {ins[0]}")


@numba_emits(Assert)
def emit_assert(gen, node, ins: list[str], outs: list[str]) -> None:
    """A failed check raises in the kernel; the call then reruns in the fast evaluator, whose
    error carries the message."""
    gen.line(f"if not ({' and '.join(ins[1:])}):")
    gen.line("    raise ValueError('a check failed')")
    gen.line(f"{outs[0]} = {ins[0]}")


@numba_emits(SumToShape)
def emit_sum_to_shape(gen, node, ins: list[str], outs: list[str]) -> None:
    """``x`` itself when nothing was broadcast, the usual case; a broadcast (a run-time
    length of 1) sums a float vector's or matrix's broadcast axes (``reductions``), and in
    other arrays raises NotImplementedError, which hands the function to the fast evaluator."""
    x, like = node.inputs
    lead = x.ndim - node.op.target_ndim(node)
    if lead:
        if not (x.dtype.startswith("float") and x.ndim - lead >= 1):
            raise NotCompilable(f"sum_to of {x.type} over its leading axes")
        ins = [_sum_leading_axes(gen, ins[0], x, lead, node.outputs[0])] + ins[1:]
        x = node.outputs[0]  # what is left has the target's number of axes
    target = ins[1] if node.op.from_shape else f"{ins[1]}.shape"
    differs = " or ".join(f"{ins[0]}.shape[{axis}] != {target}[{axis}]" for axis in range(x.ndim)) or "False"
    if 1 <= x.ndim <= 2 and x.dtype.startswith("float"):  # the broadcast axes summed in the kernel
        _import_reductions(gen)
        helper = "sum_to_matrix" if x.ndim == 2 else "sum_to_vector"
        lengths = ", ".join(f"int({target}[{axis}])" for axis in range(x.ndim))
        gen.line(f"if {differs}:")
        gen.line(f"    {outs[0]} = _reductions.{helper}({ins[0]}, {lengths})")
        gen.line("else:")
        gen.line(f"    {outs[0]} = {ins[0]}")
        return
    gen.line(f"if {differs}:")
    gen.line("    raise NotImplementedError('symscan: sum_to over a broadcast axis')")
    gen.line(f"{outs[0]} = {ins[0]}")


def _sum_leading_axes(gen, x: str, var, lead: int, result) -> str:
    """``x`` summed over its first ``lead`` axes (a bias's gradient summed over the batch), as
    numpy sums them: row after row of the leading axes flattened into one (into an array the
    kernel keeps where the sum_to's ``result``, which may be that array, allows it)."""
    _import_reductions(gen)
    kept = [f"{x}.shape[{axis}]" for axis in range(lead, var.ndim)]
    rows, summed = gen.fresh("rows"), gen.fresh("summed")
    gen.line(f"{rows} = np.ascontiguousarray({x}).reshape((-1, {' * '.join(kept)}))")
    if not step_arrays.place(gen, result, summed, f"({rows}.shape[1],)", var.dtype, whole=False):
        gen.line(f"{summed} = np.empty({rows}.shape[1], dtype=np.{var.dtype})")
    gen.line(f"_reductions.reduce_matrix_into({rows}, 0, 0, {summed})")
    if len(kept) == 1:
        return summed
    shaped = gen.fresh("summed")
    gen.line(f"{shaped} = {summed}.reshape(({', '.join(kept)},))")
    return shaped


def _import_reductions(gen) -> None:
    _import_helpers(gen, "reductions")


def _import_helpers(gen, name: str) -> None:
    """``_<name>``: the helper module ``name`` in a kernel's module, loaded through the kernel
    cache (``cache.helper_module``: its machine code kept there, not in the package)."""
    lines = ["from symscan.backends.numba.cache import helper_module", f"_{name} = helper_module({name!r})"]
    gen.module_lines += [line for line in lines if line not in gen.module_lines]


@numba_emits(Outer)
def emit_outer(gen, node, ins: list[str], outs: list[str]) -> None:
    a, b = node.inputs
    if not (a.ndim == b.ndim == 1 and a.dtype == b.dtype == node.outputs[0].dtype):
        raise NotCompilable(f"outer of {a.type} and {b.type}")
    gen.line(f"{outs[0]} = np.outer({ins[0]}, {ins[1]})")


@numba_emits(Join)
def emit_join(gen, node, ins: list[str], outs: list[str]) -> None:
    dtype = node.outputs[0].dtype
    if any(v.dtype != dtype for v in node.inputs):
        raise NotCompilable(f"join of {[str(v.type) for v in node.inputs]}")
    if not _join_into_kept(gen, node, ins, outs[0]):
        gen.line(f"{outs[0]} = np.concatenate(({', '.join(ins)},), axis={node.op.axis})")


def _join_into_kept(gen, node, ins: list[str], out: str) -> bool:
    """The pieces copied into an array the kernel keeps (``step_arrays.place``), after
    numpy's check that they agree on every other axis; False (nothing written) where the
    result needs a new array."""
    from symscan.backends.numba import fused

    axis, ndim = node.op.axis, node.outputs[0].ndim
    if not step_arrays.can_place(gen, node.outputs[0]):
        return False
    lengths = [f"{ins[0]}.shape[{a}]" if a != axis else " + ".join(f"{p}.shape[{a}]" for p in ins)
               for a in range(ndim)]
    shape = gen.fresh("shape")
    differ = [f"{p}.shape[{a}] != {ins[0]}.shape[{a}]" for p in ins[1:] for a in range(ndim) if a != axis]
    if differ:
        gen.line(f"if {' or '.join(differ)}:")
        gen.line("    raise ValueError('concatenate: the pieces differ in length off its axis')")
    gen.line(f"{shape} = ({', '.join(lengths)},)")
    step_arrays.place(gen, node.outputs[0], out, shape, node.outputs[0].dtype)
    start = gen.fresh("start")
    gen.line(f"{start} = 0")
    for piece in ins:
        view, end = gen.fresh("view"), f"{start} + {piece}.shape[{axis}]"
        gen.line(f"{view} = {out}[{', '.join([':'] * axis + [f'{start}:{end}'])},]")
        fused.emit_assign(gen, view, ndim, piece, ndim)
        gen.line(f"{start} = {end}")
    return True


@numba_emits(Arange)
def emit_arange(gen, node, ins: list[str], outs: list[str]) -> None:
    dtype = node.outputs[0].dtype
    if any(v.dtype.startswith("float") for v in node.inputs) or not dtype.startswith("int"):
        raise NotCompilable("arange of floats")  # numpy's length rule for float steps
    gen.line(f"if {ins[2]} == 0:")
    gen.line("    raise ValueError('arange: step must not be zero')")
    gen.line(f"{outs[0]} = np.arange(int({ins[0]}), int({ins[1]}), int({ins[2]})).astype(np.{dtype})")


DRAWS = {"normal": "{1} < 0", "uniform": "not np.isfinite({1} - {0}) or {1} - {0} < 0",
         "integers": "{1} <= {0}", "binomial": "{0} < 0 or not ({1} >= 0 and {1} <= 1)"}
"""Distributions numba's Generator draws exactly as numpy's does (same stream, same values),
each with the parameters numpy refuses (numba does not check them; the kernel does, and the
fast evaluator then raises numpy's error)."""


@numba_emits(RandomVariable)
def emit_random(gen, node, ins: list[str], outs: list[str]) -> None:
    """A draw from the generator in place (the kernel passes a copy in; see kernel.py)."""
    op = node.op
    rng, size, *params = ins
    if op.distribution not in DRAWS or len(params) != 2:
        raise NotCompilable(f"a draw numba does not make as numpy does: {op}")
    gen.line(f"{outs[0]} = {rng}")
    if any(v.ndim for v in node.inputs[2:]):
        _elementwise_draws(gen, node, ins, outs[1])
        return
    length = node.inputs[1].type.shape[0] if op.has_size else 0
    if length is None:
        raise NotCompilable(f"{op} of a size whose length is not known")
    shape = ", ".join(f"int({size}[{i}])" for i in range(length)) + ("," if length == 1 else "")
    args = ", ".join(params + ([f"({shape})"] if length else []))
    _check_parameters(gen, op.distribution, params)
    draw = f"{rng}.{op.distribution}({args})"
    dtype = node.outputs[1].dtype
    gen.line(f"{outs[1]} = {draw}.astype(np.{dtype})" if length else f"{outs[1]} = {as_dtype(draw, dtype)}")


def _check_parameters(gen, distribution: str, params: list[str]) -> None:
    gen.line(f"if {DRAWS[distribution].format(*params)}:")
    gen.line(f"    raise ValueError('symscan: {distribution}: parameters numpy refuses')")


def _elementwise_draws(gen, node, ins: list[str], out: str) -> None:
    """Parameters of several elements: one scalar draw per element in C order, which is how
    numpy's Generator walks broadcast parameters (the same stream)."""
    op, (rng, size, *params) = node.op, ins
    if op.has_size and node.inputs[1].type.shape[0] is None:
        raise NotCompilable(f"{op} of a size whose length is not known")
    if op.has_size:
        length = node.inputs[1].type.shape[0]
        shape = "(" + ", ".join(f"int({size}[{i}])" for i in range(length)) + ("," if length == 1 else "") + ")"
    else:
        shape = f"np.broadcast_shapes({', '.join(f'np.shape({p})' for p in params)})"
    shape_name, index = gen.fresh("shape"), gen.fresh("i")
    wide = [gen.fresh("param") for _ in params]
    gen.line(f"{shape_name} = {shape}")
    for name, param in zip(wide, params):
        gen.line(f"{name} = np.broadcast_to({param}, {shape_name})")
    gen.line(f"{out} = np.empty({shape_name}, dtype=np.{node.outputs[1].dtype})")
    gen.line(f"for {index} in np.ndindex({shape_name}):")
    gen.indent += 1
    _check_parameters(gen, op.distribution, [f"{w}[{index}]" for w in wide])
    gen.line(f"{out}[{index}] = {rng}.{op.distribution}({', '.join(f'{w}[{index}]' for w in wide)})")
    gen.indent -= 1


@numba_emits(StepCount)
def emit_step_count(gen, node, ins: list[str], outs: list[str]) -> None:
    """The loop's step count after its checks (``checks.direction_and_steps`` and
    ``check_sequences``; a failed check raises, and mode fast gives the message)."""
    n, out = ins[0], outs[0]
    gen.line(f"{out} = np.int64({n})")
    if not node.op.steps_from_sequences:
        gen.line(f"if {out} < 0:")
        gen.line(f"    {out} = -{out}")
    spans = [SequenceEntry(None, [], taps, label).span for label, taps in node.op.sequences]
    failed = [f"{out} < 0"] + [f"{seq}.shape[0] < {out} + {span}" for seq, span in zip(ins[1:], spans)]
    gen.line(f"if {' or '.join(failed)}:")
    gen.line("    raise ValueError('scan: the sequences are shorter than the steps and taps need')")


# ---------------------------------------------------------------------------- linear algebra
def _one_matrix(node) -> str:
    """The result's dtype, once the node has one 2-d matrix (and a 1-d/2-d right-hand side) of
    that dtype: numba's np.linalg takes nothing else."""
    a, dtype = node.inputs[0], node.outputs[-1].dtype
    if a.ndim != 2 or any(v.ndim > 2 or v.dtype != dtype for v in node.inputs):
        raise NotCompilable(f"{node.op} of {', '.join(str(v.type) for v in node.inputs)}: numba's np.linalg "
                            "takes one 2-d matrix of the result's float dtype (no batch)")
    return dtype


@numba_emits(MatrixInverse, Det, SlogDet, Solve, Cholesky)
def emit_linalg(gen, node, ins: list[str], outs: list[str]) -> None:
    """numba's np.linalg takes one 2-d matrix (and a 1-d/2-d right-hand side) of one float dtype;
    a batch stays in Python. In float64 inv, det, slogdet and solve go through ``small.py`` (loops
    for small matrices, LAPACK above). (solve_triangular / cho_solve: scipy, which numba does not compile.)"""
    dtype = _one_matrix(node)
    op = node.op
    module = small_module(gen) if dtype in small.DTYPES else "np.linalg"
    if isinstance(op, (Det, SlogDet)):
        fn = "det" if isinstance(op, Det) else "slogdet"
        results = [f"_{name}" for name in outs]
        gen.line(f"{', '.join(results)}{',' * (len(outs) > 1)} = {module}.{fn}({ins[0]})")
        for out, result in zip(outs, results):
            gen.line(f"{out} = {as_dtype(result, dtype)}")
    elif isinstance(op, Cholesky) and not op.lower:  # upper factor: from a's upper triangle
        gen.line(f"{outs[0]} = np.ascontiguousarray(np.linalg.cholesky(np.ascontiguousarray({ins[0]}.T)).T)")
    elif isinstance(op, Cholesky):
        gen.line(f"{outs[0]} = np.linalg.cholesky({ins[0]})")
    else:
        fn = {MatrixInverse: "inv", Solve: "solve"}[type(op)]
        gen.line(f"{outs[0]} = {module}.{fn}({', '.join(ins)})")


@numba_emits(Eigh, Eigvalsh)
def emit_eigh(gen, node, ins: list[str], outs: list[str]) -> None:
    """numba's eigh/eigvalsh read the lower triangle (no UPLO): the upper one is a^T's lower."""
    _one_matrix(node)
    a = ins[0] if node.op.UPLO == "L" else f"np.ascontiguousarray({ins[0]}.T)"
    fn = "eigh" if isinstance(node.op, Eigh) else "eigvalsh"
    gen.line(f"{', '.join(outs)}{',' * (len(outs) > 1)} = np.linalg.{fn}({a})")


@numba_emits(QR)
def emit_qr(gen, node, ins: list[str], outs: list[str]) -> None:
    """numba's qr is the reduced one (no mode): "r" drops q; "complete" stays in Python."""
    _one_matrix(node)
    if node.op.mode == "complete":
        raise NotCompilable("QR(mode='complete'): numba's np.linalg.qr computes the reduced factors only")
    results = outs if node.op.mode == "reduced" else [f"_{outs[0]}_q", outs[0]]
    gen.line(f"{', '.join(results)} = np.linalg.qr({ins[0]})")


@numba_emits(SVD)
def emit_svd(gen, node, ins: list[str], outs: list[str]) -> None:
    """numba's svd always computes the vectors: without ``compute_uv`` they are dropped."""
    _one_matrix(node)
    results = outs if node.op.compute_uv else [f"_{outs[0]}_u", outs[0], f"_{outs[0]}_vh"]
    gen.line(f"{', '.join(results)} = np.linalg.svd({ins[0]}, {node.op.full_matrices})")


@numba_emits(Pinv)
def emit_pinv(gen, node, ins: list[str], outs: list[str]) -> None:
    """numba's default cutoff is 1e-15 * the largest singular value; numpy's (given here) is
    max(m, n) * eps of the dtype."""
    eps = float(np.finfo(_one_matrix(node)).eps)
    gen.line(f"{outs[0]} = np.linalg.pinv({ins[0]}, {eps!r} * max({ins[0]}.shape[0], {ins[0]}.shape[1]))")
