"""Build the ``View`` (what is drawn, no geometry) of a variable, a function, a FunctionGraph
or a Scan node: shape and check plumbing folded into badges and edge labels, constants on
edges, loops closed (one box) or open (their body between role-labelled ports).

Ids are stable across the states of one graph (which loops are open): loops are numbered
``L1``, ``L2``, ... in a fixed walk (bodies included), items by their node's position in
their graph's topological order (``n7``, ``L1/n3``), ports by position (``L1/in2``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from symscan.drawing.describe import (
    chain_label,
    dimshuffle_label,
    fill_label,
    index_label,
    index_value_text,
    item_details,
    op_label,
    root_label,
    search_text,
    shorten_lines,
    type_details,
)
from symscan.drawing.model import (
    CROSSING,
    DATA,
    INPUT,
    LOOP,
    OP,
    OUTPUT,
    PORT_IN,
    PORT_OUT,
    RECURRENCE,
    SHARED,
    UPDATE,
    Edge,
    Item,
    Loop,
    View,
)
from symscan.drawing.plumbing import pass_through_label, plumbing_nodes
from symscan.drawing.roles import LoopRoles, kinds_summary, loop_roles, loop_steps, loop_title
from symscan.drawing.text import shorten
from symscan.graph.basic import Apply, Constant, SharedVariable, Variable
from symscan.graph.fg import FunctionGraph
from symscan.graph.traversal import graph_inputs, toposort
from symscan.scan.args import ScanArgs
from symscan.scan.op import Scan
from symscan.tensor.creation import Alloc
from symscan.tensor.elemwise import Elemwise
from symscan.tensor.shape import DimShuffle, Reshape
from symscan.tensor.subtensor import ARRAY, IncSubtensor, Subtensor

DRAWABLE = "a variable, a list of variables, a compiled function, a FunctionGraph or a Scan node (an Apply of Scan)"


# ---------------------------------------------------------------------------- what is drawn
@dataclass
class _Graph:
    """The graph to draw: outputs (with their item labels and kinds), roots, a loop to open."""

    outputs: list[Variable]
    labels: list[tuple[str, str]]  # (kind, label) per output
    roots: list[Variable]
    scan_node: Apply | None = None
    function: object = None


def _is_function(obj) -> bool:
    return isinstance(getattr(obj, "fgraph", None), FunctionGraph) and hasattr(obj, "outputs")


def _is_scan_node(obj) -> bool:
    return isinstance(obj, Apply) and isinstance(obj.op, Scan)


def _graph_of(obj) -> _Graph:
    if _is_function(obj):
        fgraph, n_out = obj.fgraph, len(obj.outputs)
        updates = {pos: var for var, pos in getattr(fgraph, "update_positions", {}).items()}
        labels = [(OUTPUT, _output_label(i, obj.outputs[i] if obj.outputs[i].name else fgraph.outputs[i]))
                  for i in range(n_out)]
        labels += [(UPDATE, f"{getattr(updates.get(i), 'name', None) or 'shared'} ←")
                   for i in range(n_out, len(fgraph.outputs))]
        return _Graph(list(fgraph.outputs), labels, _roots(fgraph.outputs, fgraph.inputs), function=obj)
    if isinstance(obj, FunctionGraph):
        return _Graph(list(obj.outputs), [(OUTPUT, _output_label(i, v)) for i, v in enumerate(obj.outputs)],
                      _roots(obj.outputs, obj.inputs))
    if _is_scan_node(obj):
        outputs = list(obj.outputs)
        return _Graph(outputs, [(OUTPUT, _output_label(i, v)) for i, v in enumerate(outputs)],
                      list(dict.fromkeys(v for v in obj.inputs if not isinstance(v, Constant))), scan_node=obj)
    variables = [obj] if isinstance(obj, Variable) else list(obj)
    return _Graph(variables, [(OUTPUT, _output_label(i, v)) for i, v in enumerate(variables)],
                  _roots(variables, []))


def _roots(outputs: list[Variable], inputs: list[Variable]) -> list[Variable]:
    found = graph_inputs(outputs, inputs)
    return [v for v in dict.fromkeys(list(inputs) + found) if not isinstance(v, Constant)]


def _output_label(i: int, var: Variable) -> str:
    """The output's name (``dcost/dW_in``), else ``out 0``."""
    name = (var.name or "").strip()
    if name.startswith("(") and name.endswith(")"):
        name = name[1:-1]
    return shorten(name or f"out {i}")


