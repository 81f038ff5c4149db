"""What the rewrites changed in a compiled function: ``compare`` matches the user's graph with
the rewritten one, ``mark`` writes the result onto a picture (``ss.draw(f, rewrites="diff")``).

Matching is structural, in one pass over each graph (linear in the number of nodes):

- every variable gets a *signature*, an interned integer: roots by identity (the user's inputs
  map to the rewritten graph's inputs by position, shared variables are not copied), constants
  by value, a node's outputs by (op, the signatures of its inputs, output index);
- inside a loop body an inner input is signed by its role and the outer value: a non-sequence
  *is* its outer value (so work pushed out of a loop matches its replacement outside), a
  sequence tap is ("row of", the outer value, tap), a state is (loop, initial value, tap);
- a node of the rewritten graph that is the very copy of a user node (the copy
  ``FunctionGraph(clone=True)`` made and the rewrites kept, only rewiring its inputs) matches
  it whatever its inputs became; otherwise it matches a user node with its signature, then a
  loop-body node that reads whole sequences where the body read rows (moved and vectorised),
  then a node that differs only in constant inputs (folded constants). A match carries the
  user node's signature forward, so what is computed from it matches too.

Each user node matches at most one node of the rewritten graph: of two merged duplicates one
is reported removed. Loops are "the same loop" when the copy kept the Scan node, or else when
they sit at the same place (top level, or the same matched loop's body), have the same name,
and share the most outer inputs (the first in order on a tie). A loop matched to none was
removed; the nodes of its body are not listed one by one (the loop stands for them), except
those found again elsewhere (moved out before the loop went).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from symscan.graph.basic import Apply, Constant, SharedVariable, Variable
from symscan.graph.traversal import toposort
from symscan.scan.args import ScanArgs
from symscan.scan.op import Scan

if TYPE_CHECKING:
    from symscan.drawing.model import View

SLICING = ("Subtensor", "DimShuffle", "Reshape")
"""Op classes a vectorised copy adds or drops around a sequence (looked through when matching moves)."""
_CONST = -1  # stands for "some constant" in the folded-constants key


def loop_title(node: Apply) -> str:
    """The name a loop is shown by: its ``name=`` (``"scan"`` when it has none)."""
    return node.op.info.name or "scan"


@dataclass
class RewriteDiff:
    """What the rewrites did, node by node.

    ``added``: nodes of ``f.fgraph`` (outer or in loop bodies) matching no user node, in
    topological order; ``moved``: nodes of ``f.fgraph`` outside a loop whose user counterpart
    was in that loop's body -> the loop's title; ``removed``: (user node, the user Scan node whose
    body held it, or None at top level), in topological order; ``counterpart``: user variable ->
    ``f.fgraph`` variable, for matched ones; ``loops``: user Scan node -> its Scan node in
    ``f.fgraph`` (None: the loop was removed); ``where``: every user node -> the user Scan node
    whose body holds it (None: top level), in topological order.
    """

    added: list[Apply] = field(default_factory=list)
    moved: dict[Apply, str] = field(default_factory=dict)
    removed: list[tuple[Apply, Apply | None]] = field(default_factory=list)
    counterpart: dict[Variable, Variable] = field(default_factory=dict)
    loops: dict[Apply, Apply | None] = field(default_factory=dict)
    where: dict[Apply, Apply | None] = field(default_factory=dict)

    def summary(self) -> str:
        return (f"rewrites: {len(self.removed)} removed, {len(self.added)} added, "
                f"{len(self.moved)} moved out of loops")

    def __bool__(self) -> bool:
        return bool(self.added or self.moved or self.removed)


def compare(function) -> RewriteDiff:
    """Match the graph ``function`` was built from with its rewritten graph (``f.fgraph``)."""
    if not hasattr(function, "fgraph") or not hasattr(function, "inputs"):
        raise TypeError(f"compare(function) needs a compiled function (ss.function(...)), got "
                        f"{type(function).__name__}; compile the graph first")
    matcher = _Matcher(function)
    matcher.sign_before()
    matcher.match_after()
    return matcher.result()


@dataclass
class _Side:
    """One graph's signatures: ``sig`` (variable -> signature), ``strip`` (the signature with
    slicing and sequence taps looked through), ``where`` (node -> Scan node whose body holds
    it, None at top level; in topological order)."""

    sig: dict[Variable, int] = field(default_factory=dict)
    strip: dict[Variable, int] = field(default_factory=dict)
    where: dict[Apply, Apply | None] = field(default_factory=dict)


class _Matcher:
    """Signs the user's graph (``before``), then walks the rewritten one (``after``) matching
    each node as it goes (see the module docstring for the order of attempts)."""

    def __init__(self, function):
        self.function, self.fgraph = function, function.fgraph
        self.table: dict[tuple, int] = {}
        self.consts: set[int] = set()
        self.stacked: dict[int, int] = {}  # signature of a vectorised copy -> its row's signature
        self.before, self.after = _Side(), _Side()
        self.by_key: dict[int, list[Apply]] = {}
        self.by_relaxed: dict[int, list[Apply]] = {}
        self.by_folded: dict[int, list[Apply]] = {}
        self.loop_tokens: dict[Apply, int] = {}  # user Scan node -> its token
        self.loop_inputs: dict[Apply, set[int]] = {}  # user Scan node -> its outer inputs' signatures
        self.match: dict[Apply, Apply] = {}  # user node -> its node in f.fgraph
        self.back: dict[Apply, Apply] = {}  # f.fgraph Scan node -> the user's
        self.added: list[Apply] = []
        self.moved: dict[Apply, str] = {}
        self.clone_of = {copy.owner: var.owner for var, copy in self.fgraph.memo.items()
                         if copy.owner is not None and var.owner is not None}

    def intern(self, key: tuple) -> int:
        return self.table.setdefault(key, len(self.table))

    # ------------------------------------------------------------------ signatures
    def leaf(self, side: _Side, var: Variable) -> int:
        sig = side.sig.get(var)
        if sig is None:
            if isinstance(var, Constant):
                sig = self.intern(("const", var.signature()))
                self.consts.add(sig)
            elif isinstance(var, SharedVariable):
                sig = self.intern(("shared", id(var)))
            else:
                sig = self.intern(("root", id(var)))
            side.sig[var] = sig
        return sig

    def stripped(self, side: _Side, var: Variable) -> int:
        chain = []
        while var not in side.strip and var.owner is not None and type(var.owner.op).__name__ in SLICING:
            chain.append(var)
            var = var.owner.inputs[0]
        base = side.strip.get(var)
        base = self.leaf(side, var) if base is None else base
        base = self.stacked.get(base, base)  # a vectorised copy stands for its row
        for v in chain:
            side.strip[v] = base
        return base

    def sign_outputs(self, side: _Side, node: Apply, key: int, inputs: list[int]) -> None:
        constant = bool(inputs) and all(s in self.consts for s in inputs)
        for index, out in enumerate(node.outputs):
            side.sig[out] = sig = self.intern(("out", key, index))
            if constant:
                self.consts.add(sig)

    def row_of(self, outer: int, tap: int) -> int:
        if tap == 0 and outer in self.stacked:
            return self.stacked[outer]
        return self.intern(("row", outer, tap))

    def sign_inner_inputs(self, side: _Side, args: ScanArgs, token: int) -> None:
        for seq in args.sequences:
            outer = self.leaf(side, seq.outer)
            for var, tap in zip(seq.inner, seq.taps):
                side.sig[var] = self.row_of(outer, tap)
                side.strip[var] = self.stripped(side, seq.outer)
        for rec in args.recurrent:
            init = self.leaf(side, rec.outer_init)
            for var, tap in zip(rec.inner_in, rec.taps):
                side.sig[var] = self.intern(("state", token, init, tap))
        for state in args.shared:
            side.sig[state.inner_in] = self.intern(("shared state", token, self.leaf(side, state.outer)))
        for non_seq in args.non_seqs:  # the same value as outside
            side.sig[non_seq.inner] = self.leaf(side, non_seq.outer)
            side.strip[non_seq.inner] = self.stripped(side, non_seq.outer)

    def sign_loop_outputs(self, side: _Side, args: ScanArgs, token: int) -> None:
        for kind, entries in (("mit-sot", args.mit_sot), ("sit-sot", args.sit_sot), ("nit-sot", args.nit_sot)):
            for entry in entries:
                if entry.outer_out is not None:
                    init = None if kind == "nit-sot" else self.leaf(side, entry.outer_init)
                    side.sig[entry.outer_out] = self.intern(
                        ("loop out", token, kind, self.leaf(side, entry.inner_out), init))
        for state in args.shared:
            if state.outer_out is not None:
                side.sig[state.outer_out] = self.intern(("loop out", token, "shared", self.leaf(side, state.outer)))

    def relaxed_key(self, side: _Side, node: Apply) -> int:
        """The op and its inputs with slicing, sequence taps and constants looked through."""
        inputs = (self.stripped(side, v) for v in node.inputs)
        return self.intern(("relaxed", node.op, tuple(_CONST if s in self.consts else s for s in inputs)))

    def folded_key(self, node: Apply, inputs: list[int]) -> int | None:
        if not any(s in self.consts for s in inputs):
            return None
        return self.intern(("folded", node.op, tuple(_CONST if s in self.consts else s for s in inputs)))

    # ------------------------------------------------------------------ the user's graph
    def sign_before(self) -> None:
        f = self.function
        for position, var in enumerate(f.inputs):
            self.before.sig[var] = self.intern(("input", position))
        self.walk_before(list(f.outputs) + [new for _, new in f.updates], f.inputs, None)

    def walk_before(self, outputs: list[Variable], stop: list[Variable], loop: Apply | None) -> None:
        side = self.before
        for node in toposort(outputs, stop_at=stop):
            side.where[node] = loop
            if isinstance(node.op, Scan):
                self.before_loop(node)
                continue
            inputs = [self.leaf(side, v) for v in node.inputs]
            key = self.intern((node.op, tuple(inputs)))
            self.sign_outputs(side, node, key, inputs)
            self.by_key.setdefault(key, []).append(node)
            folded = self.folded_key(node, inputs)
            if folded is not None:
                self.by_folded.setdefault(folded, []).append(node)
            if loop is not None:
                self.by_relaxed.setdefault(self.relaxed_key(side, node), []).append(node)

    def before_loop(self, node: Apply) -> None:
        token = self.intern(("loop", len(self.loop_tokens)))
        self.loop_tokens[node] = token
        self.loop_inputs[node] = {self.leaf(self.before, v) for v in node.inputs}
        args = ScanArgs.from_node(node)
        self.sign_inner_inputs(self.before, args, token)
        self.walk_before(args.inner_outputs(), args.inner_inputs(), node)
        self.sign_loop_outputs(self.before, args, token)

    # ------------------------------------------------------------------ the rewritten graph
    def match_after(self) -> None:
        for position, var in enumerate(self.fgraph.inputs):
            self.after.sig[var] = self.intern(("input", position))
        self.walk_after(list(self.fgraph.outputs), self.fgraph.inputs, None)

    def walk_after(self, outputs: list[Variable], stop: list[Variable], loop: Apply | None) -> None:
        side, here = self.after, self.user_loop(loop)
        for node in toposort(outputs, stop_at=stop):
            side.where[node] = loop
            if isinstance(node.op, Scan):
                self.after_loop(node, here)
                continue
            inputs = [self.leaf(side, v) for v in node.inputs]
            key = self.intern((node.op, tuple(inputs)))
            self.sign_outputs(side, node, key, inputs)
            twin, stacked = self.find(node, key, inputs, here)
            if twin is None:
                self.added.append(node)
                continue
            self.match[twin] = node
            for mine, theirs in zip(node.outputs, twin.outputs):
                sig = self.before.sig[theirs]
                if stacked:
                    self.stacked[self.intern(("stacked", sig))] = sig
                    sig = self.intern(("stacked", sig))
                side.sig[mine] = sig
            holder = self.before.where[twin]
            if holder is not None and holder != here and self.inside(holder, here):
                self.moved[node] = loop_title(holder)

    def user_loop(self, loop: Apply | None) -> Apply | None:
        """The user's Scan node a loop of f.fgraph stands for (None: top level; a fresh object
        when the loop is new, so that nothing of the user's graph is found there)."""
        return None if loop is None else self.back.get(loop, loop)

    def inside(self, holder: Apply | None, outer: Apply | None) -> bool:
        """Whether the user loop ``holder`` lies (at any depth) inside ``outer``'s body."""
        while holder is not None:
            holder = self.before.where.get(holder)
            if holder == outer:
                return True
        return False

    def find(self, node: Apply, key: int, inputs: list[int], here: Apply | None) -> tuple[Apply | None, bool]:
        """The user node ``node`` stands for, and whether it is a vectorised copy of it."""
        twin = self.clone_of.get(node) or (node if node in self.before.where else None)
        if twin is not None and twin not in self.match and not isinstance(twin.op, Scan):
            return twin, False
        found = self.pick(self.by_key.get(key), here, same_only=False)
        if found is not None:
            return found, False
        found = self.pick(self.by_relaxed.get(self.relaxed_key(self.after, node)), here, same_only=False)
        if found is not None and self.inside(self.before.where[found], here):
            return found, True
        folded = self.folded_key(node, inputs)
        return self.pick(self.by_folded.get(folded), here, same_only=True), False

    def pick(self, candidates: list[Apply] | None, here: Apply | None, same_only: bool) -> Apply | None:
        """An unmatched candidate: at the same place first, then inside a loop below it."""
        if not candidates:
            return None
        free = [c for c in candidates if c not in self.match]
        for c in free:
            if self.before.where[c] == here:
                return c
        if same_only:
            return None
        for c in free:
            if self.inside(self.before.where[c], here):
                return c
        return None

    def after_loop(self, node: Apply, here: Apply | None) -> None:
        """Match a loop of f.fgraph with the user loop it stands for (or call it added), then its body."""
        twin = self.clone_of.get(node)
        if twin is None or twin in self.match:
            twin = self.similar_loop(node, here)
        if twin is None:
            token = self.intern(("new loop", id(node)))
            self.added.append(node)
        else:
            self.match[twin], self.back[node] = node, twin
            token = self.loop_tokens[twin]
        args = ScanArgs.from_node(node)
        self.sign_inner_inputs(self.after, args, token)
        self.walk_after(args.inner_outputs(), args.inner_inputs(), node)
        self.sign_loop_outputs(self.after, args, token)

    def similar_loop(self, node: Apply, here: Apply | None) -> Apply | None:
        """An unmatched user loop at the same place: of the same name if any (else one sharing
        an outer input), sharing the most outer inputs, the first on a tie."""
        places = [s for s in self.loop_tokens if s not in self.match and self.before.where[s] == here]
        named = [s for s in places if loop_title(s) == loop_title(node)]
        inputs = {self.leaf(self.after, v) for v in node.inputs}
        scored = [(len(inputs & self.loop_inputs[s]), -i, s) for i, s in enumerate(named or places)]
        if not scored:
            return None
        score, _, best = max(scored, key=lambda t: t[:2])
        return best if named or score > 0 else None

    # ------------------------------------------------------------------ the result
    def result(self) -> RewriteDiff:
        diff = RewriteDiff(added=self.added, moved=self.moved, where=self.before.where)
        for node, holder in self.before.where.items():
            if node not in self.match and not self.in_removed_loop(holder):
                diff.removed.append((node, holder))
        for user, mine in zip(self.function.inputs, self.fgraph.inputs):
            diff.counterpart[user] = mine
        for var in self.fgraph.shared_variables:
            diff.counterpart[var] = var
        for node, mine in self.match.items():
            if isinstance(node.op, Scan):
                self.loop_counterparts(node, mine, diff.counterpart)
            else:
                diff.counterpart.update(zip(node.outputs, mine.outputs))
        diff.loops = {s: self.match.get(s) for s in self.loop_tokens}
        return diff

    def in_removed_loop(self, holder: Apply | None) -> bool:
        while holder is not None:
            if holder not in self.match:
                return True
            holder = self.before.where[holder]
        return False

    def loop_counterparts(self, node: Apply, mine: Apply, counterpart: dict) -> None:
        """A matched loop's outer outputs and inner inputs, paired by signature."""
        mine_args = ScanArgs.from_node(mine)
        theirs = {self.after.sig[v]: v for v in list(mine.outputs) + mine_args.inner_inputs() if v in self.after.sig}
        for var in list(node.outputs) + ScanArgs.from_node(node).inner_inputs():
            found = theirs.get(self.before.sig.get(var))
            if found is not None:
                counterpart[var] = found


