r"""``latex``: the recurrence a scan computes, as LaTeX: ``h_{t} = \tanh(x_{t} W_{in} + h_{t-1} W_{h} + b)``.

The variable is traced back to its Scan node, and ``ScanArgs`` says which inner output it
is and what every inner input stands for: a sequence tap is ``x_{t}`` or ``u_{t-4}``, a past
value of an output ``h_{t-1}``, a non-sequence the user's variable (``W_{in}``). The inner
graph becomes a sympy expression:

- tensors are non-commutative symbols, so a matrix product keeps its operand order
  (``x_{t} W_{in}``, never ``W_{in} x_{t}``); scalars are ordinary symbols;
- elementwise ops map to sympy (``+ - * / **``, ``\exp``, ``\tanh``, ``\max``, ...); an
  elementwise product of two tensors is ``hadamard`` (printed ``\odot``), an elementwise
  quotient by a tensor ``divide`` and a matrix transpose ``transpose``: sympy has no
  elementwise forms of those for non-commutative symbols;
- anything else (reductions, indexing, nested scans, ...) is a named function of its inputs,
  ``\operatorname{sum}(...)``.

With ``go_backwards`` the step ``t`` reads a sequence from its end: ``x_{T-t-1}``, where ``T``
is the sequence's length less its taps' span, and the text says so (``T = \left|x\right|``).

sympy is imported on first use: it takes longer to import than the rest of symscan together.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Apply, Constant, Variable, describe
from symscan.scan.args import RecurrentEntry, ScanArgs, SharedEntry
from symscan.scan.op import Scan
from symscan.tensor.elemwise import Cast, Elemwise
from symscan.tensor.math import Dot, MatMul
from symscan.tensor.random import RandomVariable
from symscan.tensor.shape import DimShuffle
from symscan.tensor.subtensor import ARRAY, ELLIPSIS, INT, NONE, Subtensor


# ---------------------------------------------------------------------------- the result
@dataclass(frozen=True)
class ScanLatex:
    """What ``latex`` returns: ``text`` (LaTeX), and the sympy forms of what it shows.

    ``equations`` holds one ``sympy.Eq(lhs, rhs)`` per output shown, in canonical sympy form
    (compare them with expressions built with ordinary sympy arithmetic); the text keeps the
    order of the graph's sums instead. ``until`` is the stop condition, or None.
    """

    text: str
    equations: tuple
    until: object = None

    @property
    def equation(self):
        """The first (for ``latex(var)``: the only) equation."""
        return self.equations[0]

    def __str__(self) -> str:
        return self.text

    def _repr_latex_(self) -> str:
        """Notebooks render the text as math."""
        return f"${self.text}$"


# ---------------------------------------------------------------------------- public functions
def latex(var: Variable, all_outputs: bool = False) -> ScanLatex:
    r"""The recurrence computing ``var``, an output of scan (what scan returned, a slice of
    it, or the Scan node's own output): ``latex(H).text == r"h_{t} = \tanh\left(...\right)"``.

    With ``all_outputs`` every output of that scan is shown, one equation per line.
    """
    node, index = _scan_output(var)
    hints = {index: var.name} if var.name else {}
    return _render(node, None if all_outputs else index, hints)


def latex_scan(node: Apply) -> ScanLatex:
    """Every output of a Scan node, one equation per line (the user's output order)."""
    if isinstance(node, Variable):
        return latex(node, all_outputs=True)
    if not isinstance(getattr(node, "op", None), Scan):
        raise TypeError(f"latex_scan takes a Scan node, got {node!r}")
    return _render(node, None, {})


def _scan_output(var) -> tuple[Apply, int]:
    """The Scan node computing ``var`` and the output index; slices of the output are looked
    through, since the frontend returns ``buffer[span:]``."""
    if not isinstance(var, Variable):
        raise TypeError(f"latex takes a variable computed by scan, got {type(var).__name__} {var!r}")
    source = var
    while source.owner is not None and isinstance(source.owner.op, Subtensor):
        source = source.owner.inputs[0]
    if source.owner is not None and isinstance(source.owner.op, Scan):
        return source.owner, source.index
    raise TypeError(f"latex: {describe(var)} is not an output of scan; pass a variable scan returned "
                    "(a scan of a constant n_steps of 1 builds no loop to show)")


# ---------------------------------------------------------------------------- rendering
def _render(node: Apply, index: int | None, hints: dict) -> ScanLatex:
    """The equations of one output (``index``) or of all, as text and sympy."""
    import sympy
    from sympy.core.parameters import distribute

    args = ScanArgs.from_node(node)
    entries = args.buffered + args.shared  # in node output order
    names = {i: out.name for i, out in enumerate(node.outputs) if out.name} | hints
    naming = _Naming(args, {id(e): names.get(i) for i, e in enumerate(entries)})
    chosen = [entries[index]] if index is not None else sorted(entries, key=lambda e: _user_position(e, entries))
    ordered, canonical = _Converter(naming.symbols, ordered=True), _Converter(naming.symbols, ordered=False)
    printer = _printer()
    rows, equations = [], []
    for entry in chosen:
        lhs = naming.lhs(entry)
        with distribute(False):  # 2 (a + b) stays as written
            rhs_text = printer.doprint(ordered(entry.inner_out))
        relation = r"\leftarrow" if isinstance(entry, SharedEntry) else "="
        rows.append((printer.doprint(lhs), relation, rhs_text))
        equations.append(sympy.Eq(lhs, canonical(entry.inner_out), evaluate=False))
    extras, until = [], None
    if args.until is not None:
        until = canonical(args.until)
        with distribute(False):
            extras.append(r"\text{until } " + printer.doprint(ordered(args.until)))
    text_so_far = " ".join(r for row in rows for r in row)
    extras += [clause for length, clause in naming.lengths if f"{length}-t" in text_so_far]
    return ScanLatex(_layout(rows, extras), tuple(equations), until)


def _layout(rows: list[tuple], extras: list[str]) -> str:
    """One equation on a line; several in an ``aligned`` block with the conditions last."""
    if len(rows) == 1:
        return r",\quad ".join([" ".join(rows[0])] + extras)
    lines = [f"{lhs} &{relation} {rhs}" for lhs, relation, rhs in rows] + [f"&{extra}" for extra in extras]
    return "\\begin{aligned}\n" + " \\\\\n".join(lines) + "\n\\end{aligned}"


def _user_position(entry, entries: list) -> tuple:
    """Where the user listed an output (outputs_info order), then shared states."""
    if isinstance(entry, SharedEntry):
        return (1, entries.index(entry))
    listed = _listed_at(entry)
    return (0, entries.index(entry) if listed is None else listed)


def _listed_at(entry) -> int | None:
    """An output's position in outputs_info, read off its label ("outputs_info[1] ...", "output 0")."""
    match = re.match(r"outputs_info\[(\d+)\]|output (\d+)", entry.label or "")
    return int(match[1] or match[2]) if match else None


# ---------------------------------------------------------------------------- names
GREEK = frozenset("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau "
                  "upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega".split())


@dataclass(frozen=True)
class _Name:
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


def _parse_name(name: str | None, lower: bool = False) -> _Name | None:
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
    return _Name(_word(base), tuple(f"\\{s}" if s in GREEK else s for s in subs))


def _initial_name(entry: RecurrentEntry) -> str | None:
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


class _Naming:
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
            initial = _initial_name(entry) if isinstance(entry, RecurrentEntry) else None
            hint = hints.get(id(entry))
            number = (position if _listed_at(entry) is None else _listed_at(entry)) + 1
            self.names[id(entry)] = self._claim(_parse_name(initial), _parse_name(hint, lower=True),
                                                _parse_name(hint), _Name("y", (str(number),)))
        for i, seq in enumerate(args.sequences):
            self.names[id(seq)] = self._claim(_parse_name(seq.outer.name, lower=True), _parse_name(seq.outer.name),
                                              _Name("s", (str(i + 1),)))
        for i, entry in enumerate(args.non_seqs):
            self.names[id(entry)] = self._claim(_parse_name(entry.outer.name), _Name("c", (str(i + 1),)))
        for i, entry in enumerate(args.shared):
            self.names[id(entry)] = self._claim(_parse_name(entry.outer.name), _Name("z", (str(i + 1),)))
        self._symbols(args)

    def _claim(self, *candidates: _Name | None) -> _Name:
        """The first free candidate, else the first one primed until it is free."""
        present = [c for c in candidates if c is not None]
        for name in present:
            if (name.head, name.subs) not in self.used:
                self.used.add((name.head, name.subs))
                return name
        name = present[0]
        while (name.head, name.subs) in self.used:
            name = _Name(name.head + "'", name.subs)
        self.used.add((name.head, name.subs))
        return name

    def _symbols(self, args: ScanArgs) -> None:
        for seq in args.sequences:
            name = self.names[id(seq)]
            length = "T" if len(args.sequences) == 1 else f"T_{{{name.at()}}}"
            for tap, inner in zip(seq.taps, seq.inner):
                time = _reversed_time(length, tap) if args.go_backwards else _time(tap)
                self.symbols[inner] = _symbol(name.at(time), inner)
            if args.go_backwards:
                span = f" - {seq.span}" if seq.span else ""
                self.lengths.append((length, f"{length} = \\left|{name.at()}\\right|{span}"))
        for entry in args.recurrent:
            for tap, inner in zip(entry.taps, entry.inner_in):
                self.symbols[inner] = _symbol(self.names[id(entry)].at(_time(tap)), inner)
        for entry in args.non_seqs:
            self.symbols[entry.inner] = _symbol(self.names[id(entry)].at(), entry.inner)
        for entry in args.shared:
            self.symbols[entry.inner_in] = _symbol(self.names[id(entry)].at(), entry.inner_in)

    def lhs(self, entry):
        """``h_{t}`` for an output; a shared state's own name (its update is an assignment)."""
        name = self.names[id(entry)]
        return _symbol(name.at() if isinstance(entry, SharedEntry) else name.at("t"), entry.inner_out)


def _time(tap: int) -> str:
    return "t" if tap == 0 else f"t{tap:+d}"


def _reversed_time(length: str, tap: int) -> str:
    """Going backwards, step t reads the element ``T - 1 - t`` (shifted by the tap)."""
    shift = tap - 1
    return f"{length}-t" + (f"{shift:+d}" if shift else "")


def _symbol(text: str, var: Variable):
    """Tensors do not commute (matrix products keep their order); scalars do."""
    import sympy

    return sympy.Symbol(text, commutative=getattr(var.type, "ndim", 0) == 0)


# ---------------------------------------------------------------------------- graph -> sympy
class _Converter:
    """Inner-graph variables as sympy expressions, memoised.

    ``ordered`` builds sums unevaluated, in the graph's order, for the text (sympy would sort
    ``x W + h U + b`` into ``b + h U + x W``); otherwise sympy's canonical forms, for comparing.
    """

    def __init__(self, symbols: dict, ordered: bool):
        self.values = dict(symbols)
        self.ordered = ordered

    def __call__(self, var: Variable):
        """Depth-first with an explicit stack: long chains do not hit the recursion limit."""
        stack = [var]
        while stack:
            current = stack[-1]
            if current in self.values:
                stack.pop()
            elif current.owner is None:
                self.values[current] = _root(current)
            else:
                node = current.owner
                missing = [i for i in node.inputs if i not in self.values]
                if missing:
                    stack.extend(missing)
                    continue
                inputs = [self.values[i] for i in node.inputs]
                for out in node.outputs:
                    self.values[out] = self._apply(node, out, inputs)
        return self.values[var]

    def _apply(self, node: Apply, out: Variable, inputs: list):
        """The op in sympy's terms; sympy refuses some operands (a non-commutative symbol in
        ``Max`` or ``Mod``), and a display must still show something: then a named function."""
        try:
            return self._known(node, out, inputs)
        except (TypeError, ValueError):
            return _named(node, out, inputs)

    def _known(self, node: Apply, out: Variable, inputs: list):
        import sympy

        op = node.op
        if isinstance(op, Elemwise):
            return self._elemwise(op.name, node, inputs)
        if isinstance(op, (Dot, MatMul)):
            return sympy.Mul(*inputs)
        if isinstance(op, Cast):
            return inputs[0]
        if isinstance(op, DimShuffle):
            return _dimshuffle(op, inputs[0])
        if isinstance(op, Subtensor):
            return _getitem(op.spec, inputs)
        return _named(node, out, inputs)

    def _add(self, terms: list):
        import sympy

        if not self.ordered:
            return sympy.Add(*terms)
        flat = [t for term in terms for t in (term.args if isinstance(term, sympy.Add) else (term,))]
        return sympy.Add(*flat, evaluate=False)

    def _elemwise(self, name: str, node: Apply, inputs: list):
        import sympy

        scalar = [getattr(v.type, "ndim", 0) == 0 or e.is_commutative for v, e in zip(node.inputs, inputs)]
        if name == "add":
            return self._add(inputs)
        if name == "sub":
            return self._add([inputs[0], -inputs[1]])
        if name == "mul":
            return sympy.Mul(*inputs) if any(scalar) else _hadamard(*inputs)
        if name == "true_div":  # sympy would print x_{t} W^{-1} for a non-commutative quotient
            plain = inputs[1].is_Number or all(e.is_commutative for e in inputs)
            return inputs[0] / inputs[1] if plain else sympy.Function("divide")(*inputs)
        if name in ("maximum", "minimum"):
            if all(e.is_commutative for e in inputs):
                return (sympy.Max if name == "maximum" else sympy.Min)(*inputs)
            return sympy.Function(name[:3])(*inputs)
        if name in _RELATIONS:
            return getattr(sympy, _RELATIONS[name])(*inputs, evaluate=False)
        if name in _LOGIC and node.outputs[0].dtype == "bool":
            return getattr(sympy, _LOGIC[name])(*inputs)
        if name == "switch":
            return sympy.Piecewise((inputs[1], inputs[0]), (inputs[2], True), evaluate=False)
        known = _elemwise_functions().get(name)
        return known(*inputs) if known else sympy.Function(name.rstrip("_"))(*inputs)


_RELATIONS = {"eq": "Eq", "neq": "Ne", "lt": "Lt", "le": "Le", "gt": "Gt", "ge": "Ge"}
_LOGIC = {"and_": "And", "or_": "Or", "xor": "Xor", "invert": "Not"}


@functools.cache
def _elemwise_functions() -> dict:
    """Elementwise op name -> sympy function (sigmoid is sigma, the usual name)."""
    import sympy

    named = sympy.Function
    return {
        "neg": lambda a: -a, "abs": sympy.Abs, "exp": sympy.exp, "log": sympy.log,
        "log1p": lambda a: sympy.log(1 + a), "expm1": lambda a: sympy.exp(a) - 1, "sqrt": sympy.sqrt,
        "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "tanh": sympy.tanh, "erf": sympy.erf,
        "sign": sympy.sign, "floor": sympy.floor, "ceil": sympy.ceiling, "pow": sympy.Pow, "mod": sympy.Mod,
        "floor_div": lambda a, b: sympy.floor(a / b), "second": lambda a, b: b,
        "sigmoid": named("sigma"), "softplus": named("softplus"), "round": named("round"), "clip": named("clip"),
    }


def _hadamard(a, b):
    """An elementwise product of tensors, flattened: (a * b) * c is one product of three."""
    import sympy

    factors = [f for x in (a, b) for f in (x.args if _function_name(x) == "hadamard" else (x,))]
    return sympy.Function("hadamard")(*factors)


def _function_name(expr) -> str | None:
    from sympy.core.function import AppliedUndef

    return type(expr).__name__ if isinstance(expr, AppliedUndef) else None


def _dimshuffle(op: DimShuffle, x):
    """Adding or dropping broadcast axes changes nothing shown; swapping a matrix's is a transpose."""
    import sympy

    kept = [axis for axis in op.new_order if axis != "x"]
    if kept == sorted(kept):
        return x
    if len(kept) == 2:
        return sympy.Function("transpose")(x)
    return sympy.Function(f"dimshuffle[{','.join(str(a) for a in op.new_order)}]")(x)


def _getitem(spec: tuple, inputs: list):
    """``x[i, 1:]`` as ``getitem(x, i, slice(1, , ))``; an empty symbol marks a missing bound."""
    import sympy

    blank = sympy.Symbol("")
    base, values = inputs[0], iter(inputs[1:])
    items = []
    for entry in spec:
        if entry in (INT, ARRAY):
            items.append(next(values))
        elif entry == NONE:
            items.append(sympy.Symbol(r"\mathrm{None}"))
        elif entry == ELLIPSIS:
            items.append(sympy.Symbol(r"\ldots"))
        else:
            items.append(sympy.Function("slice")(*[next(values) if present else blank for present in entry[1:]]))
    return sympy.Function("getitem")(base, *items)


def _named(node: Apply, out: Variable, inputs: list):
    """An op sympy has no form for, as a function named after it; a nested scan is
    ``\\operatorname{scan}`` of its outer inputs."""
    import sympy

    op, name = node.op, _op_name(node.op)
    if isinstance(op, Scan) and op.info.steps_from_sequences:
        inputs = inputs[1:]  # the step count is the sequences' length: not worth showing
    if isinstance(op, RandomVariable):
        inputs = inputs[2:]  # the generator and the size
        name += "[rng]" if out.index == 0 else ""
    elif len(node.outputs) > 1:
        name += f"[{out.index}]"
    return sympy.Function(name)(*inputs)


def _op_name(op) -> str:
    """``scan`` (or the scan's name), ``sum[axis=1]``, ``normal``, ``reshape``, ``set_subtensor``."""
    if isinstance(op, Scan):
        name = op.info.name or "scan"
    elif isinstance(getattr(op, "distribution", None), str):
        name = op.distribution
    elif isinstance(getattr(op, "kind", None), str):
        name = op.kind
    else:
        name = re.sub(r"(?<!^)(?=[A-Z])", "_", type(op).__name__).lower()
        name = "set_subtensor" if getattr(op, "set_instead_of_inc", False) else name
    name = re.sub(r"[^0-9A-Za-z_]", "_", name)
    axis = getattr(op, "axis", None)
    if axis is not None:
        name += f"[axis={','.join(str(a) for a in np.atleast_1d(axis))}]"
    return name


def _root(var: Variable):
    """A constant as its number (or a short list); any other root as a symbol of its name."""
    import sympy

    if isinstance(var, Constant):
        data = np.asarray(var.data)
        if data.size and (data == data.flat[0]).all():
            return _number(data.flat[0])
        name = _parse_name(var.name)
        if name is None and data.ndim == 1 and data.size <= 6:
            text = r"\left[" + ", ".join(sympy.latex(_number(v)) for v in data) + r"\right]"
            return sympy.Symbol(text, commutative=False)
        return _symbol((name or _Name(r"\mathrm{const}")).at(), var)
    return _symbol((_parse_name(var.name) or _Name(r"\mathrm{?}")).at(), var)


def _number(value):
    """numpy scalar -> sympy number: integral floats print as integers (``2``, not ``2.0``)."""
    import sympy

    if isinstance(value, (bool, np.bool_)):
        return sympy.true if value else sympy.false
    if isinstance(value, np.integer):
        return sympy.Integer(int(value))
    if isinstance(value, np.complexfloating):
        return sympy.sympify(complex(value))
    number = float(value)
    if np.isnan(number):
        return sympy.nan
    if np.isinf(number):
        return sympy.oo if number > 0 else -sympy.oo
    return sympy.Integer(int(number)) if number.is_integer() else sympy.Float(repr(number))


# ---------------------------------------------------------------------------- printing
@functools.cache
def _printer():
    """A sympy LaTeX printer that keeps term order, prints symbol names verbatim (they are
    LaTeX already) and prints the named functions this module builds."""
    from sympy.core.function import AppliedUndef
    from sympy.printing.latex import LatexPrinter
    from sympy.printing.precedence import PRECEDENCE

    class ScanLatexPrinter(LatexPrinter):
        def _print(self, expr, **kwargs):
            if isinstance(expr, AppliedUndef):  # before sympy's own _print_<name> (binomial, ...)
                return self._print_named(expr, kwargs.get("exp"))
            return super()._print(expr, **kwargs)

        def _print_Symbol(self, expr, style="plain"):
            return expr.name

        def _needs_mul_brackets(self, expr, first=False, last=False) -> bool:
            return _function_name(expr) == "hadamard" or super()._needs_mul_brackets(expr, first, last)

        def _print_named(self, expr, exp=None) -> str:
            name, args = _function_name(expr), expr.args
            if name == "hadamard":
                text = r" \odot ".join(self.parenthesize(a, PRECEDENCE["Mul"]) for a in args)
            elif name == "divide":
                text = rf"\frac{{{self._print(args[0])}}}{{{self._print(args[1])}}}"
            elif name == "transpose":
                text = self.parenthesize(args[0], PRECEDENCE["Pow"]) + "^{T}"
            elif name == "getitem":
                items = ", ".join(self._print(a) for a in args[1:])
                text = rf"{self.parenthesize(args[0], PRECEDENCE['Func'], strict=True)}\left[{items}\right]"
            elif name == "slice":
                parts = [self._print(a) for a in args]
                text = ":".join(parts if parts[2] else parts[:2])
            else:
                head = _operator_name(name) + (f"^{{{exp}}}" if exp else "")
                return head + r"\left(" + ", ".join(self._print(a) for a in args) + r"\right)"
            return rf"\left({text}\right)^{{{exp}}}" if exp else text

    return ScanLatexPrinter({"order": "none"})


def _operator_name(name: str) -> str:
    """``sigma`` -> ``\\sigma``, ``max`` -> ``\\max``, ``sum[axis=1]`` -> ``\\operatorname{sum}_{axis=1}``."""
    match = re.fullmatch(r"(.*?)\[(.*)\]", name)
    base, sub = (match[1], match[2]) if match else (name, "")
    if base in GREEK or base in ("max", "min"):
        head = f"\\{base}"
    else:
        head = r"\operatorname{" + base.replace("_", r"\_") + "}"
    return head + ("_{" + sub.replace("_", r"\_") + "}" if sub else "")
