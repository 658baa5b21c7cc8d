"""Which partition, account and QOS each rule's jobs carry to SLURM (pure): the rule's own
resources under the profile's ``set-resources`` over its ``default-resources``, as the
executor plugin builds each ``sbatch`` call.

- partition: ``set-resources.<rule>.slurm_partition``; else, for a job asking a GPU, the
  profile's GPU partition (``default-resources.gpu_partition``,
  :mod:`dfil.cluster.partitions`); else ``default-resources.slurm_partition``; else the
  site's default partition (the one ``sinfo`` marks with ``*``);
- account: ``set-resources.<rule>.slurm_account``, else ``default-resources.
  slurm_account``, else the user's default account (``sacctmgr show user``);
- QOS: ``set-resources.<rule>.qos``, else ``default-resources.qos``, else the plugin's
  ``slurm-qos`` setting, else the association's default QOS (``sacctmgr show assoc``).

:data:`GPU_RULES` are the rules whose jobs ask a GPU; every other rule's jobs are light
(the grid's ``cpu`` class) and carry the defaults (:data:`LIGHT`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dfil.cluster.partitions import GPU_PARTITION

#: The rules whose jobs take a GPU: training (alone and in packs), evaluation, the
#: frozen-feature pass and the acceptance run.
GPU_RULES = ("train_cell", "train_pack", "evaluate_cell", "frozen_features", "acceptance_run")
#: The name the checks give every other rule's jobs (the light ones).
LIGHT = "light jobs (every other rule)"
#: The profile's executor setting that asks every job for a QOS (the plugin's ``--slurm-qos``).
QOS_SETTING = "slurm-qos"


@dataclass(frozen=True)
class Setting:
    """One value a job carries, with where it comes from: a profile key
    (``set-resources.train_cell.qos``) or the site's default (``the user's default
    account``)."""

    value: str
    source: str

    def said(self) -> str:
        return f"{self.value} ({self.source})"


@dataclass(frozen=True)
class RuleJob:
    """A rule's largest job of one size class and what it carries to SLURM; a setting
    None is the site's default, resolved from SLURM's answers (:func:`resolve`)."""

    rule: str
    size: str
    resources: Mapping
    partition: Setting | None
    account: Setting | None
    qos: Setting | None

    @property
    def label(self) -> str:
        rule = self.rule if self.rule == LIGHT else f"rule {self.rule}"
        return f"{rule} (class {self.size})"

    @property
    def scope(self) -> str:
        """The profile block a fix for this rule's jobs alone goes in."""
        return "default-resources" if self.rule == LIGHT else f"set-resources.{self.rule}"


def _first(resources: Mapping[str, str], keys: list[str]) -> Setting | None:
    for key in keys:
        if resources.get(key):
            return Setting(resources[key], key)
    return None


def carried(resources: Mapping[str, str], rule: str, gpu: bool) -> tuple[
        Setting | None, Setting | None, Setting | None]:
    """The (partition, account, QOS) of a ``rule``'s job asking a GPU or not (``gpu``),
    from the profile's resources by key (:func:`dfil.cluster.slurm.profile_resources`,
    with the plugin's ``slurm-qos`` under its own name)."""
    own = [] if rule == LIGHT else [f"set-resources.{rule}"]

    def keys(name: str) -> list[str]:
        return [f"{scope}.{name}" for scope in [*own, "default-resources"]]

    partition_keys = keys("slurm_partition")
    if gpu:
        partition_keys.insert(len(own), f"default-resources.{GPU_PARTITION}")
    return (_first(resources, partition_keys), _first(resources, keys("slurm_account")),
            _first(resources, [*keys("qos"), QOS_SETTING]))


def rule_jobs(resources: Mapping[str, str], jobs: Mapping[str, Mapping[str, Mapping]]
              ) -> list[RuleJob]:
    """A :class:`RuleJob` per rule and size class of ``jobs`` (rule -> class -> the
    largest job's resources), in rule then class order."""
    out = []
    for rule, by_size in jobs.items():
        for size, job in sorted(by_size.items()):
            partition, account, qos = carried(resources, rule, int(job.get("gpu", 0)) > 0)
            out.append(RuleJob(rule, size, job, partition, account, qos))
    return out


def resolve(job: RuleJob, default_partition: str | None, default_account: str | None,
            default_qos) -> RuleJob:
    """``job`` with each unset setting filled from the site's defaults (None where SLURM
    did not say): the default partition, the user's default account, and
    ``default_qos(account, partition)``, the association's default QOS."""
    partition = job.partition or (Setting(default_partition, "the site's default partition")
                                  if default_partition else None)
    account = job.account or (Setting(default_account, "the user's default account")
                              if default_account else None)
    qos = job.qos
    if qos is None and account is not None:
        found = default_qos(account.value, partition.value if partition else None)
        qos = Setting(found, f"the default QOS of association {account.value}") \
            if found else None
    return RuleJob(job.rule, job.size, job.resources, partition, account, qos)
