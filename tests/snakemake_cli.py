"""The ``snakemake`` command line as the workflow tests run it.

SLURM's commands are failing stubs while the tests run (conftest.py), so the SLURM executor
plugin, which every Snakemake start loads, finds commands that fail at once, whatever the
machine has installed. None of these tests submits to SLURM (dry runs and local builds;
``.ci/slurm-smoke`` runs the real cluster).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def env(path: str | None = None) -> dict:
    """The environment of a test's Snakemake run: this interpreter's ``bin`` (for the
    rules' ``dfil``) first on PATH, then ``path`` (default: this process's PATH, which
    starts with the SLURM stubs)."""
    rest = os.environ["PATH"] if path is None else path
    return {**os.environ, "PATH": os.pathsep.join([str(BIN), rest])}


def snakemake(*args: str, cwd: Path = ROOT, timeout: int = 600,
              path: str | None = None) -> subprocess.CompletedProcess:
    """``snakemake *args`` in ``cwd``, output captured as text; ``path``: the PATH after
    the test's own directories (default: this process's)."""
    return subprocess.run([str(BIN / "snakemake"), *args], cwd=cwd, env=env(path),
                          capture_output=True, text=True, timeout=timeout)
