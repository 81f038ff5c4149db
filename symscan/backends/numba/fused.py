"""Chains of elementwise ops in a kernel's step as loops over the elements.

numba compiles each numpy array expression through its generic broadcasting machinery:
``np.where`` over arrays alone took 1.4-3.5 s to compile here, and an LSTM gradient's reverse
step, written as array expressions, 30 s. The same chain written as a loop over the elements
with scalar arithmetic compiles in a fraction of that, makes one pass over memory instead of
one per op, and allocates one array per chain instead of one per op (none per step where the
chain's result is a step temporary or goes straight into its buffer row).

A *group* is a set of elementwise nodes of one step whose values are read only inside the
group, except the one ``root`` whose value the rest of the step reads. Its loop runs over the
root's shape, the broadcast of every array the group reads (checked as numpy checks it: each
length equal or 1; a failed check raises, and the evaluator reruns the call in mode fast for
numpy's message). An input is indexed with its own axes aligned to the right, an axis of
length 1 at index 0 (a run-time flag per axis).

Transcendental functions (``exp``, ``tanh``, ... and the ``exp`` in ``sigmoid``) run numpy's
own SIMD loop (``ufuncs``) over the whole array, so the group is split into *stages* at them:
one loop computes the function's argument into a scratch array, numpy's loop runs on it in
place, and later stages read the result. Every element is computed by the same operations in
the same order as numpy's, so results are bit for bit those of mode fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from symscan.backends.numba import step_arrays
from symscan.backends.numba.ops import OPERATORS, as_dtype
from symscan.backends.numba.ufuncs import numpy_loop
from symscan.tensor.elemwise import Elemwise

FLOATS = ("float32", "float64")
ARITHMETIC = ("add", "sub", "mul", "true_div")
COMPARING = ("lt", "le", "gt", "ge", "eq", "neq")
UNARY = {"neg": "(-{0})", "abs": "abs({0})", "sqrt": "np.sqrt({0})"}
BINARY = {"maximum": "np.maximum({0}, {1})", "minimum": "np.minimum({0}, {1})"}
STAGED = ("exp", "log", "log1p", "expm1", "tanh", "sin", "cos", "tan")
"""Functions run by numpy's loop over a scratch array (``ufuncs.FAST_LOOPS``)."""


@dataclass
class Group:
    root: object
    dtype: str
    members: list = field(default_factory=list)  # in topological order once found


def _dtype_of(node) -> str | None:
    """The float dtype the node computes in, if it has a scalar form here (None if not)."""
    if not isinstance(node.op, Elemwise) or node.outputs[0].ndim == 0:
        return None
    name, out = node.op.name, node.outputs[0]
    arrays = [v for v in node.inputs if v.ndim]
    if name in COMPARING:
        dtypes = {v.dtype for v in node.inputs}
        return dtypes.pop() if len(dtypes) == 1 and dtypes <= set(FLOATS) else None
    if out.dtype not in FLOATS:
        return None
    if name == "switch":
        cond, *values = node.inputs
        ok = cond.dtype == "bool" and all(v.dtype == out.dtype for v in values if v.ndim)
        return out.dtype if ok else None
    known = name in ARITHMETIC or name in UNARY or name in BINARY or name in ("second", "sigmoid")
    if name in STAGED:
        known = numpy_loop(name, out.dtype) is not None
    if name == "sigmoid":
        known = numpy_loop("exp", out.dtype) is not None
    if not known or any(v.dtype != out.dtype for v in arrays):
        return None
    if any(v.dtype not in FLOATS + ("int8", "int16", "int32", "int64", "bool") for v in node.inputs):
        return None
    return out.dtype


def find_groups(fgraph) -> dict:
    """node -> its Group (walking readers before producers: a node joins its readers' group
    when every reader is in that one group). A lone node is a group too: its loop compiles
    faster than numba's array expression."""
    group_of: dict = {}
    order = fgraph.toposort()
    for node in reversed(order):
        dtype = _dtype_of(node)
        if dtype is None:
            continue
        readers = fgraph.clients.get(node.outputs[0], [])
        owners = {id(group_of.get(r)): group_of.get(r) for r, _ in readers if r != "output"}
        joins = (readers and len(owners) == 1 and all(r != "output" and r in group_of for r, _ in readers))
        group = next(iter(owners.values())) if joins else None
        if group is not None and group.dtype == dtype and node.outputs[0].ndim <= group.root.outputs[0].ndim:
            group.members.append(node)
            group_of[node] = group
        elif node.outputs[0].dtype in FLOATS:
            group_of[node] = Group(node, dtype, [node])
    for group in {id(g): g for g in group_of.values()}.values():
        group.members.reverse()
    return group_of


