"""Short names for a loop's inputs and outputs by role: ``x[t]``, ``x[t-2]``, ``h[t-1]``,
``W (non-seq)``, ``rng (shared)``; and a loop's title and step count.

Names come from ScanArgs' labels (``sequences[0] 'X'``, ``outputs_info[0] (initial 'h0')``,
``doutputs_info[0] (initial 'h0')[t]`` in a backward loop) and the outer variables' names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from symscan.graph.basic import Constant, Variable
from symscan.scan.args import ScanArgs
from symscan.tensor.basic import static_int


def tap_text(tap: int) -> str:
    return "t" if tap == 0 else f"t{tap:+d}"


def _strip_initial(name: str) -> str:
    """h0 -> h, state_init -> state (an initial value names its output)."""
    stripped = re.fullmatch(r"(.+?)_?(?:0|init|initial|start)", name)
    return stripped[1] if stripped else name


def base_name(label: str, outer: Variable | None = None, sequence: bool = False,
              parameter: str | None = None) -> tuple[str, str]:
    """(name, time index found in the label or "") of a loop entry, short. ``parameter`` (the
    name fn received the entry as) names an entry whose outer value has no name."""
    label = label or ""
    if parameter and not re.search(r"'[^']+'", label) and not (outer is not None and outer.name) \
            and not label.startswith("pushed "):
        return _strip_step_suffix(parameter), ""
    quoted = re.search(r"'([^']+)'(\[[^\]]*\])?", label)
    if quoted:
        name = _strip_initial(quoted[1]) if "initial" in label else quoted[1]
        if sequence and len(name) == 1:
            name = name.lower()
        if re.match(r"d(outputs_info|sequences|non_sequences)", label):
            name = "d" + name
        index = quoted[2] or (re.search(r"\)(\[[^\]]*\])", label) or [None, ""])[1]
        return name, (index or "").strip("[]")
    if outer is not None and outer.name and not isinstance(outer, Constant):
        return (outer.name.lower() if sequence and len(outer.name) == 1 else outer.name), ""
    if label.startswith("pushed "):
        return pushed_name(label, outer), ""
    numbered = re.fullmatch(r"(sequences|outputs_info|non_sequences|output) ?\[?(\d+)\]?", label)
    if numbered:
        short = {"sequences": "seq", "outputs_info": "out", "non_sequences": "arg", "output": "out"}[numbered[1]]
        return f"{short}{numbered[2]}", ""
    return short_role(re.sub(r"\s*\(saved\)", "", label)), ""


def _strip_step_suffix(name: str) -> str:
    """x_t -> x, h_tm1 -> h, a_prev -> a: the port label adds the time index itself."""
    stripped = re.fullmatch(r"(.+?)_(?:t|tm\d+|tp\d+|prev|previous|next)", name)
    return stripped[1] if stripped else name


def _parameter(variables) -> str | None:
    """The fn parameter name recorded on the first of an entry's inner variables, if any."""
    return next((v.tag.get("parameter") for v in variables if v.tag.get("parameter")), None)


def short_role(text: str, width: int = 14) -> str:
    """``dW_in sum: right factor`` -> ``dW_in sum``: the part before a colon, then cut to ``width``."""
    head = text.split(":")[0].strip() or text
    return head if len(head) <= width else head[:width - 1] + "…"


def pushed_name(label: str, outer: Variable | None) -> str:
    """What a rewrite pushed out of a loop, named from where it comes: ``W_h.T``, ``dot(X,W_in)``;
    ``pushed sub`` when its inputs have no names."""
    op = re.sub(r"\{.*", "", re.sub(r"^Elemwise\{(.*)\}$", r"\1", label[len("pushed "):])).lower()
    node = outer.owner if outer is not None else None
    names = [v.name for v in node.inputs if not isinstance(v, Constant)] if node is not None else []
    if names and all(names):
        from symscan.drawing.describe import dimshuffle_label
        from symscan.tensor.shape import DimShuffle

        if isinstance(node.op, DimShuffle) and len(names) == 1:
            step = dimshuffle_label(node.op.input_ndim, node.op.new_order)
            text = f"{names[0]}{step}" if step == ".T" else f"{step}({names[0]})"
        else:
            text = f"{op}({','.join(names)})"
        if len(text) <= 16:
            return text
    return "pushed " + op


def _indexed(name: str, index: str) -> str:
    return f"{name}[{index}]"


@dataclass
class LoopRoles:
    """Role labels of one Scan node, aligned with ScanArgs' orders."""

    outer_inputs: list[tuple[str, str]] = field(default_factory=list)  # (kind, edge label) per outer input
    inner_inputs: list[tuple[str, str]] = field(default_factory=list)  # (kind, port label) per inner input
    inner_outputs: list[tuple[str, str]] = field(default_factory=list)  # (kind, port label) per inner output
    outer_outputs: list[str] = field(default_factory=list)  # edge label per outer output
    feedback: list[tuple[int, int]] = field(default_factory=list)  # (inner output, inner input) recurrences


