"""Loops exported to ONNX: a catalogue of scans (sequence taps, go_backwards, n_steps, until,
sit-sot/mit-sot/nit-sot outputs, shared updates, save_mem rings, nested scans) built like
tests/scan builds them, each exported plain (mode "py") and optimised (mode "fast") and run in
onnxruntime and in onnx's reference evaluator against mode "py"; which ONNX node each kind of
scan lowers to; what the exported models do where the reference evaluator cannot follow."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symscan as ss
import symscan.tensor as T
from symscan.scan import Scan, ScanArgs


# ---------------------------------------------------------------------------- the catalogue
@dataclass(frozen=True)
class Loop:
    """A scan to build. ``seq_taps``: the taps of each sequence (matrices of rows of 2);
    ``outputs``: "sit", "nit" or a mit-sot's taps; ``n_steps``: None (from the sequences), an
    int, or "symbolic" (an input ``k``); ``until`` stops once the first output's sum exceeds
    ``limit``; ``shared`` updates a shared scalar and a shared vector at each step; ``nested``
    runs an inner scan at each step; ``last``: each output read as ``out[-1]`` (1) or ``out[-k:]``."""

    seq_taps: tuple = ((0,),)
    outputs: tuple = ("sit",)
    go_backwards: bool = False
    n_steps: int | str | None = None
    until: bool = False
    shared: bool = False
    nested: bool = False
    last: int | None = None

    @property
    def span(self) -> int:
        return max((max(max(t), 0) - min(min(t), 0) for t in self.seq_taps), default=0)

    def __str__(self) -> str:
        parts = [f"seqs{list(map(list, self.seq_taps))}", "+".join(o if isinstance(o, str) else f"mit{list(o)}"
                                                                    for o in self.outputs)]
        parts += ["backwards"] * self.go_backwards + ([f"n_steps={self.n_steps}"] if self.n_steps is not None else [])
        parts += [name for name in ("until", "shared", "nested") if getattr(self, name)]
        parts += [f"last{self.last}"] if self.last else []
        return " ".join(parts)

    def build(self):
        """(inputs, outputs, updates, shared variables) of the scan."""
        seqs = [T.matrix(f"x{i}") for i in range(len(self.seq_taps))]
        initial = {j: T.vector(f"s{j}") if kind == "sit" else T.matrix(f"m{j}")
                   for j, kind in enumerate(self.outputs) if kind != "nit"}
        outputs_info = [None if kind == "nit" else initial[j] if kind == "sit" else dict(initial=initial[j], taps=kind)
                        for j, kind in enumerate(self.outputs)]
        w, k, limit = T.vector("w"), T.lscalar("k"), T.scalar("limit")
        counter, vec = ss.shared(np.float64(0.0), name="counter"), ss.shared(np.array([1.0, -1.0]), name="vec")
        result, updates = ss.scan(self.step(counter, vec, limit),
                                  sequences=[dict(input=x, taps=list(t)) for x, t in zip(seqs, self.seq_taps)],
                                  outputs_info=outputs_info, non_sequences=w, go_backwards=self.go_backwards,
                                  n_steps=k if self.n_steps == "symbolic" else self.n_steps, return_list=True)
        if self.last:
            result = [r[-1] if self.last == 1 else r[-self.last:] for r in result]
        inputs = seqs + list(initial.values()) + [w] + [k] * (self.n_steps == "symbolic") + [limit] * self.until
        return inputs, result, updates, [counter, vec]

    def step(self, counter, vec, limit):
        """fn: outputs mixing every tap, the non-sequence w and (nested) an inner scan's result."""

        def fn(*args):
            args = list(args)
            elements = [args.pop(0) for taps in self.seq_taps for _ in taps]
            pasts = [[args.pop(0) for _ in ([] if kind == "nit" else [-1] if kind == "sit" else kind)]
                     for kind in self.outputs]
            (w,) = args
            drive = sum((e * (0.5 + i) for i, e in enumerate(elements)), T.zeros_like(w)) + w
            if self.nested:
                inner, _ = ss.scan(lambda e, acc: acc * 0.5 + e, sequences=drive, outputs_info=T.constant(0.0))
                drive = drive + inner
            new = [drive * 2.0 + (pasts[0][0] if pasts[0] else 0.0) if kind == "nit"
                   else sum((p * (0.9 - 0.3 * i) for i, p in enumerate(past)), drive * 0.1)
                   for kind, past in zip(self.outputs, pasts)]
            updates = {counter: counter + drive.sum(), vec: vec * 0.5 + drive} if self.shared else {}
            return (new, updates) + ((ss.until(new[0].sum() > limit),) if self.until else ())

        return fn

    def value_sets(self, inputs) -> list[list]:
        """Values for several runs: a long sequence and one leaving no step; for a symbolic
        n_steps 3, 0, 1 and -2 steps; for until, a limit reached early and one never reached."""
        r = np.random.default_rng(1)
        runs = [dict(length=self.span + 5, k=3, limit=0.5)]
        if self.n_steps == "symbolic":
            runs += [dict(length=self.span + 5, k=k, limit=0.5) for k in (0, 1, -2) if k or self.last != 1]
        elif self.n_steps is None and self.last != 1:  # out[-1] of no step is an IndexError
            runs.append(dict(length=self.span, k=None, limit=0.5))
        if self.until:
            runs.append(dict(length=self.span + 5, k=3, limit=1e9))
        sets = []
        for run in runs:
            values = []
            for var in inputs:
                kind = var.name[0]
                values.append(r.normal(size=(run["length"], 2)) if kind == "x" else r.normal(size=2) if kind in "sw"
                              else r.normal(size=(-min(self.outputs[int(var.name[1:])]), 2)) if kind == "m"
                              else np.int64(run["k"]) if kind == "k" else np.float64(run["limit"]))
            sets.append(values)
        return sets

    def plain_lowering(self) -> list:
        """The Scan/Loop nodes the plain graph lowers to (API.md "Export")."""
        inner = [("Scan", [])] if self.nested else []
        if self.n_steps in (1, -1):  # one step builds no loop
            return inner
        fits_scan = (self.seq_taps and all(t == (0,) for t in self.seq_taps) and not self.until
                     and all(kind in ("sit", "nit") for kind in self.outputs) and not self.nested
                     and self.n_steps != "symbolic")
        return [("Scan" if fits_scan else "Loop", inner)]


