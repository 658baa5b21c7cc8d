"""Does the SLURM cluster have what the profile and the grid ask for: the partitions, each
size class's ``gpu_model`` as a GRES type there, and each rule's jobs against every limit
the site enforces on them (:mod:`dfil.cluster.fit`); pure parsing and judging, and one
thin function that runs the commands.

The commands (SLURM 22.05, Debian's slurm-wlm): ``sinfo``'s node configurations
(:mod:`dfil.cluster.nodes`), ``scontrol`` and ``sacctmgr``'s partitions, QOS and
associations (:mod:`dfil.cluster.policy`).

The plugin sends a class's ``gpu_model`` as ``--gpus=<gpu_model>:<gpu>``, which SLURM
matches against the GRES *type* of the partition's nodes, never their features. A QOS is
the plugin's ``qos`` resource (``--qos``) or its ``slurm-qos`` setting; it refuses
``--qos`` inside ``slurm_extra``.
"""

from __future__ import annotations

import getpass
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from dfil.cluster.checks import PROFILE_FIX, Check
from dfil.cluster.fit import judge_rule_job, judge_submit_cap
from dfil.cluster.limits import judge_limits
from dfil.cluster.nodes import SINFO, NodeGroup, parse_sinfo
from dfil.cluster.partitions import GPU_PARTITION
from dfil.cluster.policy import (
    SCONTROL_PARTITIONS,
    association,
    parse_associations,
    parse_partitions,
    parse_qos_limits,
    sacctmgr_assoc,
    sacctmgr_qos,
    sacctmgr_user,
)
from dfil.cluster.rules import GPU_RULES, QOS_SETTING, resolve, rule_jobs
from dfil.util.errors import ConfigError


@dataclass(frozen=True)
class Site:
    """What the profile asks SLURM for: each account and each partition by the profile
    key that sets it (``default-resources.slurm_account``,
    ``default-resources.gpu_partition``, ``set-resources.train_cell.slurm_partition``)."""

    accounts: Mapping[str, str]
    partitions: Mapping[str, str]
    #: Each QOS by the profile key that sets it (``default-resources.qos``,
    #: ``set-resources.train_cell.qos``, ``slurm-qos``).
    qos: Mapping[str, str] = field(default_factory=dict)
    #: Every resource the profile sets by its key, ``slurm-qos`` under its own name.
    resources: Mapping[str, str] = field(default_factory=dict)
    #: The profile's ``jobs``: how many jobs Snakemake keeps submitted at once.
    jobs: int | None = None

    def gpu_partitions(self) -> set[str]:
        """The partitions GPU jobs go to: each GPU rule's own, else the profile's GPU
        partition (:data:`dfil.cluster.partitions.GPU_PARTITION`), else the default one."""
        default = (self.partitions.get(f"default-resources.{GPU_PARTITION}")
                   or self.partitions.get("default-resources.slurm_partition"))
        return {self.partitions.get(f"set-resources.{rule}.slurm_partition", default)
                for rule in GPU_RULES} - {None}


def _unquote(value) -> str:
    return str(value).strip().strip("'\"")


def _pairs(items, key: str, split: str) -> list[tuple[str, str, str]]:
    """Snakemake's list form of resources (``["slurm_account=x"]``, or for
    ``set-resources`` ``["train_cell:slurm_partition=gpu"]``) as (rule, name, value)."""
    out = []
    for item in items:
        head, eq, value = str(item).partition("=")
        rule, colon, name = head.partition(":") if split else ("", "", head)
        if not eq or (split and not colon):
            form = "rule:name=value" if split else "name=value"
            raise ConfigError(f"profile key {key}: {item!r} is not {form}")
        out.append((rule.strip(), name.strip(), value))
    return out


def _resources(profile: Mapping) -> dict[str, str]:
    """Every resource the profile sets, by its key (``default-resources.<name>``,
    ``set-resources.<rule>.<name>``), from either form Snakemake reads."""
    out = {}
    defaults = profile.get("default-resources") or {}
    pairs = (defaults.items() if isinstance(defaults, Mapping)
             else [(n, v) for _, n, v in _pairs(defaults, "default-resources", "")])
    out.update({f"default-resources.{name}": value for name, value in pairs})
    per_rule = profile.get("set-resources") or {}
    triples = ([(rule, n, v) for rule, res in per_rule.items()
                for n, v in (res or {}).items()] if isinstance(per_rule, Mapping)
               else _pairs(per_rule, "set-resources", ":"))
    out.update({f"set-resources.{rule}.{name}": value for rule, name, value in triples})
    return out


