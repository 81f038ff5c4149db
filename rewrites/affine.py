"""Affine recurrences without sympy: recognising them on a loop body, and their closed forms.

The new value of an output is read as ``Σ coefficients[lag] * x_{t-lag} + forcing`` by one
walk over the state's path (add, sub, mul, true_div, neg). Coefficients and the forcing are
*values*: an exact ``Fraction`` when they come from scalar constants (a float by its shortest
decimal form, so 0.14 is 7/50 and roots like 7/10 are found exactly), else an inner variable
(the maximal state-free subgraph itself, or a small graph built over such subgraphs). Closed
forms come from the characteristic roots in exact rational arithmetic. No sympy import: the
first build of a program stays fast (sympy alone takes longer to import than symscan).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from symscan.graph.basic import Constant, Variable
from symscan.tensor.basic import constant
from symscan.tensor.elemwise import Elemwise

AFFINE_OPS = ("add", "sub", "mul", "true_div", "neg")
"""Elementwise ops through which a value can stay affine in the state."""

Value = Fraction | Variable
"""A coefficient or forcing: a number known exactly at build time, or an inner variable."""


class NotAffine(Exception):
    """The expression is not affine in the state (the message says where)."""


@dataclass
class AffineForm:
    """``new = Σ coefficients[lag] * x_{t-lag} + forcing`` (a lag the body ignores has 0)."""

    coefficients: dict[int, Value]
    forcing: Value

    def shown(self, lags: tuple) -> str:
        """The recurrence as text for the rewrite report."""
        names: dict = {}
        terms = " + ".join(f"({show(self.coefficients[lag], names)}) x_(t-{lag})" for lag in lags)
        return f"x_t = {terms} + ({show(self.forcing, names)})"


def is_number(value: Value) -> bool:
    return isinstance(value, Fraction)


def affine_form(out: Variable, past: dict[Variable, int], dtype: str) -> AffineForm:
    """``out`` as an affine function of the past values ``past`` ({inner input: lag}); numbers
    combined with variables become constants of ``dtype`` (the state's)."""
    linear = _Reader(past, _Algebra(dtype)).read(out)
    coefficients = {lag: Fraction(0) for lag in past.values()}
    if isinstance(linear, _Linear):
        coefficients.update(linear.coefficients)
        return AffineForm(coefficients, linear.forcing)
    return AffineForm(coefficients, linear)


# ---------------------------------------------------------------------------- values
class _Algebra:
    """Arithmetic on values: exact on numbers, graph nodes otherwise (x + 0, 1 * x, -(-x)
    and 0 * x are simplified, so the graphs stay those the body computes)."""

    def __init__(self, dtype: str):
        self.dtype = dtype

    def graph(self, value: Value) -> Variable:
        return as_graph(value, self.dtype)

    def add(self, a: Value, b: Value) -> Value:
        if is_number(a) and is_number(b):
            return a + b
        if _is_zero(a) or _is_zero(b):
            return b if _is_zero(a) else a
        return Elemwise("add")(self.graph(a), self.graph(b))

    def sub(self, a: Value, b: Value) -> Value:
        if is_number(a) and is_number(b):
            return a - b
        if _is_zero(b):
            return a
        return self.neg(b) if _is_zero(a) else Elemwise("sub")(self.graph(a), self.graph(b))

    def neg(self, a: Value) -> Value:
        if is_number(a):
            return -a
        node = a.owner
        if node is not None and isinstance(node.op, Elemwise) and node.op.name == "neg":
            return node.inputs[0]
        return Elemwise("neg")(a)

    def mul(self, a: Value, b: Value) -> Value:
        if is_number(a) and is_number(b):
            return a * b
        if _is_zero(a) or _is_zero(b):
            return Fraction(0)
        if _is_one(a) or _is_one(b):
            return b if _is_one(a) else a
        return Elemwise("mul")(self.graph(a), self.graph(b))

    def div(self, a: Value, b: Value) -> Value:
        if _is_zero(b):
            raise NotAffine("it divides by the constant 0")
        if is_number(a) and is_number(b):
            return a / b
        if _is_zero(a) or _is_one(b):
            return a
        return Elemwise("true_div")(self.graph(a), self.graph(b))


def _is_zero(value: Value) -> bool:
    return is_number(value) and value == 0


def _is_one(value: Value) -> bool:
    return is_number(value) and value == 1


def as_graph(value: Value, dtype: str) -> Variable:
    """A value as a graph; a number becomes a constant of ``dtype``."""
    if not is_number(value):
        return value
    if np.dtype(dtype).kind in "iu":
        if value.denominator != 1:
            raise NotAffine(f"the coefficient {value} of an integer state is not an integer")
        return constant(np.asarray(int(value)).astype(dtype))
    return constant(np.asarray(float(value), dtype=dtype))


def number(var: Variable) -> Fraction | None:
    """A finite real scalar constant as an exact fraction (a float by its shortest decimal form)."""
    if not isinstance(var, Constant) or np.ndim(var.data) != 0 or var.dtype[0] not in "iuf":
        return None
    value = np.asarray(var.data).item()
    if isinstance(value, float):
        return Fraction(repr(value)) if math.isfinite(value) else None
    return Fraction(value)


# ---------------------------------------------------------------------------- reading a body
@dataclass
class _Linear:
    """A state-dependent value: coefficients by lag, and the rest."""

    coefficients: dict[int, Value]
    forcing: Value


class _Reader:
    """Reads inner variables as values (state-free) or ``_Linear`` (on the state's path)."""

    def __init__(self, past: dict[Variable, int], algebra: _Algebra):
        self.past = past
        self.algebra = algebra
        self.depends: dict = {var: True for var in past}
        self.memo: dict = {}

    def read(self, var: Variable) -> Value | _Linear:
        if var not in self.memo:
            self.memo[var] = self._read(var)
        return self.memo[var]

    def _read(self, var: Variable) -> Value | _Linear:
        if var in self.past:
            return _Linear({self.past[var]: Fraction(1)}, Fraction(0))
        if not self._depends(var):
            value = number(var)
            return var if value is None else value
        node = var.owner
        if not isinstance(node.op, Elemwise) or node.op.name not in AFFINE_OPS:
            raise NotAffine(f"the state goes through {node.op}, which is not an elementwise affine op")
        args = [self.read(v) for v in node.inputs]  # operands first: the deepest problem is reported
        return getattr(self, f"_{node.op.name}")(node.op, *args)

    def _depends(self, var: Variable) -> bool:
        """Whether the state flows into ``var`` (iteratively: bodies can be deep)."""
        stack = [var]
        while stack:
            top = stack[-1]
            if top in self.depends:
                stack.pop()
                continue
            inputs = top.owner.inputs if top.owner is not None else []
            pending = [v for v in inputs if v not in self.depends]
            if pending:
                stack.extend(pending)
                continue
            self.depends[top] = any(self.depends[v] for v in inputs)
            stack.pop()
        return self.depends[var]

    def _add(self, op, a, b) -> _Linear:
        return self._combine(a, b, self.algebra.add)

    def _sub(self, op, a, b) -> _Linear:
        return self._combine(a, b, self.algebra.sub)

    def _neg(self, op, a) -> _Linear:
        return self._scale(a, self.algebra.neg)

    def _mul(self, op, a, b) -> _Linear:
        if isinstance(a, _Linear) and isinstance(b, _Linear):
            raise NotAffine(f"{op} of values that both depend on the state")
        linear, factor = (a, b) if isinstance(a, _Linear) else (b, a)
        return self._scale(linear, lambda v: self.algebra.mul(v, factor))

    def _true_div(self, op, a, b) -> _Linear:
        if isinstance(b, _Linear):
            raise NotAffine(f"{op} of values that both depend on the state")
        return self._scale(a, lambda v: self.algebra.div(v, b))

    def _combine(self, a, b, combine) -> _Linear:
        a, b = _as_linear(a), _as_linear(b)
        lags = list(dict.fromkeys([*a.coefficients, *b.coefficients]))
        zero = Fraction(0)
        coefficients = {lag: combine(a.coefficients.get(lag, zero), b.coefficients.get(lag, zero)) for lag in lags}
        return _Linear(coefficients, combine(a.forcing, b.forcing))

    @staticmethod
    def _scale(linear: _Linear, scale) -> _Linear:
        return _Linear({lag: scale(c) for lag, c in linear.coefficients.items()}, scale(linear.forcing))


def _as_linear(value: Value | _Linear) -> _Linear:
    return value if isinstance(value, _Linear) else _Linear({}, value)


# ---------------------------------------------------------------------------- report text
_INFIX = {"add": "+", "sub": "-", "mul": "*", "true_div": "/"}


def show(value: Value, names: dict) -> str:
    """A value as text: numbers exactly (1/2), variables by name, others as g0, g1, ..."""
    exact = value if is_number(value) else number(value)
    if exact is not None:
        return str(exact)
    node = value.owner
    if value.name:
        return value.name
    if node is not None and isinstance(node.op, Elemwise) and node.op.name in AFFINE_OPS:
        shown = [show(v, names) for v in node.inputs]
        return f"-{shown[0]}" if node.op.name == "neg" else f"({f' {_INFIX[node.op.name]} '.join(shown)})"
    return names.setdefault(value, f"g{len(names)}")


# ---------------------------------------------------------------------------- closed forms
MAX_CLOSED_FORM_ORDER = 2
"""Higher orders take the parallel prefix (their roots are rarely rational; the bound dates from
when sympy solved these, and stays so that the rewrite's decisions do not change)."""


@dataclass(frozen=True)
class Mode:
    """One term ``(Σ_j weights[j] v_j) n^power root^n`` of a closed form, with v = (x(0), ...,
    x(span-1), D)."""

    root: Fraction
    power: int
    weights: tuple[Fraction, ...]


@functools.lru_cache(maxsize=128)
def closed_form(coefficients: tuple, span: int, forced: bool) -> tuple[Mode, ...] | None:
    """x(n) for n >= 0 of ``x(n) = Σ a_lag x(n - lag) + D`` (``forced``; else no D) given
    x(0..span-1), as modes (see ``Mode``); None when the loop's numbers would not come out:
    characteristic roots that are irrational or complex (their rounded powers leave
    integer-valued sequences off by an ulp), of modulus above 1 (cancelling terms that grow),
    or distinct but closer than 1e-3 (cancelling terms)."""
    if span > MAX_CLOSED_FORM_ORDER:
        return None
    a = {lag: Fraction(c) for lag, c in coefficients}
    roots = rational_roots([a.get(lag, Fraction(0)) for lag in range(1, span + 1)])
    if roots is None or any(abs(r) > 1 for r in roots):
        return None
    distinct = sorted(set(roots))
    if any(abs(float(p) - float(q)) < 1e-3 for i, p in enumerate(distinct) for q in distinct[i + 1:]):
        return None
    basis = [(r, k) for r in distinct for k in range(roots.count(r))]
    particular = _particular(a, span, roots.count(Fraction(1))) if forced else None
    return _fit(basis, particular, span)


def rational_roots(a: list[Fraction]) -> list[Fraction] | None:
    """The roots, with multiplicity, of ``r^s - a_1 r^(s-1) - ... - a_s`` (s <= 2) when all are
    rational, else None."""
    if len(a) == 1:
        return [a[0]]
    if len(a) != 2:
        return None
    discriminant = a[0] ** 2 + 4 * a[1]
    root = _rational_sqrt(discriminant)
    if root is None:
        return None
    return sorted([(a[0] - root) / 2, (a[0] + root) / 2])


def _rational_sqrt(q: Fraction) -> Fraction | None:
    if q < 0:
        return None
    num, den = math.isqrt(q.numerator), math.isqrt(q.denominator)
    return Fraction(num, den) if num * num == q.numerator and den * den == q.denominator else None


def _particular(a: dict, span: int, ones: int) -> Mode:
    """``c D n^m`` solving the forced recurrence, m the multiplicity of the root 1: the
    recurrence's operator maps n^m to a constant, whose inverse is c."""
    image = Fraction(span) ** ones - sum(c * Fraction(span - lag) ** ones for lag, c in a.items())
    return Mode(Fraction(1), ones, (Fraction(0),) * span + (1 / image,))


def _fit(basis: list, particular: Mode | None, span: int) -> tuple[Mode, ...]:
    """Weights of the homogeneous solutions ``n^k r^n`` that meet x(0..span-1)."""
    width = span + (particular is not None)
    rhs = []  # row n: x(n) minus the particular solution at n, over v
    for n in range(span):
        row = [Fraction(int(j == n)) for j in range(width)]
        if particular is not None:
            row[-1] -= particular.weights[-1] * Fraction(n) ** particular.power
        rhs.append(row)
    matrix = [[Fraction(n) ** k * r ** n for r, k in basis] for n in range(span)]
    weights = _solve(matrix, rhs)
    modes = [Mode(r, k, tuple(w)) for (r, k), w in zip(basis, weights)]
    if particular is not None:
        modes.append(particular)
    return tuple(modes)


def _solve(matrix: list[list[Fraction]], rhs: list[list[Fraction]]) -> list[list[Fraction]]:
    """Exact Gauss-Jordan elimination for ``matrix @ X = rhs`` (matrix regular and tiny)."""
    rows = [m + r for m, r in zip(matrix, rhs)]
    size = len(matrix)
    for col in range(size):
        pivot = next(i for i in range(col, size) if rows[i][col] != 0)
        rows[col], rows[pivot] = rows[pivot], rows[col]
        rows[col] = [v / rows[col][col] for v in rows[col]]
        for i in range(size):
            if i != col and rows[i][col] != 0:
                rows[i] = [v - rows[i][col] * p for v, p in zip(rows[i], rows[col])]
    return [row[size:] for row in rows]

