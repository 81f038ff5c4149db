"""dprint of graphs with scans: the Scan node, its loop body indented under it, the role of every
inner input and output, nested loops, and where the text goes."""

import io
import re

import numpy as np

import symscan as ss
import symscan.tensor as T


def indent(line: str) -> int:
    """Column of the first character that is not tree drawing (spaces, '|', '>')."""
    return len(line) - len(line.lstrip(" |>"))


def rnn_function():
    """Sequence taps [-4, 0], a mit-sot with taps [-3, -1], a sit-sot, a shared update, a non-sequence."""
    u, y0, h0, k = T.vector("u"), T.vector("y0"), T.scalar("h0"), T.scalar("k")
    acc = ss.shared(np.float64(0), name="acc")

    def step(u_m4, u_t, y_m3, y_m1, h, k_):
        return [y_m1 + u_t * k_, h + y_m3 + u_m4], {acc: acc + u_t}

    (y, h), updates = ss.scan(step, sequences=dict(input=u, taps=[-4, 0]),
                              outputs_info=[dict(initial=y0, taps=[-3, -1]), h0], non_sequences=k, name="rnn")
    return ss.function([u, y0, h0, k], [y, h], updates=updates, mode="py")


def test_compiled_function_shows_the_scan_and_its_body():
    text = ss.dprint(rnn_function(), file="str")
    lines = text.splitlines()
    scan_lines = [i for i, line in enumerate(lines) if "Scan{rnn}" in line]
    assert scan_lines, text
    first = scan_lines[0]
    body = [i for i, line in enumerate(lines) if line.strip(" |") == "loop body:"]
    assert len(body) == 1, "the body of a scan prints once, however many of its outputs are printed"
    assert body[0] > first
    scan_column = lines[first].index("Scan{rnn}")
    assert lines[body[0]].index("loop body:") > scan_column
    # everything from the body title to the next outer line is indented deeper than the Scan line
    inner = []
    for line in lines[body[0] + 1:]:
        if indent(line) <= scan_column:
            break
        inner.append(line)
    assert len(inner) > 8
    inner_text = "\n".join(inner)
    for role in ["<sequence sequences[0] 'u' tap t-4>", "<sequence sequences[0] 'u' tap t>",
                 "<mit-sot outputs_info[0] (initial 'y0') tap t-3>",
                 "<mit-sot outputs_info[0] (initial 'y0') tap t-1>",
                 "<sit-sot outputs_info[1] (initial 'h0')>", "<shared acc>", "<non-sequence k>"]:
        assert role in inner_text, f"{role} missing from\n{text}"
    for section in ["> mit-sot outputs_info[0] (initial 'y0'):", "> sit-sot outputs_info[1] (initial 'h0'):",
                    "> shared acc:"]:
        assert section in inner_text, f"{section} missing from\n{text}"
    # roles belong to the inner graph only
    outside = "\n".join(lines[:body[0]])
    assert "<sequence" not in outside and "<non-sequence" not in outside
    assert "acc [id" in outside and "<shared>" in outside


def test_every_output_of_the_scan_is_printed_with_its_index():
    text = ss.dprint(rnn_function(), file="str")
    ids = set(re.findall(r"Scan\{rnn\} \[id ([A-Z]+)\]", text))
    assert len(ids) == 1, "one node, one id"
    assert re.search(r"Scan\{rnn\} \[id [A-Z]+\] out0", text)
    assert re.search(r"Scan\{rnn\} \[id [A-Z]+\] out1", text)
    assert re.search(r"Scan\{rnn\} \[id [A-Z]+\] out2 'acc_final'", text)


def test_while_loop_prints_its_condition():
    x = T.vector("x")
    out, _ = ss.scan(lambda a: (a * 2, ss.until(a > 3)), sequences=x, name="stop")
    text = ss.dprint(out, file="str")
    assert "Scan{stop, while}" in text
    assert "> nit-sot output 0:" in text and "> until:" in text
    assert text.index("> nit-sot output 0:") < text.index("> until:")


def test_go_backwards_shows_in_the_op():
    x = T.vector("x")
    out, _ = ss.scan(lambda a: a * 2, sequences=x, go_backwards=True)
    assert "Scan{scan, backwards}" in ss.dprint(out, file="str")


def test_nested_scans_print_nested_bodies():
    m = T.matrix("m")

    def row(r):
        inner, _ = ss.scan(lambda e, s: s + e, sequences=r, outputs_info=T.constant(0.0), name="inner")
        return inner[-1]

    out, _ = ss.scan(row, sequences=m, name="outer")
    f = ss.function([m], out, mode="py")
    np.testing.assert_array_equal(f(np.arange(6.0).reshape(2, 3)), [3.0, 12.0])
    lines = ss.dprint(f, file="str").splitlines()
    outer = next(i for i, line in enumerate(lines) if "Scan{outer}" in line)
    inner = next(i for i, line in enumerate(lines) if "Scan{inner}" in line)
    bodies = [i for i, line in enumerate(lines) if line.strip(" |") == "loop body:"]
    assert len(bodies) == 2
    outer_body, inner_body = bodies
    assert outer < outer_body < inner < inner_body
    assert (lines[outer].index("Scan{outer}") < lines[outer_body].index("loop body:")
            < lines[inner].index("Scan{inner}") < lines[inner_body].index("loop body:"))
    inner_text = "\n".join(lines[inner_body:])
    assert "<sequence sequences[0] 'm[t]' tap t>" in inner_text
    assert "<sit-sot outputs_info[0]>" in inner_text
    assert "<sequence sequences[0] 'm' tap t>" in "\n".join(lines[outer_body:inner_body])


def test_file_str_returns_the_text_and_default_prints_it(capsys):
    f = rnn_function()
    text = ss.dprint(f, file="str")
    assert isinstance(text, str) and text.endswith("\n")
    assert ss.dprint(f) is None
    assert capsys.readouterr().out == text
    buffer = io.StringIO()
    assert ss.dprint(f, file=buffer) is None
    assert buffer.getvalue() == text


def test_printing_a_variable_and_the_function_agree_on_the_body():
    u, k = T.vector("u"), T.scalar("k")
    out, _ = ss.scan(lambda a, k_: a * k_, sequences=u, non_sequences=k, name="m")
    of_var = ss.dprint(out, file="str")
    of_fn = ss.dprint(ss.function([u, k], out, mode="py"), file="str")
    for text in (of_var, of_fn):
        assert "Scan{m}" in text and "loop body:" in text
        assert "<sequence sequences[0] 'u' tap t>" in text and "<non-sequence k>" in text
