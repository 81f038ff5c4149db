"""The objects a graph is made of: variables, constants, shared variables, Apply nodes, ops.

A graph is plain Python objects: a ``Variable`` is either a root (``owner is None``) or the
``index``-th output of an ``Apply`` node, which records an ``Op`` applied to input variables.
Ops are immutable; their parameters ("props") decide equality and hashing, so identical nodes
can be merged.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np


class Variable:
    """A value in a graph, typed by ``type`` (e.g. a ``TensorType``)."""

    def __init__(self, type, owner: Apply | None = None, index: int | None = None,
                 name: str | None = None):
        self.type = type
        self.owner = owner
        self.index = index
        self.name = name
        self.tag: dict[str, Any] = {}

    def clone(self, name: str | None = None) -> Variable:
        """A fresh root variable of the same type (used when graphs are copied)."""
        new = type(self)(self.type, name=self.name if name is None else name)
        new.tag = dict(self.tag)
        return new

    def eval(self, givens_dict: dict | None = None):
        """Compile a function of ``givens_dict``'s keys and evaluate this variable.

        The compiler is plugged in by ``symscan.compile`` (the graph layer cannot import it).
        """
        if _eval_compiler is None:
            raise RuntimeError("Variable.eval needs symscan.compile: `import symscan` first")
        return _eval_compiler(self, givens_dict or {})

    def _repr_html_(self) -> str | None:
        """Notebooks show the graph computing this variable (interactive, ``ss.draw``)."""
        return html_of(self)

    def __repr__(self) -> str:
        if self.name is not None:
            return self.name
        if self.owner is not None:
            suffix = f".{self.index}" if len(self.owner.outputs) > 1 else ""
            return f"{self.owner.op}{suffix}"
        return f"<{self.type}>"


class Constant(Variable):
    """A root variable with a fixed value; constants with equal values are interchangeable."""

    def __init__(self, type, data: np.ndarray, name: str | None = None):
        super().__init__(type, name=name)
        data = np.array(data, copy=True)
        data.setflags(write=False)
        self.data = data
        self._signature: tuple | None = None

    @property
    def value(self) -> np.ndarray:
        return self.data

    def signature(self) -> tuple:
        """A hashable key: equal keys mean the constants hold the same typed value."""
        if self._signature is None:
            self._signature = (self.type, self.data.dtype.str, self.data.shape, self.data.tobytes())
        return self._signature

    def clone(self, name: str | None = None) -> Constant:
        return type(self)(self.type, self.data, name=self.name if name is None else name)

    def __repr__(self) -> str:
        if self.name is not None:
            return self.name
        text = np.array2string(self.data, threshold=6, separator=", ")
        return text if len(text) < 40 else f"<constant {self.type}>"


class SharedVariable(Variable):
    """A root variable whose value lives between calls; ``function`` updates it."""

    def __init__(self, type, value, name: str | None = None, strict: bool = False):
        super().__init__(type, name=name)
        self.strict = strict
        # a one-element list, so that aliases (see ``alias``) can hold the same value
        self._storage = [type.filter(value, what=self._what(), strict=strict)]

    def _what(self) -> str:
        return f"shared variable {self.name!r}" if self.name else "shared variable"

    def get_value(self, borrow: bool = False):
        """The current value; a copy unless ``borrow`` is true."""
        return self._storage[0] if borrow else self.type.copy_value(self._storage[0])

    def set_value(self, value, borrow: bool = False) -> None:
        """Replace the value; it must fit the variable's type (no lossy cast).

        Without ``borrow`` the value is copied whenever it may share memory with ``value``
        (also views made by ``np.asarray`` of memoryviews or array-likes), so later changes to
        the caller's buffer never reach the shared state.
        """
        new = self.type.filter(value, what=self._what(), strict=self.strict)
        if not borrow and self.type.may_share_memory(new, value):
            new = self.type.copy_value(new)
        self._storage[0] = new

    def clone(self, name: str | None = None) -> SharedVariable:
        """Shared variables keep their identity when graphs are copied."""
        return self

    def alias(self) -> SharedVariable:
        """Another shared variable (same class, type, name) holding this one's value: setting
        either sets both. Theano's ``clone(share_inputs=False)`` copies shared variables so (its
        copies share the container); like Theano's, the alias has no ``default_update``."""
        new = object.__new__(type(self))
        Variable.__init__(new, self.type, name=self.name)
        new.tag = dict(self.tag)
        new.strict = self.strict
        new._storage = self._storage
        return new


