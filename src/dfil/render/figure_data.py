"""What a figure read (pure: no matplotlib): the runs and seeds it drew, and the numbers
the paper printed that it overlays (``paper:`` of ``config/tables.yaml``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from dfil.render.fmt import parse_published
from dfil.render.source import Sample


@dataclass
class Drawn:
    """What a figure plotted: the run keys whose numbers it shows and their seeds."""

    keys: set[str] = field(default_factory=set)
    seeds: set[str] = field(default_factory=set)

    def add(self, sample: Sample) -> pd.Series:
        """``sample``'s values, their runs counted as drawn."""
        found = set(sample.values.index)
        self.keys |= {k for k, _ in sample.reads if k.rsplit("/seed", 1)[1] in found}
        self.seeds |= found
        return sample.values

    def fields(self) -> dict[str, str]:
        """The caption's placeholders: ``runs`` (the cells, seed left out), ``seeds``,
        ``n`` (how many)."""
        cells = sorted({k.rsplit("/seed", 1)[0] for k in self.keys})
        seeds = sorted(self.seeds, key=seed_order)
        return {"runs": ", ".join(cells) or "none", "n": str(len(seeds)),
                "seeds": ", ".join(seeds) or "none"}


def seed_order(seed: str) -> tuple:
    """Seeds as numbers (42 < 123 < 456), a non-numeric seed after them."""
    return (0, int(seed), "") if str(seed).isdigit() else (1, 0, str(seed))


def paper_value(specs: dict, table: str, row: str, col: str) -> tuple[float | None, float | None]:
    """(mean, std) the paper printed in ``table``'s ``row`` x ``col`` (config/tables.yaml)."""
    rows = {r.get("id"): r for r in specs.get(table, {}).get("rows", [])}
    return parse_published((rows.get(row, {}).get("paper") or {}).get(col))


#: Table centers_detail's columns, one per quantifier.
CENTER_COLS = ("none", "tiny", "few", "small", "some", "mod", "most", "all")


def paper_centers(specs: dict, table: str, row: str) -> list[float | None]:
    """The centers the paper printed in one row of ``table`` (Table centers_detail's
    ``init``, ``7b-c-42``, ...), none through all."""
    return [paper_value(specs, table, row, c)[0] for c in CENTER_COLS]
