"""Which frozen-feature sets a cell reads, and which cells share them (no torch).

A frozen-backbone cell (``model.adapter: none``, a method that trains heads) reads the
backbone's features of a few lists of prompts. Cells whose resolved configs agree on
everything that decides those prompts and their features (the backbone, the data but the
few-shot budget, precision, evaluation batch size, which probe sets and their stride)
form one *feature group*; its *item sets* are computed once each, by the DAG's
``frozen_features`` job (``dfil features``), upstream of every cell of the group:

- ``train``: the training split (a few-shot cell's pool: one pass serves every budget),
- ``val``, ``test``: the validation and test splits,
- ``probes``: every probe list the evaluation scores (FRoG cells with ``eval.probes``),
- ``qure``: the QuRe sentences (FRoG cells with ``eval.qure`` and a ``data.qure_source``).

Training reads ``train`` and ``val``; evaluation ``val``, ``test``, ``probes``, ``qure``.
The Snakefile calls these functions on the grid's resolved cell configs (plain dicts).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from dfil.core.methods import method_spec

#: Part of every feature-cache key (:func:`dfil.engine.features.feature_paths`), and a
#: parameter of the DAG's ``frozen_features`` jobs: bump it when what a cached file holds,
#: or what its key is made of, changes, and every feature set is computed again.
FEATURE_CACHE_FORMAT = 4
#: Every item set, in the order a group's jobs are listed.
ITEM_SETS = ("train", "val", "test", "probes", "qure")
#: What each stage of a cell reads.
STAGE_SETS = {"train": ("train", "val"), "evaluate": ("val", "test", "probes", "qure")}
#: Data keys that do not change the prompts of any item set (a few-shot subset is rows
#: of the pool, which is the full training split).
_PER_CELL_DATA = ("budget", "fewshot_seed", "fewshot_min_per_class", "allowed_test_overlap")


def reads_features(config: Mapping) -> bool:
    """Whether the cell (its resolved config) trains heads on frozen features."""
    model = config["model"]
    return model["adapter"] == "none" and method_spec(model["method"]).trains


def feature_group(config: Mapping) -> str:
    """The cell's feature group: ``<backbone name>-<12 hex digits>``, equal for cells whose
    item sets have the same prompts and features."""
    data = {k: v for k, v in config["data"].items()
            if k not in _PER_CELL_DATA or (k == "budget" and config["data"]["max_examples"])}
    train, evaluation = config["train"], config["eval"]
    shared = [config["model"]["backbone"], data,
              {k: train[k] for k in ("precision", "eval_batch_size", "deterministic")},
              {k: evaluation[k] for k in ("probes", "probe_stride", "qure")}]
    digest = hashlib.sha256(json.dumps(shared, sort_keys=True).encode()).hexdigest()
    return f"{config['model']['backbone']['name']}-{digest[:12]}"


def item_sets(config: Mapping, stage: str | None = None) -> tuple[str, ...]:
    """The item sets the cell reads in ``stage`` (``train``, ``evaluate``; None: both);
    none for a cell that reads no frozen features."""
    if not reads_features(config):
        return ()
    data, evaluation = config["data"], config["eval"]
    frog = data["task"] == "frog"
    present = {"train": True, "val": True, "test": True,
               "probes": frog and evaluation["probes"],
               "qure": frog and evaluation["qure"] and bool(data["qure_source"])}
    wanted = STAGE_SETS[stage] if stage else ITEM_SETS
    return tuple(name for name in ITEM_SETS if name in wanted and present[name])


def feature_jobs(cells: Mapping[str, Mapping]) -> dict[str, str]:
    """``{"<group>/<item set>": key}`` for every item set any of ``cells`` (key -> resolved
    config) reads, each with the first key (sorted) of its group: the cell whose config
    the job computes the features for."""
    jobs: dict[str, str] = {}
    for key in sorted(cells):
        config = cells[key]
        for name in item_sets(config):
            jobs.setdefault(f"{feature_group(config)}/{name}", key)
    return jobs