SEQUENCE_TAPS = [((0,),), ((-1,),), ((2,),), ((-2, 0, 1),), ((0,), (-1, 2))]
OUTPUT_KINDS = [("sit",), ("nit",), ((-3, -1),), ("sit", "nit", (-2,))]
N_STEPS = [None, 3, "symbolic", 0, 1, -2]

CATALOGUE = sorted({
    *(Loop(taps, outputs, backwards) for taps, outputs, backwards
      in itertools.product(SEQUENCE_TAPS, OUTPUT_KINDS, [False, True])),
    *(Loop(taps, ("sit", "nit"), backwards, n_steps) for taps, backwards, n_steps
      in itertools.product([((0,),), ((-1, 1),)], [False, True], N_STEPS)),
    *(Loop((), outputs, backwards, n_steps) for outputs, backwards, n_steps
      in itertools.product([("sit",), ("nit",), ("sit", "nit", (-2,))], [False, True], N_STEPS[1:])),
    *(Loop(taps, outputs, backwards, n_steps, until=True) for taps, outputs, backwards, n_steps
      in itertools.product([((0,),), ((-1, 1),), ()], [("sit",), ("nit", (-3, -1))], [False, True], [5, "symbolic"])),
    *(Loop(taps, outputs, backwards, n_steps, shared=True) for taps, outputs, backwards, n_steps
      in itertools.product([((0,),), ((-1,),), ()], [("sit",), ("nit",), ((-2,),)], [False, True],
                           [None, 4, "symbolic"]) if taps or n_steps is not None),
    *(Loop(taps, outputs, n_steps=n_steps, nested=True) for taps, outputs, n_steps
      in itertools.product([((0,),), ((-1,),)], [("sit",), ("nit", (-2,))], [None, "symbolic", 1])),
    *(Loop(taps, outputs, backwards, n_steps, last=last) for taps, outputs, backwards, n_steps, last
      in itertools.product([((0,),), ((-2, 1),)], [("sit",), ("nit",), ((-3, -1),)], [False, True],
                           [None, "symbolic"], [1, 2])),
}, key=str)


