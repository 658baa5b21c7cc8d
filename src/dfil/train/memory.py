"""What training changes after a CUDA out-of-memory error, kept in the run directory
(``memory_plan.json``) so that the retry applies it, without changing the cell's config,
its hash or its numbers.

The remedies, in order: gradient checkpointing (activations recomputed in the backward
pass: the same numbers, about a third more compute); then half the micro-batch with
gradient accumulation keeping the cell's batch size (the same numbers to float rounding
where nothing random depends on the batch's shape; LoRA dropout draws other masks for
split batches, so its numbers differ within seed noise: recorded in the run's
provenance); then halving again, down to one example. A plan with nothing left to try
makes the OOM final. Each OOM is recorded with where it struck.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from dfil.config.cell import CellConfig
from dfil.util.atomic import atomic_write_json
from dfil.util.errors import CheckpointError

#: The run directory's memory plan (read at every start of ``dfil train``).
PLAN = "memory_plan.json"


@dataclass(frozen=True)
class MemoryPlan:
    """How this run's training fits the GPU: checkpointing forced on, and the micro-batch
    (None: the whole batch at once); ``ooms`` the out-of-memory errors that led here."""

    gradient_checkpointing: bool = False
    micro_batch_size: int | None = None
    ooms: tuple[dict, ...] = ()

    def record(self) -> dict:
        """The plan as the run and its metrics' provenance record it."""
        return {**asdict(self), "ooms": list(self.ooms)}


def read_plan(run_dir: Path) -> MemoryPlan:
    """The run's plan (the default one if no OOM ever struck it)."""
    path = Path(run_dir) / PLAN
    if not path.is_file():
        return MemoryPlan()
    try:
        data = json.loads(path.read_text())
        return MemoryPlan(bool(data["gradient_checkpointing"]), data["micro_batch_size"],
                          tuple(data["ooms"]))
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise CheckpointError(f"{path}: unreadable memory plan ({err}); delete it to train "
                              "with the cell's own settings") from None


def next_plan(plan: MemoryPlan, cell: CellConfig, where: dict) -> MemoryPlan | None:
    """The plan after an out-of-memory error at ``where`` (epoch, step, message); None
    when nothing is left to try."""
    oom = {**where, "time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "plan": {"gradient_checkpointing": plan.gradient_checkpointing,
                    "micro_batch_size": plan.micro_batch_size}}
    ooms = (*plan.ooms, oom)
    if not (plan.gradient_checkpointing or cell.model.backbone.gradient_checkpointing) \
            and cell.model.adapter != "none":
        return replace(plan, gradient_checkpointing=True, ooms=ooms)
    micro = plan.micro_batch_size or cell.train.batch_size
    if micro <= 1:
        return None
    return replace(plan, micro_batch_size=micro // 2, ooms=ooms)


def write_plan(run_dir: Path, plan: MemoryPlan) -> None:
    atomic_write_json(Path(run_dir) / PLAN, plan.record())


def applied(cell: CellConfig, plan: MemoryPlan) -> CellConfig:
    """The cell the model is built from: ``cell`` with checkpointing on if the plan says
    so (the cell's config and hash, what the run records, stay as they are)."""
    if not plan.gradient_checkpointing:
        return cell
    backbone = cell.model.backbone.model_copy(update={"gradient_checkpointing": True})
    model = cell.model.model_copy(update={"backbone": backbone})
    return cell.model_copy(update={"model": model})
