"""IfElse inside a loop kernel: an ``if``/``else`` in the numba source whose arms compute the
branches' graphs, so only the chosen branch runs at each step.

Numba types a local assigned in both arms by unifying the arms' types. Each arm therefore
ends with values of one type per output: a 0-d value as a scalar of the output's dtype
(numba's own promotion could give int64 in one arm and int32 in the other), an array as a
C-contiguous one (a view in one arm would otherwise make the local an 'A'-layout array, which
numba's products and the buffer writes handle more slowly; ``np.ascontiguousarray`` returns a
contiguous array itself, and copies only a view that is not).
"""

from __future__ import annotations

from symscan.backends.numba.ops import as_dtype, numba_emits
from symscan.scan.ifelse import IfElse


@numba_emits(IfElse)
def emit_kernel_ifelse(gen, node, ins: list[str], outs: list[str]) -> None:
    condition, captured = ins[0], ins[1:]
    for header, graph in zip((f"if {condition}:", "else:"), node.op.inner_graphs()):
        gen.line(header)
        gen.indent += 1
        results = gen.graph(graph, dict(zip(graph.inputs, captured)))
        for out, var, result in zip(outs, node.outputs, results):
            gen.line(f"{out} = {_one_type(result, var)}")
        gen.indent -= 1


def _one_type(result: str, var) -> str:
    """``result`` as the type both arms give output ``var`` (see the module docstring)."""
    if var.type.ndim == 0:
        return as_dtype(result, var.type.dtype)
    return f"np.ascontiguousarray({result})"
