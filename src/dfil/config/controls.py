"""Which cells a positive control compares (the grid's ``controls:``): each control cell
with the reference cell at its coordinates, checked to differ only in its input, so a
control's effect can come from nothing else (pure Python)."""

from __future__ import annotations

import dataclasses

from dfil.config.runkey import RunPoint, format_key, group_points
from dfil.util.errors import ConfigError

#: The fewest seeds a control runs on: its rule holds on every seed, and one seed that
#: clears a threshold by chance would pass it.
CONTROL_MIN_SEEDS = 3


def control_pairs(grid, name: str) -> list[tuple[str, str]]:
    """(control key, reference key) of each cell of control ``name``'s group in ``grid``
    (a :class:`dfil.config.grid.Grid`), paired with the reference group's cell at the same
    coordinates but the variant; a :class:`ConfigError` unless each pair's resolved
    configs differ only in ``model.heads.control_input`` (none for the reference), and
    unless the pairs span at least :data:`CONTROL_MIN_SEEDS` seeds."""
    control = grid.spec.controls[name]
    refs = {_unvaried(p): format_key(p)
            for p in group_points(grid.spec.groups[control.reference], grid.spec.seed_sets)}
    pairs = []
    for point in group_points(grid.spec.groups[control.group], grid.spec.seed_sets):
        key, ref = format_key(point), refs.get(_unvaried(point))
        a, b = (_bare(grid.cells[k].config) for k in (key, ref or key))
        if ref is None or a[1] == "none" or b[1] != "none" or a[0] != b[0]:
            raise ConfigError(
                f"config controls.{name}: cell {key} needs a cell of group "
                f"{control.reference!r} at its coordinates ({ref or 'none there'}) whose "
                "config differs only in model.heads.control_input (none there, "
                "proportion here); make the control's variant set only that")
        pairs.append((key, ref))
    seeds = {k.rsplit("/seed", 1)[1] for k, _ in pairs}
    if len(seeds) < CONTROL_MIN_SEEDS:
        raise ConfigError(
            f"config controls.{name}: group {control.group!r} runs on {len(seeds)} seed(s) "
            f"({', '.join(sorted(seeds)) or 'none'}); a control needs at least "
            f"{CONTROL_MIN_SEEDS} (give the group and its reference a seed set that long)")
    return pairs


def _unvaried(point: RunPoint) -> str:
    return format_key(dataclasses.replace(point, variant=""))


def _bare(config: dict) -> tuple[dict, str]:
    """A resolved cell config without its name and control input, and that input."""
    heads = dict(config["model"]["heads"])
    found = heads.pop("control_input")
    return {**config, "name": "", "model": {**config["model"], "heads": heads}}, found
