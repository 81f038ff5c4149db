"""Ops whose ONNX semantics differ from numpy's, and checks hidden in loop bodies: imported
models give onnxruntime's results (or its failure) in modes py, fast and numba."""

import numpy as np
import onnx
import pytest
from onnx_models import assert_outputs, graph, loop_body, model, run_onnxruntime, run_symscan, value

import symscan as ss
from symscan.onnx.context import CHECK_MARK

make = onnx.helper.make_node


def binary(op_type: str, dtype: str, **attrs) -> onnx.ModelProto:
    return model([make(op_type, ["a", "b"], ["y"], **attrs)], [value("a", dtype, ["N"]), value("b", dtype, ["N"])],
                 [value("y", dtype, ["N"])])


def test_mod_with_fmod_has_the_dividends_sign_exactly(mode):
    """C's fmod, not numpy's modulo shifted: exact for tiny dividends and infinite divisors."""
    a = np.array([-1.0, -1e-20, 5.5, -7.0, 7.0, -0.0])
    b = np.array([np.inf, 1.0, 2.0, 2.0, -2.0, 3.0])
    m = binary("Mod", "float64", fmod=1)
    got = run_symscan(m, mode, [a, b])
    assert_outputs(got, run_onnxruntime(m, [a, b]), "fmod", rtol=0, atol=0)
    assert np.signbit(got[0][-1]) and got[0][1] == -1e-20


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_pow_with_negative_exponents(mode, dtype):
    """numpy refuses integers to negative integer powers; onnxruntime truncates (2 ** -1 is 0)."""
    a, b = np.array([2, 1, -1, 3, 0], dtype=dtype), np.array([-1, -2, -3, 2, 3], dtype=dtype)
    m = binary("Pow", dtype)
    assert_outputs(run_symscan(m, mode, [a, b]), run_onnxruntime(m, [a, b]), "integer pow")


@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("length", [0, 1, 4])
def test_cumsum_forms_of_every_length(mode, exclusive, reverse, length):
    m = model([make("CumSum", ["x", "axis"], ["y"], exclusive=exclusive, reverse=reverse)],
              [value("x", "float64", ["N"])], [value("y", "float64", ["N"])], initializers={"axis": np.array(0)})
    x = np.arange(1.0, length + 1.0)
    assert_outputs(run_symscan(m, mode, [x]), run_onnxruntime(m, [x]), f"CumSum of {length}")


def guarded_doubling(steps_read_by_nobody: bool = True) -> onnx.ModelProto:
    """``for i in range(n): x = 2 * x`` whose body holds a check (written as symscan exports
    them: an If whose failing branch names the error) that x stays below 100; nothing reads the
    check's value when ``steps_read_by_nobody``."""
    check = graph([make("Reshape", ["x_out", "flat"], ["f"]),
                   make("Gather", ["f", "far"], ["failed"], name=f"{CHECK_MARK}c: x passed 100")], [],
                  [value("failed", "float64", None)], name="fail", initializers={"flat": np.array([-1]),
                                                                                    "far": np.array(2 ** 62)})
    keep = graph([make("Identity", ["x_out"], ["kept"])], [], [value("kept", "float64", None)], name="keep")
    checked = "x_checked" if steps_read_by_nobody else "x_result"
    body = loop_body([make("Mul", ["x", "two"], ["x_out"]), make("Less", ["x_out", "hundred"], ["ok"]),
                      make("If", ["ok"], [checked], then_branch=keep, else_branch=check),
                      make("Identity", ["x_out" if steps_read_by_nobody else checked], ["x_next"])],
                     carried=[("x", "x_next", "float64", [])],
                     initializers={"two": np.array(2.0), "hundred": np.array(100.0)})
    return model([make("Loop", ["n", "", "x0"], ["x_final"], body=body)], [value("n", "int64"), value("x0", "float64")],
                 [value("x_final", "float64")])


@pytest.mark.parametrize("read", [True, False], ids=["check read by nobody", "check read"])
def test_a_check_in_a_for_loop_body_fails_the_call(mode, read):
    """onnxruntime runs every node, so a failing check fails the model though nothing reads it;
    imported, the check rides on the body's outputs (not on its condition, which a for loop drops)."""
    m = guarded_doubling(steps_read_by_nobody=read)
    assert_outputs(run_symscan(m, mode, [np.int64(5), np.float64(1.0)]), [np.float64(32.0)], "5 doublings")
    with pytest.raises(Exception, match="x passed 100"):
        run_onnxruntime(m, [np.int64(10), np.float64(1.0)])
    with pytest.raises(ValueError, match="x passed 100"):
        run_symscan(m, mode, [np.int64(10), np.float64(1.0)])


def test_a_carried_value_changing_dtype_is_refused_naming_it():
    body = loop_body([make("Cast", ["v"], ["v_out"], to=onnx.TensorProto.INT64)],
                     carried=[("v", "v_out", "int32", [])])
    m = model([make("Loop", ["n", "", "v0"], ["v_final"], body=body, name="widening")],
              [value("n", "int64"), value("v0", "int32")], [value("v_final", "int32")], check=False)
    with pytest.raises(ss.onnx.ModelImportError, match=r"'widening'.*'v' is int32\[\] before a step and int64\[\]"):
        ss.onnx.load(m)


EINSUMS = {
    "ij,jk->ik": [(3, 4), (4, 5)], "bij,bjk->bik": [(2, 3, 4), (2, 4, 5)], "i,i": [(4,), (4,)],
    "i,j->ij": [(3,), (4,)], "ij->ji": [(3, 4)], "ij->i": [(3, 4)], "ii->i": [(4, 4)], "ii": [(4, 4)],
    "...ij,...jk->...ik": [(2, 1, 3, 4), (5, 4, 2)], "ij,jk,kl->il": [(2, 3), (3, 4), (4, 5)],
    "abc,cd->abd": [(2, 3, 4), (4, 5)], "ij,kj": [(3, 4), (5, 4)], "bii,bi->b": [(2, 3, 3), (2, 3)],
    "ijk,ikl->jl": [(2, 3, 4), (2, 4, 5)], "i,i,i->": [(3,), (3,), (3,)],
}


@pytest.mark.parametrize("equation", list(EINSUMS))
def test_einsum_is_numpys(equation):
    shapes = EINSUMS[equation]
    names = [f"x{i}" for i in range(len(shapes))]
    inputs = [value(n, "float64", s) for n, s in zip(names, shapes)]
    m = model([make("Einsum", names, ["y"], equation=equation)], inputs, [value("y", "float64", None)], check=False)
    rng = np.random.default_rng(len(equation))
    values = [rng.normal(size=s) for s in shapes]
    (got,) = run_symscan(m, "fast", values)
    np.testing.assert_allclose(got, np.einsum(equation, *values), rtol=1e-12, atol=1e-12)


def test_a_two_operand_einsum_is_one_product_not_a_broadcast():
    """600 x 600 times 600 x 600 as one matmul: no 600**3 intermediate (1.7 GB)."""
    m = model([make("Einsum", ["a", "b"], ["y"], equation="ij,jk->ik")],
              [value(n, "float64", [600, 600]) for n in ("a", "b")], [value("y", "float64", [600, 600])])
    f = ss.onnx.import_function(m)
    assert [type(n.op).__name__ for n in f.fgraph.apply_nodes].count("MatMul") == 1
    assert all(None in o.type.shape or np.prod(o.type.shape) <= 600 * 600
               for n in f.fgraph.apply_nodes for o in n.outputs)
