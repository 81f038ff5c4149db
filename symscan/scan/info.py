"""ScanInfo: the static description a Scan op carries (counts, taps, flags, ring lengths)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ScanLabels:
    """User-facing names of a scan's inputs and outputs, for errors and printing.

    They do not take part in op equality, so scans that differ only in names still merge.
    """

    sequences: tuple = ()
    outputs: tuple = ()
    shared: tuple = ()
    non_seqs: tuple = ()

    def get(self, kind: str, index: int) -> str:
        values = getattr(self, kind)
        return values[index] if index < len(values) else ""


@dataclass(frozen=True)
class ScanInfo:
    """Counts and taps per kind; see ``ScanArgs`` for the order of inputs and outputs."""

    seq_taps: tuple = ()
    mit_sot_taps: tuple = ()
    n_sit_sot: int = 0
    n_nit_sot: int = 0
    n_shared: int = 0
    n_non_seqs: int = 0
    as_while: bool = False
    go_backwards: bool = False
    steps_from_sequences: bool = False
    rings: tuple = ()
    truncate_gradient: int = -1
    name: str | None = field(default=None, compare=False)
    profile: bool = field(default=False, compare=False)
    labels: ScanLabels | None = field(default=None, compare=False)

    @property
    def n_buffered(self) -> int:
        return len(self.mit_sot_taps) + self.n_sit_sot + self.n_nit_sot

    @property
    def n_outer_outputs(self) -> int:
        return self.n_buffered + self.n_shared

    @property
    def n_outer_inputs(self) -> int:
        return (1 + len(self.seq_taps) + len(self.mit_sot_taps) + self.n_sit_sot + self.n_shared
                + self.n_non_seqs)
