"""The notebooks run top to bottom (each in under 60 s) and their committed copies carry
their outputs, pictures included, so they read on a repository host without running."""

import re
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_the_five_notebooks_exist():
    assert [p.name for p in NOTEBOOKS] == ["01_scan_tour.ipynb", "02_rewrites.ipynb", "03_onnx_export.ipynb",
                                           "04_gradients.ipynb", "05_state_space.ipynb"]


# Run after a notebook's own cells: every compiled function and drawing the notebook made, laid
# out closed and open, passes the geometry checks of tests/drawing (issue 24's "every graph of
# the notebooks").
GEOMETRY_CELL = """
import sys
sys.path.insert(0, {support!r})
from drawing_checks import geometry_problems
from symscan.compile.function import Function
from symscan.drawing import Drawing
_checked, _problems = 0, []
for _name, _value in list(globals().items()):
    if isinstance(_value, (Function, Drawing)):
        _obj, _options = (_value, {{}}) if isinstance(_value, Function) else (
            _value.obj, {{"plumbing": _value.plumbing, "rewrites": _value.rewrites}})
        for _loops in ("closed", "open"):
            _problems += [f"{{_name}} ({{_loops}}): {{p}}" for p in
                          geometry_problems(Drawing(_obj, loops=_loops, **_options).layout)]
            _checked += 1
print(f"geometry: {{_checked}} pictures, {{len(_problems)}} problems", *_problems[:20], sep="\\n")
"""


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_without_errors_and_its_graphs_draw_readably(path, tmp_path):
    notebook = nbformat.read(path, as_version=4)
    support = str(Path(__file__).resolve().parent / "support")
    notebook.cells.append(nbformat.v4.new_code_cell(GEOMETRY_CELL.format(support=support)))
    client = NotebookClient(notebook, timeout=60, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    start = time.perf_counter()
    client.execute()
    assert time.perf_counter() - start < 60
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    report = "".join(o.get("text", "") for o in notebook.cells[-1].outputs)
    checked, problems = (int(n) for n in re.match(r"geometry: (\d+) pictures, (\d+) problems", report).groups())
    assert checked >= 2 and problems == 0, report


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_notebook_has_its_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert code and all(c.get("execution_count") for c in code), "commit the notebook executed"
    kinds = {kind for c in code for o in c.outputs for kind in o.get("data", {})}
    graphs = [o for c in code for o in c.outputs
              if o.get("data", {}).get("text/html", "").startswith('<iframe class="symscan-drawing"')]
    if path.stem in ("01_scan_tour", "02_rewrites"):
        assert "text/latex" in kinds
    if path.stem in ("01_scan_tour", "02_rewrites", "04_gradients", "05_state_space"):
        assert graphs, "the interactive graph view (ss.draw in an iframe)"
    if path.stem in ("01_scan_tour", "02_rewrites", "04_gradients"):
        static = [o["data"]["image/svg+xml"] for c in code for o in c.outputs if "image/svg+xml" in o.get("data", {})]
        # a static picture of a loop, for repository hosts (which do not run the iframe)
        assert static and all("<svg" in s and "scan " in s for s in static)
    if path.stem == "02_rewrites":
        assert len(graphs) >= 3  # as written, optimised, and what the rewrites moved
        assert "text/html" in kinds  # the rewrite report as a table
    if path.stem == "04_gradients":
        assert len(graphs) >= 2  # the backward loop alone, the gradient function with both loops
        assert "image/png" in kinds  # the loss curve and the learned signal
        assert "text/html" in kinds  # the rewrite report
    if path.stem == "05_state_space":
        pictures = [o for c in code for o in c.outputs if "image/png" in o.get("data", {})]
        tables = [o for c in code for o in c.outputs if "<table" in o.get("data", {}).get("text/html", "")]
        assert len(pictures) >= 2  # the loss curve, the filtered states with their bands
        assert len(tables) >= 2  # fitted against true parameters, the loop's rewrite report
