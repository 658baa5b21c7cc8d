"""The GPU kit's two lists, and its check on a lent GPU machine.

:func:`carried` reads the distributions ``workflow/gpu-carry.sh`` carries (its ``CARRY``
list, and bitsandbytes, trimmed); :func:`image` the ones ``workflow/gpu-image.txt`` says
the machine's image has. ``tests/test_gpu_kit.py`` checks here that the two cover
pyproject.toml's dependencies and the carried packages' own.

``python3 workflow/gpu_kit.py [--site DIR]`` (``workflow/gpu-env.sh`` runs it there, DIR
being where the wheels were installed) checks the machine: each package gpu-image.txt
lists is installed (its version printed); each of pyproject.toml's dependencies is
installed within its bounds; each carried package's own requirements are met (a warning
otherwise); every module of ``dfil`` and the top-level modules of every dependency and
carried package import. Exit status 1, naming each failure, if any fails.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata as md
import pkgutil
import re
import sys
import traceback
from pathlib import Path

import tomllib
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
#: The lent machine's interpreter and platform, for the markers of a requirement.
TARGET = {"python_version": "3.12", "python_full_version": "3.12.3", "os_name": "posix",
          "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64",
          "implementation_name": "cpython", "platform_python_implementation": "CPython",
          "extra": ""}


def norm(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def carried(script: Path = ROOT / "workflow" / "gpu-carry.sh") -> set[str]:
    """The distributions the kit carries: the script's ``CARRY=( ... )`` names (comments
    aside), and bitsandbytes where the script copies its CUDA library."""
    text = script.read_text()
    block = re.search(r"^CARRY=\((.*?)^\)", text, re.S | re.M)
    if block is None:
        raise ValueError(f"{script}: no CARRY=( ... ) list")
    names = {norm(w) for line in block.group(1).splitlines() for w in line.split("#")[0].split()}
    if "libbitsandbytes_cuda130.so" in text:
        names.add("bitsandbytes")
    return names


def image(notes: Path = ROOT / "workflow" / "gpu-image.txt") -> dict[str, str | None]:
    """Name -> the version a device session recorded (None: not recorded)."""
    out = {}
    for number, line in enumerate(notes.read_text().splitlines(), 1):
        fields = line.split("#")[0].split()
        if not fields:
            continue
        if len(fields) < 3:
            raise ValueError(f"{notes}:{number}: expected 'name version where', got {line!r}")
        out[norm(fields[0])] = None if fields[1] == "-" else fields[1]
    return out


def dependencies(pyproject: Path = ROOT / "pyproject.toml") -> list[Requirement]:
    """``[project].dependencies``."""
    with open(pyproject, "rb") as f:
        return [Requirement(r) for r in tomllib.load(f)["project"]["dependencies"]]


def applies(req: Requirement, env: dict | None = None) -> bool:
    """Whether ``req`` holds on ``env`` (this interpreter when None), no extras asked."""
    return req.marker is None or req.marker.evaluate({"extra": "", **(env or {})})


def requirements(dist: md.Distribution, env: dict | None = None) -> list[Requirement]:
    """The runtime requirements of ``dist`` that hold on ``env``."""
    return [r for r in map(Requirement, dist.requires or []) if applies(r, env)]


def _version(name: str) -> str | None:
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


def _modules(names: set[str]) -> list[str]:
    """The top-level module of each installed distribution in ``names``: the one named
    like it, else all it installs (``yaml`` for pyyaml), the private ones aside; not
    extras such as itables' ``itables_for_dash``, which needs dash."""
    tops = {}
    for module, dists in md.packages_distributions().items():
        for dist in dists:
            if module.isidentifier() and not module.startswith("_"):
                tops.setdefault(norm(dist), set()).add(module)
    out = set()
    for name in names:
        found = tops.get(name, set())
        same = {m for m in found if norm(m) == name}
        out |= same or found
    return sorted(out)


def check(site: Path | None) -> int:
    errors, warnings = [], []
    seen = []
    for name, recorded in image().items():
        version = _version(name)
        if version is None:
            errors.append(f"{name}: gpu-image.txt says the image has it; it is not installed")
        else:
            seen.append(f"{name} {version}" + (
                "" if recorded in (None, version) else f" (gpu-image.txt: {recorded})"))
    print("image:", ", ".join(seen))
    deps = [r for r in dependencies() if applies(r)]
    for req in deps:
        version = _version(req.name)
        if version is None:
            errors.append(f"{req.name}: a dependency in pyproject.toml, not installed")
        elif not req.specifier.contains(version, prereleases=True):
            errors.append(f"{req.name} {version}: pyproject.toml asks {req.specifier}")
    if site is not None:
        kit = list(md.distributions(path=[str(site)]))
        print(f"kit: {len(kit)} packages in {site}")
        for dist in kit:
            for req in requirements(dist):
                version = _version(req.name)
                if version is None or not req.specifier.contains(version, prereleases=True):
                    warnings.append(f"{dist.metadata['Name']} {dist.version} needs {req}; "
                                    f"{'missing' if version is None else version} here")
    modules = _modules({norm(r.name) for r in deps} | carried())
    try:
        import dfil

        modules += sorted(m.name for m in pkgutil.walk_packages(dfil.__path__, "dfil.")
                          if not m.name.endswith("__main__"))
    except Exception:
        errors.append("dfil: " + traceback.format_exc(limit=-3))
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception:
            errors.append(f"import {module}: " + traceback.format_exc(limit=-3))
    print(f"imports: {len(modules)} modules")
    for line in warnings:
        print("warning:", line)
    for line in errors:
        print("ERROR:", line, file=sys.stderr)
    if errors:
        print(f"gpu kit: {len(errors)} failures above; carry the missing packages "
              "(workflow/gpu-carry.sh) or correct workflow/gpu-image.txt", file=sys.stderr)
    return 1 if errors else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", type=Path, help="where the carried wheels were installed")
    return check(ap.parse_args(argv).site)


if __name__ == "__main__":
    sys.exit(main())
