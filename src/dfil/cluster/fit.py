"""Each rule's job against every limit the site enforces on it (pure): one check per rule
and size class, ok or every misfit at once, each naming the limit and the setting that
fixes it; and the profile's ``jobs`` against the submit caps of the associations and QOS
its jobs run under.

A job the site refuses (an account or QOS the partition does not allow, a QOS the account
may not use) fails at ``sbatch``; one past a limit the site enforces only when it
schedules (a partition's MaxTime, a QOS's MaxWall, more GPUs than the QOS lets a user or
a job hold, more than any node has) pends for ever, and Snakemake waits on it. A
submission past MaxSubmitJobs is refused until the user's queue shrinks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dfil.cluster.checks import PROFILE_FIX, Check
from dfil.cluster.limits import node_misfits
from dfil.cluster.nodes import NodeGroup
from dfil.cluster.policy import Association, PartitionPolicy, QosLimits, association
from dfil.cluster.rules import RuleJob


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:g} min"


def _access(job: RuleJob, policy: PartitionPolicy | None, assoc: Association | None,
            known_assocs: bool) -> list[str]:
    """What of the job's account and QOS sbatch refuses."""
    out = []
    scope = job.scope
    account, qos = job.account, job.qos
    # An account the profile leaves unset is every job's: set it for all of them.
    where = scope if account is None or "." in account.source else "default-resources"
    if account is None:
        out.append(f"no account (set slurm_account in {where})")
    elif known_assocs and assoc is None:
        out.append(f"account {account.said()} is no association of the user on this "
                   f"partition: set slurm_account in {where} (`sacctmgr show assoc "
                   "user=$USER format=account,partition`)")
    if policy and account:
        name = account.value.lower()
        if (policy.allow_accounts is not None and name not in policy.allow_accounts) \
                or name in policy.deny_accounts:
            allowed = ", ".join(sorted(policy.allow_accounts or [])) or "all but " + \
                ", ".join(sorted(policy.deny_accounts))
            out.append(f"partition {policy.name} does not allow account {account.said()} "
                       f"(AllowAccounts: {allowed}): set slurm_account in {where} to one "
                       "it allows")
    if qos is None:
        return out
    name = qos.value.lower()
    if assoc is not None and assoc.qos and name not in assoc.qos:
        out.append(f"qos {qos.said()} is not one account {assoc.account} may use "
                   f"({', '.join(sorted(assoc.qos))}): set qos in {scope}")
    if policy and ((policy.allow_qos is not None and name not in policy.allow_qos)
                   or name in policy.deny_qos):
        allowed = ", ".join(sorted(policy.allow_qos or [])) or "all but " + \
            ", ".join(sorted(policy.deny_qos))
        out.append(f"partition {policy.name} does not allow qos {qos.said()} (AllowQos: "
                   f"{allowed}): set qos in {scope} to one it allows")
    return out


def _limits(job: RuleJob, policy: PartitionPolicy | None, qos: QosLimits | None,
            nodes: list[NodeGroup]) -> list[str]:
    """What of the job's runtime, GPUs, memory and CPUs would leave it pending for ever."""
    out = []
    runtime = int(job.resources.get("runtime", 0)) * 60
    gpus = int(job.resources.get("gpu", 0))
    lower = "lower the class's runtime in the grid config's resources:"
    if policy and policy.max_time is not None and runtime > policy.max_time:
        out.append(f"runtime {_minutes(runtime)} > partition {policy.name}'s MaxTime "
                   f"{_minutes(policy.max_time)}: {lower}, or send {job.rule} to a "
                   f"partition that takes it (slurm_partition in {job.scope})")
    if qos and qos.max_wall is not None and runtime > qos.max_wall:
        out.append(f"runtime {_minutes(runtime)} > qos {qos.name}'s MaxWall "
                   f"{_minutes(qos.max_wall)}: set qos in {job.scope} to one whose MaxWall "
                   f"takes it, or {lower}")
    for limit, what in ((qos.gpus_per_job if qos else None, "a job (MaxTRES)"),
                        (qos.gpus_per_user if qos else None, "a user (MaxTRESPU)")):
        if limit is not None and gpus > limit:
            out.append(f"gpu {gpus} > the {limit} GPU(s) qos {qos.name} lets {what}: set "
                       f"qos in {job.scope} to one that allows {gpus}, or lower the "
                       "class's gpu")
    # Memory and CPUs are judged on the nodes of the class's GPU type, else (its type
    # is the gpu_model check's problem) on the partition's GPU nodes: every misfit in
    # one round, not the next only once the type is fixed.
    typed = [n for n in nodes if n.gpus(job.resources.get("gpu_model")) > 0] if gpus else nodes
    pool = typed or [n for n in nodes if n.gpus(None) > 0] or nodes
    asked = job.resources if typed else {**job.resources, "gpu": 0}
    timed = policy is not None and policy.max_time is not None  # MaxTime judged above
    fits = [[m for m in node_misfits(asked, n) if not (timed and m.startswith("runtime"))]
            for n in pool]
    if fits and all(fits):
        out += [f"{m} (lower it in the grid config's resources:)" for m in min(fits, key=len)]
    return out


