"""The commit of the checkout this package runs from, which every run, table and report
records."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git_commit() -> str:
    """HEAD of the repository this package runs from, or "unknown" outside a checkout."""
    try:
        out = subprocess.run(["git", "-C", str(Path(__file__).resolve().parent), "rev-parse",
                              "HEAD"], capture_output=True, text=True, timeout=10, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
