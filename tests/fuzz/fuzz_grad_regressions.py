"""Programs whose gradient check (fuzz_grad.py) once disagreed, each with what it caught:
``(why, program, known_bug)``. ``known_bug`` names an entry of ``KNOWN_BUGS`` while the library
bug is open: test_fuzz.py replays such an entry as a strict xfail (it must still fail, and fail
as that bug: a fix shows up as XPASS, and then the entry loses its ``known_bug`` and the bug
leaves ``KNOWN_BUGS``). ``python -m tests.fuzz --grad --replay`` replays them all.

``KNOWN_BUGS`` also lets the random profile of test_fuzz.py pass while a bug is open: a
disagreement that a known bug's ``matches`` recognises (the modes, the kind of disagreement and
a shape of program the bug needs) is not held against the program; anything else is. Each bug
has a standalone script in ``repros/`` that uses symscan only and exits 1 while the bug is
there.

Inputs without a ``value`` get seeded values of their ``shape`` (see ``input_value``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fuzz_compare import Disagreement
from fuzz_program import Input, Loop, Out, Program, Seq

F = "float64"


@dataclass(frozen=True)
class KnownBug:
    reason: str  # the xfail reason: what is wrong, where, and the repro script
    matches: Callable[[Program, Disagreement], bool]


KNOWN_BUGS: dict[str, KnownBug] = {
    "onnx-gather-error-first": KnownBug(
        "onnxruntime: a row that is not there (a one-step loop's sequence too short for its taps, out[-1] of an "
        "output whose loop ran no steps) fails in onnxruntime's own Gather (InvalidArgument) in the forward or "
        "the gradient, where the other graph raises the loop's error (ValueError, IndexError); ONNX has no op "
        "that raises, so which fails first is onnxruntime's order",
        lambda program, d: d.mode == "onnxruntime" and d.kind == "error differs from the forward"
        and "InvalidArgument" in d.detail),
}


def known_bug(program: Program, d: Disagreement) -> str | None:
    """The name of the open bug ``d`` is an instance of, or None."""
    return next((name for name, bug in KNOWN_BUGS.items() if bug.matches(program, d)), None)


GRAD_REGRESSIONS: list[tuple[str, Program, str | None]] = [
    # ------------------------------------------------------------------ fuzzer rules (they must pass)
    ("fuzzer rule: out[-1] of an empty output whose rows depend on no input may give zeros (not connected)",
     Program(d=1, inputs=(Input("h", ()), Input("n", (), "int32", value=0)),
             loops=(Loop(outputs=(Out("sit", ("cast", ("c", -0.5), F), (), F, ("v", "h"), (-1,)),
                                  Out("sit", ("v", "o0@-1"), (), F, ("v", "h"), (-1,))), n_steps=("sym", "n")),),
             reads=(("last", ("loop", 0, 0)),), seed=10), None),
    ("fuzzer rule: two errors, one optional (an initial value nothing reads): either may show first",
     Program(d=3, inputs=(Input("n0", (), "int32", value=0), Input("x1", (4, 3)), Input("h0", (3, 3)),
                          Input("n1", (), "int32", value=3), Input("x4", (5,))),
             loops=(Loop(sequences=(Seq(("v", "x1"), (-2, 0)),),
                         outputs=(Out("mit", ("v", "s0@-2"), (3,), F, ("v", "h0"), (-3, -1)),
                                  Out("mit", ("v", "o1@-1"), (3,), F, ("v", "h0"), (-3, -1))), n_steps=("sym", "n0")),
                    Loop(sequences=(Seq(("loop", 0, 1), (-1, 0)),),
                         outputs=(Out("nit", ("sum", ("v", "s0@0")), (), F),), n_steps=("const", 3)),
                    Loop(sequences=(Seq(("v", "x4"), (-1, 1)),),
                         outputs=(Out("sit", ("v", "s0@1"), (), F, ("last", ("loop", 1, 0)), (-1,)),
                                  Out("sit", ("v", "o1@-1"), (3,), F, ("last", ("loop", 0, 0)), (-1,))),
                         n_steps=("sym", "n1"))),
             reads=(("loop", 2, 1),), seed=102361), None),
    ("fuzzer rule: a required error (x too short) and an optional one ([-1] of an empty initial value nothing reads)",
     Program(d=1, inputs=(Input("w", ()), Input("h", ()), Input("n", (), "int32", value=0), Input("x", (1,))),
             loops=(Loop(outputs=(Out("nit", ("cast", ("c", 0.9), F), (), F),), n_steps=("sym", "n")),
                    Loop(outputs=(Out("sit", ("tanh", ("v", "o1@-1")), (), F, ("last", ("loop", 0, 0)), (-1,)),
                                  Out("sit", ("tanh", ("mul", ("v", "w"), ("v", "o1@-1"))), (), F, ("v", "h"), (-1,))),
                         n_steps=("const", 2)),
                    Loop(sequences=(Seq(("v", "x"), (0, 1)),),
                         outputs=(Out("nit", ("mul", ("v", "w"), ("v", "s0@0")), (), F),), n_steps=("const", 2))),
             reads=(("loop", 2, 0), ("loop", 1, 1)), seed=302042), None),
    ("fuzzer rule: an until that stops within a finite-difference step of its threshold is not differentiated there",
     Program(d=1, inputs=(Input("h", (), value=0.2999999), Input("w", (), value=0.5)),
             loops=(Loop(outputs=(Out("sit", ("add", ("v", "o0@-1"), ("mul", ("c", 0.25), ("v", "w"))), (), F,
                                      ("v", "h"), (-1,)),),
                         n_steps=("const", 5), until=("gt", ("new", 0), ("c", 0.8))),),
             reads=(("sum", ("loop", 0, 0)),)), None),
    ("fuzzer rule: a one-step loop (unrolled by scan()) reads only initial values: a state's own inputs are not read",
     Program(d=1, inputs=(Input("w", ()), Input("h", (), kind="constant"), Input("x", (1,), "int64")),
             loops=(Loop(sequences=(Seq(("v", "x"), (0, 1)),),
                         outputs=(Out("sit", ("mul", ("v", "w"), ("v", "o0@-1")), (), F, ("v", "h"), (-1,)),
                                  Out("sit", ("sin", ("v", "o0@-1")), (), F, ("v", "h"), (-1,))),
                         n_steps=("const", 1)),),
             reads=(("last", ("loop", 0, 1)),), seed=203269), None),
    ("fuzzer rule: the gradient keeps every read's checks: an unconnected read's error (x too short) may show first",
     Program(d=3, inputs=(Input("w0", (3,)), Input("x0", (0,)), Input("h0", (2,), static=True),
                          Input("h1", (3,), kind="constant"), Input("w1", (), kind="constant"), Input("x1", (3,)),
                          Input("x2", (2,)), Input("h2", (2, 3), kind="constant"), Input("h3", (2, 3))),
             loops=(Loop(sequences=(Seq(("v", "x0"), (0,), True),),
                         outputs=(Out("mit", ("add", ("v", "s0@0"), ("sum", ("v", "o1@-1"))), (), F, ("v", "h0"),
                                      (-2, -1)),
                                  Out("sit", ("maximum", ("v", "o1@-1"), ("sub", ("mul", ("c", -0.5),
                                                                                  ("cvec", (0.5, 0.2, -0.1))),
                                                                           ("neg", ("v", "s0@0")))),
                                      (3,), F, ("v", "h1"), (-1,))),
                         until=("gt", ("minimum", ("v", "s0@0"), ("v", "s0@0")), ("c", 0.0)), return_list=False),
                    Loop(sequences=(Seq(("v", "x1"), (0,)), Seq(("v", "x2"), (0,)), Seq(("loop", 0, 0), (-1,), True),
                                    Seq(("loop", 0, 0), (0,))),
                         outputs=(Out("mit", ("tanh", ("sin", ("v", "o0@-2"))), (3,), F, ("v", "h2"), (-2, -1)),
                                  Out("mit", ("add", ("add", ("v", "o2@-1"), ("v", "s1@0")),
                                              ("add", ("v", "o0@-2"), ("v", "o0@-2"))), (3,), F, ("v", "h3"),
                                      (-1, -2), True),
                                  Out("mit", ("tanh", ("v", "o0@-2")), (3,), F, ("v", "h3"), (-1, -2), True)),
                         return_list=False)),
             reads=(("loop", 0, 0), ("last", ("loop", 0, 1)), ("tail", ("loop", 1, 0), 2), ("last", ("loop", 1, 2))),
             seed=65536), None),
    ("onnxruntime: a one-step loop's gradient over a sequence too short fails in Gather, not the length check",
     Program(d=3, inputs=(Input("w0", (3,)), Input("x0", (1,)), Input("h0", (2,), static=True),
                          Input("h1", (3,), kind="constant"), Input("w1", (), kind="constant"), Input("x1", (3,)),
                          Input("x2", (2,)), Input("h2", (2, 3), kind="constant"), Input("h3", (2, 3))),
             loops=(Loop(sequences=(Seq(("v", "x0"), (-1, 0)),),
                         outputs=(Out("mit", ("add", ("v", "o0@-2"), ("sum", ("v", "o1@-1"))), (), F, ("v", "h0"),
                                      (-2, -1)),
                                  Out("sit", ("add", ("v", "o1@-1"), ("add", ("mul", ("c", 0.5),
                                                                              ("cvec", (0.5, 0.2, -0.1))),
                                                                       ("tanh", ("v", "w0")))),
                                      (3,), F, ("v", "h1"), (-1,))),
                         n_steps=("const", -1), until=("gt", ("minimum", ("v", "s0@-1"), ("v", "s0@-1")), ("c", 0.0)),
                         return_list=False),
                    Loop(sequences=(Seq(("v", "x1"), (0,)), Seq(("v", "x2"), (0,)), Seq(("loop", 0, 0), (-1,), True),
                                    Seq(("loop", 0, 0), (0,))),
                         outputs=(Out("mit", ("tanh", ("sin", ("v", "o0@-2"))), (3,), F, ("v", "h2"), (-2, -1)),
                                  Out("mit", ("add", ("add", ("v", "o2@-1"), ("v", "s1@0")),
                                              ("add", ("v", "o0@-2"), ("v", "o0@-2"))), (3,), F, ("v", "h3"),
                                      (-1, -2), True),
                                  Out("mit", ("tanh", ("v", "o0@-2")), (3,), F, ("v", "h3"), (-1, -2), True)),
                         return_list=False)),
             reads=(("loop", 0, 0), ("last", ("loop", 0, 1)), ("tail", ("loop", 1, 0), 2), ("last", ("loop", 1, 2))),
             seed=65536), "onnx-gather-error-first"),
    # ------------------------------------------------------------------ library bugs, fixed
    # the gradient of a one-step scan (unrolled by grad) hung the loop's checks on a value a
    # canonicalize rule dropped (second(a, b) -> b); the rules now hang the checks they would
    # drop on what they keep (rewrites/scan_utils.py, checks_dropped_with);
    # repros/grad_unrolled_scan_drops_length_check.py
    ("fast, onnxruntime: gradient of a one-step scan over an int sequence too short for taps [0, 1] returned a value",
     Program(d=1, inputs=(Input("x", (1,), "int64"), Input("h", ())),
             loops=(Loop(sequences=(Seq(("v", "x"), (0, 1)),),
                         outputs=(Out("sit", ("add", ("v", "o0@-1"), ("mul", ("v", "s0@0"), ("v", "s0@1"))), (), F,
                                      ("v", "h"), (-1,)),), n_steps=("const", 1)),),
             reads=(("loop", 0, 0),)), None),
    ("fast: gradient of a one-step mit-sot (taps -2) with one initial row returned a value (fuzz seed 640)",
     Program(d=1, inputs=(Input("h", (1,)), Input("w", (1,))),
             loops=(Loop(outputs=(Out("mit", ("mul", ("c", 0.9), ("sum", ("mul", ("c", -0.8), ("v", "w")))), (), F,
                                      ("v", "h"), (-2,)),), non_seqs=("w",), n_steps=("const", -1)),),
             reads=(("loop", 0, 0),)), None),
    # maximum/minimum's pullback masked with eq(saved output, recomputed operand): where the
    # backward loop recomputed the operand with other rounding the gradient was lost (fixed in
    # symscan/gradient/ops/elemwise.py: ge(x, y)); repros/grad_maximum_recomputed_operand.py
    ("fast: maximum(dot(W, s[t-2]), -5) with s a mit-sot: push_out recomputed the dot, the maximum's mask missed",
     Program(d=3, inputs=(Input("w", (3,), value=(1.0, 0.3, -0.53)), Input("h", (2, 3)),
                          Input("W", (3, 3), value=((0.61, 0.62, 0.03), (-0.43, -0.89, -0.23), (-0.18, -0.91, -0.9)))),
             loops=(Loop(outputs=(Out("nit", ("maximum", ("dot", ("v", "W"), ("v", "o1@-2")), ("c", -5.0)), (3,), F),
                                  Out("mit", ("v", "w"), (3,), F, ("v", "h"), (-2,))), n_steps=("const", 4)),),
             reads=(("loop", 0, 0),)), None),
    ("onnxruntime: maximum(tanh(x[t]), x[t-1]), symbolic n_steps: the recomputed tanh rounded otherwise",
     Program(d=1, inputs=(Input("x", (5,), value=(0.9, 0.7, -0.3, 0.2, 0.8)), Input("n", (), "int32", value=4)),
             loops=(Loop(sequences=(Seq(("v", "x"), (-1, 0)),),
                         outputs=(Out("nit", ("maximum", ("tanh", ("v", "s0@0")), ("v", "s0@-1")), (), F),),
                         n_steps=("sym", "n")),),
             reads=(("loop", 0, 0),)), None),
    ("onnxruntime: gradient of a mit-sot (taps -2) whose static 3-row initial value: ORT's constant folding broke it",
     Program(d=1, inputs=(Input("h", (3,), static=True),),
             loops=(Loop(outputs=(Out("mit", ("mul", ("c", 0.5), ("v", "o0@-2")), (), F, ("v", "h"), (-2,)),),
                         n_steps=("const", 2)),),
             reads=(("loop", 0, 0),)), None),
    # grad now asks every op the cost reaches, through integer outputs too (a discrete random
    # draw is undefined); a loop with an integer state runs its body's pullback once more
    # (symscan/gradient/ops/scan.py, _undefined_beyond_the_reverse_loop). Draws are beyond the
    # fuzzer; this checks that the integer state still gives exact float gradients.
    ("grad: a float state reads an integer state (a count of positive steps) through a cast",
     Program(d=1, inputs=(Input("k", (), "int64", value=1), Input("h", ()), Input("w", ())),
             loops=(Loop(outputs=(Out("sit", ("add", ("v", "o0@-1"),
                                                 ("cast", ("gt", ("v", "o1@-1"), ("c", 0.0)), "int64")),
                                      (), "int64", ("v", "k"), (-1,)),
                                  Out("sit", ("add", ("tanh", ("v", "o1@-1")),
                                                 ("mul", ("v", "w"), ("cast", ("v", "o0@-1"), F))),
                                      (), F, ("v", "h"), (-1,))), n_steps=("const", 4)),),
             reads=(("loop", 0, 1), ("loop", 0, 0)), seed=7), None),
    # the fuzzer's own rule, not the library: a program with two errors may show either first
    ("reference: a too-short sequence and [-1] of an empty output in one loop; onnxruntime's gradient met "
     "the [-1] first (its own error) and the reference had noted only the sequence's",
     Program(d=2, inputs=(Input("w0", (2,)), Input("n0", (), "int64", value=0), Input("n1", (), "int32", static=True,
                                                                                      value=1)),
             loops=(Loop(outputs=(Out("nit", ("mul", ("c", 0.25), ("v", "w0")), (2,), F),), n_steps=("sym", "n0")),
                    Loop(sequences=(Seq(("loop", 0, 0), (2, 0, -1)),),
                         outputs=(Out("sit", ("sin", ("v", "s0@2")), (2,), F, ("last", ("loop", 0, 0)), (-1,)),),
                         n_steps=("sym", "n1"))),
             reads=(("loop", 0, 0), ("loop", 1, 0))), None),
    # the reverse loop's carry starting at the last step's cotangent checked that a step ran
    # with an Assert's ValueError; x[-1] of an empty x raises IndexError (Assert(error=IndexError))
    ("fast, numba: gradient of out[-1] where the loop ran no steps raised ValueError, the forward IndexError "
     "(fuzz seed 66)",
     Program(d=1, inputs=(Input("x", (1,)), Input("h", ())),
             loops=(Loop(sequences=(Seq(("v", "x"), (-1,)),),
                         outputs=(Out("sit", ("mul", ("c", 0.9), ("v", "o0@-1")), (), F, ("v", "h"), (-1,)),)),),
             reads=(("last", ("loop", 0, 0)),)), "onnx-gather-error-first"),
    # ------------------------------------------------------------------ open library bugs: the entries above
    # that name one of KNOWN_BUGS (strict xfail)
]
