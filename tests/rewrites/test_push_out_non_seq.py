"""push_out_non_seq: computation that reads only non-sequences runs once, before the loop.

Each test compiles with ``rewrites=["push_out_non_seq"]`` alone, checks the loop body lost
the invariant nodes and gained non-sequences, the report, and the numbers against mode "py".
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symscan as ss
import symscan.tensor as T
from symscan.graph import Constant
from symscan.graph.traversal import ancestors
from symscan.tensor.elemwise import Elemwise
from symscan.tensor.math import Dot, Reduce
from symscan.tensor.shape import DimShuffle

RULE = ["push_out_non_seq"]


def _elemwise(scan_rw, node, name):
    return [n for n in scan_rw.nodes(node, Elemwise) if n.op.name == name]


def _pushed(args):
    return [n for n in args.non_seqs if n.label.startswith("pushed")]


def _rnn():
    X, W, b, h0 = T.matrix("X"), T.matrix("W"), T.vector("b"), T.vector("h0")
    out, _ = ss.scan(lambda x, h, W, b: T.tanh(T.dot(x, W.T) + T.dot(h, W * 2) + T.exp(b)),
                     sequences=X, outputs_info=h0, non_sequences=[W, b])
    return [X, W, b, h0], out


def _rnn_values(rng, n):
    return [rng.normal(size=(n, 3)), rng.normal(size=(3, 3)) * 0.5, rng.normal(size=3), rng.normal(size=3)]


def test_transpose_scale_and_exp_of_non_sequences_move_before_the_loop(scan_rw, rng):
    inputs, out = _rnn()
    f = scan_rw.check(inputs, out, RULE, *[_rnn_values(rng, n) for n in (0, 1, 2, 7)])
    node, args = scan_rw.only_scan(f)
    assert scan_rw.nodes(node, DimShuffle) == []
    assert _elemwise(scan_rw, node, "exp") == [] and _elemwise(scan_rw, node, "mul") == []
    assert len(scan_rw.nodes(node, Dot)) == 2  # the products read x_t and h: they stay
    assert len(args.non_seqs) == 5 and len(_pushed(args)) == 3  # W, b and the three pushed values
    W, b = f.fgraph.inputs[1:3]
    pushed_owners = {type(n.outer.owner.op) for n in _pushed(args)}
    assert pushed_owners == {DimShuffle, Elemwise}
    assert all(set(ancestors([n.outer])) & {W, b} for n in _pushed(args))
    # the pushed values enter the products in the body
    dot_inputs = {v for d in scan_rw.nodes(node, Dot) for v in d.inputs}
    assert {n.inner for n in _pushed(args)} & dot_inputs
    (record,) = scan_rw.records(f, "push_out_non_seq")
    assert all(op in record.detail for op in ("DimShuffle{1,0}", "Elemwise{mul}", "Elemwise{exp}"))


def test_a_second_pass_finds_nothing_more(scan_rw, rng):
    """The engine runs to a fixed point: the rewritten loop has nothing left to move."""
    inputs, out = _rnn()
    f = scan_rw.compile(inputs, out, RULE)
    assert len(scan_rw.records(f, "push_out_non_seq")) == 1


def test_constant_only_computation_is_left_alone(scan_rw, rng):
    h0 = T.vector("h0")
    out, _ = ss.scan(lambda h: h * (T.constant(2.0) * T.constant(3.0)) + T.exp(T.constant(1.0)),
                     outputs_info=h0, n_steps=4)
    f = scan_rw.check([h0], out, RULE, [rng.normal(size=3)])
    node, args = scan_rw.only_scan(f)
    assert args.non_seqs == [] and len(_elemwise(scan_rw, node, "exp")) == 1
    assert not scan_rw.records(f, "push_out_non_seq")


def test_a_non_sequence_mixed_with_a_constant_moves_together(scan_rw, rng):
    W, h0 = T.matrix("W"), T.vector("h0")
    out, _ = ss.scan(lambda h, W: T.dot(h, W * (T.constant(0.5) + T.constant(0.25))), outputs_info=h0,
                     non_sequences=W, n_steps=3)
    f = scan_rw.check([h0, W], out, RULE, [rng.normal(size=3), rng.normal(size=(3, 3))])
    node, args = scan_rw.only_scan(f)
    assert scan_rw.nodes(node, Elemwise) == [] and len(_pushed(args)) == 1


def test_only_the_invariant_part_of_a_mixed_expression_moves(scan_rw, rng):
    X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")
    out, _ = ss.scan(lambda x, h, W: h + T.dot(x, T.exp(W)).sum() * x, sequences=X, outputs_info=h0,
                     non_sequences=W)
    f = scan_rw.check([X, W, h0], out, RULE, [rng.normal(size=(4, 3)), rng.normal(size=(3, 3)), rng.normal(size=3)])
    node, args = scan_rw.only_scan(f)
    assert _elemwise(scan_rw, node, "exp") == []
    assert len(scan_rw.nodes(node, Dot)) == 1 and len(scan_rw.nodes(node, Reduce)) == 1
    (pushed,) = _pushed(args)
    assert pushed.outer.owner.op.name == "exp"


@pytest.mark.parametrize("n", [0, 2, -3, 5])
def test_symbolic_n_steps_of_any_sign(scan_rw, rng, n):
    W, h0, k = T.matrix("W"), T.vector("h0"), T.lscalar("k")
    out, _ = ss.scan(lambda h, W: h * 0.5 + W.sum(axis=0), outputs_info=h0, non_sequences=W, n_steps=k)
    f = scan_rw.check([h0, W, k], out, RULE, [rng.normal(size=3), rng.normal(size=(2, 3)), n])
    node, args = scan_rw.only_scan(f)
    assert scan_rw.nodes(node, Reduce) == [] and len(_pushed(args)) == 1


def test_implicit_and_shared_non_sequences_move_out(scan_rw, rng):
    b, h0 = T.vector("b"), T.vector("h0")
    W = ss.shared(rng.normal(size=(3, 3)), name="W")
    out, _ = ss.scan(lambda h: T.dot(h, W.T) * 0.5 + T.exp(b).sum(), outputs_info=h0, n_steps=4)
    f = scan_rw.check([b, h0], out, RULE, [rng.normal(size=3), rng.normal(size=3)])
    node, args = scan_rw.only_scan(f)
    assert scan_rw.nodes(node, DimShuffle) == [] and _elemwise(scan_rw, node, "exp") == []
    assert len(_pushed(args)) == 2


def test_an_until_condition_on_non_sequences_moves_out(scan_rw, rng):
    b, h0 = T.vector("b"), T.vector("h0")
    out, _ = ss.scan(lambda h, b: (h * 0.5, ss.until(b.sum() > 0)), outputs_info=h0, non_sequences=b, n_steps=5)
    f = scan_rw.check([b, h0], out, RULE, [np.ones(3), np.ones(3)], [-np.ones(3), np.ones(3)])
    node, args = scan_rw.only_scan(f)
    assert args.until in {n.inner for n in _pushed(args)}
    assert f(np.ones(3), np.ones(3)).shape == (1, 3) and f(-np.ones(3), np.ones(3)).shape == (5, 3)


def test_random_draws_are_not_moved(scan_rw, rng):
    b, h0 = T.vector("b"), T.vector("h0")
    values = [rng.normal(size=3), rng.normal(size=3)]
    results = []
    for mode in ("py", "fast"):  # each graph with its own generator, seeded alike
        srng = ss.RandomStream(11)

        def step(h, b, srng=srng):
            return h + srng.normal(size=(3,)) * b.sum()

        out, updates = ss.scan(step, outputs_info=h0, non_sequences=b, n_steps=3)
        f = ss.function([b, h0], out, updates=updates, mode=mode, rewrites=RULE if mode == "fast" else None)
        results.append(f(*values))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)
    node, args = scan_rw.only_scan(f)
    assert len([n for n in node.op.inner.apply_nodes if type(n.op).__name__ == "RandomVariable"]) == 1
    assert [n.outer.owner.op for n in _pushed(args)] == [Reduce("sum", None, False)]


def test_nested_scans_move_out_of_both_loops(scan_rw, rng):
    A, W, h0 = T.tensor3("A"), T.matrix("W"), T.vector("h0")

    def outer_step(X_t, h, W):
        H, _ = ss.scan(lambda x, hh, W: T.tanh(T.dot(x, W.T * 2) + hh), sequences=X_t, outputs_info=h,
                       non_sequences=W)
        return H[-1]

    out, _ = ss.scan(outer_step, sequences=A, outputs_info=h0, non_sequences=W)
    f = scan_rw.check([A, W, h0], out, RULE, *[[rng.normal(size=(n, 4, 3)), rng.normal(size=(3, 3)) * 0.5,
                                                 rng.normal(size=3)] for n in (0, 1, 3)])
    node, args = scan_rw.only_scan(f)
    (inner_scan,) = [n for n in node.op.inner.apply_nodes if hasattr(n.op, "info")]
    assert scan_rw.nodes(inner_scan, DimShuffle) == [] and _elemwise(scan_rw, inner_scan, "mul") == []
    assert scan_rw.nodes(node, DimShuffle) == []  # ... and out of the outer body too
    assert [type(n.outer.owner.op) for n in _pushed(args)] == [Elemwise]
    assert len(scan_rw.nodes(f, DimShuffle)) == 1
    where = sorted(r.node for r in scan_rw.records(f, "push_out_non_seq"))
    assert len(where) == 2 and where[1].startswith("scan > ")


def test_an_invariant_nit_sot_output_is_computed_once(scan_rw, rng):
    X, W = T.matrix("X"), T.matrix("W")
    out, _ = ss.scan(lambda x, W: (x * 0).sum() + W * 2, sequences=X, non_sequences=W)
    f = scan_rw.check([X, W], out, RULE, [rng.normal(size=(3, 2)), rng.normal(size=(2, 2))])
    node, args = scan_rw.only_scan(f)
    assert len(_pushed(args)) == 1 and len(_elemwise(scan_rw, node, "mul")) == 1  # only x * 0


def test_constants_stay_constants_in_the_pushed_graph(scan_rw, rng):
    W, h0 = T.matrix("W"), T.vector("h0")
    out, _ = ss.scan(lambda h, W: h + (W ** 2).sum(axis=1), outputs_info=h0, non_sequences=W, n_steps=3)
    f = scan_rw.check([h0, W], out, RULE, [rng.normal(size=3), rng.normal(size=(3, 3))])
    node, args = scan_rw.only_scan(f)
    (pushed,) = _pushed(args)
    assert any(isinstance(v, Constant) for v in ancestors([pushed.outer]))
    assert scan_rw.nodes(node, Reduce) == []


# ---------------------------------------------------------------------------- property
_INVARIANT_OPS = [lambda w: w.T, lambda w: w * 2.0, T.exp, T.tanh, lambda w: w - w.mean(axis=0)]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chain=st.lists(st.sampled_from(range(len(_INVARIANT_OPS))), min_size=1, max_size=3),
       n_steps=st.integers(0, 4), go_backwards=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_property_any_invariant_chain_moves_out(scan_rw, chain, n_steps, go_backwards, seed):
    rng = np.random.default_rng(seed)
    X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")

    def step(x, h, W):
        for i in chain:
            W = _INVARIANT_OPS[i](W)
        return T.tanh(T.dot(h, W) * 0.5 + x)

    out, _ = ss.scan(step, sequences=X, outputs_info=h0, non_sequences=W, go_backwards=go_backwards)
    f = scan_rw.check([X, W, h0], out, RULE, [rng.normal(size=(n_steps, 3)), rng.normal(size=(3, 3)),
                                              rng.normal(size=3)])
    node, args = scan_rw.only_scan(f)
    assert len(_pushed(args)) == 1 and scan_rw.nodes(node, DimShuffle) == []
    assert {n.op.name for n in scan_rw.nodes(node, Elemwise)} == {"mul", "add", "tanh"}


def test_a_loop_that_runs_no_step_still_computes_what_was_hoisted_out_of_it():
    """The one documented exception to "rewrites keep mode py's results and errors" (README,
    Rewrites; Theano and PyTensor do the same): hoisted work runs before the loop even when
    the loop runs no step, so inputs that do not fit together fail although no step reads them."""
    W, U, h0, n = T.matrix("W"), T.matrix("U"), T.vector("h0"), T.iscalar("n")
    out, _ = ss.scan(lambda h, W, U: T.tanh(T.dot(h, T.dot(W, U))), outputs_info=h0, non_sequences=[W, U], n_steps=n)
    values = [np.ones((3, 4)), np.ones((5, 3)), np.ones(3)]
    py, fast = (ss.function([W, U, h0, n], out, mode=mode) for mode in ("py", "fast"))
    assert py(*values, 0).shape == (0, 3)
    with pytest.raises(ValueError):
        fast(*values, 0)
    for f in (py, fast):  # with a step, both fail alike
        with pytest.raises(ValueError):
            f(*values, 1)
