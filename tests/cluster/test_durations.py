"""dfil.cluster.durations: SLURM's durations (squeue %L, sinfo %l) in seconds."""

import pytest

from dfil.cluster.durations import parse_duration


@pytest.mark.parametrize("text,seconds", [
    ("4:59", 299), ("0:00", 0), ("1:02:03", 3723), ("1-00:00:00", 86400),
    ("2-03:04:05\n", 183845), ("UNLIMITED", None), ("infinite", None), ("NOT_SET", None),
    ("", None),
])
def test_slurm_durations_are_read_in_seconds(text, seconds):
    assert parse_duration(text) == seconds