def site_from_profile(profile: Mapping) -> Site:
    """The :class:`Site` of a Snakemake profile (its config.yaml, merged); resources in
    the mapping form or the list form. :class:`ConfigError` names a malformed item."""
    found = {key: _unquote(value) for key, value in _resources(profile).items() if value}
    if profile.get(QOS_SETTING):
        found[QOS_SETTING] = _unquote(profile[QOS_SETTING])
    qos = {k: v for k, v in found.items() if k.endswith(".qos") or k == QOS_SETTING}
    jobs = str(profile.get("jobs", "")).strip()
    return Site({k: v for k, v in found.items() if k.endswith(".slurm_account")},
                {k: v for k, v in found.items()
                 if k.endswith((".slurm_partition", f".{GPU_PARTITION}"))}, qos, found,
                int(jobs) if jobs.isdigit() else None)


def judge_partitions(site: Site, groups: list[NodeGroup]) -> list[Check]:
    """One check per partition the profile names (with the keys that name it): present
    in ``sinfo``."""
    here = sorted({g.partition for g in groups})
    keys: dict[str, list[str]] = {}
    for key, name in sorted(site.partitions.items()):
        keys.setdefault(name, []).append(key)
    out = []
    for name, where in sorted(keys.items()):
        if name in here:
            out.append(Check("slurm", "ok", f"partition {name} ({', '.join(where)}) exists"))
        else:
            out.append(Check("slurm", "problem", f"partition {name!r} ({', '.join(where)}) is "
                             f"not among this cluster's partitions ({', '.join(here) or 'none'})"
                             f": set it in {PROFILE_FIX}; `sinfo -s` lists them"))
    return out


def judge_gpu_models(models: Mapping[str, str | None], partitions: set[str],
                     groups: list[NodeGroup]) -> list[Check]:
    """One check per GPU size class (``models``: class -> its ``gpu_model``, None for
    any GPU): the model is a GPU GRES type of a node in one of ``partitions``."""
    nodes = [g for g in groups if g.partition in partitions] if partitions else groups
    where = f"partition {', '.join(sorted(partitions))}" if partitions else "any partition"
    types = sorted(set().union(*(g.gpu_types for g in nodes)))
    out = []
    for size, model in sorted(models.items()):
        if not model:
            ok = any(re.search(r"(^|,)(gres/)?gpu\b", g.gres) for g in nodes)
            out.append(Check("slurm", "ok" if ok else "problem",
                             f"class {size}: any GPU (no gpu_model)" + (
                                 "" if ok else f"; no node in {where} has a GPU GRES")))
        elif model in types:
            out.append(Check("slurm", "ok", f"class {size}: gpu_model {model} is a GPU type "
                             f"in {where}"))
        else:
            feature = any(model in g.features for g in nodes)
            why = (f"{model} is a node feature there, not a GRES type, and "
                   "--gpus=<gpu_model>:<n> asks for the type" if feature else
                   f"no node in {where} has GPUs of type {model}")
            out.append(Check("slurm", "problem", f"class {size}: gpu_model {model}: {why}; "
                             f"its GPU types: {', '.join(types) or 'none'}. Set the class's "
                             "gpu_model in the grid config's resources: to one of them "
                             "(`sinfo -o %G`), or leave it out for any GPU"))
    return out


Runner = Callable[[list[str]], subprocess.CompletedProcess]


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)


def site_nodes(run: Runner = _run) -> list[NodeGroup] | None:
    """This host's SLURM nodes as ``sinfo`` lists them; None off SLURM, or where sinfo
    fails or prints what it was not asked."""
    if shutil.which("sinfo") is None:
        return None
    done = run(list(SINFO))
    try:
        return None if done.returncode else parse_sinfo(done.stdout)
    except ValueError:
        return None


def _ask(run: Runner, command: list[str], what: str, parse):
    """``command``'s parsed output, or the check saying why ``what`` was not checked."""
    shown = " ".join(command)
    if shutil.which(command[0]) is None:
        return None, Check("slurm", "skipped", f"no {command[0]} on PATH: {what} not checked")
    done = run(command)
    if done.returncode:
        return None, Check("slurm", "skipped", f"`{shown}` failed ({done.stderr.strip()}): "
                           f"{what} not checked")
    try:
        return parse(done.stdout), None
    except ValueError as err:  # a site's wrapper that prints more than asked
        return None, Check("slurm", "problem", f"`{shown}`: {err}")


