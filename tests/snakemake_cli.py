"""The ``snakemake`` command line as the workflow tests run it.

Every Snakemake start loads the SLURM executor plugin, which runs ``scontrol show config``
to word one option's help text. Where SLURM's client is installed but no controller
answers (a stopped ``workflow/slurm-local.sh`` cluster, or a package without a config),
that call waits out its 10 s timeout, on every start. None of these tests submits to
SLURM (dry runs and local builds; ``.ci/slurm-smoke`` runs the real cluster), so their
``scontrol`` is one that fails at once, which the plugin takes as "no SLURM here".
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
_SHIM = Path(__file__).resolve().parent / "bin"


def env(path: str | None = None) -> dict:
    """The environment of a test's Snakemake run: this interpreter's ``bin`` (for the
    rules' ``dfil``) and the failing ``scontrol`` first on PATH, then ``path`` (default:
    this process's PATH)."""
    rest = os.environ["PATH"] if path is None else path
    return {**os.environ, "PATH": os.pathsep.join([str(_SHIM), str(BIN), rest])}


def snakemake(*args: str, cwd: Path = ROOT, timeout: int = 600,
              path: str | None = None) -> subprocess.CompletedProcess:
    """``snakemake *args`` in ``cwd``, output captured as text; ``path``: the PATH after
    the test's own directories (default: this process's)."""
    return subprocess.run([str(BIN / "snakemake"), *args], cwd=cwd, env=env(path),
                          capture_output=True, text=True, timeout=timeout)
