"""inplace alone: marks where the evaluator may reuse memory, and only there.

``node.tag["inplace"] = i``: an elementwise node may write its result into input ``i``.
``node.tag["into_buffer"]``: inside a loop body, the node computing a buffered output may
write straight into that output's buffer row. Marks never change the numbers.
"""

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.compile.modes import MODES
from symscan.scan.args import ScanArgs
from symscan.tensor.elemwise import Elemwise


def _compile(inputs, outputs, rewrites=("inplace",), **kwargs):
    return ss.function(inputs, outputs, mode="fast", rewrites=list(rewrites), **kwargs)


def _marked(fgraph, key="inplace"):
    """{op text: mark} for the nodes of ``fgraph`` carrying ``key`` (op texts must be unique)."""
    return {str(node.op): node.tag[key] for node in fgraph.toposort() if key in node.tag}


def _marks(node) -> dict:
    """The rewriter's marks on ``node`` (its tag without the user line pictures read)."""
    return {key: value for key, value in node.tag.items() if key != "built_at"}


def _node(fgraph, name):
    (node,) = [n for n in fgraph.toposort() if n.op == Elemwise(name)]
    return node


def _all_modes_agree(inputs, outputs, *values, updates=None):
    results = []
    for mode, rewrites in [("py", None), ("fast", None), ("fast", ["inplace"]), ("fast", ["-inplace"])]:
        f = ss.function(inputs, outputs, mode=mode, rewrites=rewrites, updates=updates)
        results.append(f(*values))
    for got in results[1:]:
        for g, e in zip(got if isinstance(got, list) else [got], results[0] if isinstance(got, list) else [results[0]]):
            np.testing.assert_allclose(g, e)
    return results[0]


# ---------------------------------------------------------------------------- elementwise
def test_a_fresh_intermediate_is_overwritten(rng):
    x = T.vector("x")
    out = T.exp(x) + 1.0
    f = _compile([x], out)
    assert _marks(_node(f.fgraph, "add")) == {"inplace": 0}
    assert "inplace" not in _node(f.fgraph, "exp").tag  # x is a graph input
    (record,) = list(f.rewrite_report())
    assert record.rule == "inplace" and record.fired and "overwrites input 0" in record.detail
    values = rng.standard_normal(4)
    np.testing.assert_allclose(f(values), np.exp(values) + 1.0)
    np.testing.assert_array_equal(_all_modes_agree([x], out, values), np.exp(values) + 1.0)


def test_the_second_input_when_the_first_is_not_overwritable(rng):
    x = T.vector("x")
    out = x * T.exp(x)
    f = _compile([x], out)
    assert _marks(_node(f.fgraph, "mul")) == {"inplace": 1}
    _all_modes_agree([x], out, rng.standard_normal(3))


def test_never_graph_inputs_or_constants(rng):
    x, y = T.vector("x"), T.vector("y")
    c = T.constant(np.arange(3.0))
    outs = [x + y, c * 2.0, x - c, -x]
    f = _compile([x, y], outs)
    assert len(f.fgraph.apply_nodes) == 4 and _marked(f.fgraph) == {}
    _all_modes_agree([x, y], outs, rng.standard_normal(3), rng.standard_normal(3))


def test_never_shared_variables_or_views_of_them(rng):
    m = ss.shared(rng.standard_normal((2, 3)), name="m")
    x = T.vector("x")
    outs = [m * 2.0, m.T * 2.0, m[0] + x, m.reshape((6,)) - 1.0, m.flatten() * 3.0]
    f = _compile([x], outs)
    assert _marked(f.fgraph) == {}
    before = m.get_value().copy()
    _all_modes_agree([x], outs, rng.standard_normal(3))
    np.testing.assert_array_equal(m.get_value(), before)


def test_never_views_of_graph_inputs_or_constants(rng):
    x, m = T.vector("x"), T.matrix("m")
    c = T.constant(np.ones((2, 2)))
    outs = [x[::-1] * 2.0, m.T + 1.0, m[0] - 1.0, x.dimshuffle("x", 0) * 2.0, c.T * 3.0, m.flatten() + 1.0]
    f = _compile([x, m], outs)
    assert _marked(f.fgraph) == {}
    _all_modes_agree([x, m], outs, rng.standard_normal(2), rng.standard_normal((2, 2)))


