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
