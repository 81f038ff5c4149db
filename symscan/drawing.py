"""Pictures of graphs: ``draw`` (networkx layering + matplotlib) and ``to_dot`` (Graphviz text).

Ops are boxes; inputs, constants, shared variables and outputs are labelled points; each
Scan is a cluster (a shaded box) holding its loop body, whose inputs carry their role
(sequence tap, sit-sot, non-sequence, ...). Edges into and out of a cluster connect the
outer values to the body's inputs and outputs. matplotlib is imported only when drawing.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from symscan.graph.basic import Constant, SharedVariable, Variable, set_png_renderer
from symscan.graph.traversal import toposort
from symscan.scan.args import ScanArgs
from symscan.scan.op import Scan


@dataclass
class Cluster:
    label: str
    parent: Cluster | None = None
    nodes: list = field(default_factory=list)


@dataclass
class GraphView:
    """What a picture shows: node key -> (label, kind, cluster), edges (src, dst, dashed)."""

    nodes: dict = field(default_factory=dict)
    edges: list = field(default_factory=list)
    clusters: list = field(default_factory=list)

    def add(self, key, label: str, kind: str, cluster: Cluster | None) -> None:
        if key not in self.nodes:
            self.nodes[key] = (label, kind, cluster)
            if cluster is not None:
                cluster.nodes.append(key)


def _outputs_and_inputs(obj) -> tuple[list[Variable], list[Variable]]:
    fgraph = getattr(obj, "fgraph", obj)
    if hasattr(fgraph, "apply_nodes"):
        return list(fgraph.outputs), list(fgraph.inputs)
    if isinstance(obj, Variable):
        return [obj], []
    if isinstance(obj, (list, tuple)) and all(isinstance(v, Variable) for v in obj):
        return list(obj), []
    raise TypeError(f"draw takes a variable, a list of variables, a FunctionGraph or a compiled function, "
                    f"got {type(obj).__name__}")


def _var_label(var: Variable) -> str:
    if isinstance(var, Constant):
        text = repr(var)
        return text if len(text) <= 14 else f"const {var.type}"
    return f"{var.name or '?'}\n{var.type}"


def view(obj) -> GraphView:
    """The graph of ``obj`` as nodes, edges and loop clusters (renderer-independent)."""
    outputs, inputs = _outputs_and_inputs(obj)
    result = GraphView()
    sources = _add_graph(result, outputs, inputs, None, "", {})
    for i, out in enumerate(outputs):
        key = ("output", i)
        result.add(key, f"output {i}\n{out.name or ''}".strip(), "output", None)
        for src in sources(out):
            result.edges.append((src, key, False))
    return result


def _add_graph(result: GraphView, outputs: list, inputs: list, cluster: Cluster | None, prefix: str,
               roles: dict) -> callable:
    """Add the nodes computing ``outputs``; return a function giving a variable's source keys."""
    producers: dict = {}

    def sources(var: Variable) -> list:
        if var in producers:
            return producers[var]
        key = (prefix, "var", id(var))
        kind = ("constant" if isinstance(var, Constant) else "shared" if isinstance(var, SharedVariable)
                else "inner input" if var in roles else "input")
        label = roles.get(var, _var_label(var)) if var in roles else _var_label(var)
        result.add(key, label, kind, cluster)
        producers[var] = [key]
        return producers[var]

    for node in toposort(outputs, stop_at=inputs):
        if isinstance(node.op, Scan):
            _add_loop(result, node, cluster, prefix, sources, producers)
            continue
        key = (prefix, "apply", id(node))
        label = str(node.op)
        result.add(key, label if len(label) <= 24 else label[:22] + "…", "apply", cluster)
        for var in node.inputs:
            for src in sources(var):
                result.edges.append((src, key, False))
        for out in node.outputs:
            producers[out] = [key]
    return sources


