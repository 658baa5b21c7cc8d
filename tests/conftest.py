"""Shared fixtures: the reference data in ../shared/data and a tiny offline tokenizer; SLURM's
commands out of every test's reach."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

# No test downloads anything: the hub clients are offline unless a test's fetch lifts the
# flags for itself (dfil.hub), as in CI and the quickstart. Set before anything imports
# huggingface_hub, which reads them once.
for _flag in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
    os.environ.setdefault(_flag, "1")

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"reference data not found at {SHARED}")
    return SHARED


@pytest.fixture
def tiny_tokenizer():
    """The library's offline character-level tokenizer."""
    from dfil.model.backbone import char_tokenizer

    return char_tokenizer()


# Every command a SLURM installation puts on PATH (../shared/tools/without-site.sh hides the
# same). While the tests run, each is a stub that fails at once, first on PATH for the tests
# and every process they start (Snakemake's SLURM executor plugin looks for sinfo, sacct and
# squeue when it loads): no test passes because the machine it runs on has SLURM, or fails
# because it has not. A test that calls one puts its own first on PATH.
SLURM_COMMANDS = ("sbatch", "squeue", "sacct", "sinfo", "scancel", "scontrol", "sacctmgr",
                  "srun", "salloc", "sstat", "sreport", "sshare", "sprio", "sdiag",
                  "strigger", "sattach", "sbcast", "scrontab")


def slurm_stubs(folder: Path) -> Path:
    """Write a failing stub for each of :data:`SLURM_COMMANDS` into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in SLURM_COMMANDS:
        stub = folder / name
        stub.write_text(f"#!/bin/sh\necho \"{name}: SLURM is out of the tests' reach; a test "
                        f"that calls {name} provides its own first on PATH\" >&2\nexit 1\n")
        stub.chmod(0o755)
    return folder


def pytest_configure(config):
    # Before collection: some skip conditions look on PATH when their module is imported.
    folder = slurm_stubs(Path(tempfile.mkdtemp(prefix="dfil-test-slurm-")))
    config.stash[_STUBS] = folder
    os.environ["PATH"] = os.pathsep.join([str(folder), os.environ.get("PATH", "")])


def pytest_unconfigure(config):
    folder = config.stash.get(_STUBS, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


_STUBS = pytest.StashKey[Path]()