@pytest.mark.parametrize("mode", ["py", "fast"], ids=["plain", "optimised"])
@pytest.mark.parametrize("spec", CATALOGUE, ids=str)
def test_catalogue_exports_like_py(export_check, spec, mode):
    inputs, outputs, updates, _ = spec.build()
    f = ss.function(inputs, outputs, updates=updates, mode=mode)
    model = export_check(f, *spec.value_sets(inputs))
    if mode == "py":
        assert export_check.loop_kinds(model.graph) == spec.plain_lowering()


# ---------------------------------------------------------------------------- random sequences
TAPS = st.lists(st.integers(-3, 3), min_size=1, max_size=3, unique=True).map(tuple)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seq_taps=st.lists(TAPS, min_size=1, max_size=2).map(tuple), backwards=st.booleans(),
       outputs=st.sampled_from(OUTPUT_KINDS), extra=st.integers(0, 4), mode=st.sampled_from(["py", "fast"]),
       n_steps=st.one_of(st.none(), st.integers(-4, 4), st.just("symbolic")), k=st.integers(-4, 4),
       data=st.data())
def test_random_sequence_loops(export_check, seq_taps, backwards, outputs, extra, mode, n_steps, k, data):
    """Random taps, directions, step counts (constant, symbolic, negative) and sequence lengths."""
    spec = Loop(seq_taps, outputs, backwards, n_steps)
    inputs, result, updates, _ = spec.build()
    f = ss.function(inputs, result, updates=updates, mode=mode)
    steps = abs(k) if n_steps == "symbolic" else abs(n_steps) if n_steps is not None else 0
    lengths = [spec.span + steps + data.draw(st.integers(0, 2), "slack") for _ in seq_taps]
    if n_steps is None:
        lengths[0] = spec.span + extra
    r = np.random.default_rng(len(seq_taps) + extra)
    values = []
    for var in inputs:
        kind = var.name[0]
        values.append(r.normal(size=(lengths[int(var.name[1:])], 2)) if kind == "x"
                      else r.normal(size=(-min(outputs[int(var.name[1:])]), 2)) if kind == "m"
                      else np.int64(k) if kind == "k" else r.normal(size=2))
    model = export_check(f, values)
    if mode == "py":
        assert export_check.loop_kinds(model.graph) == spec.plain_lowering()


# ---------------------------------------------------------------------------- more shapes of fn
def _returns_its_taps():
    x = T.vector("x")
    out, updates = ss.scan(lambda previous, current: [previous, current], sequences=dict(input=x, taps=[-1, 0]))
    return [x], out, updates, [[np.arange(4.0)], [np.arange(1.0)]]


def _state_unchanged():
    s0 = T.scalar("s0")
    out, updates = ss.scan(lambda s: s, outputs_info=s0, n_steps=3)
    return [s0], out, updates, [[2.0]]


def _integers_and_booleans():
    x = T.ivector("x")
    out, updates = ss.scan(lambda v, total: [total + v, v > 2, v.astype("int64") * 3], sequences=x,
                           outputs_info=[T.constant(np.int32(0)), None, None])
    return [x], out, updates, [[np.arange(5, dtype="int32")], [np.zeros(0, dtype="int32")]]


