"""The state of a training attempt: what resume.pt holds, written and read back."""

from __future__ import annotations

import math

import pytest
import torch

from dfil.model import build_model
from dfil.train.resume import FORMAT, AttemptState, written_for
from dfil.train.step import make_optimizer
from dfil.util.errors import CheckpointError
from tinymodel import TINY_LLAMA, tiny_config


def fresh(attempt: int = 1, config_hash: str = "abc") -> AttemptState:
    model = build_model(tiny_config("dfil", adapter="none"), seed=0, backbone=False)
    optimizer = make_optimizer([{"params": list(model.parameters()), "lr": 1e-3}],
                               (0.9, 0.999), 1e-8, 0.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0 / (s + 1))
    return AttemptState(model, optimizer, scheduler, config_hash, attempt)


def trained(state: AttemptState) -> AttemptState:
    """One optimizer step and some progress, so nothing in the state is at its default."""
    h = torch.randn(2, TINY_LLAMA["hidden_size"], generator=torch.Generator().manual_seed(0))
    state.model.heads(h).main_logits.sum().backward()
    state.optimizer.step()
    state.scheduler.step()
    state.epoch, state.step = 1, 3
    state.history.append({"attempt": 1, "epoch": 1, "val_loss": 2.5})
    state.best_val_loss, state.best_epoch = 2.5, 1
    state.sums = {"total": torch.tensor(7.0), "main": torch.tensor(4.0)}
    state.resumes = [{"epoch": 1, "step": 0}]
    return state


def test_a_saved_state_resumes_to_every_field(tmp_path):
    saved = trained(fresh())
    saved.save(tmp_path / "resume.pt")
    rng = torch.get_rng_state()
    torch.rand(5)  # moves the generator on; the resume puts it back
    state = fresh()
    assert state.resume(tmp_path / "resume.pt")
    assert torch.equal(torch.get_rng_state(), rng)
    assert (state.epoch, state.step, state.best_val_loss, state.best_epoch) == (1, 3, 2.5, 1)
    assert state.history == saved.history and state.sums.keys() == {"total", "main"}
    assert state.sums["total"].item() == 7.0
    # Where this restart picked up joins the earlier ones.
    assert state.resumes == [{"epoch": 1, "step": 0}, {"epoch": 2, "step": 3}]
    for a, b in zip(state.model.parameters(), saved.model.parameters(), strict=True):
        assert torch.equal(a, b)
    assert state.optimizer.state_dict()["state"].keys() == saved.optimizer.state_dict()[
        "state"].keys()
    assert state.scheduler.last_epoch == saved.scheduler.last_epoch == 1
    assert written_for(tmp_path / "resume.pt") == "abc"


def test_no_state_or_another_attempts_state_starts_afresh(tmp_path):
    state = fresh(attempt=2)
    assert not state.resume(tmp_path / "resume.pt")
    trained(fresh(attempt=1)).save(tmp_path / "resume.pt")
    assert not state.resume(tmp_path / "resume.pt")
    assert (state.epoch, state.step, state.history, state.best_val_loss) == (0, 0, [], math.inf)
    assert written_for(tmp_path / "nothing.pt") is None


def test_a_state_of_another_config_or_format_is_refused_by_name(tmp_path):
    path = tmp_path / "resume.pt"
    trained(fresh(config_hash="other")).save(path)
    with pytest.raises(CheckpointError, match="written for config other, this cell is abc"):
        fresh().resume(path)
    state = torch.load(path, weights_only=True)
    torch.save({**state, "format": "dfil-resume/2"}, path)
    with pytest.raises(CheckpointError, match=f"resume format 'dfil-resume/2', this version "
                                              f"reads '{FORMAT}'"):
        fresh(config_hash="other").resume(path)
    torch.save([1, 2], path)
    with pytest.raises(CheckpointError, match="not a dfil resume checkpoint"):
        fresh().resume(path)
    assert written_for(path) is None
