"""What every metrics file records about how it was produced, measured in the process that
ran it: package version, git commit, device and GPU, wall time, peak memory, the versions of
the libraries that ran it, and the commits of the hub repos it read."""

from __future__ import annotations

import platform
import resource
from importlib.metadata import PackageNotFoundError, version

import torch

from dfil import __version__
from dfil.util.commit import git_commit


def device_name(device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"cpu ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"


def peak_memory_mb(device) -> dict:
    """Peak resident memory of this process and, on CUDA, peak allocated GPU memory."""
    out = {"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if device.type == "cuda":
        out["peak_gpu_mb"] = torch.cuda.max_memory_allocated(device) / 2**20
    return out


#: The libraries whose versions a run records (the distribution names); one not installed
#: is recorded as null (flash-attn and bitsandbytes are optional).
LIBRARIES = {"transformers": "transformers", "peft": "peft", "bitsandbytes": "bitsandbytes",
             "flash_attn": "flash-attn", "huggingface_hub": "huggingface_hub",
             "datasets": "datasets"}


def library_versions() -> dict[str, str | None]:
    """torch, its CUDA build, and :data:`LIBRARIES`, each its version or None."""
    out: dict[str, str | None] = {"torch": torch.__version__, "cuda": torch.version.cuda}
    for key, dist in LIBRARIES.items():
        try:
            out[key] = version(dist)
        except PackageNotFoundError:
            out[key] = None
    return out


def provenance(device, wall_seconds: float, inputs: dict | None = None,
               extra: dict | None = None) -> dict:
    """The provenance block of a train summary or ``metrics.json``: ``inputs`` are the
    pinned repos the run read (model and dataset commits), ``extra`` what else the caller
    records (e.g. the memory plan a training ran with)."""
    gpu = torch.cuda.get_device_name(device) if device.type == "cuda" else None
    return {"package_version": __version__, "git_commit": git_commit(),
            "torch": torch.__version__, "device": device_name(device), "gpu": gpu,
            "versions": library_versions(), "inputs": inputs or {},
            "wall_seconds": wall_seconds, **peak_memory_mb(device), **(extra or {})}