def _float32():
    x = T.fvector("x")
    out, updates = ss.scan(lambda v, total: total * np.float32(0.5) + v, sequences=dict(input=x, taps=[-1]),
                           outputs_info=T.constant(np.float32(1.0)))
    return [x], out, updates, [[np.arange(5, dtype="float32")]]


def _reads_a_shared_variable(taps):
    W = ss.shared(np.arange(4.0).reshape(2, 2) / 4, name="W")
    m, h0 = T.matrix("m"), T.vector("h0")
    out, updates = ss.scan(lambda row, h: T.tanh(T.dot(h, W) + row), sequences=dict(input=m, taps=taps),
                           outputs_info=h0)
    return [m, h0], out, updates, [[np.ones((3, 2)), np.zeros(2)]]


def _scalar_and_matrix_per_step():
    m = T.matrix("m")
    out, updates = ss.scan(lambda row: [row.sum(), T.outer(row, row)], sequences=m)
    return [m], out, updates, [[np.arange(6.0).reshape(3, 2)], [np.zeros((0, 2))]]


def _until_last_steps(last):
    s0 = T.scalar("s0")
    out, updates = ss.scan(lambda s: (s * 2, ss.until(s > 10)), outputs_info=s0, n_steps=20)
    return [s0], out[-1] if last == 1 else out[-last:], updates, [[1.0], [100.0]]


def _static_shapes(length, taps, n_steps):
    """Sequences and states of static shape (the model declares them), empty ones included."""
    x, s0 = T.tensor("float64", shape=(length, 2), name="x"), T.tensor("float64", shape=(2,), name="s0")
    outs, updates = ss.scan(lambda *args: [args[-1] + args[0], args[0] * 2], sequences=dict(input=x, taps=taps),
                            outputs_info=[s0, None], n_steps=n_steps)
    return [x, s0], outs, updates, [[np.arange(2.0 * length).reshape(length, 2), np.ones(2)]]


FN_SHAPES = {
    "static shapes": lambda: _static_shapes(5, [0], None),
    "static shapes, empty sequence": lambda: _static_shapes(0, [0], None),
    "static shapes, n_steps=0": lambda: _static_shapes(5, [0], 0),
    "static shapes, taps [-1, 0], n_steps=0": lambda: _static_shapes(5, [-1, 0], 0),
    "static shapes, taps [-1, 0], n_steps=3": lambda: _static_shapes(5, [-1, 0], 3),
    "fn returns its taps": _returns_its_taps,
    "state returned unchanged": _state_unchanged,
    "int32, bool and int64 outputs": _integers_and_booleans,
    "float32": _float32,
    "Scan reading a shared variable": lambda: _reads_a_shared_variable([0]),
    "Loop reading a shared variable": lambda: _reads_a_shared_variable([-1]),
    "a scalar and a matrix per step": _scalar_and_matrix_per_step,
    "until, out[-1]": lambda: _until_last_steps(1),
    "until, out[-3:]": lambda: _until_last_steps(3),
}


@pytest.mark.parametrize("mode", ["py", "fast"], ids=["plain", "optimised"])
@pytest.mark.parametrize("case", list(FN_SHAPES))
def test_more_shapes_of_fn(export_check, case, mode):
    inputs, outputs, updates, value_sets = FN_SHAPES[case]()
    export_check(ss.function(inputs, outputs, updates=updates, mode=mode), *value_sets)


# ---------------------------------------------------------------------------- which node
def scan_nodes(f) -> list:
    return [node for node in f.fgraph.toposort() if isinstance(node.op, Scan)]