class GroupWriter:
    """One group as two module-level functions of the kernel's module, ``_fshape_<hash>`` (the
    broadcast shape, checked) and ``_fgroup_<hash>`` (the loops), and the kernel lines calling
    them. Small functions keep numba's analyses, which grow faster than the size of the
    function they run on, cheap; a group of the same structure elsewhere in the kernel reuses
    them (the hash is of their source)."""

    def __init__(self, gen, group: Group, names: dict) -> None:
        self.gen, self.group, self.names = gen, group, names
        self.members = set(group.members)
        self.ndim = group.root.outputs[0].ndim
        self.index = [f"i{axis}" for axis in range(self.ndim)]
        self.arrays: dict = {}  # external array -> (parameter, its axis flags)
        self.scalars: dict = {}  # external 0-d value -> parameter
        self.staged: dict = {}  # member node -> the parameter of the scratch array holding its function's result
        self.lines: list[str] = []  # the loops function's body
        self._stage_args: list[tuple[str, str]] = []  # (kernel's scratch array, its parameter)
        self.needs: tuple[str, ...] = ()  # module lines the loops function needs (numpy's loops)
        self._counts: dict[str, int] = {}

    def fresh(self, prefix: str) -> str:
        count = self._counts.get(prefix, 0)
        self._counts[prefix] = count + 1
        return f"{prefix}{count}"

    def inputs(self) -> list:
        seen: dict = {}
        for node in self.group.members:
            for var in node.inputs:
                if var.owner not in self.members:
                    seen.setdefault(var, None)
        return list(seen)

    def write(self, out: str) -> None:
        gen, root = self.gen, self.group.root
        for var in self.inputs():
            if var.ndim:
                self.arrays[var] = (self.fresh("a"), [self.fresh("f") for _ in range(var.ndim)])
            else:
                self.scalars[var] = self.fresh("s")
        shape = gen.fresh("shape")
        arrays = [gen.name_of(v, self.names) for v in self.arrays]
        gen.line(f"{shape} = {self._shape(arrays)}")
        self._allocate(out, root, shape)
        for node in self.group.members:
            if _staged_function(node) is not None and not (node is root and _plain_staged(root)):
                self._stage(node, shape)
        if _plain_staged(root):  # the argument into the result's array, numpy's loop over it
            self.staged[root] = "out"
            self._stage_lines(root, "out")
        else:
            result = root.outputs[0]
            self._loop([result], lambda values: [f"out[{', '.join(self.index)}] = {values[result]}"])
        temps = [outer for outer, _ in self._stage_args]
        scalars = [gen.name_of(v, self.names) for v in self.scalars]
        loops = self._loops_function()
        gen.line(f"{loops}({', '.join([out] + temps + arrays + scalars)})")

    def _shape(self, arrays: list[str]) -> str:
        """The source of the broadcast shape of the group's arrays: one array's own shape, else
        two at a time by ``_fshape_<hash>(shape, shape)``, folded left (numpy's rule gives the
        same shape, and fails where it fails, taken pairwise). Functions of two shapes are few
        (one per pair of ranks), so every group of every kernel shares them; numba compiles
        each in a fraction of a second, and a function of all the group's shapes at once was
        one more per mix of ranks. They take shapes, not arrays: one compiled signature
        whatever the arrays' layouts (a slice is numba's layout 'A', a new array 'C')."""
        ndims = [var.ndim for var in self.arrays]
        shapes = [_shape_of(a) for a in arrays]
        if not shapes or max(ndims) != self.ndim:  # (no array of the result's rank)
            return f"{_shape_function(self.gen, ndims, self.ndim)}({', '.join(shapes)})"
        expr, ndim = shapes[0], ndims[0]
        for shape, other in zip(shapes[1:], ndims[1:]):
            expr = f"{_shape_function(self.gen, [ndim, other], max(ndim, other))}({expr}, {shape})"
            ndim = max(ndim, other)
        return expr

    def _loops_function(self) -> str:
        params = (["out"] + [inner for _, inner in self._stage_args] + [name for name, _ in self.arrays.values()]
                  + list(self.scalars.values()))
        head = [f"    {flag} = 1 if {name}.shape[{axis}] != 1 else 0"
                for name, flags in self.arrays.values() for axis, flag in enumerate(flags)]
        return _define(self.gen, "_fgroup", params, head + self.lines, self.needs)

    def _allocate(self, out: str, root, shape: str) -> None:
        """The root's array: one the kernel keeps where it can (``step_arrays.place``), else a new one."""
        if not step_arrays.place(self.gen, root.outputs[0], out, shape, self.group.dtype):
            self.gen.line(f"{out} = np.empty({shape}, dtype=np.{self.group.dtype})")

    def _stage(self, node, shape: str) -> None:
        """A scratch array of the kernel for a member run by numpy's loop."""
        outer, inner = self.gen.fresh("staged"), self.fresh("t")
        step_arrays.scratch(self.gen, outer, shape, self.group.dtype, self.ndim)
        self._stage_args.append((outer, inner))
        self.staged[node] = inner
        self._stage_lines(node, inner)

    def _stage_lines(self, node, temp: str) -> None:
        """The function's argument into ``temp``, then numpy's loop on it in place."""
        name, argument = _staged_function(node)
        arg_var = node.inputs[0]

        def body(values):
            value = values[arg_var] if arg_var in values else self._read(arg_var)
            expr = f"(-abs({value}))" if argument == "negabs" else value
            return [f"{temp}[{', '.join(self.index)}] = {expr}"]

        self._loop([arg_var], body)
        helper = f"_npy_{name}_{self.group.dtype}_into"
        needed = ("from symscan.backends.numba.ufuncs import numpy_loop",
                  f"{helper} = numpy_loop({name!r}, {self.group.dtype!r}, True)")
        self.needs += tuple(line for line in needed if line not in self.needs)
        self.lines.append(f"    {helper}({temp}, {temp})")

    def _loop(self, wanted: list, body) -> None:
        """One loop over the shape computing the members ``wanted`` needs (earlier stages'
        results read from their scratch arrays)."""
        indent = "    "
        for axis, i in enumerate(self.index):
            self.lines.append(f"{indent}for {i} in range(out.shape[{axis}]):")
            indent += "    "
        values: dict = {}
        lines: list[str] = []
        for var in wanted:
            if var.owner in self.members:
                self._value(var.owner, values, lines)
        self.lines += [indent + line for line in lines + body(values)]

    def _read(self, var, condition: bool = False) -> str:
        """An input's element at the loop's index (a scalar in the group's dtype; a switch's
        condition as it is: numba would compute float32 + bool in float64)."""
        if var.ndim == 0:
            name = self.scalars[var]
            keep = var.dtype == self.group.dtype or (condition and var.dtype == "bool")
            return name if keep else as_dtype(name, self.group.dtype)
        name, flags = self.arrays[var]
        offset = self.ndim - var.ndim
        return f"{name}[{', '.join(f'{self.index[offset + a]} * {f}' for a, f in enumerate(flags))}]"

    def _value(self, node, values: dict, lines: list) -> str:
        """The scalar local holding ``node``'s element (computing its members first)."""
        var = node.outputs[0]
        if var in values:
            return values[var]
        switch = node.op.name == "switch"
        operands = [self._value(inp.owner, values, lines) if inp.owner in self.members
                    else self._read(inp, condition=switch and i == 0) for i, inp in enumerate(node.inputs)]
        local = self.fresh("e")
        lines.append(f"{local} = {self._expression(node, operands)}")
        values[var] = local
        return local

    def _expression(self, node, ins: list[str]) -> str:
        name, dtype = node.op.name, self.group.dtype
        if name in STAGED:
            return f"{self.staged[node]}[{', '.join(self.index)}]"
        if name == "sigmoid":
            e, one = f"{self.staged[node]}[{', '.join(self.index)}]", as_dtype("1", dtype)
            return f"({one} / ({one} + {e}) if {ins[0]} >= 0 else {e} / ({one} + {e}))"
        if name in ARITHMETIC or name in COMPARING:
            return f"({ins[0]} {OPERATORS[name]} {ins[1]})"
        if name in UNARY:
            return UNARY[name].format(*ins)
        if name in BINARY:
            return BINARY[name].format(*ins)
        if name == "switch":
            return f"({ins[1]} if {ins[0]} else {ins[2]})"
        if name == "second":
            return ins[1]
        raise AssertionError(f"no scalar form for {node.op}")


