"""``delayed_state_to_taps``: a state that is another's previous value becomes a tap of it.

ONNX has no mit-sot: a recurrence on two past values is written as a shift register,
``b_t = a_(t-1)`` and ``a_t = f(a_(t-1), b_(t-1))``. Then ``b_(t-1)`` is ``a_(t-2)``: ``a`` becomes
a mit-sot with taps [-2, -1] whose initial rows are ``[b_0, a_0]``, and ``b``'s output is that
buffer without its last row. The linear-recurrence and push-out rules then see the
recurrence as written in Theano's guide (an imported W7 loses its loop).
"""

from __future__ import annotations

from rewrites.registry import Declined, Rewritten, register
from rewrites.scan_utils import rebuild
from symscan.scan.args import RecurrentEntry, ScanArgs
from symscan.scan.checks import InitialRows
from symscan.scan.op import Scan
from symscan.tensor.shape import concatenate, expand_dims


def _delayed_pair(args: ScanArgs) -> tuple[RecurrentEntry, RecurrentEntry] | None:
    """(b, a): a sit-sot ``b`` whose new value is ``a``'s oldest past value (no rings yet)."""
    for b in args.sit_sot:
        for a in args.recurrent:
            oldest = a.inner_in[a.taps.index(min(a.taps))]
            if a is not b and b.inner_out is oldest and a.ring is None and b.ring is None:
                return b, a
    return None


def _rows(args: ScanArgs, entry: RecurrentEntry):
    """The rows an output's taps read: a sit-sot's state as one row, a mit-sot's checked window."""
    if entry in args.sit_sot:
        return expand_dims(entry.outer_init, 0)
    return InitialRows(entry.label, entry.taps, False, args.name)(entry.outer_init)


@register("delayed_state_to_taps", phase="canonicalize", tracks=(Scan,), tags=("canonicalize", "scan"))
def delayed_state_to_taps(fgraph, node):
    args = ScanArgs.from_node(node)
    pair = _delayed_pair(args)
    if pair is None:
        return None
    b, a = pair
    state_a, state_b = args.state_type(a), args.state_type(b)
    if state_a.dtype != state_b.dtype or None in state_a.shape or state_a.shape != state_b.shape:
        # with no step the initial values need not fit together; the loop would not stack them
        return Declined(f"{b.label or 'a state'} is the previous {a.label or 'state'}, but their initial values "
                        f"are not known to have one shape ({state_b} and {state_a})")
    order = sorted(range(len(a.taps)), key=lambda i: a.taps[i])
    merged = RecurrentEntry(concatenate([_rows(args, b), _rows(args, a)]),
                            [b.inner_in[0]] + [a.inner_in[i] for i in order], a.inner_out,
                            (min(a.taps) - 1,) + tuple(a.taps[i] for i in order), outer_out=a.outer_out, label=a.label)
    span = a.span
    for entry in (a, b):
        (args.mit_sot if entry in args.mit_sot else args.sit_sot).remove(entry)
    args.mit_sot.append(merged)
    result = rebuild(args)
    buffer = result[a.outer_out]  # [b_0, a's initial rows, a's steps]
    result[a.outer_out], result[b.outer_out] = buffer[1:], buffer[:-span]
    return Rewritten(result, f"{b.label or 'a state'} is {a.label or 'a state'} one step late: a tap "
                             f"{min(a.taps) - 1} of {a.label or 'it'}")
