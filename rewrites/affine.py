"""Affine recurrences in sympy: recognising them on a loop body, and their closed forms.

The new value of an output becomes a sympy expression in symbols for its past values and
for "leaves" (inner variables the state does not flow through). It is affine when its
derivative with respect to each past value is free of past values; the derivatives are the
coefficients and the rest, with past values set to zero, is the forcing term. Both convert
back to graphs over the leaves. Sympy stays off the hot path: a body is converted once per
rewrite, and closed forms are cached by their coefficients.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from symscan.graph.basic import Constant, Variable
from symscan.tensor.basic import constant
from symscan.tensor.elemwise import Elemwise
from symscan.tensor.elemwise import pow as power

AFFINE_OPS = ("add", "sub", "mul", "true_div", "neg")
"""Elementwise ops through which a value can stay affine in the state."""


class NotAffine(Exception):
    """The expression is not affine in the state (the message says where)."""


@dataclass
class AffineForm:
    """``new = Σ coefficients[lag] * x_{t-lag} + forcing``, with sympy expressions over ``leaves``."""

    coefficients: dict
    forcing: object
    leaves: dict  # sympy symbol -> inner variable


def affine_form(out: Variable, past: dict[Variable, int]) -> AffineForm:
    """``out`` as an affine function of the past values ``past`` ({inner input: lag})."""
    _check_affine_path(out, set(past))  # most bodies fail here, before sympy is imported
    import sympy

    xs = {var: sympy.Symbol(f"x_{lag}") for var, lag in past.items()}
    converter = _Converter(xs)
    expr = converter(out)
    coefficients = {}
    for var, lag in past.items():
        derivative = sympy.diff(expr, xs[var])
        if derivative.free_symbols & set(xs.values()):
            raise NotAffine(f"its derivative by the value at t-{lag} is {derivative}, which depends on the state")
        coefficients[lag] = derivative
    forcing = expr.subs({x: 0 for x in xs.values()})
    return AffineForm(coefficients, forcing, converter.leaves)


def _check_affine_path(out: Variable, state: set) -> None:
    """Raise NotAffine when the state reaches ``out`` through a non-affine op, or through a
    product or quotient of two state-dependent values (checked without sympy)."""
    depends: dict = {v: True for v in state}
    stack = [out]
    while stack:
        var = stack[-1]
        if var in depends:
            stack.pop()
            continue
        node = var.owner
        if node is None:
            depends[var] = False
            stack.pop()
            continue
        pending = [v for v in node.inputs if v not in depends]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        flags = [depends[v] for v in node.inputs]
        depends[var] = any(flags)
        if not any(flags):
            continue
        if not isinstance(node.op, Elemwise) or node.op.name not in AFFINE_OPS:
            raise NotAffine(f"the state goes through {node.op}, which is not an elementwise affine op")
        if (node.op.name == "mul" and sum(flags) > 1) or (node.op.name == "true_div" and flags[1]):
            raise NotAffine(f"{node.op} of values that both depend on the state")


class _Converter:
    """Inner variables as sympy expressions; the state's path may only use ``AFFINE_OPS``."""

    def __init__(self, xs: dict):
        self.values = dict(xs)
        self.depends = {var: True for var in xs}
        self.leaves: dict = {}

    def __call__(self, var: Variable):
        import sympy

        if var in self.values:
            return self.values[var]
        if not self._depends(var):
            value = _number(var)
            if value is None:
                value = sympy.Symbol(self._leaf_name(var))
                self.leaves[value] = var
        else:
            node = var.owner
            if not isinstance(node.op, Elemwise) or node.op.name not in AFFINE_OPS:
                raise NotAffine(f"the state goes through {node.op}, which is not an elementwise affine op")
            args = [self(v) for v in node.inputs]
            value = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
                     "true_div": lambda a, b: a / b, "neg": lambda a: -a}[node.op.name](*args)
        self.values[var] = value
        return value

    def _leaf_name(self, var: Variable) -> str:
        """The variable's name where it is free (reports show it), else g0, g1, ..."""
        taken = {str(symbol) for symbol in [*self.leaves, *self.values.values()] if hasattr(symbol, "name")}
        if var.name and var.name.isidentifier() and var.name not in taken:
            return var.name
        return next(f"g{i}" for i in range(len(taken) + 1) if f"g{i}" not in taken)

    def _depends(self, var: Variable) -> bool:
        if var not in self.depends:
            self.depends[var] = var.owner is not None and any(self._depends(v) for v in var.owner.inputs)
        return self.depends[var]


