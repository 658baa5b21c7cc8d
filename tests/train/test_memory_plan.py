"""The out-of-memory remedies (dfil.train.memory): gradient checkpointing first, then
half the micro-batch (the cell's batch size kept), down to one example; each OOM recorded;
the plan survives in the run directory and the cell's hash is untouched."""

from __future__ import annotations

import pytest

from dfil.config.cell import CellConfig, config_hash
from dfil.train.memory import MemoryPlan, applied, next_plan, read_plan, write_plan
from dfil.util.errors import CheckpointError


def cell(batch_size=8, checkpointing=False, adapter="lora") -> CellConfig:
    return CellConfig.model_validate({
        "train": {"batch_size": batch_size},
        "model": {"adapter": adapter,
                  "backbone": {"gradient_checkpointing": checkpointing}}})


def test_checkpointing_first_then_halving_to_one():
    c, plan, seen = cell(batch_size=8), MemoryPlan(), []
    while (plan := next_plan(plan, c, {"message": "CUDA out of memory"})) is not None:
        seen.append((plan.gradient_checkpointing, plan.micro_batch_size))
    assert seen == [(True, None), (True, 4), (True, 2), (True, 1)]


def test_a_cell_with_checkpointing_on_halves_at_once_and_frozen_never_checkpoints():
    assert next_plan(MemoryPlan(), cell(checkpointing=True), {}).micro_batch_size == 4
    frozen = next_plan(MemoryPlan(), cell(adapter="none"), {})
    assert (frozen.gradient_checkpointing, frozen.micro_batch_size) == (False, 4)


def test_each_oom_is_recorded_with_the_plan_it_struck(tmp_path):
    c = cell()
    plan = next_plan(MemoryPlan(), c, {"message": "first"})
    plan = next_plan(plan, c, {"message": "second"})
    assert [o["message"] for o in plan.ooms] == ["first", "second"]
    assert plan.ooms[1]["plan"] == {"gradient_checkpointing": True, "micro_batch_size": None}
    write_plan(tmp_path, plan)
    assert read_plan(tmp_path) == plan
    assert read_plan(tmp_path / "elsewhere") == MemoryPlan()


def test_the_plan_changes_the_build_not_the_cell():
    c = cell()
    built = applied(c, MemoryPlan(gradient_checkpointing=True))
    assert built.model.backbone.gradient_checkpointing is True
    assert c.model.backbone.gradient_checkpointing is False
    assert config_hash(c) == config_hash(cell())


def test_a_damaged_plan_is_an_error_naming_it(tmp_path):
    (tmp_path / "memory_plan.json").write_text("{")
    with pytest.raises(CheckpointError, match="memory_plan.json: unreadable memory plan"):
        read_plan(tmp_path)
