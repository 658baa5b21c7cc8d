"""The projection as a range, each end with its source: the same cells projected at each
recorded trainer's measured speed (:data:`dfil.cost.rates.MEASURED`).

The pessimistic end is the project's packed path as last timed, the optimistic end a
plain transformers+peft loop; both were timed before the trainer's rebuild. The current
trainer is shown as unmeasured until a session with a GPU times it, and then as its own
projection beside the two ends.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dfil.cost.project import CellCost
from dfil.cost.rates import MEASURED, Table, measured

#: The trainer whose measured speed gives each end of the range.
ENDS = {"pessimistic": "packed", "optimistic": "plain"}
#: The trainer as built now (src/dfil/train).
CURRENT = "current"


def total_hours(costs: Iterable[CellCost]) -> float:
    """GPU-hours of ``costs``' training and evaluation jobs together."""
    return sum(c.train_s + c.eval_s for c in costs) / 3600


def projected_trainers(table: Table = MEASURED) -> list[str]:
    """The trainers a range is projected for: both ends, and the current trainer once it
    has a measurement in ``table`` (the acceptance run's, where it ran)."""
    return [*ENDS.values(), *([CURRENT] if measured(CURRENT, table) else [])]


def format_range(hours: Mapping[str, float], table_trainer: str, excluded: int = 0,
                 table: Table = MEASURED) -> str:
    """The range's lines: both ends' GPU-hours (``hours``: trainer -> total), the current
    trainer's projection or that it is unmeasured, and each figure's source (``table``).
    The table above was projected with ``table_trainer``; ``excluded`` cells are in
    neither end."""
    low, high = hours[ENDS["optimistic"]], hours[ENDS["pessimistic"]]
    left_out = f", excluding {excluded} cells" if excluded else ""
    lines = [f"range: {low:.1f} to {high:.1f} GPU-h{left_out} (optimistic end: the plain loop's "
             f"measured speed; pessimistic end: the packed path's; the table above uses "
             f"the {table_trainer} figures)"]
    if CURRENT in hours:
        how = "; ".join(sorted({f"measured{f' by {th.by}' if th.by else ''} on {th.where}, "
                                f"{th.when}" for th in measured(CURRENT, table)}))
        lines.append(f"current trainer: {hours[CURRENT]:.1f} GPU-h{left_out} ({how})")
    else:
        lines.append("current trainer: unmeasured (never timed on a GPU; its GPU-hours lie "
                     "where its speed does: run `snakemake acceptance --profile slurm` on "
                     "the cluster, whose records this command then projects from)")
    lines.append("sources (tokens/s of a LoRA training step; MFU follows by dfil.cost.flops):")
    for end, trainer in [*ENDS.items(), (CURRENT, CURRENT)]:
        for th in measured(trainer, table):
            lines.append(f"  {end} ({trainer}): {th.label()}")
    return "\n".join(lines)
