"""The import rules of docs/architecture.md, checked over every module of src/dfil:
stages import only stages below them, train and evaluate never import each other,
nothing imports the CLI, and the pure stages never import torch."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "dfil"

#: Each top-level component of the package and its layer; a module may import its own
#: component and components of lower layers only.
LAYERS = {
    "dfil": -1, "errors": -0.5, "atomic": 0, "provenance": 0, "quantifiers": 0,
    "inference": 0, "metrics": 0, "stats": 0, "methods": 0, "locks": 0, "runlock": 0.2,
    "validation": 0.5, "yamlfile": 0.6,
    "runkey": 1, "contracts": 1, "cellconfig": 1, "hub": 1, "cost": 1,
    "gridfile": 2, "data": 2, "model": 2,
    "grid": 3,
    "engine": 4, "preflight": 4.5,
    "train": 5, "evaluate": 5,
    "results": 6,
    "render": 7, "audit": 7,
    "cli": 8,
}
#: Components that must stay importable without torch (numpy/pandas/scipy/jinja2 only).
PURE = {"dfil", "errors", "atomic", "validation", "yamlfile", "locks", "quantifiers",
        "inference", "metrics", "stats", "methods", "runlock", "runkey", "contracts", "cellconfig",
        "gridfile", "grid", "results", "render", "audit", "hub", "cost"}


def component(module: str) -> str:
    parts = module.split(".")
    return "dfil" if len(parts) == 1 else parts[1]


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).with_suffix("")
        name = ".".join(rel.parts)
        out[name.removesuffix(".__init__")] = path
    return out


def imports(path: Path) -> set[str]:
    """Every module named by an import statement in ``path`` (function-level ones too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


MODULES = modules()


def test_every_component_has_a_layer():
    assert {component(m) for m in MODULES} <= set(LAYERS)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_run_one_way(module):
    own = component(module)
    wrong = sorted(
        f"{target} (layer {LAYERS[component(target)]})"
        for target in imports(MODULES[module])
        if target.startswith("dfil") and component(target) != own
        and LAYERS[component(target)] >= LAYERS[own])
    assert not wrong, f"{module} (layer {LAYERS[own]}) imports upward or sideways: {wrong}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if component(m) in PURE))
def test_pure_stages_never_import_torch(module):
    heavy = {t for t in imports(MODULES[module])
             if t.split(".")[0] in ("torch", "transformers", "peft", "bitsandbytes")}
    assert not heavy, f"{module} imports {sorted(heavy)}"


def test_modules_stay_small():
    long = {m: n for m, p in MODULES.items() if (n := len(p.read_text().splitlines())) > 300}
    assert not long, f"modules over 300 lines: {long}"


def test_first_docstring_line_states_the_concern():
    missing = [m for m, p in MODULES.items() if not ast.get_docstring(ast.parse(p.read_text()))]
    assert not missing, f"modules without a docstring: {missing}"
