"""FunctionGraph: cloning, client bookkeeping, replace, pruning, missing inputs, check()."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.graph import OUTPUT, FunctionGraph, MissingInputError, TensorType, toposort
from symscan.graph.basic import Apply, Op


def _fg(clone=True):
    x, y = T.vector("x"), T.vector("y")
    a = x + y
    b = T.exp(a)
    c = b * a
    return x, y, a, b, c, FunctionGraph([x, y], [c, a], clone=clone)


def _assert_clients_consistent(fg):
    """clients holds exactly the (reader, position) pairs of the graph, and nothing stale."""
    expected = {v: [] for v in fg.inputs}
    for node in fg.toposort():
        for position, inp in enumerate(node.inputs):
            expected.setdefault(inp, []).append((node, position))
        for out in node.outputs:
            expected.setdefault(out, [])
    for position, out in enumerate(fg.outputs):
        expected.setdefault(out, []).append((OUTPUT, position))
    assert {v: sorted(map(repr, c)) for v, c in fg.clients.items()} == \
        {v: sorted(map(repr, c)) for v, c in expected.items()}
    assert set(fg.apply_nodes) == set(fg.toposort())


# ---------------------------------------------------------------------------- building
def test_clone_true_copies_the_graph_and_memo_maps_originals():
    x, y, a, b, c, fg = _fg()
    assert fg.inputs == [fg.memo[x], fg.memo[y]]
    assert fg.inputs[0] is not x
    assert fg.outputs == [fg.memo[c], fg.memo[a]]
    assert not set(fg.apply_nodes) & {a.owner, b.owner, c.owner}
    assert len(fg.apply_nodes) == 3


def test_clone_false_uses_the_variables_themselves():
    x, y, a, b, c, fg = _fg(clone=False)
    assert fg.inputs == [x, y] and fg.outputs == [c, a]
    assert set(fg.apply_nodes) == {a.owner, b.owner, c.owner}
    assert fg.memo == {}


def test_clients_bookkeeping():
    x, y, a, b, c, fg = _fg(clone=False)
    assert fg.clients[x] == [(a.owner, 0)]
    assert fg.clients[y] == [(a.owner, 1)]
    assert sorted(map(repr, fg.clients[a])) == sorted(map(repr, [(b.owner, 0), (c.owner, 1), (OUTPUT, 1)]))
    assert fg.clients[c] == [(OUTPUT, 0)]
    assert set(fg.readers(a)) == {b.owner, c.owner} and len(fg.readers(a)) == 2
    assert OUTPUT not in fg.readers(a)
    assert fg.readers(c) == []
    _assert_clients_consistent(fg)


def test_unused_input_is_tracked_with_no_clients():
    x, y = T.vector("x"), T.vector("y")
    fg = FunctionGraph([x, y], [T.exp(x)])
    assert fg.clients[fg.inputs[1]] == []
    assert fg.variables[:2] == fg.inputs


def test_toposort_is_topological():
    x, y, a, b, c, fg = _fg()
    order = fg.toposort()
    assert order == toposort(fg.outputs)
    assert len(order) == 3


def test_missing_input_error_names_the_variable():
    x, y = T.vector("x"), T.vector("hidden")
    with pytest.raises(MissingInputError, match="'hidden'"):
        FunctionGraph([x], [x + y])
    assert issubclass(MissingInputError, ValueError)
    assert ss.MissingInputError is MissingInputError


def test_missing_output_root_is_an_error():
    with pytest.raises(MissingInputError, match="'lonely'"):
        FunctionGraph([], [T.vector("lonely")])


def test_constants_and_shared_variables_need_not_be_inputs():
    x = T.vector("x")
    s = ss.shared(np.ones(2), name="s")
    k = T.constant(3.0)
    fg = FunctionGraph([x], [x * k + s])
    assert fg.shared_variables == [s]
    assert k in fg.clients and s in fg.clients


def test_clone_false_rejects_non_root_inputs():
    x = T.vector("x")
    y = T.exp(x)
    with pytest.raises(ValueError, match="inputs must be root variables"):
        FunctionGraph([y], [y * 2.0], clone=False)


def test_clone_true_cuts_the_graph_at_non_root_inputs():
    x = T.vector("x")
    y = T.exp(x)
    fg = FunctionGraph([y], [T.sin(y)])
    assert fg.inputs[0].owner is None
    assert len(fg.apply_nodes) == 1


def test_duplicate_outputs_get_one_client_record_each():
    x = T.vector("x")
    y = T.exp(x)
    fg = FunctionGraph([x], [y, y])
    assert fg.outputs[0] is fg.outputs[1]
    assert sorted(fg.clients[fg.outputs[0]]) == [(OUTPUT, 0), (OUTPUT, 1)]


# ---------------------------------------------------------------------------- replace
def test_replace_rewires_every_reader_and_output():
    x, y, a, b, c, fg = _fg(clone=False)
    new = x - y
    fg.replace(a, new, reason="test")
    assert b.owner.inputs == [new] and c.owner.inputs[1] is new
    assert fg.outputs[1] is new
    assert a not in fg.clients
    assert a.owner not in fg.apply_nodes
    assert new.owner in fg.apply_nodes
    _assert_clients_consistent(fg)
    fg.check()


def test_replace_prunes_nodes_that_become_unused():
    x, y = T.vector("x"), T.vector("y")
    e = T.exp(x + y)
    out = T.sin(e)
    fg = FunctionGraph([x, y], [out], clone=False)
    assert len(fg.apply_nodes) == 3
    fg.replace(out, T.cos(x))
    assert len(fg.apply_nodes) == 1
    assert e not in fg.clients and e.owner.inputs[0] not in fg.clients
    assert fg.clients[y] == []  # inputs stay, without readers
    assert y in fg.clients
    _assert_clients_consistent(fg)


class _TwoOutputs(Op):
    """A node with two outputs (a loop has one per output)."""

    def make_node(self, x):
        return Apply(self, [x], [x.type, x.type])

    def perform(self, node, inputs):
        return [inputs[0], inputs[0]]


def test_replacing_an_output_nobody_reads_brings_in_no_dead_nodes():
    """A rewrite may map every output of a node, read or not (a rebuilt loop); the new
    producer of an unread output must not stay in the graph unreachable (found by the fuzzer)."""
    x = T.vector("x")
    node = _TwoOutputs().make_node(x)
    fg2 = FunctionGraph([x], [node.outputs[0]], clone=False)
    fg2.replace_all([(node.outputs[0], T.exp(x)), (node.outputs[1], T.cos(x) * 2)])
    assert {str(n.op) for n in fg2.apply_nodes} == {"Elemwise{exp}"}
    fg2.check()
    _assert_clients_consistent(fg2)


def test_replace_prunes_orphaned_constants_but_keeps_shared_nodes():
    x = T.vector("x")
    k = T.constant(5.0)
    shared_part = T.exp(x)
    out = shared_part * k + shared_part
    fg = FunctionGraph([x], [out], clone=False)
    mul = out.owner.inputs[0]
    fg.replace(mul, shared_part)
    assert k not in fg.clients
    assert shared_part.owner in fg.apply_nodes
    _assert_clients_consistent(fg)


def test_replace_keeps_numbers_consistent(mode):
    x, y = T.vector("x"), T.vector("y")
    fg = FunctionGraph([x, y], [T.exp(x + y) * 2.0])
    fx, fy = fg.inputs
    fg.replace(fg.outputs[0].owner.inputs[0], T.exp(fx - fy))
    f = ss.function(fg.inputs, fg.outputs[0], mode=mode)
    xv, yv = np.array([1.0, 2.0]), np.array([0.5, 0.25])
    np.testing.assert_allclose(f(xv, yv), np.exp(xv - yv) * 2.0)


def test_replace_by_itself_is_a_no_op():
    x, y, a, b, c, fg = _fg(clone=False)
    fg.replace(a, a)
    _assert_clients_consistent(fg)
    assert len(fg.apply_nodes) == 3


def test_replace_with_conflicting_type_is_a_type_error():
    x, y, a, b, c, fg = _fg(clone=False)
    with pytest.raises(TypeError, match="myreason.*types differ"):
        fg.replace(a, T.ivector("i"), reason="myreason")
    with pytest.raises(TypeError):
        fg.replace(a, T.matrix("m"))
    _assert_clients_consistent(fg)


def test_replace_with_a_more_specific_type_is_allowed():
    x, y, a, b, c, fg = _fg(clone=False)
    fixed = T.tensor("float64", (3,), name="fixed")
    fg2 = FunctionGraph([x, y, fixed], [c, a], clone=False)
    fg2.replace(a, fixed * 1.0)
    assert fg2.outputs[1].type == TensorType("float64", (3,))
    _assert_clients_consistent(fg2)


def test_replace_with_a_missing_input_leaves_the_graph_unchanged():
    x = T.vector("x")
    fg = FunctionGraph([x], [T.exp(x)])
    before = (set(fg.apply_nodes), list(fg.outputs), {v: list(c) for v, c in fg.clients.items()})
    outsider = T.vector("outsider")
    with pytest.raises(MissingInputError, match="'outsider'"):
        fg.replace(fg.outputs[0], T.sin(fg.inputs[0]) + T.exp(outsider))
    assert (set(fg.apply_nodes), list(fg.outputs), {v: list(c) for v, c in fg.clients.items()}) == before
    fg.check()


def test_replace_all_applies_every_pair():
    x, y, a, b, c, fg = _fg(clone=False)
    p, q = T.exp(x), T.sin(y)
    fg.replace_all([(c, p), (a, q)])
    assert fg.outputs == [p, q]
    assert len(fg.apply_nodes) == 2
    _assert_clients_consistent(fg)


def test_replace_an_input_variable():
    x, y, a, b, c, fg = _fg(clone=False)
    fg.replace(y, x)
    assert a.owner.inputs == [x, x]
    assert fg.clients[y] == [] and y in fg.inputs
    _assert_clients_consistent(fg)


def test_replaced_roots_are_forgotten():
    x = T.vector("x")
    s = ss.shared(np.ones(2), name="s")
    k = T.constant(np.array([2.0, 3.0]))
    fg = FunctionGraph([x], [x * s + s])
    assert fg.shared_variables == [s]
    fg.replace(s, k)
    assert fg.shared_variables == [] and s not in fg.clients
    assert len(fg.clients[k]) == 2
    _assert_clients_consistent(fg)


def test_add_output_imports_new_nodes():
    x, y, a, b, c, fg = _fg(clone=False)
    extra = T.cos(b)
    fg.add_output(extra)
    assert fg.outputs[-1] is extra
    assert extra.owner in fg.apply_nodes
    assert fg.clients[extra] == [(OUTPUT, 2)]
    _assert_clients_consistent(fg)


# ---------------------------------------------------------------------------- clone / check
def test_clone_is_independent():
    x, y, a, b, c, fg = _fg()
    copy = fg.clone()
    assert copy.inputs != fg.inputs and not set(copy.apply_nodes) & set(fg.apply_nodes)
    copy.replace(copy.outputs[0], T.exp(copy.inputs[0]))
    assert len(copy.apply_nodes) == 2
    assert len(fg.apply_nodes) == 3
    fg.check()
    copy.check()
    assert [n.op for n in fg.toposort()] == [a.owner.op, b.owner.op, c.owner.op]


def test_check_catches_broken_bookkeeping():
    x, y, a, b, c, fg = _fg(clone=False)
    fg.check()
    fg.clients[a].remove((b.owner, 0))
    with pytest.raises(AssertionError, match="client"):
        fg.check()


def test_check_catches_unreachable_nodes():
    x, y, a, b, c, fg = _fg(clone=False)
    stray = Apply(b.owner.op, [x], [x.type])
    fg.apply_nodes[stray] = None
    with pytest.raises(AssertionError, match="apply_nodes"):
        fg.check()


def test_check_catches_missing_output_records():
    x, y, a, b, c, fg = _fg(clone=False)
    fg.clients[c].clear()
    with pytest.raises(AssertionError, match="output"):
        fg.check()


def test_repr_mentions_node_count():
    x, y, a, b, c, fg = _fg()
    assert "3 nodes" in repr(fg)


def test_nodes_a_replacement_brings_in_keep_the_user_line_of_what_they_replace():
    from symscan.graph.basic import compiling

    x = T.vector("x")
    y = T.exp(x) * 2.0
    line = y.owner.tag["built_at"]
    assert line[0] == __file__
    fg = FunctionGraph([x], [y], clone=False)
    with compiling():  # as a rewrite does: the compiler's own nodes record no line
        new = T.log(T.exp(x) + 1.0)
    assert all("built_at" not in n.tag for n in toposort([new]))
    fg.replace(fg.outputs[0], new)
    assert {n.tag.get("built_at") for n in toposort([new])} == {line}
