"""Whether a SIGTERM came at the SLURM job's time limit (the profile's ``--signal=TERM@300``
or the limit itself) or from a preemption.

``dfil train`` saves and stops on SIGTERM either way. Before Snakemake's last attempt that
is all: the retry resumes. On the last attempt a preempted job is requeued by SLURM and
resumes, but a job stopped by its time limit never runs again, so it must leave the cell's
failure record (reason ``TIMEOUT``) for ``dfil grid status`` and the tables. SLURM 22.05
sets no variable with the job's end, so the job's time left is asked of ``squeue`` (``%L``)
once, when the signal has come; a job with at most :data:`NEAR` seconds left is at its
limit.
"""

from __future__ import annotations

import os
import subprocess

from dfil.cluster.durations import parse_duration

#: Seconds left at which a SIGTERM counts as the time limit's: the profile's signal
#: comes 300 s ahead, and SLURM may send it up to a minute early.
NEAR = 420


def time_left(env=os.environ, run=subprocess.run) -> float | None:
    """Seconds this SLURM job has left (None outside SLURM, or when squeue cannot say)."""
    job = env.get("SLURM_JOB_ID")
    if not job:
        return None
    try:
        out = run(["squeue", "-h", "-j", job, "-o", "%L"], capture_output=True, text=True,
                  timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_duration(out.stdout) if out.returncode == 0 else None


def at_time_limit(env=os.environ, run=subprocess.run) -> bool:
    """Whether a SIGTERM just received is the job's time limit (:data:`NEAR`)."""
    left = time_left(env, run)
    return left is not None and left <= NEAR
