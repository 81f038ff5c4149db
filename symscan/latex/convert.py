"""An inner graph as a sympy expression (ops to sympy, or to named functions)."""

from __future__ import annotations

import functools
import re

import numpy as np

from symscan.graph.basic import Apply, Constant, Variable
from symscan.graph.clone import clone_replace
from symscan.latex.names import Name, parse_name, symbol
from symscan.scan.op import Scan
from symscan.tensor.composite import Composite
from symscan.tensor.elemwise import Cast, Elemwise
from symscan.tensor.math import Dot, MatMul
from symscan.tensor.random import RandomVariable
from symscan.tensor.shape import DimShuffle
from symscan.tensor.subtensor import ARRAY, ELLIPSIS, INT, NONE, Subtensor


class Converter:
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
        if isinstance(op, Composite):  # a fused chain: the chain itself, over the node's inputs
            return self(clone_replace(op.inner.outputs, dict(zip(op.inner.inputs, node.inputs)))[out.index])
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
        "logaddexp": lambda a, b: sympy.log(sympy.exp(a) + sympy.exp(b)),
        "sigmoid": named("sigma"), "softplus": named("softplus"), "fmod": named("fmod"), "round": named("round"),
        "clip": named("clip"),
    }


def _hadamard(a, b):
    """An elementwise product of tensors, flattened: (a * b) * c is one product of three."""
    import sympy

    factors = [f for x in (a, b) for f in (x.args if function_name(x) == "hadamard" else (x,))]
    return sympy.Function("hadamard")(*factors)


def function_name(expr) -> str | None:
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
        name = parse_name(var.name)
        if name is None and data.ndim == 1 and data.size <= 6:
            text = r"\left[" + ", ".join(sympy.latex(_number(v)) for v in data) + r"\right]"
            return sympy.Symbol(text, commutative=False)
        return symbol((name or Name(r"\mathrm{const}")).at(), var)
    return symbol((parse_name(var.name) or Name(r"\mathrm{?}")).at(), var)


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
