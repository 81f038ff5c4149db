"""ARCHITECTURE.md's import rule, read off the source with ``ast``: each layer imports only
the layers below it, and ``rewrites`` never imports ``symscan.compile``."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# layer -> internal packages it may import (besides itself and symscan.config)
ALLOWED = {
    "symscan.graph": set(),
    "symscan.tensor": {"symscan.graph"},
    "symscan.scan": {"symscan.graph", "symscan.tensor"},
    "symscan.gradient": {"symscan.graph", "symscan.tensor", "symscan.scan"},
    "symscan.backends": {"symscan.graph", "symscan.tensor", "symscan.scan"},
    "symscan.onnx": {"symscan.graph", "symscan.tensor", "symscan.scan"},
    "rewrites": {"symscan.graph", "symscan.tensor", "symscan.scan"},
    "symscan.printing": {"symscan.graph", "symscan.tensor", "symscan.scan"},
    "symscan.drawing": {"symscan.graph", "symscan.tensor", "symscan.scan"},
    "symscan.latex": {"symscan.graph", "symscan.tensor", "symscan.scan"},
    "symscan.compile": {"symscan.graph", "symscan.tensor", "symscan.scan", "symscan.gradient", "symscan.backends",
                        "symscan.onnx", "rewrites"},
    # ONNX in, compiled or optimised, ONNX out: above compile (symscan.onnx loads them on first use)
    "symscan.onnx.pipeline": {"symscan.graph", "symscan.tensor", "symscan.scan", "symscan.onnx", "symscan.compile"},
    # a compiled function as a pure JAX function: above compile, as the ONNX pipeline
    "symscan.jax": {"symscan.graph", "symscan.tensor", "symscan.scan", "symscan.gradient", "symscan.backends",
                    "symscan.compile"},
    "symscan.onnx.backend": {"symscan.graph", "symscan.tensor", "symscan.scan", "symscan.onnx", "symscan.onnx.pipeline",
                             "symscan.compile"},
}
INTERNAL = ("symscan", "rewrites")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer_of(module: str) -> str | None:
    for layer in sorted(ALLOWED, key=len, reverse=True):
        if module == layer or module.startswith(layer + "."):
            return layer
    return None


def _imports(path: Path, module: str) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: -node.level or None] if path.name != "__init__.py" else module.split(".")
                if path.name == "__init__.py" and node.level > 1:
                    base = base[: -(node.level - 1)]
                names.append(".".join(base + ([node.module] if node.module else [])))
            else:
                names.append(node.module)
    return [n for n in names if n and n.split(".")[0] in INTERNAL]


SOURCES = sorted(p for pkg in INTERNAL for p in (ROOT / pkg).rglob("*.py"))


def test_sources_found():
    assert any(p.parts[-2] == "graph" for p in SOURCES)
    assert any(p.parts[-2] == "rewrites" for p in SOURCES)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_layer_imports_only_lower_layers(path):
    module = _module_name(path)
    layer = _layer_of(module)
    if layer is None:  # symscan/__init__, __main__, config, compat: the public surface
        return
    allowed = ALLOWED[layer] | {layer, "symscan.config"}
    for name in _imports(path, module):
        target = _layer_of(name) or name
        assert target in allowed or name == "symscan.config", (
            f"{module} (layer {layer}) imports {name}; {layer} may import only {sorted(allowed)}")


def test_the_rule_catches_an_upward_import(tmp_path):
    """The checker itself fails on a graph module importing the tensor layer."""
    bad = ROOT / "symscan" / "graph" / "_probe_upward.py"
    try:
        bad.write_text("from symscan.tensor import basic\n")
        module = _module_name(bad)
        names = _imports(bad, module)
        assert "symscan.tensor" in names
        assert _layer_of("symscan.tensor") not in ALLOWED["symscan.graph"]
    finally:
        bad.unlink()
