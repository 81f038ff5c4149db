"""The Scan op: a loop whose body is an inner FunctionGraph (see ``ScanArgs`` for the layout).

The op is immutable: its parameters are a ``ScanInfo`` and the inner graph. Two Scan ops
are equal when their infos are equal and their inner graphs have the same structure.
Backends evaluate it (the reference interpreter runs the inner graph once per step).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from symscan.graph.basic import Apply, Op
from symscan.graph.fg import FunctionGraph
from symscan.graph.signature import StructuralEquality
from symscan.scan.args import ScanArgs
from symscan.scan.info import ScanInfo
from symscan.tensor.basic import as_tensor_variable


@dataclass(frozen=True, eq=False)
class Scan(StructuralEquality, Op):
    """A symbolic loop (Theano's Scan op)."""

    info: ScanInfo
    inner: FunctionGraph
    _signature: tuple | None = field(default=None, repr=False, compare=False)
    _hash: int | None = field(default=None, repr=False, compare=False)

    def structure_params(self) -> tuple:
        return (self.info,)

    def make_node(self, *outer_inputs) -> Apply:
        outer_inputs = [as_tensor_variable(v) if not hasattr(v, "type") else v for v in outer_inputs]
        if len(outer_inputs) != self.info.n_outer_inputs:
            raise TypeError(f"{self} takes {self.info.n_outer_inputs} outer inputs, got {len(outer_inputs)}")
        args = ScanArgs.from_parts(self.info, self.inner, outer_inputs)
        args.check()
        node = Apply(self, outer_inputs, args.outer_output_types())
        return node

    def args(self, node: Apply) -> ScanArgs:
        return ScanArgs.from_node(node)

    def inner_graphs(self) -> tuple:
        return (self.inner,)

    def with_inner_graphs(self, graphs) -> Scan:
        (inner,) = graphs
        return Scan(self.info, inner)

    # ------------------------------------------------------------------ printing
    inner_title = "loop body"

    def inner_input_labels(self) -> list[str]:
        """The role of each inner input: sequence tap, mit-sot tap, sit-sot, shared, non-sequence."""
        args = ScanArgs.from_parts(self.info, self.inner, [None] * self.info.n_outer_inputs)
        labels = []
        for s in args.sequences:
            labels += [f"sequence {s.label} tap {_tap_text(t)}".replace("  ", " ") for t in s.taps]
        for r in args.mit_sot:
            labels += [f"mit-sot {r.label} tap {_tap_text(t)}".replace("  ", " ") for t in r.taps]
        labels += [f"sit-sot {r.label}".rstrip() for r in args.sit_sot]
        labels += [f"shared {s.label}".rstrip() for s in args.shared]
        labels += [f"non-sequence {n.label}".rstrip() for n in args.non_seqs]
        return labels

    def inner_output_labels(self) -> list[str]:
        args = ScanArgs.from_parts(self.info, self.inner, [None] * self.info.n_outer_inputs)
        labels = ([f"mit-sot {e.label}" for e in args.mit_sot] + [f"sit-sot {e.label}" for e in args.sit_sot]
                  + [f"nit-sot {e.label}" for e in args.nit_sot] + [f"shared {e.label}" for e in args.shared])
        return [text.rstrip() for text in labels] + (["until"] if args.until is not None else [])

    def __str__(self) -> str:
        flags = [self.info.name or "scan"]
        if self.info.as_while:
            flags.append("while")
        if self.info.go_backwards:
            flags.append("backwards")
        if self.info.rings:
            flags.append("rings=" + ",".join("-" if r is None else str(r) for r in self.info.rings))
        return f"Scan{{{', '.join(flags)}}}"


def _tap_text(tap: int) -> str:
    return "t" if tap == 0 else f"t{tap:+d}"
