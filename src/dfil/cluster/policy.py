"""The limits a SLURM site enforces on a job, as its commands print them (pure parsing):
each partition's allowed accounts and QOS and time limit, each QOS's wall time and GPU
limits, each of the user's associations with its QOS and job counts.

The commands and what is read of them (SLURM 22.05, Debian's slurm-wlm)::

    scontrol -o show partition  one line per partition of Key=value fields:
                                PartitionName, AllowAccounts, DenyAccounts, AllowQos,
                                DenyQos (ALL or comma-separated), MaxTime (UNLIMITED or
                                [days-]hours:minutes:seconds)
    sacctmgr -n -P show qos format=name,maxwall,maxtrespu,maxtres,maxsubmitpu
                                one line per QOS: its name, MaxWall, MaxTRESPU and
                                MaxTRES (gres/gpu=2,cpu=8), MaxSubmitJobsPU
    sacctmgr -n -P show assoc user=<user> format=account,partition,qos,defaultqos,
                                maxsubmitjobs,maxjobs
                                one line per association: account, partition ("" for
                                all), the QOS it may use, its default QOS, MaxSubmitJobs,
                                MaxJobs ("" where unlimited)
    sacctmgr -n -P show user <user> format=defaultaccount
                                the account a job without -A is charged to

Empty fields and ``UNLIMITED`` are no limit (None).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dfil.cluster.durations import parse_duration

SCONTROL_PARTITIONS = ("scontrol", "-o", "show", "partition")
QOS_FORMAT = "format=name,maxwall,maxtrespu,maxtres,maxsubmitpu"
ASSOC_FORMAT = "format=account,partition,qos,defaultqos,maxsubmitjobs,maxjobs"


def sacctmgr_qos() -> list[str]:
    return ["sacctmgr", "-n", "-P", "show", "qos", QOS_FORMAT]


def sacctmgr_assoc(user: str) -> list[str]:
    return ["sacctmgr", "-n", "-P", "show", "assoc", f"user={user}", ASSOC_FORMAT]


def sacctmgr_user(user: str) -> list[str]:
    return ["sacctmgr", "-n", "-P", "show", "user", user, "format=defaultaccount"]


def _names(text: str | None) -> frozenset[str] | None:
    """``ALL``, "" or unset -> None (all); else the lowercased names."""
    text = (text or "").strip().lower()
    return None if text in ("", "all") else frozenset(n for n in text.split(",") if n)


@dataclass(frozen=True)
class PartitionPolicy:
    """What a partition lets in: accounts and QOS (None: all), and its MaxTime (s)."""

    name: str
    allow_accounts: frozenset[str] | None = None
    deny_accounts: frozenset[str] = frozenset()
    allow_qos: frozenset[str] | None = None
    deny_qos: frozenset[str] = frozenset()
    max_time: float | None = None


def parse_partitions(text: str) -> dict[str, PartitionPolicy]:
    """Each partition of ``scontrol -o show partition``. :class:`ValueError` names a
    non-empty line without ``PartitionName=``."""
    out = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = dict(f.partition("=")[::2] for f in line.split() if "=" in f)
        if "PartitionName" not in fields:
            raise ValueError(f"scontrol output line {number}: no PartitionName= field in "
                             f"{line.strip()[:60]!r}")
        name = fields["PartitionName"]
        out[name] = PartitionPolicy(
            name, _names(fields.get("AllowAccounts")),
            _names(fields.get("DenyAccounts")) or frozenset(),
            _names(fields.get("AllowQos")), _names(fields.get("DenyQos")) or frozenset(),
            parse_duration(fields.get("MaxTime", "UNLIMITED")))
    return out


def _count(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() else None


def tres_gpus(tres: str) -> int | None:
    """The GPUs of a TRES list (``cpu=8,gres/gpu=2``, ``gres/gpu:a100=2``): the untyped
    ``gres/gpu`` count, else the smallest typed one; None where it names none."""
    found = re.findall(r"gres/gpu(?::[^=,]+)?=(\d+)", tres)
    plain = re.search(r"gres/gpu=(\d+)", tres)
    if plain:
        return int(plain.group(1))
    return min(map(int, found)) if found else None


@dataclass(frozen=True)
class QosLimits:
    """A QOS's limits that a job of the grid meets (None: none)."""

    name: str
    max_wall: float | None = None
    gpus_per_user: int | None = None
    gpus_per_job: int | None = None
    max_submit_per_user: int | None = None


def parse_qos_limits(text: str) -> dict[str, QosLimits]:
    """Each QOS of ``sacctmgr -n -P show qos`` (:data:`QOS_FORMAT`) by its lowercased
    name. :class:`ValueError` names a line of another shape."""
    out = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.strip().split("|")
        if len(parts) != 5:
            raise ValueError(f"sacctmgr qos output line {number}: expected 'name|maxwall|"
                             f"maxtrespu|maxtres|maxsubmitpu', got {line.strip()!r}")
        name, wall, per_user, per_job, submit = parts
        out[name.lower()] = QosLimits(name, parse_duration(wall) if wall else None,
                                      tres_gpus(per_user), tres_gpus(per_job), _count(submit))
    return out


@dataclass(frozen=True)
class Association:
    """One of the user's associations: its account, partition ("" for all), the QOS it
    may use, its default QOS, and how many jobs it may have queued and running."""

    account: str
    partition: str = ""
    qos: frozenset[str] = field(default_factory=frozenset)
    default_qos: str | None = None
    max_submit: int | None = None
    max_jobs: int | None = None


def parse_associations(text: str) -> list[Association]:
    """The user's associations from ``sacctmgr -n -P show assoc`` (:data:`ASSOC_FORMAT`),
    names lowercased as SLURM compares them. :class:`ValueError` names a line of another
    shape."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.strip().lower().split("|")
        if len(parts) != 6:
            raise ValueError(f"sacctmgr assoc output line {number}: expected 'account|"
                             "partition|qos|defaultqos|maxsubmitjobs|maxjobs', got "
                             f"{line.strip()!r}")
        account, partition, qos, default, submit, jobs = parts
        out.append(Association(account, partition, frozenset(q for q in qos.split(",") if q),
                               default or None, _count(submit), _count(jobs)))
    return out


def association(assocs: list[Association], account: str,
                partition: str | None) -> Association | None:
    """The association a job of ``account`` on ``partition`` runs under: the one for
    that partition, else the account's own (partition ""), else None."""
    mine = [a for a in assocs if a.account == account.lower()]
    exact = [a for a in mine if partition and a.partition == partition.lower()]
    return (exact or [a for a in mine if not a.partition] or [None])[0]
