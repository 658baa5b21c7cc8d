"""The lines under the cost table: the grid's GPU-hours with its seeds in packs and one
seed per job, at each measured trainer's speed, and every measurement behind them with its
device and date (:data:`dfil.cost.rates.MEASURED`, or a site's acceptance records).

The two measured trainers give the range :mod:`dfil.plan` prices runs at: the slower
(pessimistic end) and the faster (optimistic end), one seed per job.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dfil.cost.project import CellCost, mfu_at
from dfil.cost.rates import MEASURED, TRAINERS, Table, measured

#: The trainer whose measured speed gives each end of the range (plain: 5,164 and 9,911
#: tokens/s at batch 8 and 32; dfil: 5,239 and 10,365).
ENDS = {"pessimistic": "plain", "optimistic": "dfil"}
#: Pack sizes whose step MFU is shown: 1 to 4 seeds at the paper's batch 8 (32 sequences).
SHOWN_PACKS = (1, 2, 3, 4)


def total_hours(costs: Iterable[CellCost]) -> float:
    """GPU-hours of ``costs``' training and evaluation jobs together."""
    return sum(c.train_s + c.eval_s for c in costs) / 3600


def format_totals(hours: Mapping[tuple[str, bool], float], trainer: str, pack: bool,
                  excluded: int = 0, table: Table = MEASURED, batch: int = 8) -> str:
    """The lines under the table: ``hours`` by (trainer, packed) for every trainer of
    ``table``; the table's own setting (``trainer``, ``pack``); the MFU a pack of K seeds
    steps at (``batch`` per seed); each measurement with its device and date. ``excluded``
    cells are in no total."""
    left_out = f", excluding {excluded} cells" if excluded else ""
    setting = "packs (projected)" if pack else "one seed per job"
    lines = [f"the table above: trainer {trainer}, {setting}{left_out}"]
    for name in TRAINERS:
        if (name, True) in hours:
            lines.append(f"trainer {name}: {hours[(name, False)]:.1f} GPU-h one seed per "
                         f"job, {hours[(name, True)]:.1f} GPU-h projected with each "
                         "configuration's seeds in packs")
    steps = ", ".join(f"K={k} {100 * mfu_at(trainer, k * batch, table):.1f}%"
                      for k in SHOWN_PACKS)
    lines.append(f"a pack's step (trainer {trainer}, batch {batch} a seed): the measured MFU at "
                 f"K x {batch} sequences, linear between measured batches and capped at the "
                 f"largest (dfil.cost.project): {steps}")
    lines.append("measurements (tokens/s of a LoRA training step; MFU by dfil.cost.flops):")
    for name in TRAINERS:
        lines += [f"  {name}: {th.label()}" for th in measured(name, table)]
    return "\n".join(lines)
