"""Where an array a kernel's step computes lives, so that a step allocates nothing.

A step's array value goes, in this order of preference, into:
- its *buffer row*, where the loop stores it in a row nothing reads any more (``out_slots``):
  any row of a full buffer; a row of a ring of ``ring`` rows (rewritten at step t + ring) only
  where the value's kept depth (below) is less than ``ring``;
- a *carried* array: a value the loop carries to later steps in its window (a recurrent
  state without a buffer row) goes into one of ``depth + 1`` arrays the kernel keeps, used in
  turn, ``depth`` being the longest window holding it or a view of it: the array written at
  step t was last written at step t - depth - 1, whose value has left every window. A window
  value passed on (returned again as a recurrent output, directly or through a view) lives on
  in that output's window: at tap -j it adds j to that output's depth; passed on to a shared
  update or the until condition, or round a cycle of outputs, it is kept for good;
- a *scratch* array the kernel keeps across steps, where the value dies in the step: every
  reader copies it (an elementwise op, a product, a reduction, a join, an inc_subtensor of
  its values or of its base), or is a view of it (a transpose, a row, a sum_to that returns
  it) whose readers do, or is a loop output the kernel copies into its buffer;
- a new array otherwise (a value some later step or the caller may still read).
Each such array is allocated before the loop with no elements and again only when the
value's shape changes, which it does not from step to step in the usual loop.

Only the top loop's step has a preamble (and the kept depths): a nested loop's body has rows
of full buffers or new arrays.
"""

from __future__ import annotations

from symscan.backends.numba.special import COMPLEX_PARTS
from symscan.graph.fg import OUTPUT
from symscan.scan.checks import AfterChecks
from symscan.tensor.assertion import Assert
from symscan.tensor.broadcast import SumToShape
from symscan.tensor.elemwise import Elemwise
from symscan.tensor.math import Dot, MatMul, Reduce
from symscan.tensor.shape import DimShuffle, Join, Reshape
from symscan.tensor.subtensor import IncSubtensor, Subtensor

COPYING_READERS = (Elemwise, Dot, MatMul, Reduce, Join)
"""Readers whose result is a new array of what they read (or written into one of ours);
an elementwise op's except the real part (a float array's is the array itself)."""
VIEWING_READERS = (DimShuffle, Subtensor, SumToShape, Reshape, Assert, AfterChecks)
"""Readers whose result may be a view of what they read: it dies with their results."""


def _copies(reader) -> bool:
    return isinstance(reader.op, COPYING_READERS) and getattr(reader.op, "name", None) not in COMPLEX_PARTS


def _views(reader) -> bool:
    return isinstance(reader.op, VIEWING_READERS + (IncSubtensor,)) or (
        isinstance(reader.op, Elemwise) and not _copies(reader))


def in_top_step(gen) -> bool:
    """Whether code is being written in the top loop's step (where the kernel has a preamble)."""
    return getattr(gen, "step_outputs", None) is not None and gen.indent == gen.step_indent


def _kept_depth(gen, var, passing: frozenset = frozenset()) -> int | None:
    """How many later steps read ``var``'s array by reference: 0 if only its own step reads it,
    None if something may keep it for good. ``passing``: the loop outputs whose window values
    are being followed (one met again is a cycle: kept for good)."""
    return _deepest([_reader_depth(gen, reader, position, passing)
                     for reader, position in gen.body.clients.get(var, [])])


def _reader_depth(gen, reader, position: int, passing: frozenset) -> int | None:
    if reader == OUTPUT:
        return _kept_steps(gen, position, passing)
    if _copies(reader) or (isinstance(reader.op, IncSubtensor) and position):
        return 0  # (an inc_subtensor copies the values it adds, and its base or writes into it)
    if _views(reader):
        return _deepest([_kept_depth(gen, out, passing) for out in reader.outputs])
    return None


def _deepest(depths: list) -> int | None:
    return None if None in depths else max(depths, default=0)


