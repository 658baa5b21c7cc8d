"""What every metrics file records about how it was produced: package version, git
commit, device, wall time, peak memory."""

from __future__ import annotations

import platform
import resource
import subprocess
from pathlib import Path

from dfil import __version__


def git_commit() -> str:
    """HEAD of the repository this package runs from, or "unknown" outside a checkout."""
    try:
        out = subprocess.run(["git", "-C", str(Path(__file__).resolve().parent), "rev-parse",
                              "HEAD"], capture_output=True, text=True, timeout=10, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def device_name(device) -> str:
    import torch  # here, so that rendering (git_commit) stays free of torch

    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"cpu ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"


def peak_memory_mb(device) -> dict:
    """Peak resident memory of this process and, on CUDA, peak allocated GPU memory."""
    import torch

    out = {"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if device.type == "cuda":
        out["peak_gpu_mb"] = torch.cuda.max_memory_allocated(device) / 2**20
    return out


def provenance(device, wall_seconds: float) -> dict:
    import torch

    return {"package_version": __version__, "git_commit": git_commit(),
            "torch": torch.__version__, "device": device_name(device),
            "wall_seconds": wall_seconds, **peak_memory_mb(device)}