def loop_roles(args: ScanArgs) -> LoopRoles:
    roles = LoopRoles(outer_inputs=[("n_steps", "n_steps")])
    for s in args.sequences:
        name, index = base_name(s.label, s.outer, sequence=True, parameter=_parameter(s.inner))
        ports = [_indexed(name, index or tap_text(t)) if len(s.taps) == 1 or not index else
                 f"{_indexed(name, index)}{tap_text(t)[1:]}" for t in s.taps]
        roles.inner_inputs += [("seq", p) for p in ports]
        roles.outer_inputs.append(("seq", ", ".join(ports)))
    recurrent_inputs = len(roles.inner_inputs)
    for r in args.recurrent:
        kind = "mit-sot" if r in args.mit_sot else "sit-sot"
        name, _ = base_name(r.label, None, parameter=_parameter(r.inner_in))
        ports = [_indexed(name, tap_text(t)) for t in r.taps]
        roles.inner_inputs += [(kind, p) for p in ports]
        roles.outer_inputs.append((kind, ", ".join(ports)))
    for s in args.shared:
        name = base_name(s.label, s.outer)[0]
        roles.inner_inputs.append(("shared", f"{name} (shared)"))
        roles.outer_inputs.append(("shared", f"{name} (shared)"))
    for n in args.non_seqs:
        name = base_name(n.label, n.outer, parameter=_parameter([n.inner]))[0]
        roles.inner_inputs.append(("non-seq", f"{name} (non-seq)"))
        roles.outer_inputs.append(("non-seq", f"{name} (non-seq)"))
    _outputs(args, roles, recurrent_inputs)
    return roles


def _outputs(args: ScanArgs, roles: LoopRoles, first_recurrent_input: int) -> None:
    position = first_recurrent_input
    for out_index, entry in enumerate(args.buffered):
        kind = "mit-sot" if entry in args.mit_sot else "sit-sot" if entry in args.sit_sot else "nit-sot"
        name, index = base_name(entry.label, None, parameter=_parameter(getattr(entry, "inner_in", [])))
        roles.inner_outputs.append((kind, _indexed(name, index or "t")))
        roles.outer_outputs.append(name)  # the loop box lists the kinds
        if kind != "nit-sot":
            roles.feedback += [(out_index, position + k) for k in range(len(entry.inner_in))]
            position += len(entry.inner_in)
    for entry in args.shared:
        name = base_name(entry.label, entry.outer)[0]
        roles.inner_outputs.append(("shared", f"{name} (new)"))
        roles.outer_outputs.append(f"{name} (shared)")
    if args.until is not None:
        roles.inner_outputs.append(("until", "until"))


def loop_title(args: ScanArgs) -> str:
    """``scan rnn``, ``grad of rnn`` (the backward loop ss.grad builds), or ``scan``."""
    name = args.name or ""
    if name.startswith("grad_of_"):
        return "grad of " + name[len("grad_of_"):]
    return f"scan {name}" if name else "scan"


def loop_steps(args: ScanArgs) -> str:
    """The step count in words: ``100 steps``, ``k steps``, ``len(x) steps``, ``T steps``."""
    count = static_int(args.n_steps)
    source = args.n_steps.owner.inputs[0] if args.n_steps.owner is not None and args.n_steps.owner.inputs else None
    if count is not None:
        text = f"{abs(count)} steps"
    elif args.n_steps.name:
        text = f"{args.n_steps.name} steps"
    elif source is not None and source.name and source.owner is None:
        text = f"{source.name} steps"
    elif args.steps_from_sequences and args.sequences and _named(args.sequences[0]):
        text = f"len({base_name(args.sequences[0].label, args.sequences[0].outer, True)[0]}) steps"
    else:
        text = "T steps"
    return ("≤ " + text + " (while)") if args.until is not None else text


def _named(entry) -> bool:
    """A sequence the user named (not one a rewrite pushed out of the loop)."""
    return not (entry.label or "").startswith("pushed")


def kinds_summary(args: ScanArgs) -> str:
    """``seq 1 · sit-sot 1 · non-seq 2`` (kinds present only)."""
    counts = [("seq", len(args.sequences)), ("mit-sot", len(args.mit_sot)), ("sit-sot", len(args.sit_sot)),
              ("nit-sot", len(args.nit_sot)), ("shared", len(args.shared)), ("non-seq", len(args.non_seqs))]
    return " · ".join(f"{kind} {n}" for kind, n in counts if n)