# ---------------------------------------------------------------------------- marking a view
def mark(view: View, function, origin: dict) -> None:
    """Mark on ``view`` (``function.fgraph`` drawn with every loop open) what the rewrites did.

    ``origin`` maps each drawn object of ``f.fgraph`` to its item (see ``build_view``). Items
    of added and moved nodes get a status and a ``"rewrites"`` detail; removed nodes become
    items of their own (``R1``, ``R2``, ... in topological order of the user's graph) with
    edges from what they read and to what read them, inside the open loop that held them
    (top level when that loop is gone). Removed plumbing (shape bookkeeping, checks) is drawn
    only when the view draws plumbing.
    """
    from symscan.drawing.model import ADDED, MOVED

    diff = compare(function)
    owned = _owned_items(origin)
    added = sum(_set_status(view, node, origin, owned, ADDED, "added by rewrites") for node in diff.added)
    moved = sum(_set_status(view, node, origin, owned, MOVED, f"moved out of loop {title!r}")
                for node, title in diff.moved.items())
    removed = _Removed(view, function, diff, origin, _plumbing_drawn(function, origin, owned)).draw()
    text = f"rewrites: {removed} removed, {added} added, {moved} moved out of loops"
    view.title = f"{view.title} · {text}" if view.title else text


def _owned_items(origin: dict) -> dict[Apply, str]:
    """Nodes drawn as their own item: not a pass-through, which maps to its input's item."""
    owned = {}
    for obj, item in origin.items():
        if isinstance(obj, Apply) and not any(origin.get(v.owner) == item or origin.get(v) == item
                                              for v in obj.inputs):
            owned[obj] = item
    return owned


