"""Every file a run directory gets from training and evaluation honours the umask (the
checkpoint included: 0644 under umask 022), so results on a shared filesystem are as
readable as the user's other files; the data, the aggregate and the rendered tables too."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from cells import tiny_cell
from dfil.cli import main
from dfil.cluster.writer import WRITER_FILE
from dfil.data.synthetic import write_frog_like


def modes(root: Path) -> dict[str, int]:
    """Each regular file below ``root`` (the writer lock aside): its permission bits."""
    return {p.relative_to(root).as_posix(): stat.S_IMODE(p.stat().st_mode)
            for p in root.rglob("*") if p.is_file() and p.name != WRITER_FILE}


@pytest.mark.slow  # trains a cell
def test_run_files_honour_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        frog = tmp_path / "frog"
        write_frog_like(frog, seed=0, n_easy=96, n_hard=40)
        key = "frog/tiny-llama/dfil/lam0.5/nfull/qure/seed123"
        # named as the grid names the cell at this run directory's path
        cell = tiny_cell(tmp_path, frog, key.replace("/", "_"), epochs=1)
        run = tmp_path / "runs" / key
        assert main(["train", "--cell", str(cell), "--out", str(run)]) == 0
        trained = modes(run)
        assert trained["model.safetensors"] == 0o644
        assert set(trained.values()) == {0o644}, trained
        os.umask(0o027)
        assert main(["evaluate", "--run", str(run)]) == 0
        evaluated = {k: v for k, v in modes(run).items() if k not in trained}
        assert {"metrics.json", "predictions.parquet", "mf.json"} <= set(evaluated)
        assert set(evaluated.values()) == {0o640}, evaluated
        out = tmp_path / "agg" / "metrics.parquet"
        assert main(["aggregate", "--runs", str(tmp_path / "runs"), "--out", str(out)]) == 0
        assert modes(out.parent) == {"metrics.parquet": 0o640, "metrics.csv": 0o640}
        assert set(modes(frog).values()) == {0o644}
    finally:
        os.umask(old)
