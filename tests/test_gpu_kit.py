"""The GPU kit (workflow/gpu-carry.sh, workflow/gpu-image.txt) covers what the package
needs on a lent GPU machine: every dependency in pyproject.toml, and every dependency of a
carried package, is carried as a wheel or listed as the image's, so a dependency added
later fails here until the kit carries or lists it. Reads the script and the notes, and
.venv's metadata; downloads nothing."""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("gpu_kit", ROOT / "workflow" / "gpu_kit.py")
kit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kit)

SCRIPTS = ["gpu-carry.sh", "gpu-env.sh", "gpu-check.sh"]


def uncovered(requirements, carried: set[str], image: dict) -> list[str]:
    """The requirements (holding on the lent machine) neither carried nor the image's."""
    return sorted({f"{r.name}{r.specifier}" for r in requirements
                   if kit.applies(r, kit.TARGET) and kit.norm(r.name) not in carried
                   and kit.norm(r.name) not in image})


def test_every_dependency_is_carried_or_the_images():
    carried, image = kit.carried(), kit.image()
    missing = uncovered(kit.dependencies(), carried, image)
    assert not missing, (f"pyproject.toml's {missing}: add to CARRY in "
                         "workflow/gpu-carry.sh, or to workflow/gpu-image.txt with the "
                         "version a device session saw")
    assert "bitsandbytes" in carried and "transformers" in carried


def test_a_dependency_added_later_is_uncovered():
    added = [*kit.dependencies(), Requirement("newdep>=1.0"),
             Requirement("winonly>=1; platform_system == 'Windows'")]
    assert uncovered(added, kit.carried(), kit.image()) == ["newdep>=1.0"]


def test_the_carried_packages_dependencies_are_carried_or_the_images():
    carried, image = kit.carried(), kit.image()
    for name in sorted(carried):
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            pytest.fail(f"{name} is carried but not installed here: pip install -e '.[dev]'")
        missing = uncovered(kit.requirements(dist, kit.TARGET), carried, image)
        assert not missing, f"{name} needs {missing}: carry them or list them as the image's"


def test_nothing_is_both_carried_and_the_images():
    assert not kit.carried() & set(kit.image())


def test_recorded_image_versions_meet_every_bound():
    """A version a device session recorded meets pyproject.toml's bound and each carried
    package's requirement on it (one not recorded is checked there, by gpu_kit.py)."""
    image = kit.image()
    wants = [(r, "pyproject.toml") for r in kit.dependencies()]
    for name in kit.carried():
        wants += [(r, name) for r in kit.requirements(md.distribution(name), kit.TARGET)]
    for req, who in wants:
        recorded = image.get(kit.norm(req.name))
        if recorded:
            assert req.specifier.contains(recorded, prereleases=True), (
                f"{who} asks {req}; the image has {recorded}: carry it instead")


def test_image_notes_parse_and_name_where_each_was_recorded(tmp_path):
    notes = tmp_path / "image.txt"
    notes.write_text("# what the image has\ntorch  2.11.0  seen there  # a comment\n"
                     "Typing_Extensions  -  a package list\n")
    assert kit.image(notes) == {"torch": "2.11.0", "typing-extensions": None}
    bad = tmp_path / "notes.txt"
    bad.write_text("# comment\nnumpy 2.5.2\n")
    with pytest.raises(ValueError, match=r"notes.txt:2: expected 'name version where'"):
        kit.image(bad)


@pytest.mark.parametrize("script", SCRIPTS)
def test_kit_scripts_parse(script):
    path = ROOT / "workflow" / script
    assert subprocess.run(["bash", "-n", path]).returncode == 0
    if shutil.which("shellcheck"):
        found = subprocess.run(["shellcheck", "-s", "bash", "-S", "warning", path],
                               capture_output=True, text=True)
        assert found.returncode == 0, found.stdout
