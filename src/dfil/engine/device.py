"""Where and in what precision tensors run, deterministic kernels, host-sync checks, and
the progress bars of long loops.

The one place that picks the device and the autocast precision (``train.precision``:
bf16 autocast on CUDA by default, the paper's H200 runs; fp32 on the CPU unless asked,
note R-cpu-precision), and that asks for deterministic algorithms (``train.deterministic``,
note R-deterministic), used alike by training, feature extraction and evaluation.
"""

from __future__ import annotations

import contextlib
import os
import sys

import torch

from dfil.util.errors import ConfigError


def pick_device() -> torch.device:
    """CUDA when available, else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def autocast_dtype(precision: str, device: torch.device) -> torch.dtype | None:
    """The autocast dtype for ``precision`` ("auto", "fp32", "bf16") on ``device``;
    None means no autocast (fp32)."""
    if precision == "bf16" or (precision == "auto" and device.type == "cuda"):
        return torch.bfloat16
    return None


def autocast(device: torch.device, dtype: torch.dtype | None) -> contextlib.AbstractContextManager:
    """Autocast to ``dtype`` on ``device``'s type, or a no-op context when ``dtype`` is None."""
    return torch.autocast(device.type, dtype=dtype or torch.float32, enabled=dtype is not None)


def progress(iterable, **kwargs):
    """A tqdm bar on stderr (SLURM and Snakemake logs keep it); DFIL_PROGRESS=0 hides it,
    DFIL_PROGRESS_INTERVAL sets the seconds between its updates (default 5)."""
    from tqdm.auto import tqdm

    return tqdm(iterable, disable=os.environ.get("DFIL_PROGRESS", "1") == "0",
                mininterval=float(os.environ.get("DFIL_PROGRESS_INTERVAL", "5")),
                leave=False, dynamic_ncols=True, **kwargs)


#: Set before any CUDA work: cuBLAS is deterministic only with a fixed workspace, and
#: transformers' flash-attention calls read this for their backward.
DETERMINISTIC_ENV = {"CUBLAS_WORKSPACE_CONFIG": ":4096:8", "FLASH_ATTENTION_DETERMINISTIC": "1"}


@contextlib.contextmanager
def deterministic(on: bool):
    """Deterministic kernels for the duration (``torch.use_deterministic_algorithms``,
    cuDNN without autotuning) when ``on``; the previous setting comes back afterwards.

    Enter it before any CUDA work of the process: the environment variables of
    :data:`DETERMINISTIC_ENV` (kept if already set) take effect when cuBLAS starts.
    A kernel with no deterministic version then raises instead of running.
    """
    if not on:
        yield
        return
    for key, value in DETERMINISTIC_ENV.items():
        os.environ.setdefault(key, value)
    fill = torch.utils.deterministic
    before = (torch.are_deterministic_algorithms_enabled(),
              torch.is_deterministic_algorithms_warn_only_enabled(),
              torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic,
              fill.fill_uninitialized_memory)
    set_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic = False, True
    # Filling every torch.empty with NaN catches reads of uninitialised memory; it adds
    # nothing to determinism and costs a pass over each new tensor (17x slower steps on
    # a busy 2-core CPU, where every parallel fill waits for both cores).
    fill.fill_uninitialized_memory = False
    try:
        yield
    finally:
        set_deterministic_algorithms(before[0], warn_only=before[1])
        (torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic,
         fill.fill_uninitialized_memory) = before[2:]


def set_deterministic_algorithms(mode: bool, warn_only: bool = False) -> None:
    """``torch.use_deterministic_algorithms`` without its import of torch's compiler stack
    (inductor and dynamo, ~1.4 s of CPU in every job): inductor's flag matters only to
    ``torch.compile``, which no job uses, so it is set only where inductor is loaded."""
    inductor = sys.modules.get("torch._inductor.config")
    if inductor is not None:
        inductor.deterministic = mode
    torch._C._set_deterministic_algorithms(mode, warn_only=warn_only)


class SyncGuard:
    """Reports host synchronisations once armed: ``DFIL_SYNC_DEBUG=warn|error`` sets
    ``torch.cuda.set_sync_debug_mode`` for the armed stretch (CUDA only; a no-op
    otherwise). Training arms it after its first step and disarms it before work that
    must read the device (validation, checkpoints)."""

    def __init__(self):
        mode = os.environ.get("DFIL_SYNC_DEBUG", "")
        if mode not in ("", "warn", "error"):
            raise ConfigError(f"DFIL_SYNC_DEBUG: {mode!r} is not one of '', 'warn', 'error'")
        self.mode = mode if mode and torch.cuda.is_available() else ""
        self.armed = False

    def arm(self) -> None:
        if self.mode and not self.armed:
            torch.cuda.set_sync_debug_mode(self.mode)
            self.armed = True

    def disarm(self) -> None:
        if self.armed:
            torch.cuda.set_sync_debug_mode(0)
            self.armed = False


@contextlib.contextmanager
def sync_guard():
    """A :class:`SyncGuard`, disarmed on the way out whatever happens."""
    guard = SyncGuard()
    try:
        yield guard
    finally:
        guard.disarm()
