"""A small valid ``metrics.json`` record for contract and aggregation tests."""

from __future__ import annotations

import copy

_BASE = {
    "cell": "frog_tiny_dfil", "method": "dfil", "alpha": 0.5,
    "test": {"mf": {"acc": 0.5, "per_class_acc": [1.0, None], "n": 4}},
    "val": {"mf": {"acc": 0.25, "per_class_acc": [0.5, 0.0], "n": 4}},
    "data": {"counts": {"train": [3, 1], "val": [2, 2], "test": [2, 2]},
             "total": {"train": 4, "val": 4, "test": 4}},
    "csmc": {"mf": {"consistency": 0.9, "by_domain": {"finance": 1.0}, "per_pair": [1, 0]}},
    "train": {"config_hash": "0123456789abcdef", "trained": True, "attempts": [{}, {}]},
    "config_hash": "0123456789abcdef", "seed": 42,
    "provenance": {"package_version": "0.1.0", "git_commit": "deadbeef", "device": "cpu",
                   "wall_seconds": 3.0},
}


def metrics_record(**overrides) -> dict:
    """A deep copy of the base record with top-level keys replaced."""
    out = copy.deepcopy(_BASE)
    out.update(copy.deepcopy(overrides))
    return out