# ---------------------------------------------------------------------------- options
def check_options(obj, *, loops="closed", plumbing: bool = False, rewrites: str | None = None,
                  direction: str | None = None) -> None:
    """Raise a clear error for anything ``draw`` cannot do with these arguments."""
    _check_arguments(obj, plumbing=plumbing, rewrites=rewrites, direction=direction)
    _open_set(loops, _number_loops(_graph_of(obj).outputs))


def _check_arguments(obj, *, plumbing: bool, rewrites: str | None, direction: str | None) -> None:
    """The checks that need no walk over the graph (the loop names do: ``_open_set``)."""
    if not _drawable(obj):
        raise TypeError(f"draw: obj must be {DRAWABLE}; got {type(obj).__name__}. "
                        "Pass e.g. the output variable, or the function ss.function returned")
    if rewrites not in (None, "diff"):
        raise ValueError(f"draw: rewrites must be None or 'diff', got {rewrites!r}")
    if rewrites == "diff" and not _is_function(obj):
        raise ValueError(f"draw: rewrites='diff' compares a compiled function's graph before and after its "
                         f"rewrites; got {type(obj).__name__}. Pass the function ss.function returned")
    if direction not in (None, "LR", "TB"):
        raise ValueError(f"draw: direction must be 'LR' (left to right), 'TB' (top to bottom) or None, "
                         f"got {direction!r}")
    if not isinstance(plumbing, bool):
        raise TypeError(f"draw: plumbing must be True or False, got {plumbing!r}")


def _drawable(obj) -> bool:
    if isinstance(obj, (Variable, FunctionGraph)) or _is_function(obj) or _is_scan_node(obj):
        return True
    return isinstance(obj, (list, tuple)) and bool(obj) and all(isinstance(v, Variable) for v in obj)


# ---------------------------------------------------------------------------- loops
@dataclass
class _LoopInfo:
    id: str
    node: Apply
    args: ScanArgs
    parent: str | None
    roles: LoopRoles = field(init=False)

    def __post_init__(self) -> None:
        self.roles = loop_roles(self.args)


def _number_loops(outputs: list[Variable]) -> dict[Apply, _LoopInfo]:
    """Every Scan node, bodies included, numbered L1, L2, ... in a fixed pre-order walk."""
    found: dict[Apply, _LoopInfo] = {}

    def walk(nodes: list[Apply], parent: str | None) -> None:
        for node in nodes:
            if isinstance(node.op, Scan) and node not in found:
                found[node] = _LoopInfo(f"L{len(found) + 1}", node, ScanArgs.from_node(node), parent)
                walk(node.op.inner.toposort(), found[node].id)

    walk(toposort(outputs), None)
    return found


def _open_set(loops, numbered: dict[Apply, _LoopInfo]) -> frozenset[str]:
    """The ids of the loops asked open (``"closed"``, ``"open"``, or names / ids)."""
    if loops == "closed":
        return frozenset()
    if loops == "open":
        return frozenset(info.id for info in numbered.values())
    if isinstance(loops, str) or not isinstance(loops, Iterable):
        raise ValueError(f"draw: loops must be 'closed', 'open' or a list of loop names or ids, got {loops!r}")
    by_key: dict[str, set[str]] = {}
    for info in numbered.values():
        by_key.setdefault(info.id, set()).add(info.id)
        if info.args.name:
            by_key.setdefault(info.args.name, set()).add(info.id)
    chosen: set[str] = set()
    for key in loops:
        if key not in by_key:
            known = ", ".join(sorted(by_key, key=str)) or "none: the graph has no loop"
            raise ValueError(f"draw: loops names {key!r}, which is not a loop of this graph; its loops are {known}")
        chosen |= by_key[key]
    return frozenset(chosen)


