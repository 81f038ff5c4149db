"""ss.ifelse: values against numpy, laziness (a branch that would fail is not run), the
branch graphs it builds, and its errors. Modes py and fast here; other modes have their own
files."""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.scan.ifelse import IfElse
from symscan.tensor.assertion import assert_that

MODES = ["py", "fast"]


def _ifelse_nodes(fn):
    return [n for n in fn.fgraph.toposort() if isinstance(n.op, IfElse)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("c", [2.0, 0.0, -1.0])
def test_values_match_python_conditional(mode, c):
    x, cond = T.vector("x"), T.scalar("c")
    out = ss.ifelse(cond, T.exp(x).sum() * 2, T.sum(x ** 2))
    fn = ss.function([cond, x], out, mode=mode)
    v = np.array([0.5, -1.0, 2.0])
    expected = np.exp(v).sum() * 2 if c else np.sum(v ** 2)
    np.testing.assert_allclose(fn(c, v), expected)


@pytest.mark.parametrize("mode", MODES)
def test_the_branch_not_taken_is_not_run(mode):
    y = T.vector("y")
    needs_three = T.dot(T.ones((3,)), y)  # a shape error unless len(y) == 3
    out = ss.ifelse(T.eq(y.shape[0], 3), needs_three, y.sum())
    fn = ss.function([y], out, mode=mode)
    assert fn(np.arange(3.0)) == 3.0
    assert fn(np.arange(5.0)) == 10.0  # the dot would raise
    eager = ss.function([y], T.switch(T.eq(y.shape[0], 3), needs_three, y.sum()), mode=mode)
    with pytest.raises(ValueError):
        eager(np.arange(5.0))


@pytest.mark.parametrize("mode", MODES)
def test_lazy_inside_a_loop_body(mode):
    xs = T.vector("xs")

    def step(v, acc):
        must_be_positive = T.log(assert_that(v, v > 0, message="v must be positive"))
        return ss.ifelse(v > 0, acc + must_be_positive, acc - 1.0)

    out, _ = ss.scan(step, sequences=xs, outputs_info=T.constant(0.0))
    fn = ss.function([xs], out, mode=mode)
    values = np.array([1.0, -2.0, 3.0, 0.0])
    acc, expected = 0.0, []
    for v in values:
        acc = acc + np.log(v) if v > 0 else acc - 1.0
        expected.append(acc)
    np.testing.assert_allclose(fn(values), expected)


@pytest.mark.parametrize("mode", MODES)
def test_lists_give_lists_and_tuples_give_tuples(mode):
    x, cond = T.vector("x"), T.scalar("c")
    as_list = ss.ifelse(cond, [x, x * 2], [x * 3, x + x.sum()])
    as_tuple = ss.ifelse(cond, (x,), (x * 3,))
    assert isinstance(as_list, list) and len(as_list) == 2 and isinstance(as_tuple, tuple)
    fn = ss.function([cond, x], as_list + list(as_tuple), mode=mode)
    v = np.array([1.0, 2.0])
    for c in (0.0, 1.0):
        got = fn(c, v)
        want = [v, v * 2, v] if c else [v * 3, v + v.sum(), v * 3]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w)


@pytest.mark.parametrize("mode", MODES)
def test_nested_ifelse(mode):
    a, b = T.scalar("a"), T.scalar("b")
    inner = ss.ifelse(b > 0, T.sqrt(b), -b)
    out = ss.ifelse(a > 0, inner * a, T.log(-a))
    fn = ss.function([a, b], out, mode=mode)
    for av, bv in [(2.0, 4.0), (2.0, -3.0), (-1.0, 4.0), (-np.e, -1.0)]:
        want = (np.sqrt(bv) if bv > 0 else -bv) * av if av > 0 else np.log(-av)
        np.testing.assert_allclose(fn(av, bv), want)


def test_a_number_takes_the_other_branchs_dtype():
    x = T.scalar("x", dtype="float32")
    out = ss.ifelse(x > 0, x, 0)
    assert out.type.dtype == "float32"
    assert ss.function([x], out)(np.float32(-2)).dtype == np.float32


def test_static_lengths_kept_only_where_branches_agree():
    a = T.tensor("float64", shape=(3, 4), name="a")
    b = T.tensor("float64", shape=(3, None), name="b")
    out = ss.ifelse(T.scalar("c"), a, b)
    assert out.type.shape == (3, None)


def test_branch_graphs_hold_the_branch_work_and_capture_the_rest():
    x, cond = T.vector("x"), T.scalar("c")
    shared_work = T.exp(x)
    out = ss.ifelse(cond > shared_work.sum(), T.log(shared_work), x)
    node = out.owner
    assert isinstance(node.op, IfElse)
    # exp(x) feeds the condition, so it is computed eagerly and captured; log is the branch's own
    assert any(v is shared_work for v in node.inputs[1:])
    then_ops = {str(n.op) for n in node.op.then_graph.apply_nodes}
    assert any("log" in name for name in then_ops)
    assert not any("exp" in name for name in then_ops)
    assert not node.op.else_graph.apply_nodes  # the else branch passes x through


def test_random_draws_stay_outside_the_branches():
    rng = ss.RandomStream(1)
    draw = rng.normal(size=(3,))
    out = ss.ifelse(T.scalar("c"), T.exp(draw), draw)
    branch_ops = [type(n.op).__name__ for g in out.owner.op.inner_graphs() for n in g.apply_nodes]
    assert "RandomVariable" not in branch_ops


def test_condition_must_be_0d():
    with pytest.raises(TypeError, match="condition must be a 0-d value"):
        ss.ifelse(T.vector("c"), T.scalar("a"), T.scalar("b"))


def test_branches_must_agree_in_dtype_and_rank():
    c = T.scalar("c")
    with pytest.raises(TypeError, match="same dtype and number of dimensions"):
        ss.ifelse(c, T.vector("a"), T.matrix("b"))
    with pytest.raises(TypeError, match="same dtype"):
        ss.ifelse(c, T.vector("a", dtype="float32"), T.vector("b", dtype="float64"))
    with pytest.raises(TypeError, match="does not fit"):
        ss.ifelse(c, T.scalar("a", dtype="int32"), 0.5)
    with pytest.raises(ValueError, match="same number of values"):
        ss.ifelse(c, [T.scalar("a")], [T.scalar("b"), T.scalar("d")])


def test_equal_ifelse_ops_merge():
    x, cond = T.vector("x"), T.scalar("c")
    one = ss.ifelse(cond, T.log(x), x)
    two = ss.ifelse(cond, T.log(x), x)
    assert one.owner.op == two.owner.op and hash(one.owner.op) == hash(two.owner.op)
    fn = ss.function([cond, x], [one, two], mode="fast")
    assert len(_ifelse_nodes(fn)) == 1


def test_dprint_labels_the_branches():
    x, cond = T.vector("x"), T.scalar("c")
    text = ss.dprint(ss.ifelse(cond, T.log(x), x), file="str")
    assert "then:" in text and "else:" in text


def test_theano_import_path():
    from symscan.compat.theano.ifelse import ifelse

    assert ifelse is ss.ifelse
