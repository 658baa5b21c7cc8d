"""Few-shot budgets checked against their data when the data exists (no torch).

A grid's budget is only bounded below by its schema (>= 1): whether it fits depends on
the training split of the cell's data, known once that data is on disk. Where it is (a
fetched dataset, a stand-in already generated), a budget the split cannot fill is refused
at DAG build naming the grid file and the group's ``budgets`` key; where it is not yet,
``dfil train`` refuses it when it reads the data.
"""

from __future__ import annotations

import json
from pathlib import Path

from dfil.config.cell import CellConfig, resolve
from dfil.config.grid import Grid
from dfil.config.validation import validate
from dfil.data.frog import stratified_counts
from dfil.engine.frames import task_frames
from dfil.util.errors import ConfigError, InputError


def _data_exists(cell: CellConfig) -> bool:
    d = cell.data
    if d.task == "ordinal_standin":  # generated in code
        return True
    return bool(d.source) and Path(d.source).exists()


def check_budgets(grid: Grid) -> None:
    """:class:`ConfigError` naming ``groups.<g>.budgets`` for the first few-shot budget of
    ``grid`` larger than the training split of its (existing) data can fill."""
    counts: dict[str, dict | None] = {}
    for cell in grid.cells.values():
        budget = cell.config["data"]["budget"]
        if budget is None:
            continue
        config = resolve(validate(CellConfig, cell.config))
        # The pool a budget is drawn from: the whole training split, uncapped.
        data = {**cell.config["data"], "budget": None, "max_examples": 0}
        pool = json.dumps(data, sort_keys=True)
        if pool not in counts:
            counts[pool] = _train_counts(resolve(validate(CellConfig,
                                                          {**cell.config, "data": data})))
        if counts[pool] is None:
            continue
        try:
            stratified_counts(counts[pool], budget, config.data.fewshot_min_per_class)
        except ValueError as err:
            raise ConfigError(
                f"groups.{cell.groups[0]}.budgets: {err} in the training split of "
                f"{config.data.source or config.data.task} (cell {cell.key}, "
                f"data.fewshot_min_per_class {config.data.fewshot_min_per_class}); lower the "
                "budget or use more data") from None


def _train_counts(cell: CellConfig) -> dict | None:
    """Examples per class in the cell's full training split; None if its data is not on
    disk yet or does not read (``dfil train`` reports that)."""
    if not _data_exists(cell):
        return None
    try:
        frames = task_frames(cell)
    except InputError:
        return None
    return frames["train"]["label"].value_counts().to_dict()
