"""Does the SLURM cluster have what the profile and the grid ask for: the partitions, each
size class's ``gpu_model`` as a GRES type there, the account and the QOS the profile sets
(pure parsing and judging, and one thin function that runs the commands).

The commands and what is read of them (SLURM 22.05, Debian's slurm-wlm): ``sinfo``'s
node configurations (:mod:`dfil.cluster.nodes`) and::

    sacctmgr -n -P show assoc user=<user> format=account,qos
                                one line per association of the user: its account, "|",
                                the QOS it may use, comma-separated ("" where none is
                                listed)
    scontrol -o show partition  each partition's AllowQos (:mod:`dfil.cluster.limits`)

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

from dfil.cluster.accounting import judge_account, judge_qos, parse_qos
from dfil.cluster.checks import PROFILE_FIX, Check
from dfil.cluster.limits import (
    SCONTROL_PARTITIONS,
    judge_allow_qos,
    judge_limits,
    parse_allow_qos,
)
from dfil.cluster.nodes import SINFO, NodeGroup, parse_sinfo
from dfil.cluster.partitions import GPU_PARTITION
from dfil.util.errors import ConfigError

#: The profile's executor setting that asks every job for a QOS (the plugin's ``--slurm-qos``).
QOS_SETTING = "slurm-qos"
#: The rules that run on a GPU (their partition is where gpu_model must be a GRES type).
GPU_RULES = ("train_cell", "evaluate_cell")


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
    qos = {k: v for k, v in found.items() if k.endswith(".qos")}
    if profile.get(QOS_SETTING):
        qos[QOS_SETTING] = _unquote(profile[QOS_SETTING])
    return Site({k: v for k, v in found.items() if k.endswith(".slurm_account")},
                {k: v for k, v in found.items()
                 if k.endswith((".slurm_partition", f".{GPU_PARTITION}"))}, qos)


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


def allow_qos_checks(site: Site, run: Runner) -> list[Check]:
    """The QOS of the jobs each of the profile's partitions gets, against the partition's
    AllowQos (:func:`dfil.cluster.limits.judge_allow_qos`); one skipped check where
    ``scontrol`` is missing or fails."""
    if not site.partitions:
        return []
    command = " ".join(SCONTROL_PARTITIONS)
    if shutil.which("scontrol") is None:
        return [Check("slurm", "skipped", "no scontrol on PATH: the partitions' AllowQos "
                      "not checked")]
    done = run(list(SCONTROL_PARTITIONS))
    if done.returncode:
        return [Check("slurm", "skipped", f"`{command}` failed ({done.stderr.strip()}): "
                      "the partitions' AllowQos not checked")]
    try:
        allowed = parse_allow_qos(done.stdout)
    except ValueError as err:
        return [Check("slurm", "problem", f"`{command}`: {err}")]
    return judge_allow_qos(site.partitions, site.qos, allowed)


def slurm_checks(site: Site | None, jobs: Mapping[str, Mapping],
                 run: Runner = _run) -> list[Check]:
    """Partitions, GPU types, each class's job against the partitions' limits and each
    partition's AllowQos (:mod:`dfil.cluster.limits`), the account and its QOS against this
    host's SLURM (``site`` None: no profile given, only the GPU types and limits are
    checked); ``jobs``: each GPU size class's largest job's resources (every attempt asks
    the same). One skipped check off SLURM."""
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
    models = {size: job.get("gpu_model") for size, job in jobs.items()}
    checks += judge_gpu_models(models, site.gpu_partitions(), groups)
    checks += judge_limits(jobs, site.gpu_partitions(), groups)
    user = getpass.getuser()
    if not site.accounts and not site.partitions:
        return checks + [Check("slurm", "skipped", "no slurm_account or slurm_partition in "
                               "the profile (none given with --profile, or it sets neither): "
                               "partitions and account not checked")]
    checks += allow_qos_checks(site, run)
    accounts = sorted(set(site.accounts.values())) or [None]
    if shutil.which("sacctmgr") is None:
        return checks + [Check("slurm", "skipped", "no sacctmgr on PATH: account and QOS "
                               "not checked")]
    done = run(["sacctmgr", "-n", "-P", "show", "assoc", f"user={user}", "format=account,qos"])
    if done.returncode:
        return checks + [Check("slurm", "skipped", f"sacctmgr failed ({done.stderr.strip()}):"
                               f" account {', '.join(map(str, accounts))} and QOS not checked")]
    assoc = parse_qos(done.stdout)
    return (checks + [judge_account(a, set(assoc), user) for a in accounts]
            + judge_qos(site.accounts.values(), site.qos, assoc, user))
