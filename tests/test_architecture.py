"""docs/architecture.md against the package: its table names every component of src/dfil
at the layer the import rules give it (tests/test_imports.py's LAYERS) and every module
of each package, and nothing that does not exist."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from test_imports import LAYERS, MODULES, SRC, component

DOC = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
#: A row of the table: | layer | `component` or `package/` | `module`, ... | owns |
ROW = re.compile(r"^\| *(\d+) *\| *`(\w+)(/?)` *\|([^|]*)\|")


def rows(text: str) -> list[tuple[int, str, bool, set[str]]]:
    """(layer, component, is a package, its modules) of each row of the table."""
    return [(int(m[1]), m[2], m[3] == "/", set(re.findall(r"`([\w.]+)`", m[4])))
            for m in map(ROW.match, text.splitlines()) if m]


def actual() -> dict[str, set[str] | None]:
    """Each component: its modules relative to it (a package's), or None (a module)."""
    out: dict[str, set[str] | None] = {}
    for module in MODULES:
        name = component(module)
        if name == "dfil":
            continue
        if (SRC / name).is_dir():
            rel = module.removeprefix(f"dfil.{name}").removeprefix(".")
            out.setdefault(name, set()).update({rel} if rel else set())
        else:
            out[name] = None
    return out


DOCUMENTED = rows(DOC.read_text())


def test_rows_are_read():
    parsed = rows("| 1 | `a` | | x |\n| 2 | `b/` | `c`, `d.e` | y `z` |\n|---|---|---|---|")
    assert parsed == [(1, "a", False, set()), (2, "b", True, {"c", "d.e"})]


def test_the_table_names_every_component_once_and_nothing_else():
    names = Counter(name for _, name, _, _ in DOCUMENTED)
    assert not [n for n, k in names.items() if k > 1], "components listed twice"
    missing, unknown = set(actual()) - set(names), set(names) - set(actual())
    assert not missing, f"components of src/dfil the table does not name: {sorted(missing)}"
    assert not unknown, f"components the table names that do not exist: {sorted(unknown)}"


def test_packages_are_marked_and_list_exactly_their_modules():
    real = actual()
    for _, name, package, modules in DOCUMENTED:
        assert package == (real[name] is not None), f"{name}: package / module mark ('/')"
        assert modules == (real[name] or set()), (
            f"{name}/: modules missing from the table {sorted((real[name] or set()) - modules)}"
            f", named but absent {sorted(modules - (real[name] or set()))}")


def test_layers_are_the_import_rules_layers():
    wrong = {name: (layer, LAYERS[name]) for layer, name, _, _ in DOCUMENTED
             if int(LAYERS[name]) != layer}
    assert not wrong, f"layer in docs/architecture.md vs tests/test_imports.py: {wrong}"


#: Documents outside the repository (the design notes, the paper's inventory, the shared
#: folder beside a checkout) that a docstring or comment must not send a reader to; the
#: paper's own sections, equations and tables are cited as such.
OUTSIDE = re.compile(r"\bDESIGN\b|design card|\binventory\b|\.\./shared", re.IGNORECASE)


def prose(path: Path) -> list[str]:
    """The docstrings and comments of a module."""
    import ast
    import io
    import tokenize

    tree = ast.parse(path.read_text())
    out = [ast.get_docstring(n) or "" for n in ast.walk(tree)
           if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
    out += [t.string for t in tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
            if t.type == tokenize.COMMENT]
    return out


def test_no_docstring_or_comment_cites_a_document_outside_the_repository():
    found = {m: hit.group(0) for m, p in MODULES.items() for text in prose(p)
             if (hit := OUTSIDE.search(text))}
    assert not found, f"citations of documents not in the repository: {found}"
    assert OUTSIDE.search('see DESIGN "Layout"') and not OUTSIDE.search("App. F.4, Eq. (3)")
