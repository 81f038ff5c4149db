"""The fast evaluator's code for a fused elementwise chain (``Composite``).

A 0-d chain is the scalar code of its nodes, one line each (numpy scalars). An array chain
is one numpy call per inner node, where a ufunc call writes into an array the chain allocated
before and no longer reads (``out=``) when that array provably has the call's result shape: a
value's shape is the broadcast of the inputs with axes it reads, so two values that read the
same such inputs have one shape. The chain then allocates about one array per shape and dtype
instead of one per node. Every node still computes
in its own dtype (a buffer is reused only by a node of the buffer's dtype), so the results
are the unfused chain's.

Where the inplace rewrite marked the node, the first such array may be the marked input
itself (when it has the full shape and is large enough: checked at run time); inside a loop,
the last call may write into the output's buffer row (``into_buffer``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from symscan.backends.fast.codegen import Codegen, emits
from symscan.backends.fast.ops import OPERATORS, UFUNCS, _fits, _function
from symscan.graph.basic import Apply, Variable
from symscan.tensor.composite import Composite
from symscan.tensor.elemwise import Cast

BORROWED = frozenset({"real", "imag"})
"""Elementwise functions whose result may be (a view of) their input or read-only memory: never
written into."""


@emits(Composite)
def emit_composite(gen: Codegen, node: Apply, ins: list[str], outs: list[str]) -> None:
    inner = node.op.inner
    names: dict[Variable, str] = dict(zip(inner.inputs, ins))
    if all(v.ndim == 0 for v in node.inputs):
        for inner_node in inner.toposort():  # the scalar code of each node, errors named by this node
            args = [gen.name_of(v, names) for v in inner_node.inputs]
            result = gen.fresh("f")
            names[inner_node.outputs[0]] = result
            gen.emitters[type(inner_node.op)](gen, inner_node, args, [result])
    else:
        _emit_array_chain(gen, node, ins, names)
    for out, inner_out in zip(outs, inner.outputs):
        gen.line(f"{out} = {names[inner_out]}")


@dataclass
class _Buffers:
    """Arrays the chain owns, with their kind (dtype, shape class) and their last reader."""

    free_after: dict[str, int] = field(default_factory=dict)  # name -> index of its last reader
    kinds: dict[str, tuple] = field(default_factory=dict)
    read_as: dict[str, str] = field(default_factory=dict)  # a lent input: the name the chain reads it by

    def add(self, name: str, kind: tuple, last_read: int, read_as: str | None = None) -> None:
        self.free_after[name], self.kinds[name], self.read_as[name] = last_read, kind, read_as or name

    def take(self, kind: tuple, index: int, reads: list[str]) -> str | None:
        """A buffer of this kind nobody reads after node ``index`` (node ``index`` may read it:
        an elementwise call reads each element before writing it)."""
        for name, last in self.free_after.items():
            if self.kinds[name] == kind and (last < index or last == index and self.read_as[name] in reads):
                del self.free_after[name], self.kinds[name], self.read_as[name]
                return name
        return None


def _emit_array_chain(gen: Codegen, node: Apply, ins: list[str], names: dict) -> None:
    inner = node.op.inner
    order = inner.toposort()
    last_read = _last_reads(order, inner.outputs)
    shapes = _shape_classes(node)
    buffers = _Buffers()
    _lend_marked_input(gen, node, ins, last_read, buffers, shapes)
    slot = gen.out_slots.get(node.outputs[0]) if len(node.outputs) == 1 else None
    for index, inner_node in enumerate(order):
        args = [gen.name_of(v, names) for v in inner_node.inputs]
        out, result = inner_node.outputs[0], gen.fresh("f")
        names[out] = result
        name = getattr(inner_node.op, "name", None)
        kind = (out.dtype, shapes[out])
        writes = shapes[out] and name in UFUNCS
        target = buffers.take(kind, index, args) if writes else None
        if writes and slot is not None and out is inner.outputs[0] and index == len(order) - 1:
            guard = f"{slot} is not None and " + _fits(node, ins, f"{slot}.shape", size=False)
            gen.line(f"{result} = np.{UFUNCS[name]}({', '.join(args)}, out={slot} if {guard} else {target})")
        elif target is not None:
            gen.line(f"{result} = np.{UFUNCS[name]}({', '.join(args)}, out={target})")
        else:
            gen.line(f"{result} = {_expression(inner_node, args)}")
        if shapes[out] and name not in BORROWED and out not in inner.outputs:
            buffers.add(result, kind, last_read.get(out, -1))


def _expression(node: Apply, args: list[str]) -> str:
    """One inner node on arrays (or numpy scalars), in fresh memory."""
    if isinstance(node.op, Cast):
        return f"{args[0]}.astype({node.op.dtype!r})"
    name = node.op.name
    if name in OPERATORS:
        return f"({args[0]} {OPERATORS[name]} {args[1]})"
    if name in ("neg", "invert"):
        return f"({'-' if name == 'neg' else '~'}{args[0]})"
    if name in UFUNCS:
        return f"np.{UFUNCS[name]}({', '.join(args)})"
    return f"{_function(name)}({', '.join(args)})"


def _last_reads(order: list[Apply], outputs: list[Variable]) -> dict[Variable, int]:
    """For each value the chain reads, the position of its last reader (outputs: never free)."""
    last: dict[Variable, int] = {}
    for index, inner_node in enumerate(order):
        for var in inner_node.inputs:
            last[var] = index
    for var in outputs:
        last[var] = len(order)
    return last


def _shape_classes(node: Apply) -> dict[Variable, frozenset]:
    """For each inner value, the inner inputs with axes it reads: its shape is their broadcast
    (empty: a numpy scalar)."""
    inner = node.op.inner
    classes: dict[Variable, frozenset] = {v: frozenset([v]) if outer.ndim > 0 else frozenset()
                                          for v, outer in zip(inner.inputs, node.inputs)}
    for inner_node in inner.toposort():
        reads = [classes.get(v, frozenset()) for v in inner_node.inputs]
        classes[inner_node.outputs[0]] = frozenset().union(*reads)
    return classes


def _lend_marked_input(gen: Codegen, node: Apply, ins: list[str], last_read: dict, buffers: _Buffers,
                       shapes: dict) -> None:
    """The input the inplace rewrite marked, as a buffer of the full shape (that of the values
    reading every input with axes) when it has that shape at run time (else None: ``out=None``
    allocates)."""
    position = node.tag.get("inplace")
    if position is None or node.inputs[position].ndim != node.outputs[0].ndim:
        return
    inner_input = node.op.inner.inputs[position]
    lent = gen.fresh("lent")
    guard = _fits(node, ins, f"{ins[position]}.shape", skip=position)
    gen.line(f"{lent} = {ins[position]} if {guard} else None")
    full = frozenset(v for v, outer in zip(node.op.inner.inputs, node.inputs) if outer.ndim > 0)
    buffers.add(lent, (inner_input.dtype, full), last_read.get(inner_input, -1), read_as=ins[position])


__all__ = ["emit_composite"]