def judge_rule_job(job: RuleJob, partitions: Mapping[str, PartitionPolicy] | None,
                   qos_limits: Mapping[str, QosLimits] | None,
                   assocs: list[Association] | None, groups: list[NodeGroup]) -> Check:
    """One check of a resolved rule job (:func:`dfil.cluster.rules.resolve`): ok, naming
    where it goes and under what, or every misfit at once. A source SLURM did not answer
    (None) is not judged."""
    partition = job.partition.value if job.partition else None
    policy = (partitions or {}).get(partition) if partition else None
    assoc = association(assocs or [], job.account.value, partition) if job.account else None
    qos = (qos_limits or {}).get(job.qos.value.lower()) if job.qos else None
    nodes = [g for g in groups if g.partition == partition]
    misfits = _access(job, policy, assoc, bool(assocs)) + _limits(job, policy, qos, nodes)
    where = ", ".join(filter(None, [
        f"partition {job.partition.said()}" if job.partition else None,
        f"account {job.account.said()}" if job.account else None,
        f"qos {job.qos.said()}" if job.qos else None]))
    if misfits:
        return Check("slurm", "problem", f"{job.label}: {where}: " + "; ".join(misfits)
                     + f". Each setting is in {PROFILE_FIX}")
    res = job.resources
    return Check("slurm", "ok", f"{job.label}: {where}: allowed, and its job ({res.get('runtime')}"
                 f" min, {res.get('mem_mb')} MB, {res.get('gpu', 0)} GPU) within the "
                 "partition's and the QOS's limits")


def judge_submit_cap(jobs: int | None, used: Iterable[tuple[Association | None,
                     QosLimits | None]]) -> list[Check]:
    """The profile's ``jobs`` (how many jobs Snakemake keeps submitted) against the
    MaxSubmitJobs of each association and the MaxSubmitJobsPU of each QOS its jobs run
    under (``used``); and what MaxJobs lets run at once."""
    caps, running = {}, {}
    for assoc, qos in used:
        if assoc and assoc.max_submit is not None:
            caps[f"MaxSubmitJobs of association {assoc.account}"] = assoc.max_submit
        if qos and qos.max_submit_per_user is not None:
            caps[f"MaxSubmitJobsPU of qos {qos.name}"] = qos.max_submit_per_user
        if assoc and assoc.max_jobs is not None:
            running[assoc.account] = assoc.max_jobs
    out = []
    if caps:
        cap = min(caps.values())
        which = ", ".join(f"{k} {v}" for k, v in sorted(caps.items()))
        if jobs is None or jobs > cap:
            out.append(Check("slurm", "problem", f"the profile's jobs: {jobs} > the "
                             f"site's submit cap ({which}): sbatch refuses each job past "
                             f"{cap} queued; set the line `jobs: {cap}` in {PROFILE_FIX}"))
        else:
            out.append(Check("slurm", "ok", f"the profile's jobs: {jobs} is within the "
                             f"site's submit cap ({which})"))
    for account, limit in sorted(running.items()):
        if limit == 0:
            out.append(Check("slurm", "problem", f"association {account}: MaxJobs 0, no "
                             "job of it ever runs: ask the site, or set slurm_account in "
                             f"{PROFILE_FIX} to another account"))
        else:
            out.append(Check("slurm", "ok", f"association {account}: at most {limit} of its "
                             "jobs run at once (MaxJobs); the rest wait queued"))
    return out