class Apply:
    """One application of ``op`` to ``inputs``; it owns its output variables.

    ``serial`` numbers nodes in creation order, so scan can tell the nodes its step function
    built from those that existed before (see ``next_serial``).
    """

    _next_serial = 0

    def __init__(self, op: Op, inputs: Sequence[Variable], output_types: Sequence):
        self.serial = Apply._next_serial
        Apply._next_serial += 1
        self.op = op
        self.inputs = list(inputs)
        self.outputs = [t.make_variable(owner=self, index=i) for i, t in enumerate(output_types)]
        self.tag: dict[str, Any] = {}
        if _recording_lines:
            line = _user_line()
            if line is not None:
                self.tag["built_at"] = line

    @staticmethod
    def next_serial() -> int:
        """The serial number the next node created will get."""
        return Apply._next_serial

    def clone_with_new_inputs(self, inputs: Sequence[Variable]) -> Apply:
        """The same op on ``inputs``; types are re-inferred when the input types changed."""
        if all(new.type == old.type for new, old in zip(inputs, self.inputs, strict=True)):
            node = Apply(self.op, inputs, [o.type for o in self.outputs])
        else:
            node = self.op.make_node(*inputs)
        for new, old in zip(node.outputs, self.outputs):
            new.name = old.name
            new.tag = dict(old.tag)
        node.tag = dict(self.tag)
        return node

    @property
    def out(self) -> Variable:
        """The single output (an error for multi-output nodes)."""
        if len(self.outputs) != 1:
            raise ValueError(f"{self.op} has {len(self.outputs)} outputs; use .outputs[i]")
        return self.outputs[0]

    def __repr__(self) -> str:
        return f"{self.op}({', '.join(repr(i) for i in self.inputs)})"

    def _repr_html_(self) -> str | None:
        """Notebooks show a loop's node as its picture (other nodes print as text)."""
        return html_of(self) if getattr(self.op, "inner", None) is not None else None


# ``tag["built_at"]``: the user's line that built a node, for pictures (hover shows it). Nodes
# the compiler builds (rewrites, backends) get none: ``compiling()`` turns the recording off.
_SYMSCAN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PACKAGE_DIRS = (_SYMSCAN_DIR + os.sep, os.path.join(os.path.dirname(_SYMSCAN_DIR), "rewrites") + os.sep)
_recording_lines = True


def _user_line() -> tuple[str, int] | None:
    """(file, line) of the innermost frame outside symscan and rewrites, if any is near."""
    frame = sys._getframe(2)
    for _ in range(40):
        if frame is None:
            return None
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIRS):
            return (filename, frame.f_lineno)
        frame = frame.f_back
    return None


@contextlib.contextmanager
def compiling() -> Iterator[None]:
    """Nodes built inside (by rewrites and backends) record no user line."""
    global _recording_lines
    saved, _recording_lines = _recording_lines, False
    try:
        yield
    finally:
        _recording_lines = saved


class Op:
    """Base of all operations.

    Concrete ops are frozen dataclasses whose fields are their parameters (props): equality,
    hashing and printing come from those. An op builds nodes with ``make_node`` (type and
    shape inference, input checks: errors at build time) and evaluates them with ``perform``
    (numpy; the reference semantics). Backends keep their own tables keyed by op class.
    """

    def make_node(self, *inputs: Variable) -> Apply:
        raise NotImplementedError(f"{type(self).__name__}.make_node")

    def perform(self, node: Apply, inputs: list) -> list:
        """Compute the node's outputs from input values; never mutate the inputs."""
        raise NotImplementedError(f"{type(self).__name__}.perform")

    def __call__(self, *inputs: Variable):
        node = self.make_node(*inputs)
        return node.outputs[0] if len(node.outputs) == 1 else list(node.outputs)

    def props(self) -> dict[str, Any]:
        if not dataclasses.is_dataclass(self):
            return {}
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def inner_graphs(self) -> tuple:
        """FunctionGraphs nested in this op (a loop body); printing and rewriting enter them."""
        return ()

    def with_inner_graphs(self, graphs) -> Op:
        """The same op with rewritten inner graphs (same inputs and outputs, in order)."""
        raise NotImplementedError(f"{type(self).__name__} has no inner graphs to replace")

    def __str__(self) -> str:
        values = [str(v) for v in self.props().values()]
        return f"{type(self).__name__}{{{', '.join(values)}}}" if values else type(self).__name__


def describe(var: Variable) -> str:
    """How error messages name a variable: its name (or producer) and its type."""
    if var.name is not None:
        return f"{var.name!r} ({var.type})"
    if isinstance(var, Constant):
        return f"constant {var!r} ({var.type})"
    if var.owner is not None:
        return f"the output of {var.owner.op} ({var.type})"
    return f"an unnamed input ({var.type})"


_eval_compiler: Callable | None = None
_html_renderer: Callable | None = None


def set_html_renderer(renderer: Callable) -> None:
    """Plug in the picture notebooks show for variables, functions and loops (``symscan.drawing``)."""
    global _html_renderer
    _html_renderer = renderer


def html_of(obj: object) -> str | None:
    """The registered interactive picture of ``obj`` (None when no renderer is available)."""
    return _html_renderer(obj) if _html_renderer is not None else None


def set_eval_compiler(compiler: Callable) -> None:
    """Plug in ``Variable.eval``'s compiler (called by ``symscan.compile``)."""
    global _eval_compiler
    _eval_compiler = compiler
