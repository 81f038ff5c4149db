"""The fast evaluator's code for a fused elementwise chain (``Composite``).

A 0-d chain is the scalar code of its nodes, one line each (numpy scalars). An array chain
is one numpy call per inner node, where a ufunc call writes into an array the chain allocated
before and no longer reads (``out=``) when that array provably has the call's result shape: a
value's shape is the broadcast of the inputs with axes it reads, so two values that read the
same such inputs have one shape. The chain then allocates about one array per shape and dtype
instead of one per node. Every node still computes
in its own dtype (a buffer is reused only by a node of the buffer's dtype), so the results
are the unfused chain's.

Where the inplace rewrite marked the node, the marked input is such an array too (for the
values of its shape); inside a loop, the last call may write into the output's buffer row
(``into_buffer``).
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
        for out, inner_out in zip(outs, inner.outputs):
            gen.line(f"{out} = {names[inner_out]}")
        return
    shapes = _emit_array_chain(gen, node, ins, names)
    shaping = [name for var, name in zip(node.inputs, ins) if var.ndim > 0]
    full = frozenset(v for v, outer in zip(inner.inputs, node.inputs) if outer.ndim > 0)
    for out, inner_out in zip(outs, inner.outputs):
        if shapes[inner_out] == full:
            gen.line(f"{out} = {names[inner_out]}")
        else:  # an output that reads only some inputs has the broadcast shape of all (the rewrite makes none)
            shape = f"np.broadcast_shapes({', '.join(f'np.shape({n})' for n in shaping)})"
            gen.line(f"{out} = np.array(np.broadcast_to({names[inner_out]}, {shape}))")
    if gen.frees:  # the chain's own names go: the evaluator frees the outputs after their last reader
        gen.line(f"del {', '.join(names[n.outputs[0]] for n in inner.toposort())}")


@dataclass
class _Buffers:
    """Arrays the chain owns, with their kind (dtype, shape class) and their last reader."""

    free_after: dict[str, int] = field(default_factory=dict)  # name -> index of its last reader
    kinds: dict[str, tuple] = field(default_factory=dict)

    def add(self, name: str, kind: tuple, last_read: int) -> None:
        self.free_after[name], self.kinds[name] = last_read, kind

    def take(self, kind: tuple, index: int, reads: list[str], any_shape: bool = False) -> str | None:
        """A buffer of this kind nobody reads after node ``index`` (node ``index`` may read it:
        an elementwise call reads each element before writing it); with ``any_shape``, of this
        dtype whatever its shape class (the caller checks its shape)."""
        for name, last in self.free_after.items():
            same = self.kinds[name][0] == kind[0] if any_shape else self.kinds[name] == kind
            if same and (last < index or last == index and name in reads):
                del self.free_after[name], self.kinds[name]
                return name
        return None


LARGE = 4096
"""Elements from which a buffer whose shape is known only at run time is reused (checking the
shape costs about a microsecond)."""


def _emit_array_chain(gen: Codegen, node: Apply, ins: list[str], names: dict) -> dict:
    """The chain's lines; returns each inner value's shape class (see ``_shape_classes``)."""
    inner = node.op.inner
    order = inner.toposort()
    last_read = _last_reads(order, inner.outputs)
    shapes = _shape_classes(node)
    buffers = _Buffers()
    _lend_marked_input(node, ins, last_read, buffers)
    slot = gen.out_slots.get(node.outputs[0]) if len(node.outputs) == 1 else None
    for index, inner_node in enumerate(order):
        args = [gen.name_of(v, names) for v in inner_node.inputs]
        out, result = inner_node.outputs[0], gen.fresh("f")
        names[out] = result
        name = getattr(inner_node.op, "name", None)
        kind = (out.dtype, shapes[out])
        writes = shapes[out] and name in UFUNCS
        target = buffers.take(kind, index, args) if writes else None
        maybe = buffers.take(kind, index, args, any_shape=True) if writes and target is None else None
        if writes and slot is not None and out is inner.outputs[0] and index == len(order) - 1:
            guard = f"{slot} is not None and " + _fits(node, ins, f"{slot}.shape", size=False)
            gen.line(f"{result} = np.{UFUNCS[name]}({', '.join(args)}, out={slot} if {guard} else {target})")
        elif target is not None:
            gen.line(f"{result} = np.{UFUNCS[name]}({', '.join(args)}, out={target})")
        elif maybe is not None:  # a large dead buffer of another shape class: used where the shapes agree
            shape = f"np.broadcast_shapes({', '.join(f'np.shape({a})' for a in args)})"
            gen.line(f"{result} = np.{UFUNCS[name]}({', '.join(args)}, out={maybe}) if {maybe}.size >= {LARGE} "
                     f"and {maybe}.shape == {shape} else {_expression(inner_node, args)}")
        else:
            gen.line(f"{result} = {_expression(inner_node, args)}")
        if shapes[out] and name not in BORROWED and out not in inner.outputs:
            buffers.add(result, kind, last_read.get(out, -1))
    return shapes


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
    for inner_node in order:  # real(x) of a float x is x itself: x lives as long as its result
        if getattr(inner_node.op, "name", None) in BORROWED:
            for var in inner_node.inputs:
                last[var] = max(last[var], last.get(inner_node.outputs[0], -1))
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


def _lend_marked_input(node: Apply, ins: list[str], last_read: dict, buffers: _Buffers) -> None:
    """The input the inplace rewrite marked (memory nothing else reads), as a buffer for the
    values of its own shape: those that read no other input with axes."""
    position = node.tag.get("inplace")
    if position is None:
        return
    inner_input = node.op.inner.inputs[position]
    buffers.add(ins[position], (inner_input.dtype, frozenset([inner_input])), last_read.get(inner_input, -1))


__all__ = ["emit_composite"]
