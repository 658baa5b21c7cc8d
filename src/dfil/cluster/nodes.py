"""The nodes of a SLURM cluster as ``sinfo`` lists them (pure parsing): each partition's
node configurations with their GPU types and counts, time limit, memory and CPUs.

The command and what is read of it (SLURM 22.05, Debian's slurm-wlm)::

    sinfo -h -o "%R %G %f %l %m %c"
                                one line per partition and node configuration:
                                partition, generic resources (gpu:h100:8(S:0-1),...), the
                                nodes' features (h100,ib), "(null)" for none, then the
                                partition's time limit (2-00:00:00, infinite), each node's
                                memory in MB and CPUs ("+" after a number: at least)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dfil.cluster.durations import parse_duration

SINFO = ("sinfo", "-h", "-o", "%R %G %f %l %m %c")


@dataclass(frozen=True)
class NodeGroup:
    """One line of ``sinfo``: a partition's nodes of one configuration."""

    partition: str
    gres: str
    features: frozenset[str]
    #: The partition's time limit (s), each node's memory (MB) and CPUs; None: unknown or
    #: no limit.
    time_limit: float | None = None
    mem_mb: int | None = None
    cpus: int | None = None
    #: Whether this is the site's default partition (``sinfo`` marks it with ``*``).
    default: bool = False

    @property
    def gpu_types(self) -> frozenset[str]:
        return gpu_types(self.gres)

    def gpus(self, model: str | None) -> int:
        """How many GPUs of type ``model`` (any type: None or "") each node has."""
        return gpu_count(self.gres, model)


def _gpu_items(gres: str) -> list[tuple[str | None, int]]:
    """The GPU items of a GRES string as (type or None, count per node; 0 unsaid):
    ``gpu:h100:8(S:0-1),nvme:1`` -> [(h100, 8)], ``gpu:2`` -> [(None, 2)], ``gpu:h100`` ->
    [(h100, 0)]; ``(null)`` -> []."""
    out = []
    for item in re.sub(r"\([^)]*\)", "", gres).split(","):
        parts = item.strip().removeprefix("gres/").split(":")
        if parts[0] != "gpu" or len(parts) < 2:
            continue
        typed = len(parts) >= 3 or not parts[1].isdigit()
        out.append((parts[1] if typed else None,
                    int(parts[-1]) if parts[-1].isdigit() else 0))
    return out


def gpu_types(gres: str) -> frozenset[str]:
    """The GPU types of a GRES string: ``gpu:h100:8(S:0-1),nvme:1`` -> {h100}; an untyped
    ``gpu:2`` or ``(null)`` -> {}."""
    return frozenset(kind for kind, _ in _gpu_items(gres) if kind)


def gpu_count(gres: str, model: str | None) -> int:
    """GPUs per node of type ``model`` (None or "", a class without ``gpu_model``: any
    type) in a GRES string: ``gpu:h100:8(S:0-1),gpu:a100:2`` -> 8 for h100, 10 for any;
    ``gpu:2`` -> 2 for any."""
    return sum(n for kind, n in _gpu_items(gres) if not model or kind == model)


def _at_least(field: str) -> int | None:
    """``19284`` or ``19284+`` (sinfo's "at least") -> 19284; anything else None."""
    digits = field.rstrip("+")
    return int(digits) if digits.isdigit() else None


def parse_sinfo(text: str) -> list[NodeGroup]:
    """The lines of ``sinfo -h -o "%R %G %f %l %m %c"`` (see the module doc); lines of
    the first three fields alone are read too, their limits unknown."""
    groups = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) not in (3, 6):
            raise ValueError(f"sinfo output line {n}: expected 'partition gres features "
                             f"timelimit memory cpus', got {line!r}")
        partition, gres, features = fields[:3]
        feats = frozenset() if features == "(null)" else frozenset(features.split(","))
        limits = (parse_duration(fields[3]), _at_least(fields[4]),
                  _at_least(fields[5])) if len(fields) == 6 else ()
        groups.append(NodeGroup(partition.rstrip("*"), gres, feats, *limits,
                                default=partition.endswith("*")))
    return groups
