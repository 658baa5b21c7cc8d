"""Preemption: the signals that stop training between steps, and the resume state.

``resume.pt`` holds the trained tensors, optimizer, scheduler, RNG states (the CPU's and,
on a GPU, the training device's CUDA generator, which draws LoRA dropout there) and
position (epoch, step) of the attempt in progress. It is written at every epoch end and when
SIGTERM or SIGUSR1 arrives (what SLURM sends before it kills or requeues a job), so
rerunning the same command continues exactly where the run stopped. A damaged file is an
error, never a silent restart from scratch.
"""

from __future__ import annotations

import signal
from pathlib import Path

import torch

from dfil.atomic import atomic_path
from dfil.errors import CheckpointError

FORMAT = "dfil-resume/1"


class StopFlag:
    """Installs SIGTERM/SIGUSR1 handlers that only raise a flag, checked between steps."""

    signals = (signal.SIGTERM, signal.SIGUSR1)

    def __enter__(self):
        self.raised = None
        self.previous = {s: signal.signal(s, self._handle) for s in self.signals}
        return self

    def _handle(self, signum, frame):
        self.raised = signal.Signals(signum).name

    def __exit__(self, *exc):
        for s, handler in self.previous.items():
            signal.signal(s, handler)
        return False


def load_resume(path: Path, expected_hash: str) -> dict | None:
    """The resume state at ``path`` or None; a damaged file is an error, never a restart."""
    if not path.exists():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises several types for truncated pickles/zips
        raise CheckpointError(
            f"{path}: resume checkpoint is corrupt or truncated ({type(err).__name__}: {err}); "
            "delete it to start this run from scratch"
        ) from err
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a dfil resume checkpoint")
    if state["config_hash"] != expected_hash:
        raise CheckpointError(
            f"{path}: written for config {state['config_hash']}, this cell is {expected_hash}; "
            "delete it or use the original cell.yaml"
        )
    return state


def save_resume(path: Path, state: dict) -> None:
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def rng_state(device) -> dict:
    """The random generators a resumed run must continue: ``rng`` (CPU) and, training on
    CUDA, ``cuda_rng`` (the device's generator: dropout masks are drawn there)."""
    state = {"rng": torch.get_rng_state()}
    device = torch.device(device)
    if device.type == "cuda":
        state["cuda_rng"] = torch.cuda.get_rng_state(device)
    return state


def restore_rng(state: dict, device) -> None:
    """Put back what :func:`rng_state` saved; a CUDA run resumed from a state without the
    CUDA generator (saved on a CPU) is an error, since it could not end the same."""
    torch.set_rng_state(state["rng"])
    device = torch.device(device)
    if device.type == "cuda":
        if "cuda_rng" not in state:
            raise CheckpointError("resume state has no CUDA generator state (written by a "
                                  "CPU run?); a CUDA run cannot continue it exactly")
        torch.cuda.set_rng_state(state["cuda_rng"], device)
