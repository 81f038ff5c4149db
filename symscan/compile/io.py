"""``In``: an input of ``function`` with a default value and Theano's per-input options.

Theano programs write ``function([index, In(lr, value=0.1)], ...)`` so that callers may omit
the learning rate, and call ``f(index=3)``; ``function`` accepts an ``In`` wherever it accepts
a variable. The keyword that sets an input is its name (by default its variable's name).
"""

from __future__ import annotations

from symscan.graph.basic import Variable, describe


class In:
    """An input variable with an optional default ``value`` (``None``: the caller must pass one).

    The signature is Theano 1.0's. ``mutable`` and ``borrow`` are accepted: symscan never writes
    into an input and copies any output that would alias one, which both settings allow.
    ``strict=True`` refuses values that need a cast; ``allow_downcast`` overrides the function's
    ``allow_input_downcast`` for this input. Theano's stateful inputs (``update``, ``implicit``,
    ``shared``) are refused: shared variables with ``updates=`` do that job.
    """

    def __init__(self, variable: Variable, name: str | None = None, value=None, update=None,
                 mutable: bool | None = None, strict: bool = False, allow_downcast: bool | None = None,
                 autoname: bool = True, implicit: bool | None = None, borrow: bool | None = None,
                 shared: bool = False):
        if not isinstance(variable, Variable):
            raise TypeError(f"In: the input must be a symbolic variable, got {type(variable).__name__}")
        for option, given in (("update", update is not None), ("implicit", bool(implicit)), ("shared", shared)):
            if given:
                raise NotImplementedError(
                    f"In({describe(variable)}, {option}=...): stateful inputs are not supported; keep the "
                    "state in a shared variable (ss.shared) and pass function(..., updates={state: new})")
        self.mutable = bool(mutable)
        self.borrow = self.mutable if borrow is None else bool(borrow)
        if self.mutable and not self.borrow:
            raise ValueError(f"In({describe(variable)}): mutable=True with borrow=False is contradictory "
                             "(a mutable input may be aliased); drop borrow=False")
        self.variable = variable
        self.name = variable.name if name is None and autoname else name
        self.value = value
        self.strict = bool(strict)
        self.allow_downcast = allow_downcast

    @property
    def required(self) -> bool:
        """Whether each call must pass a value (no default)."""
        return self.value is None

    def __repr__(self) -> str:
        default = "" if self.value is None else f", value={self.value!r}"
        return f"In({self.variable!r}{default})"