def _add_loop(result: GraphView, node, cluster: Cluster | None, prefix: str, sources, producers: dict) -> None:
    """A Scan as a cluster: outer values feed the body's inputs; body outputs feed the readers."""
    inner_cluster = Cluster(f"{node.op}", cluster)
    result.clusters.append(inner_cluster)
    inner_prefix = f"{prefix}/{id(node)}"
    op = node.op
    roles = {v: _compact(label, v.name) for label, v in zip(op.inner_input_labels(), op.inner.inputs)}
    inner_sources = _add_graph(result, op.inner.outputs, op.inner.inputs, inner_cluster, inner_prefix, roles)
    args = ScanArgs.from_node(node)
    steps_key = (inner_prefix, "n_steps")
    result.add(steps_key, "n_steps", "inner input", inner_cluster)
    for src in sources(args.n_steps):
        result.edges.append((src, steps_key, True))
    for outer, inner_vars in _input_pairs(args):
        for inner in inner_vars:
            for src in sources(outer):
                for dst in inner_sources(inner):
                    result.edges.append((src, dst, True))
    labels = [_compact(label, None) for label in op.inner_output_labels()]
    for i, (inner_out, label) in enumerate(zip(op.inner.outputs, labels)):
        key = (inner_prefix, "out", i)
        result.add(key, label, "inner output", inner_cluster)
        for src in inner_sources(inner_out):
            result.edges.append((src, key, False))
        if i < len(node.outputs):
            producers[node.outputs[i]] = [key]


def _compact(role: str, name: str | None) -> str:
    """A short label for pictures: the value's name (or the quoted user name) and its role."""
    words = role.split()
    quoted = re.findall(r"'([^']+)'", role)
    tap = next((w for w in reversed(words) if w.startswith("t") and (w == "t" or w[1:2] in "+-")), "")
    shown = name or (quoted[-1] if quoted else "")
    if tap and not name and shown:
        shown = f"{shown}[{tap}]"
    return f"{shown}\n{words[0] if words else ''}".strip()


def _input_pairs(args: ScanArgs) -> Iterable[tuple]:
    yield from ((s.outer, s.inner) for s in args.sequences)
    yield from ((r.outer_init, r.inner_in) for r in args.recurrent)
    yield from ((s.outer, [s.inner_in]) for s in args.shared)
    yield from ((n.outer, [n.inner]) for n in args.non_seqs)


# ---------------------------------------------------------------------------- layout
def layout(graph: GraphView) -> dict:
    """Positions: x by topological generation (networkx), y by cluster band; within a band
    each generation is ordered by the mean height of its predecessors (fewer crossings)."""
    import networkx as nx

    digraph = nx.DiGraph()
    digraph.add_nodes_from(graph.nodes)
    digraph.add_edges_from((s, d) for s, d, _ in graph.edges)
    generations = list(nx.topological_generations(digraph))
    band_of = {key: graph.nodes[key][2] for key in graph.nodes}
    offset, positions = 0.0, {}
    for band in [None] + _cluster_order(graph):
        height = 0
        for i, generation in enumerate(generations):
            members = [k for k in generation if band_of[k] is band]
            members.sort(key=lambda k: _mean_height(digraph, k, positions, offset))
            for row, key in enumerate(members):
                positions[key] = (i * 2.2, -(offset + row * 1.1))
            height = max(height, len(members))
        offset += height * 1.1 + 0.9 if height else 0
    return positions


def _mean_height(digraph, key, positions: dict, offset: float) -> float:
    placed = [positions[p][1] for p in digraph.predecessors(key) if p in positions]
    return -sum(placed) / len(placed) if placed else offset


def _cluster_order(graph: GraphView) -> list[Cluster]:
    """Clusters with each nested one right after its parent, so a parent's box holds its children."""
    order: list[Cluster] = []

    def visit(parent):
        for cluster in graph.clusters:
            if cluster.parent is parent:
                order.append(cluster)
                visit(cluster)

    visit(None)
    return order


# ---------------------------------------------------------------------------- rendering
STYLE = {"apply": "#dbe8f6", "input": "#e8f5e0", "constant": "#f2f2f2", "shared": "#fbe9c9",
         "output": "#f9d9d9", "inner input": "#e8f5e0", "inner output": "#f9d9d9"}


