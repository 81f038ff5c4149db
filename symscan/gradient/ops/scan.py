"""The Scan op's pullback: backpropagation through time, built as an ordinary reverse Scan.

The reverse loop runs ``K = min(T, truncate_gradient)`` steps over the ``T`` steps the
forward loop executed, latest first: its step ``s`` handles forward step ``t = T - 1 - s``.
It needs no new loop kind (JAX's design, GRADIENTS.md §7 option B), so every backend, the
rewrites and ``grad`` itself (higher orders) treat it as any scan:

- sequences (each one tap ``0``, rows already in backward order): the forward's inputs at
  step t (sequence taps, past values of recurrent outputs, saved with the forward's buffers),
  its outputs at step t (the body's recomputed outputs are replaced by them, as Theano's
  ``forced_replace``), and the cotangents arriving on nit-sot and recurrent outputs;
- sit-sot carries: the cotangent still to flow into a recurrent output's last ``span`` rows
  (a window of rows for a mit-sot), a shared state's cotangent, and the running sum of each
  non-sequence's gradient (a carried sum, not a trace);
- nit-sot outputs: the gradient of each sequence tap at step t, placed into the sequence's
  rows after the loop.

Inner values a recomputation cannot reproduce, a random draw or a shared state's value at
step t, are read from a second forward loop that records them (same inputs, same draws).
Products and linear algebra the forward step computes are recorded the same way rather than
computed again (JAX's residuals); the rewrites merge the recording loop into the forward one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from symscan.gradient.grad import float_dtype, grad
from symscan.gradient.ops.scan_residuals import values_to_record
from symscan.gradient.registry import connected_inputs, connections, pullback
from symscan.gradient.types import grad_undefined, is_null
from symscan.graph.basic import Constant, Variable
from symscan.graph.clone import clone_graph, clone_replace
from symscan.graph.traversal import ancestors, graph_inputs, toposort
from symscan.scan.args import NitSotEntry, NonSeqEntry, RecurrentEntry, ScanArgs, SequenceEntry
from symscan.scan.op import Scan
from symscan.tensor.assertion import assert_that
from symscan.tensor.basic import as_tensor_variable, constant, static_int
from symscan.tensor.creation import zeros, zeros_like
from symscan.tensor.elemwise import Elemwise, add, eq, ge, lt, maximum, minimum, switch
from symscan.tensor.elemwise import abs as absolute
from symscan.tensor.random import GeneratorType
from symscan.tensor.shape import concatenate, shape, stack
from symscan.tensor.subtensor import INT, IncSubtensor, inc_subtensor


# ---------------------------------------------------------------------------- connections
def _state_inputs(args: ScanArgs) -> dict:
    """Each inner input that holds a state (a recurrent tap, a shared value) -> its entry."""
    owners = {v: r for r in args.recurrent for v in r.inner_in}
    owners.update({s.inner_in: s for s in args.shared})
    return owners


def reach(args: ScanArgs) -> dict:
    """For each output entry (by id), the inner inputs its value depends on over any number of
    steps: those its body reads, and those of every state it reads (the closure of Theano's
    connection pattern, GRADIENTS.md §6.11)."""
    entries = args.buffered + args.shared
    sources = connected_inputs(args.inner_inputs(), [e.inner_out for e in entries])
    direct = {id(e): set(sources.get(e.inner_out, ())) for e in entries}
    owners = _state_inputs(args)
    changed = True
    while changed:
        changed = False
        for e in entries:
            found = direct[id(e)]
            extra = set().union(*(direct[id(owners[v])] for v in found if v in owners)) - found
            if extra:
                found |= extra
                changed = True
    return direct


@connections(Scan)
def scan_connections(node) -> list[list[bool]]:
    args = ScanArgs.from_node(node)
    entries = args.buffered + args.shared
    reached = reach(args)

    def row(inner_vars: list, own=None) -> list[bool]:
        return [e is own or bool(reached[id(e)] & set(inner_vars)) for e in entries]

    read = set().union(*reached.values())
    rows = [[False] * len(entries)]  # n_steps only decides how many rows there are
    rows += [row(s.inner) for s in args.sequences]
    # a buffer starts with its initial rows, but those of a state fn never reads leave the
    # loop only there, where scan() slices them off: disconnected, as in Theano
    rows += [row(r.inner_in, r if read & set(r.inner_in) else None) for r in args.recurrent]
    rows += [row([s.inner_in], s) for s in args.shared]
    rows += [row([n.inner]) for n in args.non_seqs]
    return rows


# ---------------------------------------------------------------------------- the pullback
@pullback(Scan)
def scan_pullback(node, cotangents):
    args = ScanArgs.from_node(node)
    ringed = [e.label or "an output" for e in args.buffered if e.ring is not None]
    if ringed:
        raise ValueError(f"grad: the scan's outputs {ringed} keep only their last rows (save_mem ran on this graph), "
                         "but backpropagation reads every step; take gradients of the graph as built, before "
                         "compiling or rewriting it")
    entries = args.buffered + args.shared
    reached = [e for e, c in zip(entries, cotangents) if c is not None]
    given = {id(e): c for e, c in zip(entries, cotangents)
             if c is not None and _is_float(e.inner_out) and not _is_zeros(c)}
    undefined = _undefined_beyond_the_reverse_loop(node, args, reached, given)
    if not given:
        return undefined
    if args.until is not None and not args.buffered:
        why = "an until loop with no outputs besides its shared updates (its step count is not recorded)"
        return [grad_undefined(node.op, i, x, why) for i, x in enumerate(node.inputs)]
    grads = _Reverse(node, args, given).gradients()
    return [u if u is not None else g for u, g in zip(undefined, grads)]


def _is_float(var: Variable) -> bool:
    return getattr(var.type, "dtype", "int")[0] in "fc"


def _undefined_beyond_the_reverse_loop(node, args: ScanArgs, reached: list, given: dict) -> list:
    """The outer gradients (None where defined) that are undefined through what the reverse
    loop leaves out: integer outputs and states, and outputs whose cotangent is zero.

    The cost reaches them with a zero gradient, but Theano still asks each op there, and a
    discrete random draw's gradient is undefined. So the body is asked once more, with zero
    cotangents on those outputs and on every state they read: undefined at a sequence or
    non-sequence, that input's gradient is; at a state, every input's is (as in the loop)."""
    undefined = [None] * len(node.inputs)
    reach_of = reach(args)
    owners = _state_inputs(args)
    read = set().union(*(reach_of[id(e)] for e in reached))
    asked = list({id(e): e for e in reached + [owners[v] for v in read if v in owners]}.values())
    if all(id(e) in given and _is_float(e.inner_out) for e in asked):
        return undefined  # the reverse loop asks every op these outputs depend on
    body = clone_graph(node.op.inner.inputs, node.op.inner.outputs)
    known = {body[e.inner_out]: zeros_like(body[e.inner_out], dtype=float_dtype(e.inner_out))
             for e in asked if hasattr(e.inner_out.type, "dtype")}
    wrt = [body[v] for v in node.op.inner.inputs if _is_differentiable_input(body[v])]
    grads = grad(None, wrt, known_grads=known, disconnected_inputs="ignore", return_disconnected="None",
                 null_gradients="return", add_names=False)
    outer = {body[v]: 1 + i for i, s in enumerate(args.sequences) for v in s.inner}
    first_non_seq = len(node.inputs) - len(args.non_seqs)
    outer.update({body[n.inner]: first_non_seq + i for i, n in enumerate(args.non_seqs)})
    for v, g in zip(wrt, grads):
        if not is_null(g):
            continue
        if v not in outer:  # a state: undefined for every input
            return [None] + [g] * (len(node.inputs) - 1)
        undefined[outer[v]] = g
    return undefined


@dataclass
class _Residual:
    """A backward-loop input: its placeholder inside the reverse body and its outer rows."""

    placeholder: Variable
    rows: Variable
    label: str


@dataclass
class _Reverse:
    """Builds the reverse loop of one Scan node and the gradients of the node's inputs."""

    node: object
    args: ScanArgs
    given: dict
    sequences: list = field(default_factory=list)  # _Residual, in order of use

    def gradients(self) -> list:
        self.steps_run, self.steps = self._step_counts()
        self.backwards = self._direction()
        self.active = self._active_states()
        self.last_only = self._last_step_cotangents()
        body = self._clone_body()
        self.cot, self.totals = self._cotangent_placeholders(), {}
        known = self._known_grads(body)
        wrt = self._wrt(body)
        grads = grad(None, wrt, known_grads=known, disconnected_inputs="ignore", return_disconnected="None",
                     null_gradients="return", add_names=False)
        by_input = dict(zip(wrt, grads))
        self.undefined = self._undefined_inputs(body, by_input)
        if self.undefined is None:  # undefined through a state: undefined for every input
            null = next(g for g in grads if is_null(g))
            return [None] + [null] * (len(self.node.inputs) - 1)
        recurrences = self._cotangent_recurrences(body, by_input)
        carries, emitted = self._carry_updates(body, by_input), self._emitted(body, by_input)
        outputs = [c.new for c in carries] + [g for _, g in emitted] + [r.new for r in recurrences]
        if recurrences:
            outputs = clone_replace(outputs, {self.totals[id(r.entry)]: r.new for r in recurrences})
        outputs = self._replace_recomputed(body, outputs)
        outputs = self._replace_unrecordable(body, outputs)
        outputs = self._replace_costly(body, outputs)
        for c, new in zip(carries + recurrences, outputs[:len(carries)] + outputs[len(outputs) - len(recurrences):]):
            c.new = new
        emitted = [(key, new) for (key, _), new in zip(emitted, outputs[len(carries):])]
        finals, rows = self._run(body, carries, emitted, recurrences)
        return self._outer_gradients(carries, finals, [key for key, _ in emitted], rows)

    # ------------------------------------------------------------------ counts and direction
    def _step_counts(self) -> tuple[Variable, Variable]:
        """Steps the forward loop ran (read off an output: an until loop may stop early) and
        steps to backpropagate through (``truncate_gradient``)."""
        args = self.args
        if args.buffered:
            first = args.buffered[0]
            rows = shape(self.node.outputs[0])[0]
            span = first.span if isinstance(first, RecurrentEntry) else 0
            # rows >= span always; the maximum says so to the rewrites (a loop of a negative
            # step count reverses, so they only rewrite loops whose count is provably >= 0)
            steps_run = maximum(rows - span, constant(0, dtype=rows.dtype)) if span else rows
        else:
            steps_run = absolute(as_tensor_variable(args.n_steps))
        k = args.truncate_gradient
        steps = steps_run if k < 0 else minimum(steps_run, constant(k, dtype=steps_run.dtype))
        return steps_run, steps

    def _direction(self):
        """True/False when known, else a boolean scalar: whether the forward loop ran backwards."""
        if self.args.steps_from_sequences:
            return self.args.go_backwards
        n = static_int(self.args.n_steps)
        if n is not None:
            return self.args.go_backwards != (n < 0)
        zero = constant(0, dtype=self.args.n_steps.dtype)
        return ge(self.args.n_steps, zero) if self.args.go_backwards else lt(self.args.n_steps, zero)

    def _pick(self, if_backwards, if_forwards):
        if isinstance(self.backwards, bool):
            return if_backwards if self.backwards else if_forwards
        return switch(self.backwards, if_backwards, if_forwards)

    def _active_states(self) -> list:
        """Recurrent and shared entries whose cotangent is not zero: given one, or read
        (over any number of steps) by an output that was given one."""
        args = self.args
        reached = reach(args)
        sources = [e for e in args.buffered + args.shared if id(e) in self.given]
        read = set().union(*(reached[id(e)] for e in sources))
        states = [r for r in args.recurrent if _is_float(r.inner_out)]
        states += [s for s in args.shared if _is_float(s.inner_out)]
        inputs = lambda e: e.inner_in if isinstance(e, RecurrentEntry) else [e.inner_in]  # noqa: E731
        return [e for e in states if id(e) in self.given or read & set(inputs(e))]

    # ------------------------------------------------------------------ the body and its gradient
    def _clone_body(self) -> dict:
        """A copy of the forward body: old variable -> its copy (inner inputs -> placeholders)."""
        inner = self.node.op.inner
        return clone_graph(inner.inputs, inner.outputs)

    def _undefined_inputs(self, body: dict, by_input: dict) -> dict | None:
        """Sequences and non-sequences (by entry id) whose gradient is undefined, their gradient
        taken out of ``by_input``; None when a state's is (then everything below is)."""
        undefined = {}
        states = {body[v] for e in self.active for v in (e.inner_in if isinstance(e, RecurrentEntry) else [e.inner_in])}
        owners = {body[v]: s for s in self.args.sequences for v in s.inner}
        owners.update({body[n.inner]: n for n in self.args.non_seqs})
        for v, g in list(by_input.items()):
            if not is_null(g):
                continue
            if v in states:
                return None
            undefined[id(owners[v])] = g
            by_input[v] = None
        return undefined

    def _cotangent_placeholders(self) -> dict:
        """Per entry (by id): placeholders for the cotangent given at step t ("given") and,
        for active states, the cotangent carried from later steps ("carried")."""
        cot = {}
        for e in self.args.buffered + self.args.shared:
            value_type = _step_type(e)
            slots = {}
            if id(e) in self.given and not _is_shared(e) and id(e) not in self.last_only:
                slots["given"] = value_type.make_variable(name=f"d{e.label or 'out'}[t]")
            if any(e is a for a in self.active):
                rows = _window(e)
                carried_type = value_type if rows == 1 else value_type.clone(shape=(rows,) + value_type.shape)
                slots["carried"] = carried_type.make_variable(name=f"d{e.label or 'state'} carried")
            cot[id(e)] = slots
        return cot

    def _known_grads(self, body: dict) -> dict:
        """The cotangent of each inner output at step t; duplicates of one variable add up."""
        known: dict = {}
        for e in self.args.buffered + self.args.shared:
            slots = self.cot[id(e)]
            carried = slots.get("carried")
            if carried is not None and _window(e) > 1:
                carried = carried[-1]
            parts = [v for v in (slots.get("given"), carried) if v is not None]
            if not parts:
                continue
            total = parts[0] if len(parts) == 1 else add(*parts)
            self.totals[id(e)] = total
            out = body[e.inner_out]
            known[out] = add(known[out], total) if out in known else total
        return known

    def _wrt(self, body: dict) -> list:
        """Placeholders whose gradient the reverse loop needs: every sequence tap and
        non-sequence, the taps of active recurrent outputs and active shared values."""
        args = self.args
        wrt = [body[v] for s in args.sequences for v in s.inner] + [body[n.inner] for n in args.non_seqs]
        for e in self.active:
            wrt += [body[v] for v in (e.inner_in if isinstance(e, RecurrentEntry) else [e.inner_in])]
        return [v for v in dict.fromkeys(wrt) if _is_differentiable_input(v)]

    def _carry_updates(self, body: dict, by_input: dict) -> list:
        """Each carried sum: the cotangent flowing into a state's earlier rows, and the running
        sum of each non-sequence's gradient."""
        carries = []
        for e in self.active:
            if id(e) in self.linear:
                continue
            carried = self.cot[id(e)]["carried"]
            if isinstance(e, RecurrentEntry):
                new = _shift_window(carried, [(tap, by_input.get(body[v])) for tap, v in zip(e.taps, e.inner_in)],
                                    e.span)
            else:
                new = _or_zeros(by_input.get(body[e.inner_in]), carried)
            carries.append(_Carry(e, carried, new))
        for n in self.args.non_seqs:
            g = by_input.get(body[n.inner])
            if g is None:
                continue
            total = g.type.make_variable(name=f"d{n.label or 'non-sequence'} sum")
            carries.append(_Carry(n, total, add(total, g)))
        return carries

    def _cotangent_recurrences(self, body: dict, by_input: dict) -> list:
        """Mit-sots whose taps send back a fixed linear function of the cotangent (a linear
        recurrence: the same at every step, reading nothing else per step): their total
        cotangent z is a mit-sot of the reverse loop, z_s = given_s + sum_tap f_tap(z_(s+tap)),
        a form the vectorize rewrites recognise, instead of a carried window."""
        self.linear = {}
        if self.args.truncate_gradient > 0:
            return []
        fixed = {body[n.inner] for n in self.args.non_seqs}
        recurrences = []
        for e in self.active:
            if not isinstance(e, RecurrentEntry) or _window(e) == 1:
                continue
            total, grads = self.totals[id(e)], [by_input.get(body[v]) for v in e.inner_in]
            present = [g for g in grads if g is not None]
            roots = set(graph_inputs(present, stop_at=[total]))
            if not present or not roots <= fixed | {total} | {r for r in roots if isinstance(r, Constant)}:
                continue
            taps = [total.type.make_variable(name=f"d{e.label or 'output'}[s{tap:+d}]") for tap in e.taps]
            new = self.cot[id(e)].get("given")
            for tap_var, g in zip(taps, grads):
                if g is not None:
                    term = clone_replace([g], {total: tap_var})[0]
                    new = term if new is None else add(new, term)
            self.linear[id(e)] = (e, grads, total)
            recurrences.append(_Carry(e, taps, new))
        return recurrences

    def _recurrence_final(self, e: RecurrentEntry, buffer: Variable) -> Variable:
        """What the forward's first steps sent to the initial rows: row i gets f_tap(z at step
        t = i - span - tap) for t >= 0; z at step t is the buffer's row -(t + 1) (its initial
        rows are zeros, so steps that did not run add nothing: f_tap is linear)."""
        _, grads, total = self.linear[id(e)]
        outer = {body_inner: n.outer for n, body_inner in self._non_seq_copies}
        rows = []
        for i in range(e.span):
            value = None
            for tap, g in zip(e.taps, grads):
                step = i - e.span - tap
                if g is None or step < 0:
                    continue
                term = clone_replace([g], {total: buffer[-(step + 1)], **outer})[0]
                value = term if value is None else add(value, term)
            rows.append(value if value is not None else zeros_like(buffer[0]))
        return stack(rows)

    def _emitted(self, body: dict, by_input: dict) -> list:
        """The gradient of each sequence tap at step t: ((sequence, tap), value)."""
        emitted = []
        for s in self.args.sequences:
            for tap, v in zip(s.taps, s.inner):
                g = by_input.get(body[v])
                if g is not None:
                    emitted.append(((s, tap), g))
        return emitted

    # ------------------------------------------------------------------ values the body cannot recompute
    def _replace_recomputed(self, body: dict, outputs: list) -> list:
        """Read the forward outputs at step t from the saved buffers instead of recomputing them."""
        inputs = set(body[v] for v in self.node.op.inner.inputs)
        replace = {}
        for position, e in enumerate(self.args.buffered):
            out = body[e.inner_out]
            if out in inputs or out in replace or isinstance(out, Constant):
                continue
            rows = self._output_rows(position, e, 0)
            replace[out] = self._residual(out, rows, f"{e.label or 'output'}[t] (saved)", new=True)
        return clone_replace(outputs, replace) if replace else outputs

    def _replace_unrecordable(self, body: dict, outputs: list) -> list:
        """Values at step t a recomputation would not reproduce come from a forward loop that
        records them: shared values, and whatever reads a random generator (a draw, a nested
        loop that draws). Recorded the same way the forward computes them, from the same inputs."""
        generators = [s for s in self.args.shared if isinstance(s.inner_in.type, GeneratorType)]
        used = set(ancestors(outputs))
        needed = [body[s.inner_in] for s in self.args.shared if s not in generators and body[s.inner_in] in used]
        if generators:
            for node in toposort(outputs):
                if any(isinstance(v.type, GeneratorType) for v in node.inputs):
                    needed += [o for o in node.outputs if not isinstance(o.type, GeneratorType) and o in used]
        needed = list(dict.fromkeys(needed))
        if not needed:
            return outputs
        inverse = {body[v]: v for v in self.node.op.inner.inputs}
        return self._read_recorded(outputs, needed, clone_replace(needed, inverse))

    def _replace_costly(self, body: dict, outputs: list) -> list:
        """Products and linear algebra the forward step computes, which the reverse body would
        compute again from the saved states, are read from a forward loop that records them
        (``scan_residuals``): an LSTM's reverse step then runs one product, not three.

        Loops with ``until`` or shared states keep recomputing: their recorder would be a second
        forward loop the rewrites do not merge into the first (two while loops; a state another
        recorder already follows)."""
        args = self.args
        if args.until is not None or args.shared:
            return outputs
        forward_of = {new: old for old, new in body.items() if new.owner is not None}
        per_step = {body[v] for s in args.sequences for v in s.inner}
        per_step |= {body[v] for e in args.recurrent for v in e.inner_in}
        needed = values_to_record(outputs, forward_of, per_step)
        if not needed:
            return outputs
        return self._read_recorded(outputs, needed, [forward_of[v] for v in needed])

    def _read_recorded(self, outputs: list, inner_values: list, forward_values: list) -> list:
        """``outputs`` with each of ``inner_values`` (reverse-body variables) read from the trace of
        a forward loop recording ``forward_values`` (the same values in the forward body)."""
        traces = self._record(forward_values)
        replace = {}
        for v, trace in zip(inner_values, traces):
            rows = trace[self.steps_run - self.steps:self.steps_run][::-1]
            replace[v] = self._residual(v, rows, f"{v.name or 'value'}[t] (recorded)", new=True)
        return clone_replace(outputs, replace)

    def _record(self, inner_vars: list) -> list:
        """A copy of the forward loop with one more nit-sot output per variable: its value at each step."""
        args = ScanArgs.from_node(self.node)
        first = len(args.buffered)
        args.nit_sot += [NitSotEntry(v, label=f"{v.name or 'value'} record") for v in inner_vars]
        recorder = args.to_node()
        return recorder.outputs[first:first + len(inner_vars)]

    # ------------------------------------------------------------------ the reverse loop
    def _run(self, body: dict, carries: list, emitted: list, recurrences: list):
        """Make the reverse Scan; the final value of each carry and the rows of each emitted output."""
        reverse = ScanArgs(n_steps=self.steps, name=f"grad_of_{self.args.name or 'scan'}")
        for r in recurrences:
            init = zeros_like(r.entry.outer_init[:r.entry.span], dtype=r.new.dtype)
            reverse.mit_sot.append(RecurrentEntry(init, r.placeholder, r.new, r.entry.taps,
                                                  label=f"d{r.entry.label or 'output'}"))
        for c in carries:
            reverse.sit_sot.append(RecurrentEntry(self._carry_init(c), [c.placeholder], c.new, (-1,),
                                                  label=c.placeholder.name))
        for (s, tap), g in emitted:
            reverse.nit_sot.append(NitSotEntry(g, label="d" + _tap_label(s.label or "sequence", tap)))
        roots = set(graph_inputs([c.new for c in carries + recurrences] + [g for _, g in emitted]))
        self._add_inputs(body, reverse, roots)
        reverse.check()
        loop = reverse.to_node()
        first = len(recurrences)
        self.recurrence_finals = {id(r.entry): self._recurrence_final(r.entry, out)
                                  for r, out in zip(recurrences, loop.outputs[:first])}
        finals = [out[-1] for out in loop.outputs[first:first + len(carries)]]
        rows = loop.outputs[first + len(carries):]
        return finals, rows

    def _add_inputs(self, body: dict, reverse: ScanArgs, roots: set) -> None:
        """The reverse body's inputs: per-step rows as sequences, the rest as non-sequences."""
        args = self.args
        for e in args.buffered:  # cotangents given at step t
            given = self.cot[id(e)].get("given")
            if given is not None and given in roots:
                self._residual(given, self._cotangent_rows(e), given.name)
        for s in args.sequences:
            for tap, v in zip(s.taps, s.inner):
                if body[v] in roots:
                    self._residual(body[v], self._sequence_rows(s, tap), _tap_label(s.label or "sequence", tap))
        for position, e in enumerate(args.recurrent):
            for tap, v in zip(e.taps, e.inner_in):
                if body[v] in roots:
                    self._residual(body[v], self._output_rows(position, e, tap),
                                   _tap_label(e.label or "output", tap) + " (saved)")
        for r in self.sequences:
            if r.placeholder in roots:
                reverse.sequences.append(SequenceEntry(r.rows, [r.placeholder], (0,), r.label))
        self._non_seq_copies = [(n, body[n.inner]) for n in args.non_seqs]
        for n in args.non_seqs:
            if body[n.inner] in roots:
                reverse.non_seqs.append(NonSeqEntry(n.outer, body[n.inner], n.label))

    def _residual(self, placeholder: Variable, rows: Variable, label: str, new: bool = False) -> Variable:
        """Record a per-step input of the reverse loop; ``new``: a fresh placeholder standing
        for ``placeholder`` (a value to read instead of recompute)."""
        if new:
            placeholder = placeholder.type.make_variable(name=label)
        elif placeholder.name is None:  # a copy of the forward's input, named for dprint and draw
            placeholder.name = label
        self.sequences.append(_Residual(placeholder, rows, label))
        return placeholder

    def _carry_init(self, c: _Carry) -> Variable:
        """Zeros, or for a shared state the cotangent of its final value, or for a state whose
        last step alone has a cotangent that cotangent (the first step of the reverse loop
        adds it, as it would add the row of the given cotangents)."""
        if not isinstance(c.entry, NonSeqEntry) and _is_shared(c.entry) and id(c.entry) in self.given:
            return self.given[id(c.entry)]
        if isinstance(c.entry, NonSeqEntry):
            return zeros_like(c.entry.outer, dtype=c.placeholder.dtype)
        init = c.entry.outer_init if isinstance(c.entry, RecurrentEntry) else c.entry.outer
        if isinstance(c.entry, RecurrentEntry) and c.entry in self.args.mit_sot:
            init = init[:c.entry.span] if _window(c.entry) > 1 else init[0]
        zero = zeros_like(init, dtype=c.placeholder.dtype)
        last = self.last_only.get(id(c.entry))
        if last is None:
            return zero
        message = (f"grad: the cost reads the last step of {c.entry.label or 'a scan output'}, but the loop ran no "
                   "steps (index -1 is out of bounds for axis 0 with size 0)")
        return assert_that(add(zero, last), ge(self.steps_run, constant(1, dtype=self.steps_run.dtype)),
                           message=message, error=IndexError)

    def _last_step_cotangents(self) -> dict:
        """States whose given cotangent is zero but at the last step (a cost of ``states[-1]``):
        by entry id, that step's cotangent. The reverse loop starts its carry there instead of
        reading a sequence of zeros as long as the trace."""
        found = {}
        for e in self.active:
            if not isinstance(e, RecurrentEntry) or _window(e) > 1 or id(e) not in self.given:
                continue
            node = self._given_parts(e)[1].owner
            if (node is not None and isinstance(node.op, IncSubtensor) and not node.op.set_instead_of_inc
                    and node.op.spec == (INT,) and static_int(node.inputs[2]) == -1 and _is_zeros(node.inputs[0])
                    and node.inputs[1].dtype == _step_type(e).dtype):
                found[id(e)] = node.inputs[1]
        return found

    # ------------------------------------------------------------------ rows of outer buffers
    def _output_rows(self, position: int, e, tap: int) -> Variable:
        """Rows ``span + t + tap`` of a buffered output for t = T-1 .. T-K (backward order)."""
        buffer = self.node.outputs[position]
        start = (e.span if isinstance(e, RecurrentEntry) else 0) + tap
        return buffer[start + self.steps_run - self.steps:start + self.steps_run][::-1]

    def _cotangent_rows(self, e) -> Variable:
        steps = self._given_parts(e)[1]
        return steps[self.steps_run - self.steps:self.steps_run][::-1]

    def _given_parts(self, e) -> tuple[Variable | None, Variable]:
        """The cotangent given on an output's buffer, split: its initial rows (None: zero) and
        its steps. scan() slices the initial rows off, so the cotangent usually arrives as
        ``inc_subtensor(zeros_like(buffer)[span:], g)``: then the steps' is g itself."""
        g = self.given[id(e)]
        if not isinstance(e, RecurrentEntry):
            return None, g
        node = g.owner
        if (node is not None and isinstance(node.op, IncSubtensor) and not node.op.set_instead_of_inc
                and node.op.spec == (("slice", True, False, False),) and static_int(node.inputs[2]) == e.span
                and _is_zeros(node.inputs[0]) and node.inputs[1].ndim == g.ndim):
            return None, node.inputs[1]
        return g[:e.span], g[e.span:]

    def _sequence_rows(self, s: SequenceEntry, tap: int) -> Variable:
        """The elements tap ``tap`` reads at steps T-1 .. T-K (backward order)."""
        data, off = s.outer, s.offset(tap)
        usable = shape(data)[0] - s.span
        forwards = data[off + self.steps_run - self.steps:off + self.steps_run][::-1]
        backwards = data[off + usable - self.steps_run:off + usable - self.steps_run + self.steps]
        return self._pick(backwards, forwards)

    def _sequence_gradient(self, s: SequenceEntry, rows: list) -> Variable:
        """Zeros the sequence's shape, plus each tap's rows where that tap read them."""
        data = s.outer
        total = zeros(shape(data), dtype=float_dtype(data))
        usable = shape(data)[0] - s.span
        for tap, g in rows:
            off = s.offset(tap)
            start = self._pick(off + usable - self.steps_run, off + self.steps_run - self.steps)
            total = inc_subtensor(total[start:start + self.steps], self._pick(g, g[::-1]))
        return total

    # ------------------------------------------------------------------ assembling the results
    def _outer_gradients(self, carries: list, finals: list, emitted_keys: list, rows: list) -> list:
        args = self.args
        final = {id(c.entry): f for c, f in zip(carries, finals)}
        final.update(self.recurrence_finals)
        final.update(self.undefined)
        complete = eq(self.steps, self.steps_run) if args.truncate_gradient > 0 else None
        result = [None]
        by_sequence: dict = {}
        for (s, tap), r in zip(emitted_keys, rows):
            by_sequence.setdefault(id(s), []).append((tap, r))
        for s in args.sequences:
            if id(s) in self.undefined:
                result.append(self.undefined[id(s)])
            else:
                result.append(self._sequence_gradient(s, by_sequence[id(s)]) if id(s) in by_sequence else None)
        for position, e in enumerate(args.recurrent):
            result.append(self._initial_gradient(position, e, final.get(id(e))))
        for s in args.shared:
            g = final.get(id(s))
            if g is not None and complete is not None:
                g = switch(complete, g, zeros_like(g))
            result.append(g)
        result += [final.get(id(n)) for n in args.non_seqs]
        return result

    def _initial_gradient(self, position: int, e: RecurrentEntry, carried):
        """The initial rows' cotangent: given on the buffer's first rows, plus what the
        backpropagated steps sent to them."""
        parts = []
        direct = self._given_parts(e)[0] if id(e) in self.given else None
        if direct is not None:
            parts.append(direct[0] if e in self.args.sit_sot else direct)
        if carried is not None:
            if self.args.truncate_gradient > 0:
                carried = self._reached_initial_rows(e, carried)
            parts.append(stack([carried]) if e in self.args.mit_sot and _window(e) == 1 else carried)
        if not parts:
            return None
        total = parts[0] if len(parts) == 1 else add(*parts)
        if e in self.args.mit_sot and e.outer_init.type.shape[:1] != (e.span,):  # rows the taps never read
            total = concatenate([total, zeros_like(e.outer_init[e.span:], dtype=total.dtype)])
        return total

    def _reached_initial_rows(self, e: RecurrentEntry, carried: Variable) -> Variable:
        """With truncation the final carry holds rows ``T-K ..``; keep those that are initial rows."""
        skipped = self.steps_run - self.steps
        if _window(e) == 1:
            return switch(eq(skipped, 0), carried, zeros_like(carried))
        padded = concatenate([zeros(_stack_shape(minimum(skipped, e.span), carried), dtype=carried.dtype), carried])
        return padded[:e.span]