def _set_status(view, node: Apply, origin: dict, owned: dict, status: str, note: str) -> bool:
    """Mark the item (or the loop) drawing ``node``; whether there was one."""
    if isinstance(node.op, Scan):
        loop_id = origin.get(node)
        if loop_id not in view.loops:
            return False
        view.loops[loop_id].status = status
        item = view.items.get(loop_id)
    else:
        item = view.items.get(owned.get(node))
    if item is not None:
        item.status = status
        item.details["rewrites"] = note
    return item is not None or isinstance(node.op, Scan)


def _plumbing_drawn(function, origin: dict, owned: dict) -> bool:
    """Whether the view draws plumbing: a node it folds by default has an item of its own."""
    from symscan.drawing.plumbing import plumbing_nodes

    graph = function.fgraph
    return any(node in owned for node in plumbing_nodes(graph.toposort(), list(graph.outputs)))


class _Removed:
    """Draws the removed nodes of a diff onto a view, with their edges."""

    def __init__(self, view, function, diff: RewriteDiff, origin: dict, plumbing: bool):
        self.view, self.function, self.diff, self.origin = view, function, diff, origin
        self.ids: dict[Apply, str] = {}
        self.hidden = set() if plumbing else self.folded_plumbing()
        self.edges: set[tuple[str, str]] = {(e.tail, e.head) for e in view.edges}

    def folded_plumbing(self) -> set[Apply]:
        """The user graph's plumbing and pass-through nodes, as the view folds them, level by level."""
        from symscan.drawing.plumbing import pass_through_label, plumbing_nodes

        levels: dict[Apply | None, list[Apply]] = {}
        for node, holder in self.diff.where.items():
            levels.setdefault(holder, []).append(node)
        hidden = {n for n in self.diff.where if pass_through_label(n) is not None}
        for holder, nodes in levels.items():
            outputs = (ScanArgs.from_node(holder).inner_outputs() if holder is not None
                       else list(self.function.outputs) + [new for _, new in self.function.updates])
            hidden |= plumbing_nodes(nodes, outputs)
        return hidden

    def draw(self) -> int:
        for node, holder in self.diff.removed:
            if node in self.hidden:
                continue
            parent = self.origin.get(self.diff.loops.get(holder)) if holder is not None else None
            if holder is not None and (parent not in self.view.loops or not self.view.loops[parent].open):
                continue  # inside a loop drawn closed: the box stands for it
            self.ids[node] = f"R{len(self.ids) + 1}"
            self.add_item(node, self.ids[node], parent)
        for node, rid in self.ids.items():
            for var in node.inputs:
                self.edge(self.source(var), rid)
        self.edges_out()
        return len(self.ids)

    def add_item(self, node: Apply, rid: str, parent: str | None) -> None:
        from symscan.drawing.describe import item_details, op_label, search_text
        from symscan.drawing.model import LOOP, OP, REMOVED, Item, Loop

        details = {**item_details(node), "rewrites": "removed by rewrites"}
        if not isinstance(node.op, Scan):
            self.view.add(Item(rid, OP, op_label(node), details=details, loop=parent, status=REMOVED,
                               search=search_text(node)))
            return
        from symscan.drawing.roles import kinds_summary, loop_roles, loop_steps, loop_title

        args = ScanArgs.from_node(node)
        roles = loop_roles(args)
        loop = Loop(rid, loop_title(args), loop_steps(args), inputs=list(roles.outer_inputs[1:]),
                    outputs=list(roles.inner_outputs), parent=parent, status=REMOVED)
        self.view.loops[rid] = loop
        for key in ("type", "shape"):
            details.pop(key, None)
        label = "\n".join(line for line in (f"{loop.title} · {loop.steps}", kinds_summary(args)) if line)
        self.view.add(Item(rid, LOOP, _short(label), details=details, loop=parent, status=REMOVED,
                           search=f"{search_text(node)} {loop.title}"))

    def source(self, var: Variable) -> str | None:
        """The item a user variable's value is drawn at: a removed node's, or its counterpart's."""
        if var.owner in self.ids:
            return self.ids[var.owner]
        mine = self.diff.counterpart.get(var)
        if mine is None:
            return None
        if mine.owner is None:
            return self.origin.get(mine)
        found = self.origin.get(mine.owner)
        if isinstance(mine.owner.op, Scan) and found in self.view.loops and self.view.loops[found].open:
            return f"{found}/out{mine.owner.outputs.index(mine)}"
        return found

    def edges_out(self) -> None:
        """From removed nodes to the kept nodes (and the outputs) that read them."""
        for reader in self.diff.where:
            if reader in self.ids or isinstance(reader.op, Scan):
                continue
            kept = self.diff.counterpart.get(reader.outputs[0]) if reader.outputs else None
            for var in reader.inputs:
                if var.owner in self.ids and kept is not None and kept.owner is not None:
                    self.edge(self.ids[var.owner], self.origin.get(kept.owner))
        for k, var in enumerate(self.function.outputs):
            if var.owner in self.ids:
                self.edge(self.ids[var.owner], f"out{k}")

    def edge(self, tail: str | None, head: str | None) -> None:
        from symscan.drawing.model import REMOVED, Edge

        if tail is None or head is None or tail == head or (tail, head) in self.edges:
            return
        if tail in self.view.items and head in self.view.items:
            self.edges.add((tail, head))
            self.view.edges.append(Edge(tail, head, status=REMOVED))


def _short(label: str) -> str:
    from symscan.drawing.describe import shorten_lines

    return shorten_lines(label)