@pytest.mark.parametrize("spec,kinds", [
    (Loop(((0,),), ("sit",)), [("Scan", [])]),
    (Loop(((0,), (0,)), ("sit", "nit"), shared=True), [("Scan", [])]),
    (Loop(((0,),), ("nit",), go_backwards=True), [("Scan", [])]),
    (Loop(((0,),), ("sit",), n_steps=3), [("Scan", [])]),
    (Loop(((0,),), ("sit",), n_steps=-3), [("Scan", [])]),
    (Loop(((0,),), ("sit",), n_steps=0), [("Scan", [])]),
    (Loop(((0,),), ("sit",), n_steps="symbolic"), [("Loop", [])]),
    (Loop(((0,),), ("sit",), until=True), [("Loop", [])]),
    (Loop(((-1,),), ("sit",)), [("Loop", [])]),
    (Loop(((0, 1),), ("nit",)), [("Loop", [])]),
    (Loop(((0,),), ((-2, -1),)), [("Loop", [])]),
    (Loop((), ("sit",), n_steps=4), [("Loop", [])]),
    (Loop((), ("nit",), n_steps=4, shared=True), [("Loop", [])]),
    (Loop(((0,),), ("sit",), nested=True), [("Loop", [("Scan", [])])]),
    (Loop(((0,),), ("sit",), n_steps=1), []),
    (Loop(((0,),), ("sit",), n_steps=1, nested=True), [("Scan", [])]),
], ids=lambda value: str(value) if isinstance(value, Loop) else "")
def test_which_node_each_kind_lowers_to(export_check, spec, kinds):
    inputs, outputs, updates, _ = spec.build()
    model = export_check.export(ss.function(inputs, outputs, updates=updates, mode="py"))
    assert export_check.loop_kinds(model.graph) == kinds


@pytest.mark.parametrize("n_steps", [None, -4])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_scan_walks_backwards_through_scan_input_directions(export_check, go_backwards, n_steps):
    """go_backwards (or a constant negative n_steps, which flips it) is the Scan's input direction."""
    inputs, outputs, updates, _ = Loop(((0,), (0,)), ("sit", "nit"), go_backwards, n_steps).build()
    model = export_check.export(ss.function(inputs, outputs, updates=updates, mode="py"))
    (scan,) = export_check.nodes(model.graph, "Scan")
    directions = next(list(a.ints) for a in scan.attribute if a.name == "scan_input_directions")
    assert directions == [int(go_backwards != (n_steps is not None))] * 2


# ---------------------------------------------------------------------------- shared updates
def test_shared_updates_are_extra_outputs_in_update_order_and_feed_back(export_check):
    """The new values of the updated shared variables follow the outputs, in the order of the
    updates; feeding them back as the shared inputs gives the second call of mode "py"."""
    x, s0 = T.matrix("x"), T.vector("s0")
    total, calls, scale = (ss.shared(np.array([0.0, 1.0]), name="total"), ss.shared(np.int64(0), name="calls"),
                           ss.shared(np.float64(0.5), name="scale"))
    out, updates = ss.scan(lambda row, s: (s * scale + row, [(calls, calls + 1), (total, total + row * scale)]),
                           sequences=x, outputs_info=s0)
    f_py = ss.function([x, s0], out, updates=updates, mode="py")
    for mode in ("py", "fast"):
        f = ss.function([x, s0], out, updates=updates, mode=mode)
        model = export_check.export(f)
        assert [i.name for i in model.graph.input] == ["x", "s0"] + [v.name for v in f.fgraph.shared_variables]
        assert [o.name for o in model.graph.output] == [out.name or "output_0", "calls_updated", "total_updated"]
        session = export_check.session(model)
        values = [np.arange(6.0).reshape(3, 2), np.array([1.0, -1.0])]
        feeds = export_check.feeds(model, f, values)
        start = {var: var.get_value() for var in (total, calls, scale)}
        for _ in range(2):
            expected = [f_py(*values), calls.get_value(), total.get_value()]
            got = session.run(None, feeds)
            for g, e in zip(got, expected):
                np.testing.assert_allclose(g, e, rtol=1e-9)
            feeds.update({"calls": got[1], "total": got[2]})
        for var, value in start.items():
            var.set_value(value)