FLAGS = "cache=True, error_model='numpy', nogil=True, boundscheck=False"


def _define(gen, prefix: str, params: list[str], body: list[str], needs: tuple[str, ...] = ()) -> str:
    """A jitted function in a module of its own, named by the hash of its source: a group of
    the same structure in any kernel, function or process reuses it (numba's disk cache keeps
    its machine code per argument types), and the kernel's module binds it by name."""
    import hashlib

    text = "\n".join(body)
    name = f"{prefix}_{hashlib.sha256((','.join(params) + text + ''.join(needs)).encode()).hexdigest()[:12]}"
    source = "\n".join(["import numpy as np", "import numba", "", *needs, "",
                        f"@numba.njit({FLAGS})", f"def {name}({', '.join(params)}):", text, ""])
    line = f"{name} = _load_kernel({source!r}, {name!r})"
    if line not in gen.module_lines:
        if _LOADER not in gen.module_lines:
            gen.module_lines.append(_LOADER)
        gen.module_lines.append(line)
    return name


_LOADER = "from symscan.backends.numba.cache import load_kernel as _load_kernel"


def _shape_function(gen, ndims: list[int], ndim: int) -> str:
    """``_fshape_<hash>(s0, s1, ...)``: numpy's broadcast shape (rank ``ndim``) of shapes of
    ranks ``ndims`` (checked: a failed check raises, and the evaluator reruns the call in mode
    fast for numpy's message)."""
    params = [f"s{i}" for i in range(len(ndims))]
    lines = [f"    n{axis} = 1" for axis in range(ndim)]
    for name, rank in zip(params, ndims):
        for axis in range(rank):
            length, size = f"n{ndim - rank + axis}", f"{name}[{axis}]"
            lines += [f"    if {size} != 1:", f"        if {length} != 1 and {length} != {size}:",
                      "            raise ValueError('symscan: shapes do not broadcast')",
                      f"        {length} = {size}"]
    lines.append(f"    return ({', '.join(f'n{axis}' for axis in range(ndim))},)")
    return _define(gen, "_fshape", params, lines)


