"""``ss.latex``: the recurrence of a scan output as LaTeX and as sympy equations.

sympy's ``parse_latex`` needs antlr4, which is not installed, so the structure is checked on
``.equation`` (a canonical ``sympy.Eq``) against expressions built here with sympy, and the
text on the symbols, taps and functions it must show.
"""

import subprocess
import sys

import numpy as np
import pytest
import sympy

import symscan as ss
import symscan.tensor as T
from symscan.latex import latex_scan
from symscan.scan import Scan


def tensor(name: str):
    """A symbol standing for a vector or matrix: it does not commute (``x W`` is not ``W x``)."""
    return sympy.Symbol(name, commutative=False)


def scalar(name: str):
    return sympy.Symbol(name)


hadamard = sympy.Function("hadamard")


# ---------------------------------------------------------------------------- models
def elman():
    X, W_in, W_h, b, h0 = T.matrix("X"), T.matrix("W_in"), T.matrix("W_h"), T.vector("b"), T.vector("h0")
    H, _ = ss.scan(lambda x, h, W_in, W_h, b: T.tanh(T.dot(x, W_in) + T.dot(h, W_h) + b), sequences=X,
                   outputs_info=h0, non_sequences=[W_in, W_h, b])
    return H


def taps_rnn():
    """The guide's RNN with taps (its variables named as in the guide's step function)."""
    def one_step(u_tm4, u_t, x_tm3, x_tm1, y_tm1, W, W_in_1, W_in_2, W_feedback, W_out):
        x_t = T.tanh(T.dot(x_tm1, W) + T.dot(u_t, W_in_1) + T.dot(u_tm4, W_in_2) + T.dot(y_tm1, W_feedback))
        return [x_t, T.dot(x_tm3, W_out)]

    Ws = [T.matrix(name) for name in ("W", "W_in_1", "W_in_2", "W_feedback", "W_out")]
    u, x0, y0 = T.matrix("u"), T.matrix("x0"), T.vector("y0")
    (x_vals, y_vals), _ = ss.scan(one_step, sequences=dict(input=u, taps=[-4, 0]),
                                  outputs_info=[dict(initial=x0, taps=[-3, -1]), y0], non_sequences=Ws)
    return x_vals, y_vals


# ---------------------------------------------------------------------------- the Elman RNN
def test_elman_rnn_text_keeps_the_graphs_order():
    assert ss.latex(elman()).text == r"h_{t} = \tanh{\left(x_{t} W_{in} + h_{t-1} W_{h} + b \right)}"


def test_elman_rnn_equation():
    expected = sympy.tanh(tensor("x_{t}") * tensor("W_{in}") + tensor("h_{t-1}") * tensor("W_{h}") + tensor("b"))
    assert ss.latex(elman()).equation == sympy.Eq(tensor("h_{t}"), expected)


def test_raw_scan_output_gives_the_same_recurrence():
    """The frontend returns buffer[1:]; the Scan node's own output shows the same equation."""
    H = elman()
    raw = H.owner.inputs[0]
    assert isinstance(raw.owner.op, Scan)
    assert ss.latex(raw).text == ss.latex(H).text
    assert ss.latex(H[-1]).text == ss.latex(H).text


# ---------------------------------------------------------------------------- taps
def test_taps_rnn_x_reads_u_at_t_minus_4_and_t_and_both_outputs_at_t_minus_1():
    x_vals, _ = taps_rnn()
    result = ss.latex(x_vals)
    for symbol in ("x_{t} = ", "u_{t-4}", "u_{t}", "x_{t-1}", "y_{t-1}", r"\tanh", "W_{in,1}", "W_{in,2}",
                   "W_{feedback}"):
        assert symbol in result.text, (symbol, result.text)
    assert "x_{t-3}" not in result.text
    expected = sympy.tanh(tensor("x_{t-1}") * tensor("W") + tensor("u_{t}") * tensor("W_{in,1}")
                          + tensor("u_{t-4}") * tensor("W_{in,2}") + tensor("y_{t-1}") * tensor("W_{feedback}"))
    assert result.equation == sympy.Eq(tensor("x_{t}"), expected)


def test_taps_rnn_y_reads_x_at_t_minus_3():
    _, y_vals = taps_rnn()
    result = ss.latex(y_vals)
    assert result.text == r"y_{t} = x_{t-3} W_{out}"
    assert result.equation == sympy.Eq(tensor("y_{t}"), tensor("x_{t-3}") * tensor("W_{out}"))


def test_all_outputs_one_equation_per_line_in_outputs_info_order():
    _, y_vals = taps_rnn()
    result = ss.latex(y_vals, all_outputs=True)
    lines = result.text.splitlines()
    assert lines[0] == r"\begin{aligned}" and lines[-1] == r"\end{aligned}"
    assert lines[1].startswith("x_{t} &= ") and lines[1].endswith(r" \\")
    assert lines[2] == r"y_{t} &= x_{t-3} W_{out}"
    assert [eq.lhs for eq in result.equations] == [tensor("x_{t}"), tensor("y_{t}")]
    assert latex_scan(y_vals.owner.inputs[0].owner).text == result.text