def _by_class(jobs: Mapping[str, Mapping[str, Mapping]]) -> dict[str, Mapping]:
    """Each GPU size class's longest job over the rules."""
    out: dict[str, Mapping] = {}
    for by_size in jobs.values():
        for size, job in by_size.items():
            if int(job.get("gpu", 0)) and job.get("runtime", 0) >= out.get(size, {}).get(
                    "runtime", -1):
                out[size] = job
    return out


def rule_checks(site: Site, jobs: Mapping[str, Mapping[str, Mapping]],
                groups: list[NodeGroup], run: Runner, user: str) -> list[Check]:
    """One check per rule and size class of ``jobs`` against the partition, account and
    QOS its jobs carry (:mod:`dfil.cluster.rules`, :mod:`dfil.cluster.fit`), then the
    profile's ``jobs`` against the submit caps; a SLURM command that fails is a skipped
    check naming what it left unchecked."""
    notes = []
    partitions, note = _ask(run, list(SCONTROL_PARTITIONS),
                            "the partitions' AllowAccounts, AllowQos and MaxTime",
                            parse_partitions)
    notes.append(note)
    qos_limits, note = _ask(run, sacctmgr_qos(), "the QOS's MaxWall and GPU limits",
                            parse_qos_limits)
    notes.append(note)
    assocs, note = _ask(run, sacctmgr_assoc(user), "the account, its QOS and job limits",
                        parse_associations)
    notes.append(note)
    default_account = None
    if "default-resources.slurm_account" not in site.accounts:
        found, note = _ask(run, sacctmgr_user(user), f"{user}'s default account",
                           lambda text: text.strip().splitlines()[0].strip()
                           if text.strip() else None)
        default_account = found
        notes.append(note)
    if assocs == []:
        notes.append(Check("slurm", "skipped", f"sacctmgr lists no association for {user} "
                           "(no accounting here): accounts, QOS and job limits not checked"))
        assocs = None
    default_partition = next((g.partition for g in groups if g.default), None)

    def default_qos(account: str, partition: str | None) -> str | None:
        found = association(assocs or [], account, partition)
        return found.default_qos if found else None

    checks, used = [], []
    for job in rule_jobs(site.resources, jobs):
        job = resolve(job, default_partition, default_account, default_qos)
        checks.append(judge_rule_job(job, partitions, qos_limits, assocs, groups))
        partition = job.partition.value if job.partition else None
        used.append((association(assocs or [], job.account.value, partition)
                     if job.account else None,
                     (qos_limits or {}).get(job.qos.value.lower()) if job.qos else None))
    return [n for n in notes if n] + checks + judge_submit_cap(site.jobs, used)


def slurm_checks(site: Site | None, jobs: Mapping[str, Mapping[str, Mapping]],
                 run: Runner = _run) -> list[Check]:
    """Partitions, GPU types, and each rule's jobs against every limit the site enforces
    on them (:func:`rule_checks`; ``site`` None: no profile given, only each class's GPU
    type and its job against any partition's nodes); ``jobs``: rule -> size class -> the
    largest job's resources (every attempt asks the same). One skipped check off SLURM."""
    if shutil.which("sinfo") is None:
        return [Check("slurm", "skipped", "not a SLURM host (no sinfo on PATH): skipped")]
    done = run(list(SINFO))
    if done.returncode:
        return [Check("slurm", "problem", f"`{' '.join(SINFO)}` failed ({done.stderr.strip()}"
                      "): is the SLURM controller reachable from here?")]
    try:
        groups = parse_sinfo(done.stdout)
    except ValueError as err:  # a site's sinfo wrapper that prints more than asked
        return [Check("slurm", "problem", f"`{' '.join(SINFO)}`: {err}")]
    site = site or Site({}, {})
    checks = judge_partitions(site, groups)
    classes = _by_class({r: j for r, j in jobs.items() if r in GPU_RULES})
    models = {size: job.get("gpu_model") for size, job in classes.items()}
    checks += judge_gpu_models(models, site.gpu_partitions(), groups)
    if not site.accounts and not site.partitions:
        return checks + judge_limits(classes, set(), groups) + [
            Check("slurm", "skipped", "no slurm_account or slurm_partition in the profile "
                  "(none given with --profile, or it sets neither): partitions, accounts, "
                  "QOS and job limits not checked")]
    return checks + rule_checks(site, jobs, groups, run, getpass.getuser())
