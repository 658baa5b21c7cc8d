"""The import rules of docs/architecture.md, checked over every module of src/dfil:
stages import only stages below them, train and evaluate never import each other,
nothing imports the CLI, and the pure stages never import torch. How long, wide and
branching a function may be is ruff's to check (C901, PLR0913, PLR0915 in pyproject.toml)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "dfil"

#: Each top-level component of the package and its layer; a module may import its own
#: component and components of lower layers only.
LAYERS = {
    "util": 0,
    "core": 1, "stats": 1, "cluster": 1,
    "dfil": 2, "inference": 2, "metrics": 2, "hub": 2, "cost": 2,
    "contracts": 3,
    "config": 4,
    "data": 5, "model": 5,
    "engine": 6,
    "preflight": 7,
    "train": 8, "evaluate": 8,
    "results": 9, "pages": 9,
    "render": 10, "audit": 10,
    "claims": 11,
    "report": 12,
    "plan": 13,
    "cli": 14, "__main__": 15,
}
#: Components that must stay importable without torch (numpy/pandas/scipy/jinja2 only).
PURE = {"dfil", "inference", "metrics", "util", "core", "cluster", "stats", "contracts",
        "config", "results", "render", "audit", "claims", "report", "hub", "pages", "cost",
        "preflight", "plan"}


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


def test_first_docstring_line_states_the_concern():
    missing = [m for m, p in MODULES.items() if not ast.get_docstring(ast.parse(p.read_text()))]
    assert not missing, f"modules without a docstring: {missing}"
