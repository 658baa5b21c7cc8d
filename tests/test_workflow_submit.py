"""A SLURM run of the workflow submits through the workflow's sbatch (workflow/sbatch/,
first on Snakemake's PATH): the executor plugin's sbatch call reaches the site's sbatch
through it. SLURM's commands are shell scripts (test_workflow_preflight.site)."""

from __future__ import annotations

import subprocess

from snakemake_cli import BIN
from test_workflow_preflight import SLURM_LOCAL, site


def test_the_plugin_submits_through_the_workflows_sbatch(tmp_path):
    work, environ, calls = site(tmp_path, "dfil-local||gpu,normal|normal||\\n")
    shim = tmp_path / "slurm-bin" / "sbatch"
    # the site's sbatch: records who called it, then refuses (not a queue limit)
    shim.write_text(f'#!/bin/sh\necho "via=$DFIL_SBATCH_DIR $*" >> {calls}\n'
                    "echo 'sbatch: error: Batch job submission failed: Invalid account' >&2\n"
                    "exit 1\n")
    target = "results/smoke/runs/frog/tiny-llama/coral/lamna/nfull/na/seed42/train_summary.json"
    done = subprocess.run([str(BIN / "snakemake"), target, *SLURM_LOCAL,
                           "--configfile", "config/smoke.yaml", "--retries", "0"],
                          cwd=work, env=environ, capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert "Invalid account" in out
    lines = calls.read_text().splitlines()
    assert lines and all(line.startswith(f"via={work}/workflow/sbatch --parsable")
                         for line in lines), lines
