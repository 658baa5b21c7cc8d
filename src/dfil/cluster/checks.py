"""One line per check of ``dfil grid preflight``: what was checked, and either ok or the
problem with its fix (pure Python).

A check is ``ok``, a ``problem`` (the preflight then fails), or ``skipped`` where it does
not apply here (no SLURM on a laptop), which fails nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

STATUSES = ("ok", "problem", "skipped")
#: Where a site setting the checks find wrong is changed.
PROFILE_FIX = "the SITE SETTINGS block of the slurm profile (slurm/config.yaml)"


@dataclass(frozen=True)
class Check:
    """The outcome of one check: ``area`` (hub, lock, disk, slurm), ``status`` (one of
    :data:`STATUSES`) and ``text``: what was found, and for a problem what fixes it."""

    area: str
    status: str
    text: str

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"unknown check status {self.status!r}; expected one of "
                             f"{STATUSES}")

    def line(self) -> str:
        mark = "PROBLEM" if self.status == "problem" else self.status
        return f"{mark:<8} {self.area:<6} {self.text}"


def problems(checks: Iterable[Check]) -> list[Check]:
    return [c for c in checks if c.status == "problem"]


def summary(checks: list[Check]) -> str:
    """The last line: how many checks passed, and how many problems stop the run."""
    bad = len(problems(checks))
    skipped = sum(c.status == "skipped" for c in checks)
    tail = f", {skipped} skipped" if skipped else ""
    if bad:
        return (f"preflight: {bad} problem(s) in {len(checks)} checks{tail}: fix each line "
                "marked PROBLEM before submitting; nothing was submitted")
    return f"preflight: all {len(checks) - skipped} checks ok{tail}; nothing was submitted"
