"""Preemption: the signals that stop training between steps, and the resume state.

``resume.pt`` holds the trained tensors, optimizer, scheduler, RNG state and position
(epoch, step) of the attempt in progress. It is written at every epoch end and when
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


class Preempted(RuntimeError):
    """Training stopped on SIGTERM/SIGUSR1 after saving its resume state."""


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
