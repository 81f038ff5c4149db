"""The benchmark workloads W1-W9, K1 and H1 at small sizes, exported plain (mode "py") and
optimised (mode "fast"): the model passes the full checker and agrees with the workload's numpy
loop in onnxruntime. K1 needs a matrix inverse, which ONNX's standard domain lacks: its export
is refused by name."""

import numpy as np
import pytest

import symscan as ss
from benchmarks.workloads import all_workloads

WORKLOADS = {w.name: w for w in all_workloads(quick=True)}

# The loops each plain workload lowers to (API.md "Export").
PLAIN_LOWERING = {"W1": ["Loop"], "W2": ["Scan"], "W3": ["Scan"], "W4": ["Scan"], "W5": ["Loop"], "W6": ["Loop"],
                  "W7": ["Loop"], "W8": ["Scan", "Scan"], "W9": ["Scan"], "H1": ["Scan"]}
NOT_EXPORTED = {"K1": "MatrixInverse has no ONNX lowering"}


@pytest.mark.parametrize("mode", ["py", "fast"], ids=["plain", "optimised"])
@pytest.mark.parametrize("name", [n for n in WORKLOADS if n not in NOT_EXPORTED])
def test_workload_exports_and_matches_its_numpy_loop(export_check, name, mode):
    workload = WORKLOADS[name]
    f = ss.function(workload.inputs, workload.outputs, mode=mode)
    model = export_check.export(f)
    got = export_check.session(model).run(None, export_check.feeds(model, f, workload.values))
    expected = workload.numpy_loop(*workload.values)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == np.shape(e) and g.dtype == np.asarray(e).dtype
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12)
    if mode == "py":
        assert [kind for kind, _ in export_check.loop_kinds(model.graph)] == PLAIN_LOWERING[name]


@pytest.mark.parametrize("name", list(NOT_EXPORTED))
def test_workload_without_an_onnx_form_is_refused_by_name(name):
    from symscan.onnx.context import ExportError

    workload = WORKLOADS[name]
    f = ss.function(workload.inputs, workload.outputs, mode="py")
    with pytest.raises(ExportError, match=NOT_EXPORTED[name]):
        ss.onnx.export(f)
