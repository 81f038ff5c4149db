"""FunctionGraph: a graph with declared inputs and outputs that rewrites may edit.

It tracks the clients of every variable (who reads it), so a replacement rewires every
reader at once and nodes nobody reads any more are dropped. Loop bodies (Scan's inner
graphs) are FunctionGraphs too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from symscan.graph.basic import Apply, Constant, SharedVariable, Variable, describe
from symscan.graph.clone import clone_graph
from symscan.graph.traversal import toposort

OUTPUT = "output"
"""Client marker for "this variable is the graph's output number i"."""


class MissingInputError(ValueError):
    """A graph needs a variable that is neither an input, a constant nor a shared variable."""


class FunctionGraph:
    """Inputs, outputs and everything between, with client tracking.

    With ``clone=True`` (the default) the graph is copied first, so editing it never touches
    the user's variables; ``memo`` then maps each original variable to its copy.
    """

    def __init__(self, inputs: Sequence[Variable], outputs: Sequence[Variable], clone: bool = True,
                 name: str | None = None):
        inputs, outputs = list(inputs), list(outputs)
        self.memo: dict[Variable, Variable] = {}
        if clone:
            self.memo = clone_graph(inputs, outputs)
            inputs = [self.memo[i] for i in inputs]
            outputs = [self.memo[o] for o in outputs]
        self.name = name
        self.inputs: list[Variable] = inputs
        self.outputs: list[Variable] = []
        self.apply_nodes: dict[Apply, None] = {}
        self.clients: dict[Variable, list[tuple]] = {}
        for var in inputs:
            if var.owner is not None:
                raise ValueError(f"graph input {describe(var)} is computed by {var.owner.op}; "
                                 "inputs must be root variables")
            self.clients.setdefault(var, [])
        for out in outputs:
            self.add_output(out)

    # ------------------------------------------------------------------ building
    def add_output(self, var: Variable) -> None:
        self._import(var)
        self.clients[var].append((OUTPUT, len(self.outputs)))
        self.outputs.append(var)

    def _import(self, var: Variable) -> list[Apply]:
        """Add ``var`` and the nodes computing it; roots must be inputs, constants or shared.
        Returns the nodes that were new to the graph.

        Roots are checked before anything is added, so a MissingInputError leaves the graph
        as it was.
        """
        if var in self.clients:
            return []
        nodes = toposort([var], stop_at=self.clients.keys())
        for node in nodes:
            for inp in node.inputs:
                if inp not in self.clients and inp.owner is None:
                    self._check_root(inp)
        for node in nodes:
            for position, inp in enumerate(node.inputs):
                self.clients.setdefault(inp, []).append((node, position))
            self.apply_nodes[node] = None
            for out in node.outputs:
                self.clients.setdefault(out, [])
        if var not in self.clients:
            self._check_root(var)
            self.clients[var] = []
        return nodes

    def _check_root(self, var: Variable) -> None:
        if var.owner is None and not isinstance(var, (Constant, SharedVariable)) and var not in self.inputs:
            raise MissingInputError(
                f"{describe(var)} is needed to compute the outputs but is not among the inputs; "
                "add it to the inputs or substitute it with givens=")

    # ------------------------------------------------------------------ queries
    @property
    def variables(self) -> list[Variable]:
        return list(self.clients)

    @property
    def shared_variables(self) -> list[SharedVariable]:
        """Shared variables read by the graph, in first-use order."""
        return [v for v in self.clients if isinstance(v, SharedVariable)]

    def toposort(self) -> list[Apply]:
        return toposort(self.outputs, stop_at=self.inputs)

    def readers(self, var: Variable) -> list[Apply]:
        """Apply nodes that read ``var`` (graph outputs excluded)."""
        return [c for c, _ in self.clients.get(var, []) if c != OUTPUT]

    # ------------------------------------------------------------------ editing
    def replace(self, old: Variable, new: Variable, reason: str | None = None) -> None:
        """Make every reader of ``old`` read ``new`` instead; drop what becomes unused."""
        if old is new:
            return
        if old.type != new.type and (not hasattr(old.type, "conflicts_with") or old.type.conflicts_with(new.type)):
            raise TypeError(f"cannot replace {describe(old)} by {describe(new)}"
                            f"{f' ({reason})' if reason else ''}: the types differ")
        _inherit_built_at(old, self._import(new))
        for client, position in list(self.clients[old]):
            if client == OUTPUT:
                self.outputs[position] = new
            else:
                client.inputs[position] = new
            self.clients[new].append((client, position))
        self.clients[old] = []
        self._prune(old)
        if not self.clients[new]:  # ``old`` had no readers: nothing new stays in the graph
            self._prune(new)

    def replace_all(self, pairs: Iterable[tuple[Variable, Variable]], reason: str | None = None) -> None:
        """Several replacements; a variable that an earlier one pruned from the graph is skipped."""
        for old, new in pairs:
            if old in self.clients:
                self.replace(old, new, reason)

    def _prune(self, var: Variable) -> None:
        """Remove the producers of ``var`` (and above) that no longer have readers.

        A replaced root that is not an input (a merged constant, a shared variable swapped for
        a constant) is dropped too, so ``variables``/``shared_variables`` list only what is read.
        """
        if var.owner is None and not self.clients.get(var) and var not in self.inputs:
            self.clients.pop(var, None)
        pending = [var.owner] if var.owner is not None else []
        while pending:
            node = pending.pop()
            if node not in self.apply_nodes or any(self.clients[o] for o in node.outputs):
                continue
            del self.apply_nodes[node]
            for out in node.outputs:
                del self.clients[out]
            for position, inp in enumerate(node.inputs):
                self.clients[inp] = [c for c in self.clients[inp] if c != (node, position)]
                if inp.owner is not None and not self.clients[inp]:
                    pending.append(inp.owner)
                elif inp.owner is None and not self.clients[inp] and inp not in self.inputs:
                    del self.clients[inp]

    def clone(self) -> FunctionGraph:
        """An independent copy (same inputs order, same outputs order)."""
        return FunctionGraph(self.inputs, self.outputs, clone=True, name=self.name)

    def check(self) -> None:
        """Raise AssertionError when client bookkeeping and the graph disagree (debug aid)."""
        order = self.toposort()
        assert set(order) == set(self.apply_nodes), "apply_nodes differs from the nodes reachable from outputs"
        for node in order:
            for position, inp in enumerate(node.inputs):
                assert (node, position) in self.clients[inp], f"missing client record for {node}"
        for position, out in enumerate(self.outputs):
            assert (OUTPUT, position) in self.clients[out], f"missing output record {position}"

    def networkx(self):
        """A networkx DiGraph view of this graph (see ``symscan.graph.nxview``)."""
        from symscan.graph.nxview import to_networkx

        return to_networkx(self)

    def __repr__(self) -> str:
        return f"FunctionGraph({self.inputs} -> {self.outputs}, {len(self.apply_nodes)} nodes)"


def _inherit_built_at(old: Variable, new_nodes: list[Apply]) -> None:
    """The nodes a rewrite adds in place of ``old`` keep the user line that built ``old``: the
    compiler records none of its own (``compiling()``), and hovering a compiled function's node
    should still say which line of the user's code it comes from."""
    where = old.owner.tag.get("built_at") if old.owner is not None else None
    if where is not None:
        for node in new_nodes:
            node.tag.setdefault("built_at", where)