def test_never_when_the_input_has_another_reader(rng):
    x = T.vector("x")
    u = T.exp(x)
    outs = [u + 1.0, u * 2.0]
    f = _compile([x], outs)
    assert _marked(f.fgraph) == {}
    assert _marks(_compile([x], u * u).fgraph.outputs[0].owner) == {}  # read twice by the same node
    _all_modes_agree([x], outs, rng.standard_normal(3))


def test_never_when_a_view_of_the_input_has_another_reader(rng):
    """v = u[::-1] shares u's memory: overwriting v would change what u + 1 reads."""
    x, m = T.vector("x"), T.matrix("m")
    u = T.exp(x)
    f = _compile([x], [u[::-1] * 2.0, u + 1.0])
    assert _marked(f.fgraph) == {}
    w = T.exp(m)
    g = _compile([m], [w.T * 2.0, w])  # w itself is an output
    assert _marked(g.fgraph) == {}
    values = rng.standard_normal(3)
    a, b = f(values)
    np.testing.assert_allclose(b, np.exp(values) + 1.0)
    _all_modes_agree([x], [u[::-1] * 2.0, u + 1.0], values)


def test_a_view_of_a_fresh_array_with_one_reader_is_overwritten(rng):
    m = T.matrix("m")
    out = T.exp(m).T * 2.0
    f = _compile([m], out)
    assert _marks(_node(f.fgraph, "mul")) == {"inplace": 0}
    _all_modes_agree([m], out, rng.standard_normal((2, 3)))


def test_never_a_graph_output(rng):
    x = T.vector("x")
    u = T.exp(x)
    f = _compile([x], [u, u + 1.0])
    assert _marked(f.fgraph) == {}
    _all_modes_agree([x], [u, u + 1.0], rng.standard_normal(2))


def test_never_when_dtype_or_ndim_differ(rng):
    x, ix, m = T.vector("x"), T.ivector("ix"), T.matrix("m")
    outs = [(ix + 1) * 0.5, T.exp(x) + m, (ix * 2) < 3]  # int -> float, 1-d -> 2-d, int -> bool
    f = _compile([x, ix, m], outs)
    assert _marked(f.fgraph) == {}
    same_dtype = _compile([ix], (ix + 1) * 2)
    assert _marked(same_dtype.fgraph) == {"Elemwise{mul}": 0}
    _all_modes_agree([x, ix, m], outs, rng.standard_normal(2), np.array([1, 2], dtype="int32"),
                     rng.standard_normal((3, 2)))


def test_the_unrolled_one_step_scan_does_not_overwrite_its_sequence(rng):
    """n_steps=1 builds no loop: the step reads the sequence through a pass-through check."""
    x = T.vector("x")
    y, _ = ss.scan(lambda xt: xt + 1.0, sequences=x, n_steps=1)
    f = _compile([x], y * 2.0)
    (add,) = [n for n in f.fgraph.toposort() if n.op == Elemwise("add") and n.outputs[0].dtype == "float64"]
    assert "inplace" not in add.tag  # its input is x[0], a view of the graph input x
    assert _marks(_node(f.fgraph, "mul")) == {"inplace": 0}  # (xt + 1) is fresh
    values = rng.standard_normal(3)
    np.testing.assert_allclose(f(values), [(values[0] + 1.0) * 2.0])
    _all_modes_agree([x], y * 2.0, values)


