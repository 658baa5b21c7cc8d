"""Does each size class's job fit the GPU partitions it goes to (pure): its runtime under
the partition's time limit, its memory, CPUs and GPUs on one node.

Every attempt of a job asks the same (:meth:`dfil.config.grid.Grid.job_resources`): a job stopped
at its time limit continues from its checkpoint in a job of the same size, so no retry
asks more than the first attempt. A request past a partition's limits is refused by
sbatch or, where the site does not enforce limits at submission, pends for ever
(``PartitionTimeLimit``), and Snakemake waits on it: preflight says so before anything is
submitted. Limits sinfo does not give (an older format, ``infinite``) are not judged.

Each rule's job against every limit of the partition it goes to, its QOS and association
is :mod:`dfil.cluster.fit`'s; this judges the size classes where no profile says where
their jobs go.
"""

from __future__ import annotations

from collections.abc import Mapping

from dfil.cluster.checks import Check
from dfil.cluster.nodes import NodeGroup


def node_misfits(job: Mapping, node: NodeGroup) -> list[str]:
    """What of ``job`` (a class's resources) ``node`` cannot give."""
    out = []
    runtime = int(job.get("runtime", 0))
    if node.time_limit is not None and runtime * 60 > node.time_limit:
        out.append(f"runtime {runtime} min > the partition's limit of "
                   f"{node.time_limit / 60:g} min")
    if node.mem_mb is not None and int(job.get("mem_mb", 0)) > node.mem_mb:
        out.append(f"mem_mb {job['mem_mb']} > {node.mem_mb} MB a node")
    if node.cpus is not None and int(job.get("cpus_per_task", 1)) > node.cpus:
        out.append(f"cpus_per_task {job['cpus_per_task']} > {node.cpus} CPUs a node")
    gpus, have = int(job.get("gpu", 0)), node.gpus(job.get("gpu_model"))
    if have < gpus:
        out.append(f"gpu {gpus} > {have} {job.get('gpu_model') or 'GPU'}s a node")
    return out


def _where(partitions: set[str]) -> str:
    return f"partition {', '.join(sorted(partitions))}" if partitions else "any partition"


def judge_limits(jobs: Mapping[str, Mapping], partitions: set[str],
                 groups: list[NodeGroup]) -> list[Check]:
    """One check per size class in ``jobs`` (class -> its largest job's resources, what
    each attempt asks): ok when some node configuration of ``partitions`` (empty: any) with
    its GPU type takes it whole, else what does not fit and the fix. Classes whose GPU type no node
    has are left to the gpu_model check."""
    out = []
    for size, job in sorted(jobs.items()):
        nodes = [g for g in groups if (g.partition in partitions or not partitions)
                 and g.gpus(job.get("gpu_model")) > 0]
        if not nodes:
            continue
        misfits = [node_misfits(job, node) for node in nodes]
        if any(not m for m in misfits):
            out.append(Check("slurm", "ok", f"class {size}: each attempt "
                             f"({job.get('runtime')} min, {job.get('mem_mb')} MB, "
                             f"{job.get('gpu')} GPU) fits {_where(partitions)}"))
            continue
        fewest = min(misfits, key=len)
        out.append(Check("slurm", "problem", f"class {size}: its job does not fit "
                         f"{_where(partitions)}: {'; '.join(fewest)}. Lower the "
                         "class's resources in the grid config (every attempt asks the same: a "
                         "job stopped at its time limit continues from its checkpoint in the "
                         "next), or send it to a partition that takes it"))
    return out