def _shape_of(value: str) -> str:
    """The source of ``value``'s shape (a name or an expression)."""
    return f"{value}.shape" if value.isidentifier() else f"({value}).shape"


def _staged_function(node) -> tuple[str, str] | None:
    """(numpy loop, what it is applied to) for a member run by numpy's loop, else None."""
    name = node.op.name
    if name in STAGED:
        return name, "input"
    if name == "sigmoid":
        return "exp", "negabs"
    return None


def _plain_staged(node) -> bool:
    """A member whose value is its scratch array's element (sigmoid's needs more)."""
    return node.op.name in STAGED


def emit_group(gen, group: Group, names: dict, out: str) -> None:
    """The lines computing ``group``'s root into ``out``."""
    GroupWriter(gen, group, names).write(out)


def emit_assign(gen, dst: str, ndim: int, src: str, src_ndim: int, op: str = "=") -> bool:
    """``dst[...] op src`` as a loop over dst's elements (a function of the kernel's module),
    ``src`` broadcast to dst's shape as numpy broadcasts it (checked). numba's own slice
    assignment compiles a shape-mismatch message formatter per signature (about a second
    each). False (nothing written) where src has more axes than dst."""
    if src_ndim > ndim or ndim == 0:
        return False
    lines, flags = [], [f"f{axis}" for axis in range(src_ndim)]
    for axis, flag in enumerate(flags):
        size, target = f"src.shape[{axis}]", f"dst.shape[{ndim - src_ndim + axis}]"
        lines += [f"    if {size} != 1 and {size} != {target}:",
                  "        raise ValueError('symscan: shapes do not broadcast')",
                  f"    {flag} = 1 if {size} != 1 else 0"]
    index = [f"i{axis}" for axis in range(ndim)]
    for axis, i in enumerate(index):
        lines.append("    " * (axis + 1) + f"for {i} in range(dst.shape[{axis}]):")
    offset = ndim - src_ndim
    value = "src" if not src_ndim else f"src[{', '.join(f'{index[offset + a]} * {f}' for a, f in enumerate(flags))}]"
    lines.append("    " * (ndim + 1) + f"dst[{', '.join(index)}] {op} {value}")
    gen.line(f"{_define(gen, '_fassign', ['dst', 'src'], lines)}({dst}, {src})")
    return True


def expand_composites(fgraph):
    """``fgraph`` with each fused ``Composite`` node (the fusion rewrite's) written out again as
    its chain of elementwise ops over the same inputs, for ``find_groups`` to fuse into loops
    its own way (staged at numpy's loops), and the map from each variable to its stand-in.
    The graph itself where it has none."""
    from symscan.graph.fg import FunctionGraph
    from symscan.tensor.composite import Composite

    if not any(isinstance(node.op, Composite) for node in fgraph.apply_nodes):
        return fgraph, {}
    memo: dict = {}
    for node in fgraph.toposort():
        inputs = [memo.get(v, v) for v in node.inputs]
        if isinstance(node.op, Composite):
            inner = dict(zip(node.op.inner.inputs, inputs))
            for part in node.op.inner.toposort():
                value = part.op(*[inner.get(v, v) for v in part.inputs])
                inner[part.outputs[0]] = value
            memo.update((out, inner[inner_out]) for out, inner_out in zip(node.outputs, node.op.inner.outputs))
        elif any(a is not b for a, b in zip(inputs, node.inputs)):
            memo.update(zip(node.outputs, node.clone_with_new_inputs(inputs).outputs))
    outputs = [memo.get(v, v) for v in fgraph.outputs]
    return FunctionGraph(fgraph.inputs, outputs, clone=False, name=fgraph.name), memo