def _kept_steps(gen, position: int, passing: frozenset) -> int | None:
    """How many later steps read the loop's output ``position`` by reference: 0 for an output
    the kernel copies into its buffer, for a carried state its window's length or, where a
    window value at tap -j is kept ``d`` steps more (passed on), j + d; None for outputs kept
    for good (shared values, until's condition)."""
    kept = gen.step_outputs
    if position >= len(kept) or position in passing:
        return None
    taps = gen.step_taps[position] if kept[position] else []
    passed = [_kept_depth(gen, inner, passing | {position}) for _, inner in taps]
    if None in passed:
        return None
    return max([kept[position]] + [j + depth for (j, _), depth in zip(taps, passed) if depth])


def buffer_row(gen, var, depth: int | None = -1) -> str | None:
    """The buffer row ``var``'s value may be computed into: a full buffer's; a ring's only
    where nothing reads the value by the step that rewrites the row (its kept depth is less
    than the ring's length; only known in the top loop's step). ``depth``: ``top_step_depth``
    when the caller has it (-1: not computed yet)."""
    slot = gen.out_slots.get(var)
    ring = gen.ring_rows.get(slot)
    if slot is None or ring is None:
        return slot
    depth = top_step_depth(gen, var) if depth == -1 else depth
    return slot if depth is not None and depth < ring else None


def top_step_depth(gen, var) -> int | None:
    """``_kept_depth`` in the top loop's step; None elsewhere (unknown)."""
    return _kept_depth(gen, var) if in_top_step(gen) else None


def can_place(gen, var) -> bool:
    """Whether ``place`` has an array the kernel keeps for ``var``."""
    depth = top_step_depth(gen, var)  # a carried array (depth > 0) or a scratch one (0)
    return depth is not None or buffer_row(gen, var, depth) is not None


def place(gen, var, name: str, shape: str, dtype: str, whole: bool = True) -> bool:
    """Bind ``name`` to the array ``var``'s value is computed into (its buffer row, a carried
    array or a scratch array, see the module's docstring) of shape ``shape`` (a tuple
    expression; ``whole``: False where ``name`` is a part the value is made of, not the value,
    so never its buffer row): False (nothing written) where the value needs a new array."""
    depth = top_step_depth(gen, var)  # the analysis once, for the three choices
    if whole and into_buffer_row(gen, var, name, shape, depth):
        return True
    if depth:
        carried(gen, name, shape, dtype, var.ndim, depth + 1)
        return True
    if depth == 0:
        scratch(gen, name, shape, dtype, var.ndim)
        return True
    return False


def into_buffer_row(gen, var, name: str, shape: str, depth: int | None = -1) -> bool:
    """Bind ``name`` to ``var``'s buffer row (``buffer_row``), checking its shape; False
    (nothing written) where it has none."""
    row = buffer_row(gen, var, depth)
    if row is None:
        return False
    gen.line(f"{name} = {row}")
    gen.line(f"if {name}.shape != {shape}:")
    gen.line("    raise ValueError('scan: a step returned a row of another shape')")
    gen.written_into.add(name)
    return True


def scratch(gen, name: str, shape: str, dtype: str, ndim: int) -> None:
    """``name``: an array of the kernel's, kept across steps, of ``shape``."""
    kept = gen.fresh("scratch")
    gen.preamble.append(f"{kept} = np.empty({(0,) * ndim!r}, dtype=np.{dtype})")
    gen.line(f"if {kept}.shape != {shape}:")
    gen.line(f"    {kept} = np.empty({shape}, dtype=np.{dtype})")
    gen.line(f"{name} = {kept}")


def carried(gen, name: str, shape: str, dtype: str, ndim: int, count: int) -> None:
    """``name``: step t's array of ``count`` the kernel keeps for a carried state, used in turn."""
    kept = gen.fresh("carried")
    gen.preamble.append(f"{kept} = np.empty({(0,) * (ndim + 1)!r}, dtype=np.{dtype})")
    gen.line(f"if {kept}.shape[1:] != {shape}:")
    gen.line(f"    {kept} = np.empty(({count},) + {shape}, dtype=np.{dtype})")
    gen.line(f"{name} = {kept}[{gen.step_counter} % {count}]")