def draw(obj, path: str | None = None):
    """A picture of ``obj``'s graph (loops drawn as clusters holding their body).

    Returns the matplotlib Figure, or with ``path`` saves it there (format from the suffix,
    e.g. .png or .svg) and returns the path.
    """
    try:
        import matplotlib

        matplotlib.use("Agg") if path is not None and matplotlib.get_backend() == "" else None
        import matplotlib.pyplot as plt
        from matplotlib.patches import FancyBboxPatch
    except ImportError as err:
        raise ImportError("ss.draw needs matplotlib: pip install matplotlib (it is in the dev extra)") from err
    graph = view(obj)
    pos = layout(graph)
    xs = [p[0] for p in pos.values()] or [0]
    ys = [p[1] for p in pos.values()] or [0]
    width, height = max(xs) - min(xs), max(ys) - min(ys)
    fig, ax = plt.subplots(figsize=(min(18.0, max(4.0, width * 0.62 + 2.5)), min(14.0, max(2.5, height * 0.5 + 1.5))))
    for cluster in reversed(_cluster_order(graph)):
        members = [pos[k] for k in _members(graph, cluster)]
        if not members:
            continue
        left, right = min(p[0] for p in members) - 1.0, max(p[0] for p in members) + 1.0
        bottom, top = min(p[1] for p in members) - 0.6, max(p[1] for p in members) + 0.9
        ax.add_patch(FancyBboxPatch((left, bottom), right - left, top - bottom, boxstyle="round,pad=0.1",
                                    facecolor="#f5f0ff", edgecolor="#7a5fb0", linewidth=1.2, zorder=0))
        ax.text(left + 0.1, top - 0.15, cluster.label, fontsize=8, color="#4b3480", va="top", zorder=1)
    for src, dst, dashed in graph.edges:
        ax.annotate("", xy=pos[dst], xytext=pos[src], zorder=2,
                    arrowprops=dict(arrowstyle="-|>", color="#7a7a7a", lw=0.8, linestyle="--" if dashed else "-",
                                    shrinkA=14, shrinkB=14))
    for key, (label, kind, _) in graph.nodes.items():
        ax.text(*pos[key], label, ha="center", va="center", fontsize=7, zorder=3,
                bbox=dict(boxstyle="round,pad=0.3" if kind == "apply" else "round4,pad=0.25",
                          facecolor=STYLE.get(kind, "white"), edgecolor="#555555", linewidth=0.6))
    ax.set_xlim(min(xs) - 1.6, max(xs) + 1.6)
    ax.set_ylim(min(ys) - 1.2, max(ys) + 1.2)
    ax.axis("off")
    fig.tight_layout()
    if path is None:
        return fig
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _members(graph: GraphView, cluster: Cluster) -> list:
    nested = [c for c in graph.clusters if c.parent is cluster]
    return list(cluster.nodes) + [k for c in nested for k in _members(graph, c)]


def png_bytes(obj) -> bytes:
    """The picture as PNG bytes (what notebooks show for functions and variables)."""
    import matplotlib.pyplot as plt

    fig = draw(obj)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    return buffer.getvalue()


def _png_for_display(obj) -> bytes | None:
    """Notebook display of a function or variable: its picture, or None without matplotlib."""
    try:
        return png_bytes(obj)
    except ImportError:
        return None


set_png_renderer(_png_for_display)


def to_dot(obj) -> str:
    """Graphviz DOT text of the same picture (render it with ``dot -Tsvg`` if you have Graphviz)."""
    graph = view(obj)
    ids = {key: f"n{i}" for i, key in enumerate(graph.nodes)}
    lines = ["digraph symscan {", "  rankdir=LR;", '  node [fontsize=10, style=filled, fillcolor="white"];']

    def node_line(key, indent):
        label, kind, _ = graph.nodes[key]
        shape = "box" if kind == "apply" else "ellipse"
        text = label.replace('"', "'").replace("\n", "\\n")
        return f'{indent}{ids[key]} [label="{text}", shape={shape}, fillcolor="{STYLE.get(kind, "white")}"];'

    def emit(cluster, indent):
        for key in (k for k in graph.nodes if graph.nodes[k][2] is cluster):
            lines.append(node_line(key, indent))
        for child in (c for c in graph.clusters if c.parent is cluster):
            lines.append(f"{indent}subgraph cluster_{id(child)} {{")
            lines.append(f'{indent}  label="{child.label}"; style=filled; fillcolor="#f5f0ff";')
            emit(child, indent + "  ")
            lines.append(f"{indent}}}")

    emit(None, "  ")
    for src, dst, dashed in graph.edges:
        lines.append(f"  {ids[src]} -> {ids[dst]}{' [style=dashed]' if dashed else ''};")
    lines.append("}")
    return "\n".join(lines) + "\n"
