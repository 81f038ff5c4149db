"""``save_mem``: keep only the last steps of an output that the outer graph reads only near
its end (``out[-1]``, ``out[-k:]``, ``out[n_steps - 1]``, a reduce's final value).

The output's buffer becomes a ring of the needed length ``k`` (the loop still keeps as many
rows as its taps need), the node's output becomes "the last k steps", and each read is
rewritten against it. Indices written in terms of n_steps are resolved by expanding them
into integer polynomials in n_steps (``IndexPolynomial``): ``n_steps - 1``, ``(k + 2) - 3``,
``2 * k - k - 1`` all become n - 1, without a symbolic algebra library.
"""

from __future__ import annotations

from rewrites.registry import Declined, Rewritten, register
from rewrites.scan_utils import rebuild
from symscan.graph.basic import Constant, Variable
from symscan.graph.fg import OUTPUT
from symscan.scan.args import RecurrentEntry, ScanArgs
from symscan.scan.op import Scan
from symscan.tensor.basic import constant, static_int
from symscan.tensor.elemwise import Cast, Elemwise, cast, minimum
from symscan.tensor.shape import Shape, concatenate
from symscan.tensor.subtensor import INT, Subtensor


# ---------------------------------------------------------------------------- index arithmetic
class IndexPolynomial(dict):
    """An integer polynomial: {monomial: coefficient}, a monomial being a sorted tuple of atoms
    ("n" for n_steps, or the id of a variable whose value is unknown); () is the constant."""

    @classmethod
    def atom(cls, key) -> IndexPolynomial:
        return cls({(key,): 1})

    @classmethod
    def number(cls, value: int) -> IndexPolynomial:
        return cls({(): value} if value else {})

    def __add__(self, other: IndexPolynomial) -> IndexPolynomial:
        total = IndexPolynomial(self)
        for monomial, c in other.items():
            total[monomial] = total.get(monomial, 0) + c
        return IndexPolynomial({m: c for m, c in total.items() if c})

    def __neg__(self) -> IndexPolynomial:
        return IndexPolynomial({m: -c for m, c in self.items()})

    def __sub__(self, other: IndexPolynomial) -> IndexPolynomial:
        return self + -other

    def __mul__(self, other: IndexPolynomial) -> IndexPolynomial:
        total = IndexPolynomial()
        for m1, c1 in self.items():
            for m2, c2 in other.items():
                total = total + IndexPolynomial({tuple(sorted(m1 + m2, key=str)): c1 * c2})
        return total


def index_polynomial(var: Variable, n_steps: Variable, steps_view: Variable | None) -> IndexPolynomial:
    """``var`` (an integer scalar expression) expanded as a polynomial in n_steps ("n") and the
    variables it cannot see through."""
    if isinstance(var, Constant):
        return IndexPolynomial.number(int(var.data))
    node = var.owner
    if var is n_steps or _same_through_casts(var, n_steps):
        return IndexPolynomial.atom("n")
    if node is not None and isinstance(node.op, Cast):
        return index_polynomial(node.inputs[0], n_steps, steps_view)
    if node is not None and isinstance(node.op, Subtensor) and node.op.spec == (INT,):
        source = node.inputs[0].owner
        if (source is not None and isinstance(source.op, Shape) and source.inputs[0] is steps_view
                and static_int(node.inputs[1]) == 0):
            return IndexPolynomial.atom("n")
    if node is not None and isinstance(node.op, Elemwise) and node.op.name in ("add", "sub", "mul", "neg"):
        args = [index_polynomial(v, n_steps, steps_view) for v in node.inputs]
        return {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
                "neg": lambda a: -a}[node.op.name](*args)
    return IndexPolynomial.atom(id(var))


def _same_through_casts(var: Variable, target: Variable) -> bool:
    while target.owner is not None and isinstance(target.owner.op, Cast):
        target = target.owner.inputs[0]
        if var is target:
            return True
    return False


def relative_index(index: Variable, args: ScanArgs, steps_view: Variable) -> int | None:
    """The index as an offset from the end of the steps (-1 is the last), or None."""
    value = static_int(index)
    if value is not None and value < 0:
        return value
    if args.until is not None:
        return None  # the number of rows is only known at run time
    if value is not None:  # a non-negative index is relative only when n_steps is a constant
        steps = static_int(args.n_steps)
        return value - steps if steps is not None and value < steps else None
    offset = index_polynomial(index, args.n_steps, steps_view) - IndexPolynomial.atom("n")
    # n - k is the k-th row from the end while it is a valid index; for k > 1 and a run of
    # fewer than k steps it wraps to another row, so only n - 1 is rewritten
    return -1 if offset == {(): -1} else None