def _number(var: Variable):
    """A scalar constant as an exact sympy number (a float by its shortest decimal form)."""
    import sympy

    if not isinstance(var, Constant) or np.ndim(var.data) != 0 or var.dtype[0] not in "iuf":
        return None
    value = np.asarray(var.data).item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return sympy.Integer(value) if isinstance(value, int) else sympy.Rational(repr(value))


def to_graph(expr, values: dict, dtype: str) -> Variable:
    """A sympy expression over symbols in ``values`` ({symbol: variable}) as a graph; numbers
    become constants of ``dtype`` (the state's)."""
    import sympy

    if not expr.free_symbols:
        number = complex(expr)
        if number.imag:
            raise NotAffine(f"the number {expr} is not real")
        if np.dtype(dtype).kind in "iu":
            if not expr.is_integer:
                raise NotAffine(f"the coefficient {expr} of an integer state is not an integer")
            return constant(np.asarray(int(expr)).astype(dtype))
        return constant(np.asarray(number.real, dtype=dtype))
    if expr.is_Symbol:
        return values[expr]
    if expr.is_Add:
        return functools.reduce(Elemwise("add"), [to_graph(t, values, dtype) for t in expr.args])
    if expr.is_Mul:
        numerator, denominator = sympy.fraction(expr)
        if denominator != 1 and not denominator.free_symbols:  # (2**-n stays a power: 1/2**n overflows)
            return Elemwise("true_div")(to_graph(numerator, values, dtype), to_graph(denominator, values, dtype))
        return functools.reduce(Elemwise("mul"), [to_graph(f, values, dtype) for f in expr.args])
    if expr.is_Pow:
        base = to_graph(expr.base, values, dtype)
        if expr.exp.is_Integer and 0 < expr.exp <= 4:
            return functools.reduce(Elemwise("mul"), [base] * int(expr.exp))
        return power(base, to_graph(expr.exp, values, dtype))
    raise NotAffine(f"no graph for {expr}")


# ---------------------------------------------------------------------------- closed forms
MAX_CLOSED_FORM_ORDER = 2
"""Beyond two past values sympy's solution with symbolic initial values takes seconds to
minutes (and its terms grow); the parallel prefix handles those orders."""


@functools.lru_cache(maxsize=128)
def closed_form(coefficients: tuple, span: int, forced: bool):
    """x(n) for n >= 0 of ``x(n) = Σ a_lag x(n - lag) + D`` (``forced``; else no D) given
    x(0..span-1), as a sympy expression in ``n``, ``i0``.. and ``D``; None when sympy finds
    none, or when it would not give the loop's numbers: characteristic roots that are
    irrational (their rounded powers leave integer-valued sequences off by an ulp), of modulus
    above 1 (cancelling terms that grow), or distinct but closer than 1e-3 (cancelling terms)."""
    import sympy

    if span > MAX_CLOSED_FORM_ORDER:
        return None
    n, x = sympy.Symbol("n", integer=True), sympy.Function("x")
    inits, forcing = sympy.symbols(f"i0:{span}"), sympy.Symbol("D")
    r = sympy.Symbol("r")
    char = sympy.Poly(r ** span - sum(a * r ** (span - lag) for lag, a in coefficients), r)
    roots = sympy.roots(char)
    if sum(roots.values()) != span:
        return None
    if not all(root.is_rational and abs(root) <= 1 for root in roots):
        return None
    values = [float(root) for root in roots]
    if any(abs(a - b) < 1e-3 for i, a in enumerate(values) for b in values[i + 1:]):
        return None
    recurrence = x(n) - sum(a * x(n - lag) for lag, a in coefficients) - (forcing if forced else 0)
    try:
        solution = sympy.rsolve(recurrence, x(n), {x(j): inits[j] for j in range(span)})
    except (ValueError, NotImplementedError, TypeError):
        return None
    if solution is None or solution.has(sympy.I) or solution.atoms(sympy.Function):
        return None
    return solution
