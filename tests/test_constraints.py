"""workflow/constraints.txt pins every dependency that setup.sh installs (pyproject.toml's
own and its dev extra's, torch aside), each inside pyproject's bounds, so the install here,
in CI and on a cluster's login node resolves to the versions the project is tested with."""

from __future__ import annotations

import importlib.metadata as md
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def pins(text: str) -> dict[str, Version]:
    """``name==version`` lines of a constraints file (comments and blank lines aside)."""
    out = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep, f"constraints.txt line {number}: {line!r} is not name==version"
            out[canonicalize_name(name)] = Version(version)
    return out


def declared() -> list[Requirement]:
    """pyproject.toml's dependencies and its dev extra's (as the installed package's
    metadata holds them) that apply on this machine."""
    out = []
    for req in map(Requirement, md.requires("dfil") or []):
        if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in ("", "dev")):
            out.append(req)
    return out


def test_pins_parse_name_equals_version():
    assert pins("# a comment\nFoo_Bar==1.2.0\n\nbaz==2  # why\n") == {
        "foo-bar": Version("1.2.0"), "baz": Version("2")}


def test_every_dependency_is_pinned_within_its_bounds():
    pinned = pins((ROOT / "workflow" / "constraints.txt").read_text())
    assert "torch" not in pinned  # the cluster installs its CUDA build
    problems = []
    for req in declared():
        if canonicalize_name(req.name) == "torch":
            continue
        version = pinned.get(canonicalize_name(req.name))
        if version is None:
            problems.append(f"{req.name}: not pinned")
        elif version not in req.specifier:
            problems.append(f"{req.name}=={version} outside pyproject's {req.specifier}")
    assert not problems, ("workflow/constraints.txt (regenerate it as its header says): "
                          + "; ".join(problems))