@dataclass
class _Carry:
    entry: object
    placeholder: Variable
    new: Variable


# ---------------------------------------------------------------------------- small helpers
def _is_shared(e) -> bool:
    return not isinstance(e, (RecurrentEntry, NitSotEntry, NonSeqEntry))


def _window(e) -> int:
    """Rows a state's carried cotangent holds: 1 (one value) or a mit-sot's span."""
    return e.span if isinstance(e, RecurrentEntry) and e.span > 1 else 1


def _step_type(e):
    """The type of one step's value of an output entry."""
    if isinstance(e, RecurrentEntry):
        return e.inner_in[0].type
    return e.inner_out.type if isinstance(e, NitSotEntry) else e.inner_in.type


def _tap_label(name: str, tap: int) -> str:
    return f"{name}[t]" if tap == 0 else f"{name}[t{tap:+d}]"


def _is_differentiable_input(v: Variable) -> bool:
    return hasattr(v.type, "dtype") and not isinstance(v.type, GeneratorType)


def _or_zeros(g, like: Variable) -> Variable:
    return g if g is not None else zeros_like(like)


def _stack_shape(rows, like: Variable) -> Variable:
    return concatenate([stack([rows]), shape(like)[1:]]) if like.ndim > 1 else stack([rows])


def _shift_window(carried: Variable, tap_grads: list, span: int) -> Variable:
    """The carried cotangent one step earlier: row i is forward row ``t - span + i``; it holds
    what later steps sent there plus what step t's taps send (tap -k lands on row span - k)."""
    if span == 1:
        (tap, g), = tap_grads
        return _or_zeros(g, carried)
    row = carried[0]
    new_rows = []
    for i in range(span):
        value = carried[i - 1] if i > 0 else None
        for tap, g in tap_grads:
            if g is not None and tap + span == i:
                value = g if value is None else add(value, g)
        new_rows.append(value if value is not None else zeros_like(row))
    return stack(new_rows)


def _is_zeros(var: Variable) -> bool:
    """``zeros_like(x)`` (a fill of 0) or a constant of zeros."""
    node = var.owner
    if node is not None and node.op == Elemwise("second"):
        var = node.inputs[1]
    return isinstance(var, Constant) and not np.any(var.data)