# ---------------------------------------------------------------------------- reads of an output
def _tail_reads(fgraph, entry, args: ScanArgs) -> tuple[int, list] | None:
    """A recurrent output whose whole buffer (initial rows included) is read only at fixed
    distances from its end (``buffer[-1]``: the last step, or the last initial row when no
    step ran; a gradient's carried sums are read so), or not read at all: the rows to keep
    and the reads."""
    if not isinstance(entry, RecurrentEntry):
        return None
    needed, reads = 1, []
    for reader, _ in fgraph.clients.get(entry.outer_out, []):
        if reader == OUTPUT or not isinstance(reader.op, Subtensor) or reader.op.spec != (INT,):
            return None
        index = static_int(reader.inputs[1])
        if index is None or index >= 0:
            return None
        needed = max(needed, -index)
        reads.append((reader, "tail"))
    steps = static_int(args.n_steps)
    if reads and steps is not None and args.until is None and needed >= steps:
        return None
    return needed, reads


def _rewritten_tail_read(reader, entry: RecurrentEntry, steps: Variable, args: ScanArgs) -> Variable:
    """``buffer[-k]`` read from the initial rows followed by the ring (the last steps)."""
    init = entry.outer_init[None] if entry in args.sit_sot else entry.outer_init[:entry.span]
    if init.dtype != steps.dtype:
        init = cast(init, steps.dtype)
    return Subtensor(reader.op.spec)(concatenate([init, steps]), *reader.inputs[1:])


def _steps_view(fgraph, entry) -> Variable | None:
    """The variable holding the steps of ``entry``: the buffer minus its initial taps."""
    if not isinstance(entry, RecurrentEntry):
        return entry.outer_out
    clients = fgraph.clients.get(entry.outer_out, [])
    if len(clients) != 1 or clients[0][0] == OUTPUT:
        return None
    reader = clients[0][0]
    spec = reader.op.spec if isinstance(reader.op, Subtensor) else None
    if spec != (("slice", True, False, False),) or static_int(reader.inputs[1]) != entry.span:
        return None
    return reader.outputs[0]


def needed_rows(fgraph, view: Variable, args: ScanArgs) -> tuple[int | None, list, str]:
    """How many trailing steps the readers of ``view`` need, the reads, or why not."""
    needed, reads = 0, []
    for reader, _ in fgraph.clients.get(view, []):
        if reader == OUTPUT or not isinstance(reader.op, Subtensor) or reader.inputs[0] is not view:
            return None, [], "the whole output is used"
        first = reader.op.spec[0]
        if first == INT:
            offset = relative_index(reader.inputs[1], args, view)
            if offset is None:
                return None, [], f"index {reader.inputs[1]!r} is not a fixed distance from the end"
            needed = max(needed, -offset)
            reads.append((reader, offset))
        elif first[0] == "slice" and first[1] and not first[3]:
            start = static_int(reader.inputs[1])
            stop = static_int(reader.inputs[2]) if first[2] else None
            if start is None or start >= 0 or (first[2] and (stop is None or stop > 0)):
                return None, [], "a slice that does not count from the end"
            needed = max(needed, -start)
            reads.append((reader, None))
        else:
            return None, [], f"the read {reader.op} does not count from the end"
    return (needed or None), reads, "" if needed else "nothing reads it"


def _rewritten_read(reader, offset: int | None, steps: Variable) -> Variable:
    """``reader`` applied to the ring output (a relative index becomes a constant).

    A symbolic index ``n_steps - 1`` is the last row only while n_steps >= 0; a negative
    n_steps runs -n_steps steps, so the index is out of range in the full output and
    ``minimum(index, -1)`` keeps it out of range in the ring (the same IndexError). An
    unsigned index cannot be negative.
    """
    rest = list(reader.inputs[1:])
    if offset is not None:
        index = rest[0]
        signed = static_int(index) is None and index.dtype[0] == "i"
        rest[0] = minimum(index, offset) if signed else constant(offset)
    return Subtensor(reader.op.spec)(steps, *rest)


@register("save_mem", phase="save_mem", tracks=(Scan,), tags=("save_mem", "scan"))
def save_mem(fgraph, node):
    args = ScanArgs.from_node(node)
    plans, why = [], []
    for entry in args.buffered:
        if entry.ring is not None or entry.outer_out is None:
            continue
        tail = _tail_reads(fgraph, entry, args)
        if tail is not None:
            plans.append((entry,) + tail)
            continue
        view = _steps_view(fgraph, entry)
        if view is None:
            why.append(f"{entry.label or 'an output'}: the whole buffer is used")
            continue
        rows, reads, reason = needed_rows(fgraph, view, args)
        steps = static_int(args.n_steps)
        if rows is None or (steps is not None and args.until is None and rows >= steps):
            why.append(f"{entry.label or 'an output'}: {reason or 'every step is read'}")
            continue
        plans.append((entry, rows, reads))
    if not plans:
        return Declined("; ".join(why)) if why else None
    for entry, rows, _ in plans:
        entry.ring = rows
    mapping = rebuild(args)
    for entry, _, reads in plans:
        steps = mapping.pop(entry.outer_out)
        for reader, offset in reads:
            if offset == "tail":
                mapping[reader.outputs[0]] = _rewritten_tail_read(reader, entry, steps, args)
            else:
                mapping[reader.outputs[0]] = _rewritten_read(reader, offset, steps)
    kept = ", ".join(f"{e.label or 'an output'} keeps its last {rows} step(s)" for e, rows, _ in plans)
    return Rewritten(mapping, kept)
