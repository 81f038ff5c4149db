"""The LaTeX printer for the expressions ``convert`` builds."""

from __future__ import annotations

import functools
import re

from symscan.latex.convert import function_name
from symscan.latex.names import GREEK


@functools.cache
def printer():
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
            return function_name(expr) == "hadamard" or super()._needs_mul_brackets(expr, first, last)

        def _print_named(self, expr, exp=None) -> str:
            name, args = function_name(expr), expr.args
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