def test_future_sequence_taps_and_unnamed_variables():
    """A sequence tap +2 reads u_{t+2}; unnamed outputs, sequences and non-sequences get y_i, s_i, c_i."""
    u, x0, W = T.matrix(), T.matrix(), T.matrix()
    out, _ = ss.scan(lambda u_m1, u_p2, x_m2, W: T.dot(u_p2 - u_m1, W) + x_m2, sequences=dict(input=u, taps=[-1, 2]),
                     outputs_info=dict(initial=x0, taps=[-2]), non_sequences=W)
    result = ss.latex(out)
    assert result.text == r"y_{1,t} = \left(s_{1,t+2} - s_{1,t-1}\right) c_{1} + y_{1,t-2}"
    expected = (tensor("s_{1,t+2}") - tensor("s_{1,t-1}")) * tensor("c_{1}") + tensor("y_{1,t-2}")
    assert result.equation == sympy.Eq(tensor("y_{1,t}"), expected)


# ---------------------------------------------------------------------------- outputs of each kind
def test_power_sit_sot_with_a_non_sequence():
    """The guide's A**k: an elementwise product of two vectors prints as a Hadamard product."""
    k, A = T.iscalar("k"), T.vector("A")
    result, _ = ss.scan(lambda prior, A: prior * A, outputs_info=T.ones_like(A), non_sequences=A, n_steps=k)
    shown = ss.latex(result)
    assert shown.text == r"y_{1,t} = y_{1,t-1} \odot A"
    assert shown.equation == sympy.Eq(tensor("y_{1,t}"), hadamard(tensor("y_{1,t-1}"), tensor("A")))
    assert ss.latex(result[-1]).text == shown.text  # A**k itself: the last step of the same recurrence


def test_output_named_after_the_variable_when_the_initial_value_has_no_name():
    A = T.vector("A")
    powers, _ = ss.scan(lambda prior, A: prior * A, outputs_info=T.ones_like(A), non_sequences=A, n_steps=3)
    powers.name = "P"
    assert ss.latex(powers).text == r"p_{t} = p_{t-1} \odot A"


def test_fibonacci_mit_sot():
    f0 = T.vector("f0")
    fib, _ = ss.scan(lambda f_m2, f_m1: f_m2 + f_m1, outputs_info=dict(initial=f0, taps=[-2, -1]), n_steps=10)
    result = ss.latex(fib)
    assert result.text == r"f_{t} = f_{t-2} + f_{t-1}"
    assert result.equation == sympy.Eq(scalar("f_{t}"), scalar("f_{t-2}") + scalar("f_{t-1}"))


def test_map_nit_sot():
    X = T.matrix("X")
    squares, _ = ss.map(lambda x: T.exp(x) * 2 + x ** 2, X)
    assert ss.latex(squares).text == r"y_{1,t} = 2 e^{x_{t}} + x_{t}^{2}"
    squares.name = "Y"
    result = ss.latex(squares)
    assert result.text.startswith("y_{t} = ")
    x = tensor("x_{t}")
    assert result.equation == sympy.Eq(tensor("y_{t}"), 2 * sympy.exp(x) + x ** 2)


def test_until_power_of_2():
    max_value = T.scalar("m")
    values, _ = ss.scan(lambda previous, m: (previous * 2, ss.until(previous * 2 > m)),
                        outputs_info=T.constant(1.0), non_sequences=max_value, n_steps=1024)
    values.name = "p"
    result = ss.latex(values)
    assert result.text == r"p_{t} = 2 p_{t-1},\quad \text{until } 2 p_{t-1} > m"
    p = scalar("p_{t-1}")
    assert result.until == sympy.Gt(2 * p, scalar("m"))
    assert result.equation == sympy.Eq(scalar("p_{t}"), 2 * p)


def test_go_backwards_reads_the_sequence_from_its_end(rng):
    """Step t reads x_{T-t-1}, T = |x|; the numbers confirm the equation describes the loop."""
    X, s0 = T.vector("X"), T.scalar("s0")
    sums, _ = ss.scan(lambda x, s: s + x, sequences=X, outputs_info=s0, go_backwards=True)
    result = ss.latex(sums)
    assert result.text == r"s_{t} = s_{t-1} + x_{T-t-1},\quad T = \left|x\right|"
    values = rng.normal(size=6)
    got = ss.function([X, s0], sums, mode="py")(values, 0.5)
    expected, state = [], 0.5
    for t in range(len(values)):  # the equation, read literally
        state = state + values[len(values) - t - 1]
        expected.append(state)
    np.testing.assert_allclose(got, expected)


def test_go_backwards_with_taps_gives_each_sequence_its_length():
    U, V, h0 = T.vector("U"), T.vector("V"), T.scalar("h0")
    out, _ = ss.scan(lambda u_m1, u_t, v, h: u_m1 + u_t + v + h, sequences=[dict(input=U, taps=[-1, 0]), V],
                     outputs_info=h0, go_backwards=True)
    text = ss.latex(out).text
    for part in ("u_{T_{u}-t-2}", "u_{T_{u}-t-1}", "v_{T_{v}-t-1}", r"T_{u} = \left|u\right| - 1",
                 r"T_{v} = \left|v\right|"):
        assert part in text, (part, text)


