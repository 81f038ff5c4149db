"""The numba form of unique: ``symscan.tensor.unique.unique_flat`` (numpy's stable algorithm)
copied into the kernel's module, the outputs the node asks for taken from its four."""

from __future__ import annotations

from symscan.backends.numba.ops import SORTABLE, NotCompilable, numba_emits
from symscan.backends.numba.sources import module_function
from symscan.tensor.unique import Unique, unique_flat


@numba_emits(Unique)
def emit_unique(gen, node, ins: list[str], outs: list[str]) -> None:
    x, op = node.inputs[0], node.op
    if x.dtype not in SORTABLE:
        raise NotCompilable(f"{op} of {x.type}: numba's argsort takes ints or floats")
    fn = module_function(gen, unique_flat)
    flat = f"np.ravel({ins[0]})" if x.ndim else f"np.array([{ins[0]}])"
    parts = [gen.fresh("u") for _ in range(4)]
    gen.line(f"{', '.join(parts)} = {fn}({flat})")
    wanted = [parts[0]] + [part for part, flag in zip(parts[1:], (op.return_index, op.return_inverse,
                                                                    op.return_counts)) if flag]
    for out, part in zip(outs, wanted):
        if part == parts[2] and x.ndim != 1:  # the inverse has x's shape
            part = f"{part}.reshape({ins[0]}.shape)" if x.ndim else f"{part}[0]"
        gen.line(f"{out} = {part}")
