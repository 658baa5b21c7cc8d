"""Each backbone's architecture for the cost model, with where it came from.

In order: the grid's ``arch:`` for the backbone; the ``config.json`` of its fetched
snapshot in the hub cache (transformers' ``AutoConfig``, offline; the embedded backbone's
converted directory for ``embedded:`` ids); and, only when asked (``--catalogue``), the
offline catalogue of published shapes (:mod:`dfil.cost.archs`, the source tests and
benchmarks use where nothing is fetched). A backbone none of these gives has no
architecture: its cells are left out of the projection, never counted as 0, and its
line says how to give it one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dfil.util.errors import InputError

_COMMIT = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class Arch:
    """A backbone's architecture (``config``: a transformers config dict, None when none
    is known) and ``source``: where it came from, or what gives it one."""

    name: str
    config: dict | None
    source: str


def _snapshot(backbone: dict) -> Path | None:
    """The fetched directory holding the backbone's config.json; None if not fetched."""
    from dfil.hub import cache_root, fetched_path

    model_id, commit = backbone.get("model_id", ""), backbone.get("revision", "")
    try:
        if model_id.startswith("embedded:"):
            from dfil.model.embedded import embedded_path

            path = embedded_path(model_id.split(":", 1)[1])
        elif _COMMIT.fullmatch(commit):
            path = fetched_path(cache_root(), "model", model_id, commit)
        else:
            return None
    except InputError:  # not fetched, or a fetch that did not finish
        return None
    return path if (path / "config.json").is_file() else None


def _read_config(path: Path) -> dict:
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(path, local_files_only=True).to_dict()


def backbone_arch(backbone: dict, results: str, catalogue: bool = False) -> Arch:
    """The :class:`Arch` of a cell's ``model.backbone`` entry; ``results`` is the grid's
    results directory (its fetch rule's target is named in the fix)."""
    from dfil.cost.archs import catalogue_arch

    name, model_id = backbone.get("name", ""), backbone.get("model_id", "")
    if backbone.get("arch"):
        return Arch(name, dict(backbone["arch"]), f"the grid's backbones.{name}.arch")
    path, problem = _snapshot(backbone), ""
    if path is not None:
        try:
            return Arch(name, _read_config(path), f"config.json of the fetched {path}")
        except (OSError, ValueError) as err:
            problem = f"its fetched config.json does not load ({err}); "
    known = catalogue_arch(backbone)
    if catalogue and known:
        return Arch(name, known, "the offline catalogue (dfil.cost.archs), not a "
                    "fetched config.json")
    return Arch(name, None, (
        f"no architecture for backbone {name} ({model_id or 'no model_id'}), its cells left "
        f"out: {problem}fetch its config.json (snakemake {results}/hub/model/{name}.json) or "
        f"give backbones.{name}.arch its fields"
        f"{'' if known is None else ' (or --catalogue: the offline shapes)'}"))


def grid_archs(grid, catalogue: bool = False) -> dict[str, Arch]:
    """The :class:`Arch` of each backbone the cells of :class:`dfil.config.grid.Grid` ``grid``
    read, by backbone name."""
    out: dict[str, Arch] = {}
    for cell in grid.cells.values():
        backbone = cell.config["model"]["backbone"]
        if backbone.get("name", "") not in out:
            out[backbone.get("name", "")] = backbone_arch(backbone, grid.results, catalogue)
    return out