# ---------------------------------------------------------------------------- save_mem rings
@pytest.mark.parametrize("outputs", [("sit",), ("nit",), ((-3, -1),), ("sit", "nit", (-2,))])
@pytest.mark.parametrize("last", [1, 2])
def test_rings_lower_to_loop_keeping_the_last_steps(export_check, outputs, last):
    """save_mem keeps out[-1] / out[-2:] in a ring; the optimised graph's loop is a Loop whose
    result is the last steps."""
    spec = Loop(((0,),), outputs, n_steps="symbolic", last=last)
    inputs, result, updates, _ = spec.build()
    f = ss.function(inputs, result, updates=updates, mode="fast")
    (node,) = scan_nodes(f)
    assert all(entry.ring is not None for entry in ScanArgs.from_node(node).buffered)
    model = export_check(f, *spec.value_sets(inputs))
    assert export_check.loop_kinds(model.graph) == [("Loop", [])]


def _stacked_outputs(node) -> int:
    """Per-step outputs an ONNX Loop/Scan node stacks (its outputs beyond its carried values)."""
    carried = len(node.input) - (2 if node.op_type == "Loop" else next(
        a.i for a in node.attribute if a.name == "num_scan_inputs"))
    return len(node.output) - carried


@pytest.mark.parametrize("n_steps", [None, "symbolic"])
@pytest.mark.parametrize("outputs", [("sit",), ((-3, -1),), ("sit", "nit")])
def test_a_ring_of_one_is_carried_not_stacked(export_check, outputs, n_steps):
    """out[-1] only (save_mem's ring of one): the ONNX loop carries the state and stacks no row of it,
    as a model that only carries it does; a Scan of a state alone stays a Scan."""
    spec = Loop(((0,),), outputs, n_steps=n_steps, last=1)
    inputs, result, updates, _ = spec.build()
    f = ss.function(inputs, result, updates=updates, mode="fast", rewrites=["-vectorize"])
    model = export_check(f, *spec.value_sets(inputs))
    (loop,) = export_check.nodes(model.graph, "Loop") + export_check.nodes(model.graph, "Scan")
    assert _stacked_outputs(loop) == sum(1 for kind in outputs if kind == "nit")
    if n_steps is None and outputs == ("sit",):
        assert loop.op_type == "Scan"


def test_guide_power_last_step_is_a_ring_of_one(export_check):
    k, A = T.iscalar("k"), T.vector("A")
    result, updates = ss.scan(lambda prior, A: prior * A, outputs_info=T.ones_like(A), non_sequences=A, n_steps=k)
    f = ss.function([A, k], result[-1], updates=updates, mode="fast", rewrites=["-vectorize"])  # (a loop to export)
    (node,) = scan_nodes(f)
    assert [entry.ring for entry in ScanArgs.from_node(node).buffered] == [1]
    export_check(f, [np.arange(5.0), 3], [np.arange(5.0), 1], [[0.5, 2.0], 7])


# ---------------------------------------------------------------------------- nested scans
def test_scan_inside_a_loop_inside_a_scan(export_check):
    """Three levels: a map over matrices (a Loop, as it holds loops), a running sum over their
    rows (taps [-1, 0]: a Loop), and in each row a sum of its elements (a Scan)."""
    X = T.tensor3("X")

    def per_matrix(m):
        def per_row(previous, row, acc):
            inner, _ = ss.scan(lambda e, s: s + e, sequences=row, outputs_info=T.constant(0.0))
            return acc + inner[-1] + previous.sum()

        sums, _ = ss.scan(per_row, sequences=dict(input=m, taps=[-1, 0]), outputs_info=T.constant(0.0))
        return sums

    out, updates = ss.scan(per_matrix, sequences=X)
    for mode in ("py", "fast"):
        f = ss.function([X], out, updates=updates, mode=mode)
        model = export_check(f, [np.arange(24.0).reshape(2, 4, 3)])
        # matrices of one row: the middle Loop runs no trip, which the reference evaluator cannot
        # run (in mode "fast" the vectorize rules leave no middle Loop)
        nested = any(kind == "Loop" for _, inner in export_check.loop_kinds(model.graph) for kind, _ in inner)
        export_check(f, [np.ones((3, 1, 2))], limits={"Loop of zero trips"} if nested else ())
        if mode == "py":
            assert export_check.loop_kinds(model.graph) == [("Loop", [("Loop", [("Scan", [])])])]


