"""dprint: Theano debugprint-style text of variables, lists, FunctionGraphs and functions."""

import io
import re
from dataclasses import dataclass

import numpy as np
import pytest

import symscan as ss
import symscan.tensor as T
from symscan.graph import Apply, FunctionGraph, Op
from symscan.printing import dprint_text


def _ids(text):
    return re.findall(r"\[id ([A-Z]+)\]", text)


def test_dprint_of_a_variable_is_an_indented_tree():
    x, y = T.vector("x"), T.vector("y")
    out = T.exp(x + y)
    text = ss.dprint(out, file="str")
    assert text.splitlines() == [
        "Elemwise{exp} [id A] float64[?]",
        " |Elemwise{add} [id B] float64[?]",
        " | |x [id C] float64[?]",
        " | |y [id D] float64[?]",
    ]


def test_dprint_prints_to_stdout_by_default(capsys):
    x = T.vector("x")
    assert ss.dprint(T.exp(x)) is None
    printed = capsys.readouterr().out
    assert printed == ss.dprint(T.exp(x), file="str")
    assert "Elemwise{exp}" in printed


def test_dprint_writes_to_a_file_object():
    x = T.vector("x")
    buffer = io.StringIO()
    assert ss.dprint(x * 2.0, file=buffer) is None
    assert buffer.getvalue() == ss.dprint(x * 2.0, file="str")
    assert dprint_text(x * 2.0) == buffer.getvalue()


def test_shared_sub_graph_printed_once_then_just_its_line():
    x, y = T.vector("x"), T.vector("y")
    z = x + y
    z.name = "z"
    out = T.exp(z) * z
    lines = ss.dprint(out, file="str").splitlines()
    assert lines == [
        "Elemwise{mul} [id A] float64[?]",
        " |Elemwise{exp} [id B] float64[?]",
        " | |Elemwise{add} [id C] 'z' float64[?]",
        " | | |x [id D] float64[?]",
        " | | |y [id E] float64[?]",
        " |Elemwise{add} [id C] 'z' float64[?]",
    ]
    assert sum("|x [id D]" in line for line in lines) == 1  # children printed once


def test_ids_repeat_for_repeated_variables():
    x = T.vector("x")
    out = (x * x) + x
    text = ss.dprint(out, file="str")
    ids = _ids(text)
    assert ids.count("C") == 3  # x appears three times with the same id
    assert len(set(ids)) == 3


def test_dprint_of_a_list_shares_ids_across_outputs():
    x, y = T.vector("x"), T.vector("y")
    z = x + y
    a, b = T.exp(z), T.sin(z)
    text = ss.dprint([a, b], file="str")
    lines = text.splitlines()
    assert lines[0].startswith("Elemwise{exp} [id A]")
    second_root = next(i for i, line in enumerate(lines) if line.startswith("Elemwise{sin}"))
    assert lines[second_root + 1] == " |Elemwise{add} [id B] float64[?]"
    assert len(lines) == second_root + 2  # z's inputs are not repeated
    assert ss.dprint((a, b), file="str") == text


def test_print_type_flag():
    x = T.fvector("x")
    with_types = ss.dprint(T.exp(x), file="str")
    without = ss.dprint(T.exp(x), file="str", print_type=False)
    assert "float32[?]" in with_types
    assert "float32" not in without
    assert without.splitlines() == ["Elemwise{exp} [id A]", " |x [id B]"]


def test_constants_and_shared_variables_are_marked():
    x = T.vector("x")
    s = ss.shared(np.ones(2), name="s")
    text = ss.dprint(x * 2.0 + s, file="str")
    assert "Constant{2.} [id" in text
    assert re.search(r"s \[id [A-Z]+\] <shared> float64\[\?\]", text)


def test_multi_output_nodes_show_the_output_index():
    @dataclass(frozen=True)
    class Pair(Op):
        def make_node(self, x):
            return Apply(self, [x], [x.type, x.type])

    x = T.vector("x")
    first, second = Pair()(x)
    text = ss.dprint([second, first], file="str")
    lines = text.splitlines()
    assert lines[0] == "Pair [id A] out1 float64[?]"
    assert "Pair [id A] out0 float64[?]" in lines


def test_dprint_of_a_compiled_function_prints_its_optimised_graph():
    x = T.vector("x")
    s = ss.shared(np.ones(2), name="s")
    f = ss.function([x], [(x * s).sum(), (x * 2.0) + (x * 2.0)], updates={s: s * 2.0}, rewrites=["-fusion"])
    text = ss.dprint(f, file="str")
    assert text == ss.dprint(f.fgraph, file="str")
    roots = [line for line in text.splitlines() if not line.startswith(" ")]
    assert len(roots) == 3  # two outputs and the update
    assert roots[0].startswith("Sum")
    # merge made (x * 2.0) one node: the second time it is just its line
    mul_ids = [_ids(line)[0] for line in text.splitlines() if "Elemwise{mul}" in line]
    assert len(mul_ids) == 4 and len(set(mul_ids)) == 3  # x*s, x*2.0 (twice, one id), s*2.0
    add_line = next(i for i, line in enumerate(text.splitlines()) if line.startswith("Elemwise{add}"))
    below = text.splitlines()[add_line + 1:]
    assert _ids(below[0]) == _ids(below[3]) and below[3] == below[0]  # second time: just its line
    assert "<shared>" in text


def test_dprint_of_a_function_in_py_mode_shows_the_unmerged_graph():
    x = T.vector("x")
    f = ss.function([x], (x * 2.0) + (x * 2.0), mode="py")
    text = ss.dprint(f, file="str")
    assert len(set(_ids(text))) == 6  # add, two muls, x, two constants


def test_dprint_rejects_other_objects():
    with pytest.raises(TypeError, match="dprint takes"):
        ss.dprint(42, file="str")
    with pytest.raises(TypeError):
        ss.dprint([T.vector(), 3], file="str")


def test_dprint_of_a_deep_chain():
    x = T.scalar("x")
    y = x
    for _ in range(3000):
        y = y + 1.0
    lines = ss.dprint(y, file="str", print_type=False).splitlines()
    assert len(lines) == 1 + 2 * 3000
    assert lines[3000] == " |" * 3000 + "x [id " + _ids(lines[3000])[0] + "]"
    assert lines[-1].startswith(" |Constant{1.}")  # the outermost add's constant comes last


# ---------------------------------------------------------------------------- inner graphs
@dataclass(frozen=True)
class Loop(Op):
    """A test op carrying an inner FunctionGraph, labelled like a loop body."""

    body: FunctionGraph
    inner_title = "loop body"

    def make_node(self, x):
        return Apply(self, [x], [x.type])

    def inner_graphs(self):
        return (self.body,)

    def inner_input_labels(self):
        return ["sit-sot h"]

    def inner_output_labels(self):
        return ["new h"]

    def __str__(self):
        return "Loop"


def test_inner_graphs_are_printed_under_their_node():
    h = T.vector("h")
    body = FunctionGraph([h], [T.tanh(h) * 2.0], clone=False)
    x = T.vector("x")
    out = T.exp(Loop(body)(x))
    lines = ss.dprint(out, file="str").splitlines()
    assert lines[0] == "Elemwise{exp} [id A] float64[?]"
    assert lines[1] == " |Loop [id B] float64[?]"
    assert lines[2] == " | |x [id C] float64[?]"
    assert lines[3] == " |   loop body:"
    assert lines[4] == " |   > new h:"
    assert lines[5].startswith(" |     Elemwise{mul}")
    assert any("h [id" in line and "<sit-sot h>" in line for line in lines)
    assert any("Elemwise{tanh}" in line for line in lines)