# ---------------------------------------------------------------------------- references
@dataclass(frozen=True)
class _Ref:
    """Where a variable is drawn: an item (or a constant's text), and what its edge says."""

    item: str | None
    label: str = ""
    style: str = DATA
    folded: frozenset = frozenset()
    const: str = ""


def _const_text(var: Constant) -> str:
    """``1``, ``0.5``, ``[1, 2, 3]``; bigger ones ``const float64[3,4]``."""
    data = var.data
    if data.size == 1:
        return _scalar_text(data.reshape(()).item())
    if data.ndim == 1 and data.size <= 4:
        text = "[" + ", ".join(_scalar_text(v) for v in data.tolist()) + "]"
        if len(text) <= 16:
            return text
    return f"const {data.dtype}[{','.join(str(n) for n in data.shape)}]"


def _scalar_text(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _join(*labels: str) -> str:
    return shorten(" · ".join(dict.fromkeys(x for x in labels if x)))


@dataclass
class _Scope:
    """One graph being drawn: the top level or an open loop's body."""

    prefix: str
    loop: str | None
    refs: dict[Variable, _Ref] = field(default_factory=dict)
    folded: set[Apply] = field(default_factory=set)
    position: dict[Apply, int] = field(default_factory=dict)
    clients: dict[Variable, list[Apply]] = field(default_factory=dict)  # drawn readers (outputs: None)


def _set_folded(item: Item, folded: set[Apply]) -> None:
    """The badge (``+5``) and hover list of the plumbing folded into ``item``."""
    if folded:
        item.badge = f"+{len(folded)}"
        names = sorted(str(n.op).replace(", ", ",") for n in folded)  # ", " separates the list below
        counted = {name: names.count(name) for name in names}
        item.details["folded"] = shorten(", ".join(f"{k} ×{v}" if v > 1 else k for k, v in counted.items()), 200)


def _clients(nodes: list[Apply], outputs: list[Variable], folded: set[Apply]) -> dict[Variable, list]:
    found: dict[Variable, list] = {}
    for node in nodes:
        if node not in folded:
            for var in dict.fromkeys(node.inputs):
                found.setdefault(var, []).append(node)
    for var in outputs:
        found.setdefault(var, []).append(None)
    return found


# ---------------------------------------------------------------------------- the builder
class _Builder:
    def __init__(self, view: View, numbered: dict[Apply, _LoopInfo], open_ids: frozenset[str], plumbing: bool,
                 origin: dict):
        self.view, self.numbered, self.open_ids = view, numbered, open_ids
        self.plumbing, self.origin = plumbing, origin
        self.edges: dict[tuple, Edge] = {}
        self.chains: dict[str, tuple[list[str], list[str], set[Apply]]] = {}  # item -> (steps, ops, folded)

    # ----------------------------------------------------------- items and edges
    def edge(self, tail: str, head: str, label: str = "", style: str = DATA) -> None:
        key = (tail, head, label)
        if key not in self.edges:
            self.edges[key] = Edge(tail, head, label, style)
            self.view.edges.append(self.edges[key])

    def resolve(self, scope: _Scope, var: Variable) -> _Ref:
        if var in scope.refs:
            return scope.refs[var]
        if isinstance(var, Constant):
            return _Ref(None, const=_const_text(var))
        if var.owner is not None and var.owner in scope.folded:
            return _Ref(None, folded=frozenset(self._folded_above(scope, var)))
        raise KeyError(var)  # every other variable was drawn before its readers

    def _folded_above(self, scope: _Scope, var: Variable) -> set[Apply]:
        found, stack = set(), [var]
        while stack:
            v = stack.pop()
            if v.owner is not None and v.owner in scope.folded and v.owner not in found:
                found.add(v.owner)
                stack.extend(v.owner.inputs)
        return found

    def connect(self, scope: _Scope, head: str, inputs: list[Variable], labels: list[str] | None = None,
                style: str | None = None) -> tuple[set[Apply], list[str]]:
        """Edges from ``inputs`` into item ``head``; returns the folded nodes and constants met."""
        folded, consts, first = set(), [], None
        for i, var in enumerate(inputs):
            ref = self.resolve(scope, var)
            folded |= ref.folded
            if ref.item is None:
                if ref.const:
                    consts.append(ref.const if labels is None else f"{labels[i]} = {ref.const}")
                continue
            label = _join(ref.label, labels[i] if labels else "")
            key = (ref.item, head, label, style or ref.style)
            first = key if first is None else first
            self.edge(*key)
        if consts and first is not None and labels is None:
            old = self.edges.pop(first[:3])
            self.view.edges.remove(old)
            self.edge(first[0], head, _join(first[2], ", ".join(consts)), first[3])
            consts = []
        return folded, consts

    def add_item(self, item: Item, folded: set[Apply] = frozenset(), consts: list[str] = ()) -> Item:
        _set_folded(item, folded)
        if consts:
            item.label += "\n(" + ", ".join(consts) + ")"
        item.label = shorten_lines(item.label)
        return self.view.add(item)

    # ----------------------------------------------------------- graphs
    def draw_graph(self, scope: _Scope, nodes: list[Apply], outputs: list[Variable], roots=()) -> None:
        scope.position = {node: i for i, node in enumerate(nodes)}
        if not self.plumbing:
            scope.folded = plumbing_nodes(nodes, outputs, roots)
            scope.clients = _clients(nodes, outputs, scope.folded)
        for node in nodes:
            if node in scope.folded:
                continue
            through = None if self.plumbing else pass_through_label(node)
            if through is not None:
                self.pass_through(scope, node, through)
            elif isinstance(node.op, Scan):
                self.draw_loop(scope, node)
            elif self.plumbing or not self.draw_readable(scope, node):
                self.draw_op(scope, node)

    def pass_through(self, scope: _Scope, node: Apply, label: str) -> None:
        ref = self.resolve(scope, node.inputs[0])
        folded = set(ref.folded)
        for var in node.inputs[1:]:
            folded |= self.resolve(scope, var).folded if not isinstance(var, Constant) else set()
        folded.add(node)
        scope.refs[node.outputs[0]] = _Ref(ref.item, _join(ref.label, label), ref.style, frozenset(folded),
                                           ref.const)
        if ref.item is not None:
            self.origin.setdefault(node, ref.item)

    def draw_op(self, scope: _Scope, node: Apply) -> None:
        item_id = f"{scope.prefix}n{scope.position[node]}"
        folded, consts = self.connect(scope, item_id, node.inputs)
        item = Item(item_id, OP, op_label(node), details=item_details(node), loop=scope.loop,
                    search=search_text(node))
        self.add_item(item, folded, consts)
        self.origin[node] = item_id
        many = len(node.outputs) > 1
        for i, out in enumerate(node.outputs):
            scope.refs[out] = _Ref(item_id, f"out {i}" if many else "")

    # ----------------------------------------------------------- layout ops, indexing and fills, readable
    def draw_readable(self, scope: _Scope, node: Apply) -> bool:
        """Draw ``node`` in Python notation (``[::-1]``, ``.T``, ``zeros like``), layout steps folded into
        one item per chain; False when it has no such form."""
        step = self.layout_step(scope, node)
        if step is not None:
            self.layout_op(scope, node, step)
            return True
        op = node.op
        if isinstance(op, (Subtensor, IncSubtensor)):
            self.index_op(scope, node)
            return True
        value = node.inputs[0] if isinstance(op, Alloc) else node.inputs[1] if _is_second(node) else None
        if isinstance(value, Constant) and value.data.size == 1:
            text = _const_text(value)
            label = fill_label(text) if not isinstance(op, Alloc) else fill_label(text).replace(" like", "")
            readers = [v for v in node.inputs if v is not value]
            self.op_item(scope, node, label, readers, [])
            return True
        return False

    def _is_drawn(self, scope: _Scope, var: Variable) -> bool:
        return not isinstance(var, Constant) and self.resolve(scope, var).item is not None

    def layout_step(self, scope: _Scope, node: Apply) -> str | None:
        """The step text of a layout-only op (a slice by constants or folded shapes, DimShuffle, Reshape)."""
        op, extra = node.op, node.inputs[1:]
        if any(self._is_drawn(scope, v) for v in extra):
            return None
        if isinstance(op, Subtensor) and ARRAY not in op.spec:
            return index_label(op.spec, _distinct([(v, index_value_text(v, False)) for v in extra]))
        if isinstance(op, DimShuffle):
            return dimshuffle_label(op.input_ndim, op.new_order)
        if isinstance(op, Reshape):
            return "reshape"
        return None

    def _readers(self, scope: _Scope, var: Variable) -> int:
        """How many drawn things read ``var``, looking through pass-through nodes."""
        total = 0
        for reader in scope.clients.get(var, []):
            through = reader is not None and pass_through_label(reader) is not None and reader.inputs[0] is var
            total += self._readers(scope, reader.outputs[0]) if through else 1
        return total

    def layout_op(self, scope: _Scope, node: Apply, step: str) -> None:
        data = node.inputs[0]
        ref = self.resolve(scope, data)
        folded = set().union(*(self.resolve(scope, v).folded for v in node.inputs[1:] if not isinstance(v, Constant)))
        if ref.item in self.chains and ref.style == DATA and self._readers(scope, data) == 1:
            steps, ops, chain_folded = self.chains[ref.item]
            steps.append(step)
            ops.append(str(node.op) + (f" ({ref.label})" if ref.label else ""))
            chain_folded |= folded | ref.folded
            item = self.view.items[ref.item]
            item.label = chain_label(steps)
            item.details["chain"] = shorten(" → ".join(ops), 300)
            item.details.update(type_details(node.outputs[0]))
            _set_folded(item, chain_folded)
            self.origin[node] = ref.item
            scope.refs[node.outputs[0]] = _Ref(ref.item)
            return
        item = self.op_item(scope, node, chain_label([step]), [data], folded)
        self.chains[item.id] = ([step], [str(node.op)], set(folded) | set(self.resolve(scope, data).folded))

    def index_op(self, scope: _Scope, node: Apply) -> None:
        """``x[i, 1:]`` with a drawn index as ``?``; ``x[i] +=`` / ``x[i] =`` for IncSubtensor."""
        op = node.op
        data = node.inputs[:2] if isinstance(op, IncSubtensor) else node.inputs[:1]
        index = node.inputs[len(data):]
        label = index_label(op.spec, _distinct([(v, index_value_text(v, self._is_drawn(scope, v))) for v in index]))
        if isinstance(op, IncSubtensor):
            label += " =" if op.set_instead_of_inc else " +="
        drawn = [v for v in index if self._is_drawn(scope, v)]
        folded = set().union(*(self.resolve(scope, v).folded for v in index if not isinstance(v, Constant)))
        self.op_item(scope, node, label, list(data) + drawn, folded)

    def op_item(self, scope: _Scope, node: Apply, label: str, inputs: list[Variable], folded: set[Apply]) -> Item:
        """An op's item with ``label``, edges from ``inputs`` only (the rest is in the label or folded)."""
        item_id = f"{scope.prefix}n{scope.position[node]}"
        more, consts = self.connect(scope, item_id, inputs)
        item = Item(item_id, OP, label, details=item_details(node), loop=scope.loop, search=search_text(node))
        self.add_item(item, set(folded) | more, consts)
        self.origin[node] = item_id
        for out in node.outputs:
            scope.refs[out] = _Ref(item_id)
        return item

    # ----------------------------------------------------------- loops
    def draw_loop(self, scope: _Scope, node: Apply) -> None:
        info = self.numbered[node]
        self.origin[node] = info.id
        if info.id in self.open_ids:
            self.view.loops[info.id].open = True
            self.open_loop(scope, info)
        else:
            self.closed_loop(scope, info)

    def closed_loop(self, scope: _Scope, info: _LoopInfo) -> None:
        roles, loop = info.roles, self.view.loops[info.id]
        inputs = list(info.node.inputs)
        steps_ref = self.resolve(scope, inputs[0])
        labels = [role for _, role in roles.outer_inputs]
        if steps_ref.item is None:
            inputs, labels = inputs[1:], labels[1:]
        folded, consts = self.connect(scope, info.id, inputs, labels)
        item = Item(info.id, LOOP, _loop_label(loop, kinds_summary(info.args)), details=item_details(info.node),
                    loop=scope.loop, search=search_text(info.node) + " " + loop.title)
        item.details.pop("type", None)
        item.details.pop("shape", None)
        if consts:
            item.details["constants"] = shorten(", ".join(consts), 200)
        self.add_item(item, folded)
        for var, label in zip(info.node.outputs, roles.outer_outputs):
            scope.refs[var] = _Ref(info.id, label)

    def open_loop(self, scope: _Scope, info: _LoopInfo) -> None:
        roles, args, loop_id = info.roles, info.args, info.id
        inner = info.node.op.inner
        body = _Scope(prefix=f"{loop_id}/", loop=loop_id)
        steps_ref = self.resolve(scope, args.n_steps)
        if steps_ref.item is not None:
            port = self.add_item(Item(f"{loop_id}/steps", PORT_IN, "n_steps", loop=loop_id, search="n_steps"))
            self.edge(steps_ref.item, port.id, steps_ref.label, CROSSING)
        outer_of, hidden = _outer_of_inner(args), []
        for k, (var, (kind, role)) in enumerate(zip(inner.inputs, roles.inner_inputs)):
            port_id = f"{loop_id}/in{k}"
            ref = self.resolve(scope, outer_of[var])
            if ref.item is None and not ref.const:  # plumbing passed in: folded inside too
                body.refs[var] = ref
                hidden.append(var)
                continue
            label = role if ref.item is not None or not ref.const else f"{role}\n= {ref.const}"
            item = Item(port_id, PORT_IN, label, details={"role": kind, **type_details(var)}, loop=loop_id,
                        search=f"{role} {var.name or ''}")
            self.add_item(item, set(ref.folded))
            if ref.item is not None:
                self.edge(ref.item, port_id, ref.label, CROSSING)
            body.refs[var] = _Ref(port_id)
            self.origin[var] = port_id
        self.draw_graph(body, inner.toposort(), list(inner.outputs), hidden)
        self.close_body(scope, body, info, roles)

    def close_body(self, scope: _Scope, body: _Scope, info: _LoopInfo, roles) -> None:
        loop_id, inner = info.id, info.node.op.inner
        for k, (var, (kind, role)) in enumerate(zip(inner.outputs, roles.inner_outputs)):
            port_id = f"{loop_id}/out{k}"
            folded, consts = self.connect(body, port_id, [var], [""])
            label = role if not consts else f"{role}\n{consts[0].lstrip(' =')}"
            self.add_item(Item(port_id, PORT_OUT, label, details={"role": kind, **type_details(var)},
                               loop=loop_id, search=role), folded)
        for out_index, in_index in roles.feedback:
            self.edge(f"{loop_id}/out{out_index}", f"{loop_id}/in{in_index}", "", RECURRENCE)
        for k, var in enumerate(info.node.outputs):
            scope.refs[var] = _Ref(f"{loop_id}/out{k}", "", CROSSING)


def _distinct(texts: list[tuple[Variable, str]]) -> list[str]:
    """Index texts where two different folded values never read the same (``[n:m]``, not ``[n:n]``)."""
    seen: dict[str, Variable] = {}
    renamed: dict[Variable, str] = {}
    out = []
    for var, text in texts:
        if text not in ("?",) and not text.lstrip("-").isdigit():
            if var in renamed:
                text = renamed[var]
            elif text in seen and seen[text] is not var:
                text = renamed[var] = next(f"{c}" for c in "mkjpq" + "?" if c not in seen)
            seen.setdefault(text, var)
        out.append(text)
    return out


def _is_second(node: Apply) -> bool:
    return isinstance(node.op, Elemwise) and node.op.name == "second" and len(node.inputs) == 2


def _outer_of_inner(args: ScanArgs) -> dict[Variable, Variable]:
    pairs: dict[Variable, Variable] = {}
    for s in args.sequences:
        pairs.update((v, s.outer) for v in s.inner)
    for r in args.recurrent:
        pairs.update((v, r.outer_init) for v in r.inner_in)
    pairs.update((s.inner_in, s.outer) for s in args.shared)
    pairs.update((n.inner, n.outer) for n in args.non_seqs)
    return pairs


def _loop_label(loop: Loop, kinds: str) -> str:
    """``scan rnn`` / ``T steps`` / ``seq 1 · sit-sot 1 · non-seq 2``, lines kept short."""
    head = f"{loop.title} · {loop.steps}"
    lines = [head] if len(head) <= 28 else [loop.title, loop.steps]
    return shorten_lines("\n".join(lines + _wrap(kinds)))


def _wrap(text: str, width: int = 28) -> list[str]:
    lines: list[str] = []
    for part in text.split(" · ") if text else []:
        if lines and len(lines[-1]) + 3 + len(part) <= width:
            lines[-1] += " · " + part
        else:
            lines.append(part)
    return lines


# ---------------------------------------------------------------------------- entry point
def build_view(obj, *, loops="closed", plumbing: bool = False, rewrites: str | None = None,
               direction: str | None = None) -> View:
    """The view of ``obj`` with the loops ``loops`` open (``"closed"``, ``"open"``, names or ids).

    With ``rewrites="diff"`` (a compiled function), every loop is drawn open and
    ``symscan.drawing.diff.mark(view, function, origin)`` marks what the rewrites changed.
    ``origin`` maps each drawn graph object of ``function.fgraph`` (the optimised graph) to
    the id of the item drawing it: every Apply node drawn as an op (outer and in loop bodies)
    -> its item id; every Scan Apply node -> its loop id; every root Variable drawn (inputs,
    shared variables) -> its item id; every loop body's inner input Variable -> its PORT_IN id.
    Folded plumbing nodes are absent; a pass-through node (a check, SumToShape) maps to the
    item its data input comes from.
    """
    _check_arguments(obj, plumbing=plumbing, rewrites=rewrites, direction=direction)
    graph = _graph_of(obj)
    numbered = _number_loops(graph.outputs)
    asked = frozenset(info.id for info in numbered.values()) if rewrites == "diff" else _open_set(loops, numbered)
    if graph.scan_node is not None:
        asked = asked | {numbered[graph.scan_node].id}
    view = View(direction=direction or "LR", title=_title(obj))
    for info in numbered.values():
        view.loops[info.id] = Loop(info.id, loop_title(info.args), loop_steps(info.args),
                                   inputs=list(info.roles.outer_inputs[1:]), outputs=list(info.roles.inner_outputs),
                                   parent=info.parent)
    open_ids = frozenset(i for i in asked if all(a in asked for a in view.ancestors(i)))
    origin: dict = {}
    _draw(view, graph, _Builder(view, numbered, open_ids, plumbing, origin))
    if rewrites == "diff":
        from symscan.drawing.diff import mark

        mark(view, obj, origin)
    return view


def _draw(view: View, graph: _Graph, builder: _Builder) -> None:
    top = _Scope(prefix="", loop=None)
    for k, var in enumerate(graph.roots):
        kind = SHARED if isinstance(var, SharedVariable) else INPUT
        item = view.add(Item(f"in{k}", kind, root_label(var), details=type_details(var), search=var.name or ""))
        top.refs[var] = _Ref(item.id)
        builder.origin[var] = item.id
    nodes = toposort(graph.outputs, graph.roots if graph.scan_node is not None else ())
    builder.draw_graph(top, nodes, graph.outputs)
    for k, (var, (kind, label)) in enumerate(zip(graph.outputs, graph.labels)):
        item_id = f"out{k}" if kind == OUTPUT else f"up{k}"
        folded, consts = builder.connect(top, item_id, [var])
        builder.add_item(Item(item_id, kind, label, details=type_details(var), search=var.name or ""), folded,
                         consts)


def _title(obj) -> str:
    if _is_function(obj):
        return f"function {obj.name}" if getattr(obj, "name", None) else "function"
    if _is_scan_node(obj):
        return str(obj.op)
    if isinstance(obj, Variable):
        return obj.name or ""
    return ""
