"""What a gradient can be besides a tensor: disconnected (the cost does not depend on the
variable) or undefined (``NullType``: the op has no gradient there, e.g. w.r.t. a random
draw's parameters), with Theano's errors for them."""

from __future__ import annotations

from dataclasses import dataclass

from symscan.graph.basic import Variable
from symscan.graph.type import Type


class DisconnectedInputError(ValueError):
    """``grad`` was asked for a variable the cost does not depend on (Theano's error)."""


class NullTypeGradError(TypeError):
    """A gradient needed for the result is undefined (Theano's error)."""


@dataclass(frozen=True)
class DisconnectedType(Type):
    """The type of the gradient of a variable the cost does not depend on
    (``return_disconnected="Disconnected"``)."""

    def filter(self, value, what: str = "value", strict: bool = False):
        raise TypeError(f"{what}: a disconnected gradient has no value")

    def __str__(self) -> str:
        return "Disconnected"


@dataclass(frozen=True)
class NullType(Type):
    """The type of an undefined gradient; ``why`` says why (shown in errors)."""

    why: str = ""

    def filter(self, value, what: str = "value", strict: bool = False):
        raise TypeError(f"{what}: an undefined gradient has no value ({self.why})")

    def __str__(self) -> str:
        return "NullType"


def disconnected_type() -> Variable:
    return DisconnectedType().make_variable()


def grad_undefined(op, x_pos: int, x: Variable, comment: str = "") -> Variable:
    """The gradient of ``op`` w.r.t. its input ``x_pos`` (``x``) is mathematically undefined."""
    why = f"{op} has no gradient w.r.t. its input {x_pos} ({x})" + (f": {comment}" if comment else "")
    return NullType(why).make_variable()


def grad_not_implemented(op, x_pos: int, x: Variable, comment: str = "") -> Variable:
    """The gradient of ``op`` w.r.t. its input ``x_pos`` exists but symscan does not compute it."""
    why = f"the gradient of {op} w.r.t. its input {x_pos} ({x}) is not implemented"
    why += f": {comment}" if comment else ""
    return NullType(why).make_variable()


def is_null(value) -> bool:
    return isinstance(value, Variable) and isinstance(value.type, NullType)


def is_disconnected(value) -> bool:
    return value is None or (isinstance(value, Variable) and isinstance(value.type, DisconnectedType))
