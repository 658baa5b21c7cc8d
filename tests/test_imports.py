"""The import rules of docs/architecture.md, checked over every module of src/dfil:
stages import only stages below them, train and evaluate never import each other,
nothing imports the CLI, and the pure stages never import torch; modules stay small and
functions short and narrow."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "dfil"

#: Each top-level component of the package and its layer; a module may import its own
#: component and components of lower layers only.
LAYERS = {
    "dfil": -1, "errors": -0.5, "atomic": 0, "paths": 0, "provenance": 0, "quantifiers": 0,
    "cluster": 0, "inference": 0, "metrics": 0, "stats": 0, "methods": 0,
    "validation": 0.5, "yamlfile": 0.6,
    "runkey": 1, "contracts": 1, "cellconfig": 1, "hub": 1, "cost": 1, "digests": 1.5,
    "gridfile": 2, "gridacceptance": 1.5, "gridcontrols": 2, "pins": 2, "data": 2, "model": 2,
    "grid": 3,
    "engine": 4, "preflight": 4.5,
    "train": 5, "evaluate": 5,
    "results": 6, "pages": 6.5,
    "render": 7, "audit": 7, "publish": 7,
    "claims": 7.5,
    "report": 8,
    "plan": 8.5,
    "cli": 9,
}
#: Components that must stay importable without torch (numpy/pandas/scipy/jinja2 only).
PURE = {"dfil", "errors", "atomic", "paths", "cluster", "validation", "yamlfile", "quantifiers",
        "inference", "metrics", "stats", "methods", "runkey", "contracts",
        "cellconfig", "gridfile", "gridacceptance", "gridcontrols", "pins", "grid", "results",
        "render", "audit", "claims", "report", "hub", "digests", "pages",
        "cost", "preflight", "publish", "plan"}


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


#: A function may run to this many lines (decorators aside) ...
LONG = 50
#: ... and this many may run longer (a declarative argument parser, say).
LONG_ALLOWED = 3
#: Parameters of any kind (``self``/``cls`` aside), ``*args`` and ``**kwargs`` included.
WIDE = 6


def functions() -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every function and method of src/dfil, by ``module:line name``."""
    out = {}
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[f"{module}:{node.lineno} {node.name}"] = node
    return out


def n_params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = node.args
    n = (len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + bool(a.vararg)
         + bool(a.kwarg))
    positional = a.posonlyargs + a.args
    return n - 1 if positional and positional[0].arg in ("self", "cls") else n


def test_functions_stay_short():
    long = {name: n for name, node in functions().items()
            if (n := node.end_lineno - node.lineno + 1) > LONG}
    assert len(long) <= LONG_ALLOWED, f"functions over {LONG} lines: {long}"


def test_functions_take_few_parameters():
    wide = {name: n for name, node in functions().items() if (n := n_params(node)) > WIDE}
    assert not wide, f"functions with more than {WIDE} parameters: {wide}"


def test_function_shape_counts_hand_checked():
    tree = ast.parse("class C:\n    def m(self, a, /, b, *c, d, **e):\n        return 1\n"
                     "def f(x, y=1):\n    pass\n")
    found = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert n_params(found["m"]) == 5 and n_params(found["f"]) == 2
    assert found["m"].end_lineno - found["m"].lineno + 1 == 2
