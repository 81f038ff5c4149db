"""numba forms for indexing by integer vectors after full slices (``x[:, :, rows, cols]``: how
diagonal, trace, diag and fill_diagonal index), its set/inc, and reshape (kron's).

numba takes at most one integer array in an index, so the gather (and the scatter) is a loop
over the vectors' positions, one basic index per position; increments accumulate repeated
positions (``numpy.add.at``) and assignments let the last one win, as the ops' ``perform``.
Other index patterns keep ``ops.py``'s basic-index emitters, which refuse them by name.
"""

from __future__ import annotations

from symscan.backends.numba.ops import NUMBA_EMITTERS, NotCompilable, as_dtype, numba_emits
from symscan.tensor.shape import Reshape
from symscan.tensor.subtensor import ARRAY, IncSubtensor, Subtensor

FULL_SLICE = ("slice", False, False, False)

_basic_subtensor = NUMBA_EMITTERS[Subtensor]
_basic_inc_subtensor = NUMBA_EMITTERS[IncSubtensor]


def _trailing_vectors(node, arrays) -> int:
    """The number k of full slices before the integer vectors that end the index, or a
    NotCompilable naming the pattern."""
    spec = node.op.spec
    k = next((i for i, entry in enumerate(spec) if entry == ARRAY), len(spec))
    if any(entry != FULL_SLICE for entry in spec[:k]) or any(entry != ARRAY for entry in spec[k:]) or \
            any(v.ndim != 1 for v in arrays):
        raise NotCompilable(f"{node.op}: numba indexes by integer vectors only after full slices here")
    return k


def _positions(gen, vectors: list[str]) -> str:
    """The vectors' common length (checked: the kernel raises when they differ)."""
    length = gen.fresh("length")
    gen.line(f"{length} = {vectors[0]}.shape[0]")
    for vector in vectors[1:]:
        gen.line(f"if {vector}.shape[0] != {length}:")
        gen.line("    raise IndexError('index arrays of different lengths')")
    gen.bounds_checked = True
    return length


@numba_emits(Subtensor)
def emit_subtensor(gen, node, ins: list[str], outs: list[str]) -> None:
    if ARRAY not in node.op.spec:
        return _basic_subtensor(gen, node, ins, outs)
    x, vectors = ins[0], ins[1:]
    k = _trailing_vectors(node, node.inputs[1:])
    length, j = _positions(gen, vectors), gen.fresh("j")
    dtype = node.outputs[0].dtype
    gen.line(f"{outs[0]} = np.empty({x}.shape[:{k}] + ({length},) + {x}.shape[{k + len(vectors)}:], "
             f"dtype=np.{'bool_' if dtype == 'bool' else dtype})")
    gen.line(f"for {j} in range({length}):")
    picked = ", ".join([":"] * k + [f"{v}[{j}]" for v in vectors])
    gen.line(f"    {outs[0]}[{', '.join([':'] * k + [j])},] = {x}[{picked},]")
    return None


@numba_emits(IncSubtensor)
def emit_inc_subtensor(gen, node, ins: list[str], outs: list[str]) -> None:
    if ARRAY not in node.op.spec:
        return _basic_inc_subtensor(gen, node, ins, outs)
    x, y, vectors = ins[0], ins[1], ins[2:]
    k = _trailing_vectors(node, node.inputs[2:])
    rest = node.inputs[0].ndim - k - len(vectors)  # axes after the indexed ones
    length, j = _positions(gen, vectors), gen.fresh("j")
    y_var = node.inputs[1]
    gen.line(f"{outs[0]} = {x}.copy()")
    gen.line(f"for {j} in range({length}):")
    if y_var.ndim <= rest:  # y broadcasts over the positions
        value = y
    else:  # y has the positions' axis (or a length-1 one) at this place
        axis = y_var.ndim - rest - 1
        position = f"({j} if {y}.shape[{axis}] != 1 else 0)"
        value = f"{y}[{', '.join([':'] * axis + [position])},]"
    if y_var.dtype != node.outputs[0].dtype:
        value = as_dtype(value, node.outputs[0].dtype) if y_var.ndim == 0 else \
            f"{value}.astype(np.{node.outputs[0].dtype})"
    target = ", ".join([":"] * k + [f"{v}[{j}]" for v in vectors])
    gen.line(f"    {outs[0]}[{target},] {'=' if node.op.set_instead_of_inc else '+='} {value}")
    return None


@numba_emits(Reshape)
def emit_reshape(gen, node, ins: list[str], outs: list[str]) -> None:
    """numba reshapes a contiguous array to a tuple of ints (one may be -1)."""
    ndim = node.op.ndim
    if node.inputs[0].ndim == 0:
        raise NotCompilable("reshape of a numba scalar")
    shape = ", ".join(f"int({ins[1]}[{i}])" for i in range(ndim)) + ("," if ndim == 1 else "")
    gen.line(f"{outs[0]} = np.ascontiguousarray({ins[0]}).reshape(({shape}))")
