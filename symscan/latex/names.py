"""Names in the equations: the user's variable names as LaTeX, time indices, symbols."""

from __future__ import annotations

import re
from dataclasses import dataclass

from symscan.graph.basic import Variable
from symscan.scan.args import RecurrentEntry, ScanArgs, SharedEntry
from symscan.tensor.subtensor import Subtensor


def listed_at(entry) -> int | None:
    """An output's position in outputs_info, read off its label ("outputs_info[1] ...", "output 0")."""
    match = re.match(r"outputs_info\[(\d+)\]|output (\d+)", entry.label or "")
    return int(match[1] or match[2]) if match else None


GREEK = frozenset("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau "
                  "upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega".split())


@dataclass(frozen=True)
class Name:
    """A LaTeX name: ``head`` (``W``, ``\\alpha``, ``\\mathit{state}``) and its subscripts."""

    head: str
    subs: tuple = ()

    def at(self, *more: str) -> str:
        """The name with more subscripts (a time index): ``W_{in}`` at ``t`` is ``W_{in,t}``."""
        subs = self.subs + tuple(more)
        return self.head + (f"_{{{','.join(subs)}}}" if subs else "")


def _word(word: str) -> str:
    """One letter as is, a Greek name as its letter, longer words upright-italic as one symbol."""
    if len(word) == 1:
        return word
    return f"\\{word}" if word in GREEK else f"\\mathit{{{word}}}"


def parse_name(name: str | None, lower: bool = False) -> Name | None:
    """``W_in`` -> ``W_{in}``, ``W2`` -> ``W_{2}``; ``lower`` turns a one-capital name (a whole
    sequence, ``X``) into the letter of one step (``x``). None when nothing usable is left."""
    parts = [p for p in re.sub(r"[^0-9A-Za-z_]", "", name or "").split("_") if p]
    if not parts or not parts[0][0].isalpha():
        return None
    base, subs = parts[0], parts[1:]
    digits = re.fullmatch(r"([A-Za-z]+?)(\d+)", base)
    if digits:
        base, subs = digits[1], [digits[2], *subs]
    if lower and len(base) == 1:
        base = base.lower()
    return Name(_word(base), tuple(f"\\{s}" if s in GREEK else s for s in subs))


def initial_name(entry: RecurrentEntry) -> str | None:
    """The user's name of an output's initial value, without a trailing 0/_init (h0 -> h)."""
    init = entry.outer_init
    name = init.name or (init.owner.inputs[0].name if init.owner is not None
                         and isinstance(init.owner.op, Subtensor) else None)
    if name is None:  # after rewrites only the label may remember it
        match = re.search(r"initial '([^']+)'", entry.label or "")
        name = match[1] if match else None
    if name is None:
        return None
    stripped = re.fullmatch(r"(.+?)_?(?:0|init|initial|start)", name)
    return stripped[1] if stripped else name


class Naming:
    """A unique name for every entry of a scan and a sympy symbol for every inner input.

    Outputs are named first (they are what the equation is about), then sequences,
    non-sequences and shared states; a clash gets a prime. ``t`` and ``T`` are the time and
    length symbols.
    """

    def __init__(self, args: ScanArgs, hints: dict):
        self.used: set = {("t", ()), ("T", ())}
        self.names: dict = {}
        self.symbols: dict = {}
        self.lengths: list = []
        for position, entry in enumerate(args.buffered):
            initial = initial_name(entry) if isinstance(entry, RecurrentEntry) else None
            hint = hints.get(id(entry))
            number = (position if listed_at(entry) is None else listed_at(entry)) + 1
            self.names[id(entry)] = self._claim(parse_name(initial), parse_name(hint, lower=True),
                                                parse_name(hint), Name("y", (str(number),)))
        for i, seq in enumerate(args.sequences):
            self.names[id(seq)] = self._claim(parse_name(seq.outer.name, lower=True), parse_name(seq.outer.name),
                                              Name("s", (str(i + 1),)))
        for i, entry in enumerate(args.non_seqs):
            self.names[id(entry)] = self._claim(parse_name(entry.outer.name), Name("c", (str(i + 1),)))
        for i, entry in enumerate(args.shared):
            self.names[id(entry)] = self._claim(parse_name(entry.outer.name), Name("z", (str(i + 1),)))
        self._symbols(args)

    def _claim(self, *candidates: Name | None) -> Name:
        """The first free candidate, else the first one primed until it is free."""
        present = [c for c in candidates if c is not None]
        for name in present:
            if (name.head, name.subs) not in self.used:
                self.used.add((name.head, name.subs))
                return name
        name = present[0]
        while (name.head, name.subs) in self.used:
            name = Name(name.head + "'", name.subs)
        self.used.add((name.head, name.subs))
        return name

    def _symbols(self, args: ScanArgs) -> None:
        for seq in args.sequences:
            name = self.names[id(seq)]
            length = "T" if len(args.sequences) == 1 else f"T_{{{name.at()}}}"
            for tap, inner in zip(seq.taps, seq.inner):
                time = reversed_time(length, tap) if args.go_backwards else time_index(tap)
                self.symbols[inner] = symbol(name.at(time), inner)
            if args.go_backwards:
                span = f" - {seq.span}" if seq.span else ""
                self.lengths.append((length, f"{length} = \\left|{name.at()}\\right|{span}"))
        for entry in args.recurrent:
            for tap, inner in zip(entry.taps, entry.inner_in):
                self.symbols[inner] = symbol(self.names[id(entry)].at(time_index(tap)), inner)
        for entry in args.non_seqs:
            self.symbols[entry.inner] = symbol(self.names[id(entry)].at(), entry.inner)
        for entry in args.shared:
            self.symbols[entry.inner_in] = symbol(self.names[id(entry)].at(), entry.inner_in)

    def lhs(self, entry):
        """``h_{t}`` for an output; a shared state's own name (its update is an assignment)."""
        name = self.names[id(entry)]
        return symbol(name.at() if isinstance(entry, SharedEntry) else name.at("t"), entry.inner_out)


def time_index(tap: int) -> str:
    return "t" if tap == 0 else f"t{tap:+d}"


def reversed_time(length: str, tap: int) -> str:
    """Going backwards, step t reads the element ``T - 1 - t`` (shifted by the tap)."""
    shift = tap - 1
    return f"{length}-t" + (f"{shift:+d}" if shift else "")


def symbol(text: str, var: Variable):
    """Tensors do not commute (matrix products keep their order); scalars do."""
    import sympy

    return sympy.Symbol(text, commutative=getattr(var.type, "ndim", 0) == 0)