def test_nested_scan_reading_the_outer_step_and_non_sequences(export_check):
    """The inner scan's n_steps, initial state and non-sequence come from the outer step."""
    x, w = T.lvector("x"), T.scalar("w")

    def outer_step(n, total):
        inner, _ = ss.scan(lambda s, w: s * w + 1.0, outputs_info=total, non_sequences=w, n_steps=n)
        return T.switch(n > 0, inner[-1:].sum(), total)

    out, updates = ss.scan(outer_step, sequences=x, outputs_info=T.constant(1.0))
    for mode in ("py", "fast"):
        f = ss.function([x, w], out, updates=updates, mode=mode)
        export_check(f, [np.array([2, 1, 3]), 0.5], [np.array([3]), 2.0])
        # an outer step whose inner loop runs no trip: beyond the reference evaluator
        export_check(f, [np.array([2, 0, 3, 1]), 0.5], limits={"Loop of zero trips"})


# ---------------------------------------------------------------------------- n_steps at the edges
@pytest.mark.parametrize("mode", ["py", "fast"])
@pytest.mark.parametrize("n_steps", [0, 1, -1, "symbolic"])
def test_no_or_one_step_with_every_kind_of_output(export_check, mode, n_steps):
    """0 steps: empty outputs (a nit-sot keeps its step shape) and unchanged shared variables;
    1 step: no loop at all."""
    spec = Loop((), ("sit", "nit", (-3, -1)), n_steps=n_steps, shared=True)
    inputs, result, updates, _ = spec.build()
    f = ss.function(inputs, result, updates=updates, mode=mode)
    values = spec.value_sets(inputs)
    model = export_check(f, *values)
    if n_steps == 0:
        session = export_check.session(model)
        sit, nit, mit, counter, vec = session.run(None, export_check.feeds(model, f, values[0]))
        assert (sit.shape, nit.shape, mit.shape) == ((0, 2), (0, 2), (0, 2))
        assert counter == 0.0 and vec.tolist() == [1.0, -1.0]
    if n_steps in (1, -1):
        assert export_check.loop_kinds(model.graph) == []


@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("taps", [(0,), (-1, 1)])
def test_negative_n_steps_at_run_time_reverses_the_loop(export_check, go_backwards, taps):
    x, k = T.vector("x"), T.lscalar("k")
    out, updates = ss.scan(lambda *elements: sum(elements) * 1.0 + 0.5 * elements[0],
                           sequences=dict(input=x, taps=list(taps)), n_steps=k, go_backwards=go_backwards)
    f = ss.function([x, k], out, updates=updates, mode="py")
    xv = np.arange(9.0) ** 2
    model = export_check(f, *[[xv, steps] for steps in (4, -4, 0, 1, -1, -7 + len(taps) - 1)])
    assert export_check.loop_kinds(model.graph) == [("Loop", [])]


@pytest.mark.parametrize("spec", [Loop(((0,),), ("sit",), n_steps=6), Loop(((0,),), ("nit",), n_steps="symbolic"),
                                  Loop(((-1, 1),), ("sit",), n_steps="symbolic"),
                                  Loop(((0,),), ("sit",), True, n_steps="symbolic")], ids=str)
