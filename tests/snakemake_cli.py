"""The ``snakemake`` command line as the workflow tests run it.

SLURM's commands are failing stubs while the tests run (conftest.py), so the SLURM executor
plugin, which every Snakemake start loads, finds "no SLURM here" at once, whatever the
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


def env() -> dict:
    """The environment of a test's Snakemake run: this interpreter's ``bin`` (for the
    rules' ``dfil``) first on PATH after the SLURM stubs."""
    path = os.environ["PATH"].split(os.pathsep)
    return {**os.environ, "PATH": os.pathsep.join([*path[:1], str(BIN), *path[1:]])}


def snakemake(*args: str, cwd: Path = ROOT, timeout: int = 600) -> subprocess.CompletedProcess:
    """``snakemake *args`` in ``cwd``, output captured as text."""
    return subprocess.run([str(BIN / "snakemake"), *args], cwd=cwd, env=env(),
                          capture_output=True, text=True, timeout=timeout)
