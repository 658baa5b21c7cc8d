"""SLURM's durations as seconds (pure): ``squeue -o %L``'s time left, ``sinfo -o %l``'s
partition time limit.

SLURM prints ``[days-][hours:]minutes:seconds`` (``1-02:03:04``, ``2:00:00``, ``4:59``),
or ``UNLIMITED``/``infinite``/``NOT_SET`` where there is no limit.
"""

from __future__ import annotations

import re

_DURATION = re.compile(r"^(?:(?:(\d+)-)?(\d+):)?(\d+):(\d+)$")


def parse_duration(text: str) -> float | None:
    """Seconds in ``[days-][hours:]minutes:seconds``; None for ``UNLIMITED``,
    ``infinite``, ``NOT_SET`` or anything else."""
    found = _DURATION.match(text.strip())
    if not found:
        return None
    days, hours, minutes, seconds = (int(g or 0) for g in found.groups())
    return float(((days * 24 + hours) * 60 + minutes) * 60 + seconds)
