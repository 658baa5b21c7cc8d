"""``dfil features``: the DAG's ``frozen_features`` job, one item set of one feature group
(:mod:`dfil.engine.featuresets`) computed into the frozen-feature cache, with a stamp
the group's train and evaluate jobs wait for."""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def add_features_parser(command, sub) -> None:
    p = command(sub, "features",
                "compute the frozen backbone's features of one item set (train, val, test, "
                "probes, qure) of a cell into the feature cache ($DFIL_CACHE/features), "
                "unless cached; every cell of its feature group then reads them",
                cmd_features)
    p.add_argument("--json", required=True, help="the resolved cell as JSON, as the DAG "
                   "passes it (the first cell of the feature group)")
    p.add_argument("--items", required=True, help="the item set: train, val, test, probes "
                   "or qure")
    p.add_argument("--stamp", type=Path, required=True,
                   help="the JSON stamp to write once the features are cached")


def cmd_features(args: argparse.Namespace) -> int:
    from dfil.cli.commands import cell_of_json
    from dfil.engine.device import deterministic, pick_device
    from dfil.engine.features import cache_item_set
    from dfil.engine.featuresets import ITEM_SETS, item_sets
    from dfil.util.atomic import atomic_write_json
    from dfil.util.errors import UsageError

    started = time.perf_counter()
    cell = cell_of_json(args.json)
    if args.items not in item_sets(cell_dict(cell)):
        raise UsageError(f"--items {args.items}: cell {cell.name} reads "
                         f"{list(item_sets(cell_dict(cell))) or 'no frozen features'} "
                         f"(item sets: {', '.join(ITEM_SETS)})")
    with deterministic(cell.train.deterministic):
        record = cache_item_set(cell, args.items, pick_device())
    record["seconds"] = round(time.perf_counter() - started, 3)
    atomic_write_json(args.stamp, record)
    print(f"{args.items}: {sum(record['prompts'])} prompts in {len(record['prompts'])} "
          f"list(s), {record['computed']} computed, {record['seconds']:.1f} s")
    return 0


def cell_dict(cell) -> dict:
    from dfil.config.cell import to_dict

    return to_dict(cell)
