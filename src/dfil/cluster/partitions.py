"""Which SLURM partition a training or evaluation job goes to (pure): the profile's GPU
partition where the job asks for a GPU, its CPU partition otherwise.

The profile names both among its default resources: ``slurm_partition``, the partition of
every job without a GPU, and :data:`GPU_PARTITION`, the one of jobs with a GPU. A job
that will only record a failure (a gated repo's refused fetch among its inputs, or a
failed training before its evaluation) asks for no GPU
(:meth:`dfil.config.grid.Grid.job_resources`), so it queues on the CPU partition with the light
jobs instead of waiting for a GPU it would not use.
"""

from __future__ import annotations

from collections.abc import Mapping

#: The default resource naming the partition of jobs that ask for a GPU.
GPU_PARTITION = "gpu_partition"


def profile_text(value) -> str | None:
    """A resource's value as a profile gives it (``"'gpu'"``, ``gpu``): the bare text, or
    None where it is unset or empty."""
    text = None if value is None else str(value).strip().strip("'\"").strip()
    return text or None


def job_partition(resources: Mapping, cpu: str | None, gpu: str | None) -> str | None:
    """The partition of a job asking for ``resources`` (its ``gpu`` count): ``gpu`` where it
    asks for a GPU and the profile names one, else ``cpu`` (None: the site's default)."""
    asks_gpu = int(resources.get("gpu", 0) or 0) > 0
    return (gpu or cpu) if asks_gpu else cpu
