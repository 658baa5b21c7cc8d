"""Deterministic kernels on request (and back off afterwards), the host-sync guard's
knob, and the random generators a resume state carries."""

from __future__ import annotations

import pytest
import torch

from dfil.engine.device import SyncGuard, deterministic
from dfil.train.resume import restore_rng, rng_state
from dfil.util.errors import CheckpointError


def test_deterministic_sets_torch_and_cublas_then_restores(monkeypatch):
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    monkeypatch.delenv("FLASH_ATTENTION_DETERMINISTIC", raising=False)
    assert not torch.are_deterministic_algorithms_enabled()
    with deterministic(True):
        assert torch.are_deterministic_algorithms_enabled()
        assert not torch.backends.cudnn.benchmark and torch.backends.cudnn.deterministic
        assert not torch.utils.deterministic.fill_uninitialized_memory
        import os

        assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
        assert os.environ["FLASH_ATTENTION_DETERMINISTIC"] == "1"
    assert not torch.are_deterministic_algorithms_enabled()
    assert torch.utils.deterministic.fill_uninitialized_memory


def test_deterministic_keeps_a_workspace_config_already_set(monkeypatch):
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8")
    with deterministic(True):
        import os

        assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":16:8"


def test_deterministic_sets_inductors_flag_where_inductor_is_loaded():
    import torch._inductor.config as inductor

    with deterministic(True):
        assert inductor.deterministic and torch.are_deterministic_algorithms_enabled()
    assert not inductor.deterministic


def test_deterministic_off_changes_nothing():
    with deterministic(False):
        assert not torch.are_deterministic_algorithms_enabled()


def test_sync_guard_knob_names_a_bad_value(monkeypatch):
    monkeypatch.setenv("DFIL_SYNC_DEBUG", "loud")
    with pytest.raises(ValueError, match="DFIL_SYNC_DEBUG: 'loud'"):
        SyncGuard()
    monkeypatch.setenv("DFIL_SYNC_DEBUG", "error")
    guard = SyncGuard()
    guard.arm()  # a no-op without CUDA, never an error
    guard.disarm()
    assert guard.mode == ("error" if torch.cuda.is_available() else "")


def test_rng_state_round_trip_on_the_cpu():
    state = rng_state("cpu")
    assert set(state) == {"rng"}
    first = torch.rand(3)
    restore_rng(state, "cpu")
    assert torch.equal(torch.rand(3), first)


def test_a_cuda_resume_without_the_cuda_generator_is_refused():
    with pytest.raises(CheckpointError, match="no CUDA generator state"):
        restore_rng({"rng": torch.get_rng_state()}, "cuda")