def test_sequence_too_short_for_n_steps_fails_in_onnxruntime_too(export_check, spec):
    """Mode "py" raises; the model fails in the check node named after the rule (it neither
    runs fewer steps nor wraps round), and mode "onnxruntime" raises that as a ValueError."""
    inputs, result, updates, _ = spec.build()
    f = ss.function(inputs, result, updates=updates, mode="py")
    values = [np.ones((spec.span + 5, 2)) if var.name[0] == "x" else np.int64(6) if var.name == "k"
              else np.ones(2) for var in inputs]
    with pytest.raises(ValueError, match=r"'x0' has \d+ elements but 6 steps"):
        f(*values)
    model = export_check.export(f)
    with pytest.raises(Exception, match=r"symscan check \S+: scan: sequences\[0\] 'x0' has fewer elements than "
                                        r"n_steps \+ \d+"):
        export_check.session(model).run(None, export_check.feeds(model, f, values))
    g = ss.function(inputs, result, updates=updates, mode="onnxruntime")
    with pytest.raises(ValueError, match=r"^scan: sequences\[0\] 'x0' has fewer elements than n_steps \+ \d+ "
                                         r"\(taps \[.*\]\); pass a longer sequence or a smaller n_steps$"):
        g(*values)


@pytest.mark.parametrize("n_steps", [4, "symbolic"])
def test_mit_sot_with_too_few_initial_rows_raises_in_onnxruntime(n_steps):
    """Issue 12, bug 6: the initial rows are checked in the graph, with the loop's rule."""
    h, k = T.vector("h"), T.lscalar("k")
    xs, _ = ss.scan(lambda a, b: a + b, outputs_info=dict(initial=h, taps=[-2, -1]),
                    n_steps=k if n_steps == "symbolic" else n_steps)
    inputs = [h, k] if n_steps == "symbolic" else [h]
    steps = [4] if n_steps == "symbolic" else []
    for mode in ("py", "fast", "onnxruntime"):
        f = ss.function(inputs, xs, mode=mode)
        with pytest.raises(ValueError, match=r"outputs_info\[0\] \(initial 'h'\) has (1|fewer than 2) initial rows"):
            f(np.array([1.0]), *steps)
        np.testing.assert_array_equal(f(np.array([1.0, 2.0]), *steps), [3.0, 5.0, 8.0, 13.0])


# ---------------------------------------------------------------------------- reference evaluator limits
def test_reference_evaluator_cannot_run_a_reversed_scan(export_check):
    """onnx's reference evaluator rejects scan_input_directions 1; onnxruntime runs it."""
    from onnx.reference import ReferenceEvaluator

    x = T.vector("x")
    out, updates = ss.scan(lambda v, s: s * 2 + v, sequences=x, outputs_info=T.constant(0.0), go_backwards=True)
    f = ss.function([x], out, updates=updates, mode="py")
    model = export_check.export(f)
    feeds = {"x": np.array([1.0, 2.0, 3.0])}
    with pytest.raises(RuntimeError, match="Scan is not implemented for other output input_direction than 0"):
        ReferenceEvaluator(model).run(None, feeds)
    np.testing.assert_array_equal(export_check.session(model).run(None, feeds)[0], [3.0, 8.0, 17.0])


def test_reference_evaluator_cannot_run_a_loop_of_zero_trips(export_check):
    """onnx's reference evaluator stacks no step with np.vstack([]) and fails; onnxruntime gives
    the empty output."""
    from onnx.reference import ReferenceEvaluator

    s0, k = T.vector("s0"), T.lscalar("k")
    out, updates = ss.scan(lambda s: s * 2, outputs_info=s0, n_steps=k)
    f = ss.function([s0, k], out, updates=updates, mode="py")
    model = export_check.export(f)
    feeds = {"s0": np.array([1.0, 2.0]), "k": np.array(0)}
    with pytest.raises(ValueError, match="need at least one array to concatenate"):
        ReferenceEvaluator(model).run(None, feeds)
    assert export_check.session(model).run(None, feeds)[0].shape == (0, 2)
    np.testing.assert_array_equal(ReferenceEvaluator(model).run(None, {**feeds, "k": np.array(2)})[0],
                                  [[2.0, 4.0], [4.0, 8.0]])