def test_nested_scan_is_a_named_function():
    X = T.matrix("X")

    def row_total(x, total):
        partial, _ = ss.scan(lambda z, c: c + z, sequences=x, outputs_info=T.constant(0.0))
        return total + partial[-1]

    totals, _ = ss.scan(row_total, sequences=X, outputs_info=T.constant(0.0))
    result = ss.latex(totals)
    assert result.text.startswith(r"y_{1,t} = y_{1,t-1} + \operatorname{scan}\left(x_{t}, 0\right)")
    assert result.equation.rhs.atoms(sympy.Function) and any(
        type(f).__name__ == "scan" for f in result.equation.rhs.atoms(sympy.Function))


# ---------------------------------------------------------------------------- operand order, ops
def test_matrix_products_keep_operand_order():
    W, h0 = T.matrix("W"), T.vector("h0")
    right, _ = ss.scan(lambda h, W: T.dot(h, W), outputs_info=h0, non_sequences=W, n_steps=3)
    left, _ = ss.scan(lambda h, W: T.dot(W, h), outputs_info=h0, non_sequences=W, n_steps=3)
    matmul, _ = ss.scan(lambda h, W: W @ h, outputs_info=h0, non_sequences=W, n_steps=3)
    assert ss.latex(right).text == "h_{t} = h_{t-1} W"
    assert ss.latex(left).text == "h_{t} = W h_{t-1}"
    assert ss.latex(matmul).text == "h_{t} = W h_{t-1}"
    assert ss.latex(right).equation != ss.latex(left).equation
    assert ss.latex(left).equation.rhs == tensor("W") * tensor("h_{t-1}")


def test_elementwise_ops_map_to_sympy():
    X, h0 = T.matrix("X"), T.vector("h0")
    out, _ = ss.scan(lambda x, h: T.maximum(h, 0) + T.sigmoid(x) - T.sqrt(T.abs(x)) / h + T.sum(x, axis=0),
                     sequences=X, outputs_info=h0)
    text = ss.latex(out).text
    for part in (r"\max\left(h_{t-1}, 0\right)", r"\sigma\left(x_{t}\right)", r"\frac{\sqrt{\left|{x_{t}}\right|}}",
                 r"\operatorname{sum}_{axis=0}\left(x_{t}\right)"):
        assert part in text, (part, text)


def test_scalar_max_is_sympys_max():
    a0 = T.scalar("a0")
    out, _ = ss.scan(lambda a: T.maximum(a - 1, 0), outputs_info=a0, n_steps=4)
    assert ss.latex(out).equation.rhs == sympy.Max(scalar("a_{t-1}") - 1, 0)


def test_shared_updates_print_as_assignments():
    X, h0 = T.matrix("X"), T.vector("h0")
    total = ss.shared(np.zeros(3), name="total")
    out, updates = ss.scan(lambda x, h: (h + x, {total: total + x}), sequences=X, outputs_info=h0)
    text = ss.latex(out, all_outputs=True).text
    assert r"h_{t} &= h_{t-1} + x_{t}" in text
    assert r"\mathit{total} &\leftarrow \mathit{total} + x_{t}" in text
    assert ss.latex(updates[total]).text == r"\mathit{total} \leftarrow \mathit{total} + x_{t}"


def test_a_compiled_functions_scan_node():
    """After rewrites the Scan node is new, but the names of its inputs are still the user's."""
    X, W, h0 = T.matrix("X"), T.matrix("W"), T.vector("h0")
    H, _ = ss.scan(lambda x, h, W: T.tanh(x + T.dot(h, W)), sequences=X, outputs_info=h0, non_sequences=W)
    f = ss.function([X, h0, W], H[-1])
    (node,) = [n for n in f.fgraph.apply_nodes if isinstance(n.op, Scan)]
    assert latex_scan(node).text == r"h_{t} = \tanh{\left(x_{t} + h_{t-1} W \right)}"


# ---------------------------------------------------------------------------- errors and display
def test_a_variable_not_computed_by_scan_is_a_type_error():
    X = T.matrix("X")
    with pytest.raises(TypeError, match=r"latex: 'X' \(float64\[\?, \?\]\) is not an output of scan"):
        ss.latex(X)
    with pytest.raises(TypeError, match=r"the output of Elemwise\{tanh\}.* is not an output of scan"):
        ss.latex(T.tanh(X))
    with pytest.raises(TypeError, match="latex takes a variable computed by scan, got list"):
        ss.latex([X])
    with pytest.raises(TypeError, match="latex_scan takes a Scan node"):
        latex_scan(T.tanh(X).owner)


def test_repr_latex_for_notebooks():
    result = ss.latex(elman())
    assert str(result) == result.text
    assert result._repr_latex_() == f"${result.text}$"


def test_import_symscan_does_not_import_sympy():
    """sympy takes longer to import than symscan: it loads on the first ss.latex call."""
    code = "import sys, symscan; assert 'sympy' not in sys.modules; print(symscan.latex.__name__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "latex"
