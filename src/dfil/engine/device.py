"""Where and in what precision tensors run, and the progress bars of long loops.

The one place that picks the device and the autocast precision (``train.precision``:
bf16 autocast on CUDA by default, the paper's H200 runs; fp32 on the CPU unless asked,
note R-cpu-precision), used alike by training, feature extraction and evaluation.
"""

from __future__ import annotations

import contextlib
import os

import torch


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
    """A tqdm bar on stderr (SLURM and Snakemake logs keep it); DFIL_PROGRESS=0 hides it."""
    from tqdm.auto import tqdm

    return tqdm(iterable, disable=os.environ.get("DFIL_PROGRESS", "1") == "0",
                mininterval=5.0, leave=False, dynamic_ncols=True, **kwargs)
