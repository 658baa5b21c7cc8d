"""Does each size class's job fit the GPU partitions it goes to (pure): its runtime under
the partition's time limit, its memory, CPUs and GPUs on one node.

Every attempt of a job asks the same (:meth:`dfil.config.grid.Grid.job_resources`): a job stopped
at its time limit continues from its checkpoint in a job of the same size, so no retry
asks more than the first attempt. A request past a partition's limits is refused by
sbatch or, where the site does not enforce limits at submission, pends for ever
(``PartitionTimeLimit``), and Snakemake waits on it: preflight says so before anything is
submitted. Limits sinfo does not give (an older format, ``infinite``) are not judged.

The QOS each partition allows comes from::

    scontrol -o show partition  one line per partition of ``Key=value`` fields, among
                                them ``PartitionName=gpu`` and ``AllowQos=gpu,long`` (or
                                ``AllowQos=ALL``)

A job whose QOS its partition does not allow is refused by sbatch ("Invalid qos
specification").
"""

from __future__ import annotations

from collections.abc import Mapping

from dfil.cluster.checks import PROFILE_FIX, Check
from dfil.cluster.nodes import NodeGroup

#: The command whose output :func:`parse_allow_qos` reads.
SCONTROL_PARTITIONS = ("scontrol", "-o", "show", "partition")


def _misfits(job: Mapping, node: NodeGroup) -> list[str]:
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
        misfits = [_misfits(job, node) for node in nodes]
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


def parse_allow_qos(text: str) -> dict[str, set[str] | None]:
    """Each partition of ``scontrol -o show partition`` and the QOS it allows (lowercased,
    as SLURM compares them); None where it allows all (``AllowQos=ALL``, or no field).
    :class:`ValueError` names a non-empty line without ``PartitionName=``."""
    out: dict[str, set[str] | None] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = dict(f.partition("=")[::2] for f in line.split() if "=" in f)
        if "PartitionName" not in fields:
            raise ValueError(f"scontrol output line {number}: no PartitionName= field in "
                             f"{line.strip()[:60]!r}")
        allow = fields.get("AllowQos", "ALL").strip().lower()
        out[fields["PartitionName"]] = (None if allow in ("all", "") else
                                        {q for q in allow.split(",") if q})
    return out


def partition_qos(partition_key: str, qos: Mapping[str, str]) -> tuple[str, str] | None:
    """The QOS a job sent to a partition by ``partition_key`` (``default-resources.
    slurm_partition``, ``set-resources.<rule>.slurm_partition``) runs under, with the key
    that sets it: the rule's own ``qos``, else the default's, else the plugin's
    ``slurm-qos``; None where the profile sets none (the account's default QOS)."""
    scope = partition_key.rsplit(".", 1)[0]
    for key in (f"{scope}.qos", "default-resources.qos", "slurm-qos"):
        if qos.get(key):
            return qos[key], key
    return None


def judge_allow_qos(partitions: Mapping[str, str], qos: Mapping[str, str],
                    allowed: Mapping[str, set[str] | None]) -> list[Check]:
    """One check per partition the profile sends jobs to (``partitions``: profile key ->
    partition; ``qos``: profile key -> QOS; ``allowed``: :func:`parse_allow_qos`): the QOS
    its jobs run under is one the partition allows. Partitions scontrol does not list
    are left to the partition check."""
    out = []
    for key, name in sorted(partitions.items()):
        if name not in allowed:
            continue
        allow, found = allowed[name], partition_qos(key, qos)
        label = f"partition {name} ({key})"
        if allow is None:
            out.append(Check("slurm", "ok", f"{label} allows every QOS"))
        elif found and found[0].lower() in allow:
            out.append(Check("slurm", "ok", f"{label} allows qos {found[0]} ({found[1]})"))
        else:
            what = (f"qos {found[0]} ({found[1]}) is not one" if found else
                    "the profile sets no qos (its jobs take the account's default QOS), "
                    "and that may not be one")
            out.append(Check("slurm", "problem", f"{label}: {what} of the QOS it allows "
                             f"({', '.join(sorted(allow))}): set qos (default-resources or "
                             f"the rule's) in {PROFILE_FIX} to one of them; `scontrol show "
                             "partition` lists each partition's AllowQos"))
    return out