def test_the_final_value_of_a_shared_state_is_not_overwritten(scan_nodes, rng):
    """With no step, a scan's shared final value is the shared variable's own value."""
    s = ss.shared(np.arange(3.0), name="s")
    k = T.lscalar("k")
    out, updates = ss.scan(lambda: (s * 2.0, {s: s + 1.0}), n_steps=k)
    final = updates[s]
    f = _compile([k], [out, final + 1.0])
    (add,) = [n for n in f.fgraph.toposort() if n.op == Elemwise("add")]
    assert add.inputs[0].owner is scan_nodes(f)[0] and "inplace" not in add.tag
    _, plus_one = f(0)
    np.testing.assert_array_equal(plus_one, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(s.get_value(), [0.0, 1.0, 2.0])
    for steps in (0, 2):
        for got, expected in zip(f(steps), ss.function([k], [out, final + 1.0], mode="py")(steps)):
            np.testing.assert_array_equal(got, expected)


# ---------------------------------------------------------------------------- loop bodies
def _body(f, scan_nodes):
    (node,) = scan_nodes(f)
    return node.op.inner, ScanArgs.from_node(node)


def test_loop_body_output_is_written_into_its_buffer(scan_nodes, rng):
    xs = T.vector("xs")
    h, _ = ss.scan(lambda x, h: T.tanh(h * 0.5 + x), sequences=xs, outputs_info=T.constant(0.0))
    f = _compile([xs], h)
    inner, args = _body(f, scan_nodes)
    (tanh,) = [n for n in inner.toposort() if n.op == Elemwise("tanh")]
    assert tanh.tag.get("into_buffer") is True and args.sit_sot[0].inner_out.owner is tanh
    marked = _marked(inner)  # inner inplace marks: never on inner inputs
    for node in inner.toposort():
        if "inplace" in node.tag:
            assert node.inputs[node.tag["inplace"]] not in inner.inputs
    assert marked == {"Elemwise{add}": 0, "Elemwise{tanh}": 0}
    assert any("scan > " in r.node and "buffer row" in r.detail for r in f.rewrite_report())
    _all_modes_agree([xs], h, rng.standard_normal(5))


def test_loop_body_inputs_are_never_overwritten(scan_nodes, rng):
    xs, w = T.vector("xs"), T.vector("w")
    out, _ = ss.scan(lambda x, h, w: (h + x * w, h * w), sequences=xs, outputs_info=[T.zeros_like(w), None],
                     non_sequences=w)
    f = _compile([xs, w], out)
    inner, _ = _body(f, scan_nodes)
    for node in inner.toposort():
        if "inplace" in node.tag:
            assert node.inputs[node.tag["inplace"]] not in inner.inputs
    mul_inputs = [n for n in inner.toposort() if n.op == Elemwise("mul") and set(n.inputs) <= set(inner.inputs)]
    assert mul_inputs and all("inplace" not in n.tag for n in mul_inputs)
    _all_modes_agree([xs, w], out, rng.standard_normal(4), rng.standard_normal(2))


def test_nit_sot_outputs_are_written_into_their_buffers_but_shared_updates_are_not(scan_nodes, rng):
    s = ss.shared(np.float64(1.0), name="s")
    xs = T.vector("xs")
    out, updates = ss.scan(lambda x: (T.exp(x) * 2.0, {s: s * 2.0 + x}), sequences=xs)
    f = _compile([xs], out, updates=updates)
    inner, args = _body(f, scan_nodes)
    (nit,) = args.nit_sot
    (shared,) = args.shared
    assert nit.inner_out.owner.tag.get("into_buffer") is True
    assert "into_buffer" not in shared.inner_out.owner.tag
    py = ss.function([xs], out, updates=updates, mode="py")
    values = rng.standard_normal(3)
    s.set_value(np.float64(1.0))
    expected = py(values)
    expected_s = s.get_value()
    s.set_value(np.float64(1.0))
    got = f(values)
    np.testing.assert_allclose(got, expected)
    np.testing.assert_allclose(got, np.exp(values) * 2.0)
    np.testing.assert_allclose(s.get_value(), expected_s)
    np.testing.assert_allclose(expected_s, ((1.0 * 2.0 + values[0]) * 2.0 + values[1]) * 2.0 + values[2])


def test_the_until_condition_is_not_written_into_a_buffer(scan_nodes):
    k = T.lscalar("k")
    out, _ = ss.scan(lambda h: (h * 2.0, ss.until(h * 2.0 > 20.0)), outputs_info=T.constant(1.0), n_steps=k)
    f = _compile([k], out)
    inner, args = _body(f, scan_nodes)
    assert args.until is not None and "into_buffer" not in args.until.owner.tag
    for steps in (0, 3, 10):
        np.testing.assert_array_equal(f(steps), ss.function([k], out, mode="py")(steps))


def test_an_output_read_again_in_the_body_is_not_written_into_its_buffer(scan_nodes, rng):
    xs = T.vector("xs")

    def step(x, h):
        new = T.tanh(h + x)
        return new, new * 2.0  # new is the sit-sot output and feeds the nit-sot

    out, _ = ss.scan(step, sequences=xs, outputs_info=[T.constant(0.0), None])
    f = _compile([xs], out)
    inner, args = _body(f, scan_nodes)
    assert "into_buffer" not in args.sit_sot[0].inner_out.owner.tag
    assert args.nit_sot[0].inner_out.owner.tag.get("into_buffer") is True
    _all_modes_agree([xs], out, rng.standard_normal(4))


def test_one_variable_for_two_outputs_is_not_written_into_a_buffer(scan_nodes, rng):
    xs = T.vector("xs")

    def step(x):
        y = T.exp(x)
        return y, y

    out, _ = ss.scan(step, sequences=xs)
    f = _compile([xs], out)
    inner, args = _body(f, scan_nodes)
    assert all("into_buffer" not in e.inner_out.owner.tag for e in args.nit_sot)
    a, b = _all_modes_agree([xs], out, rng.standard_normal(3))
    np.testing.assert_array_equal(a, b)


def test_the_outer_graph_of_a_loop_outputs(scan_nodes, rng):
    """A scan's buffered outputs are fresh arrays: an elementwise reader may overwrite them."""
    xs = T.vector("xs")
    h, _ = ss.scan(lambda x, h: h + x, sequences=xs, outputs_info=T.constant(0.0))
    f = _compile([xs], h * 2.0)
    mul = _node(f.fgraph, "mul")
    assert _marks(mul) == {"inplace": 0} and mul.inputs[0].owner.inputs[0].owner is scan_nodes(f)[0]
    _all_modes_agree([xs], h * 2.0, rng.standard_normal(5))


@pytest.mark.parametrize("mode", ["py", "fast", MODES["fast"].without("inplace")])
def test_numbers_unchanged_in_every_mode(mode, rng):
    xs, w = T.matrix("xs"), T.vector("w")
    h, _ = ss.scan(lambda x, h, w: T.tanh(h * w + x), sequences=xs, outputs_info=T.zeros_like(w), non_sequences=w)
    out = [h * 2.0, (h[-1] + 1.0).sum(), T.exp(xs).T * 3.0]
    values, weights = rng.standard_normal((4, 3)), rng.standard_normal(3)
    f = ss.function([xs, w], out, mode=mode)
    h_np, rows = np.zeros(3), []
    for x in values:
        h_np = np.tanh(h_np * weights + x)
        rows.append(h_np)
    got = f(values, weights)
    np.testing.assert_allclose(got[0], np.array(rows) * 2.0)
    np.testing.assert_allclose(got[1], (rows[-1] + 1.0).sum())
    np.testing.assert_allclose(got[2], np.exp(values).T * 3.0)
    np.testing.assert_array_equal(values, values.copy())


@pytest.mark.parametrize("case", ["unrolled sit-sot", "unrolled mit-sot", "specify_shape"])
def test_ops_passing_their_input_through_are_views(case):
    """An unrolled step's value, a checked initial window and specify_shape hand out their
    input: writing ``+ 1`` into them in place would change the caller's array."""
    size = 3000  # above the evaluator's in-place threshold
    if case == "specify_shape":
        x = T.vector("x")
        inputs, out, value = [x], T.specify_shape(x, (size,)) + 1, np.ones(size)
    elif case == "unrolled sit-sot":
        h = T.vector("h")
        steps, _ = ss.scan(lambda s: s, outputs_info=h, n_steps=1)
        inputs, out, value = [h], steps + 1, np.ones(size)
    else:
        h = T.matrix("h")
        steps, _ = ss.scan(lambda a, b: b, outputs_info=dict(initial=h, taps=[-2, -1]), n_steps=1)
        inputs, out, value = [h], steps + 1, np.ones((2, size))
    f = ss.function(inputs, out, mode="fast")
    kept = value.copy()
    np.testing.assert_array_equal(f(value), ss.function(inputs, out, mode="py")(kept))
    np.testing.assert_array_equal(value, kept)


@pytest.mark.parametrize("mode", ["fast", "numba"])
def test_never_through_the_real_part_of_a_real_input(mode, rng):
    """``real(x)`` of a real array is the array itself (numpy and numba): an increment of it
    must not write into the caller's input, outside a loop or inside one."""
    x = T.dvector("x")
    outside = T.inc_subtensor(T.real(x)[0:2], 1.0)
    X, h0 = T.matrix("X"), T.vector("h0")
    inside, _ = ss.scan(lambda row, h: T.inc_subtensor(T.real(h)[0:2], row[0:2]), sequences=X, outputs_info=h0)
    for inputs, output, values in (([x], outside, [np.zeros(3)]),
                                   ([X, h0], inside, [rng.normal(size=(4, 3)), rng.normal(size=3)])):
        kept = [v.copy() for v in values]
        got = ss.function(inputs, output, mode=mode)(*values)
        for value, before in zip(values, kept):
            np.testing.assert_array_equal(value, before)
        np.testing.assert_allclose(got, ss.function(inputs, output, mode="py")(*kept), rtol=1e-12)
