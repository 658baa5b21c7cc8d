"""Preemption: the signals that stop training between steps, and the state of a training
attempt (:class:`AttemptState`), which is what ``resume.pt`` holds.

``resume.pt`` holds the trained tensors, optimizer, scheduler, RNG states (the CPU's and,
on a GPU, the training device's CUDA generator, which draws LoRA dropout there), position
(epoch, step), history and running sums of the attempt in progress. It is written at
every epoch end and when SIGTERM arrives (what SLURM sends when it preempts or requeues
a job, and, through the slurm profile's ``--signal=TERM@300``, five minutes before its
time limit), so rerunning the same command continues exactly where the run stopped. A
damaged file is an error, never a silent restart from scratch.
"""

from __future__ import annotations

import math
import random
import signal
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

from dfil.engine.checkpoint import load_into, trained_state
from dfil.util.atomic import atomic_path
from dfil.util.errors import CheckpointError

#: The layout of ``resume.pt``; bump it when what :meth:`AttemptState.save` writes changes.
FORMAT = "dfil-resume/1"


class StopFlag:
    """Installs a SIGTERM handler that only raises a flag, ``raised``, checked between
    steps."""

    signals = (signal.SIGTERM,)

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


@dataclass
class AttemptState:
    """Where one training attempt stands: everything a resumed run must continue.

    The loop advances it in place: ``epoch`` epochs are done and ``step`` steps of the
    next; ``sums`` holds that epoch's running loss sums (device tensors while training,
    summed over examples); ``history`` the records of the epochs done (``train_log.jsonl``);
    ``best_*`` the best validation loss so far and its epoch (1-based; -1: none yet);
    ``resumes`` where each restart picked up (the evidence of a resume that survives
    Snakemake deleting a restarted job's log); ``stream``, a seed's own dropout stream in
    a pack of several (:class:`dfil.model.pack.PackedModel`). :meth:`save` writes it to
    ``resume.pt`` with the trained tensors of ``model``, the optimizer's and scheduler's
    states and the random generators; :meth:`resume` puts all of them back.
    """

    model: nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    config_hash: str
    attempt: int
    identity: dict | None = None
    epoch: int = 0
    step: int = 0
    history: list[dict] = field(default_factory=list)
    best_val_loss: float = math.inf
    best_epoch: int = -1
    sums: dict[str, torch.Tensor] = field(default_factory=dict)
    resumes: list[dict[str, int]] = field(default_factory=list)
    stream: random.Random | None = None

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def save(self, path: Path) -> None:
        """Write the state to ``path`` atomically (format :data:`FORMAT`)."""
        state = {"format": FORMAT, "config_hash": self.config_hash, "attempt": self.attempt,
                 **({"identity": self.identity} if self.identity else {}),
                 "epoch": self.epoch, "step": self.step, "trained": trained_state(self.model),
                 "optimizer": self.optimizer.state_dict(),
                 "scheduler": self.scheduler.state_dict(), **rng_state(self.device),
                 "history": self.history,
                 "best": {"val_loss": self.best_val_loss, "epoch": self.best_epoch},
                 "sums": {k: v.detach().cpu() for k, v in self.sums.items()},
                 "resumes": self.resumes,
                 **({"dropout_stream": self.stream.getstate()} if self.stream else {})}
        # Through a Python file object: a full disk then surfaces as the OSError behind
        # torch's RuntimeError (its own path writer reports only "unexpected pos").
        with atomic_path(path) as tmp, open(tmp, "wb") as fh:
            torch.save(state, fh)

    def resume(self, path: Path) -> bool:
        """Continue from the state saved at ``path``; False, changing nothing, when there
        is none or it belongs to another attempt. A damaged file, or one written for
        another config, is a :class:`CheckpointError`, never a silent restart."""
        saved = _read(path, self.config_hash)
        if saved is None or saved["attempt"] != self.attempt:
            return False
        load_into(self.model, saved["trained"], path)
        self.optimizer.load_state_dict(saved["optimizer"])
        self.scheduler.load_state_dict(saved["scheduler"])
        restore_rng(saved, self.device)
        if self.stream is not None:
            if "dropout_stream" not in saved:
                raise CheckpointError(f"{path}: no dropout stream saved (written by a solo "
                                      "run?); a pack's seed cannot continue it exactly")
            self.stream.setstate(saved["dropout_stream"])
        self.epoch, self.step = saved["epoch"], saved["step"]
        self.history, self.sums = saved["history"], saved["sums"]
        self.best_val_loss, self.best_epoch = saved["best"]["val_loss"], saved["best"]["epoch"]
        self.resumes = [*saved.get("resumes", []), {"epoch": self.epoch + 1, "step": self.step}]
        return True


def written_for(path: Path) -> str | None:
    """The config hash the resume state at ``path`` was written for; None if there is no
    readable state (a damaged one is reported when a run tries to resume from it)."""
    try:
        state = _load(path)
    except CheckpointError:
        return None
    return None if state is None else state["config_hash"]


def written_record(path: Path) -> dict | None:
    """What the resume state at ``path`` was written for: its identity record
    (:mod:`dfil.contracts.identity`), or only its config hash where it has none; None if
    there is no readable state."""
    try:
        state = _load(path)
    except CheckpointError:
        return None
    if state is None:
        return None
    return state.get("identity") or {"config_hash": state["config_hash"]}


def saved_place(path: Path) -> dict | None:
    """Where the resume state at ``path`` stands: its ``attempt``, ``epoch``, ``step``
    and whether it holds a pack's dropout ``stream``; None if there is none. A damaged
    one is a :class:`CheckpointError`."""
    state = _load(path)
    if state is None:
        return None
    return {"attempt": int(state["attempt"]), "epoch": int(state["epoch"]),
            "step": int(state["step"]), "stream": "dropout_stream" in state}


def _read(path: Path, expected_hash: str) -> dict | None:
    """The resume state at ``path`` for config ``expected_hash``, or None if there is none."""
    state = _load(path)
    if state is not None and state["config_hash"] != expected_hash:
        raise CheckpointError(
            f"{path}: written for config {state['config_hash']}, this cell is {expected_hash}; "
            "delete it or use the original cell.yaml"
        )
    return state


def _load(path: Path) -> dict | None:
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
    if not isinstance(state, dict) or not str(state.get("format", "")).startswith("dfil-resume/"):
        raise CheckpointError(f"{path}: not a dfil resume checkpoint")
    if state["format"] != FORMAT:
        raise CheckpointError(f"{path}: resume format {state['format']!r}, this version reads "
                              f"{FORMAT!r}; delete it to start this run from scratch")
    return state


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
