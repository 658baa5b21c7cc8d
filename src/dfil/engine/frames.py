"""A cell's data as frames: its task's train / val / test splits (and a few-shot pool).

Columns ``text``, ``label``, ``p``, ``id``. Training and evaluation both call
:func:`task_frames`, so they see the same splits of the same files. A ``hub:`` source is
read from its fetched, prepared splits in the hub cache, offline (:mod:`dfil.hub.local`).
"""

from __future__ import annotations

import pandas as pd

from dfil.config.cell import CellConfig
from dfil.data import few_shot_subset, load_frog, load_sst5, load_sts22, split_train_val
from dfil.data.frog import frog_test_source
from dfil.data.ordinal import label_proportion
from dfil.data.probes import ProbeConfig, generate_probes, read_probes
from dfil.data.qure import load_qure
from dfil.data.splits import check_test_disjoint
from dfil.data.synthetic import (
    ORDINAL_STANDIN_POOL,
    ORDINAL_STANDIN_TEST,
    ordinal_standin_records,
)
from dfil.hub import local_source
from dfil.util.errors import ConfigError


def task_frames(cell: CellConfig) -> dict[str, pd.DataFrame]:
    """train / val / test frames (columns text, label, p, id) of the cell's task.

    A few-shot cell's ``train`` is a subset of ``train_pool`` (also returned), at rows
    ``train["pool_row"]``.
    """
    d = cell.data
    if d.task == "ordinal_standin":  # made here, from no data file
        n = ORDINAL_STANDIN_POOL + ORDINAL_STANDIN_TEST
        rows = pd.DataFrame(ordinal_standin_records(n, d.split_seed))
        rows["p"] = label_proportion(rows["label"], 5)
        pool = rows.iloc[:ORDINAL_STANDIN_POOL]
        test = rows.iloc[ORDINAL_STANDIN_POOL:].reset_index(drop=True)
        train, val = split_train_val(pool.reset_index(drop=True), d.train_frac, d.split_seed)
    else:
        train, val, test = _read_splits(d)
    check_test_disjoint({"train": train, "val": val, "test": test}, d.allowed_test_overlap)
    train_pool = None
    if d.budget is not None:
        seed = cell.train.seed if d.fewshot_seed is None else d.fewshot_seed
        train_pool = train.reset_index(drop=True)
        try:
            train = few_shot_subset(train_pool, d.budget, seed, d.fewshot_min_per_class)
        except ValueError as err:  # the budget does not fit this data (largest_remainder)
            raise ConfigError(f"data.budget: {err} in the training split of {d.source} "
                              f"(data.fewshot_min_per_class: {d.fewshot_min_per_class})") from None
        train = train.assign(pool_row=train.index)
    frames = {"train": train, "val": val, "test": test}
    if d.max_examples:
        frames = {k: v.iloc[: d.max_examples] for k, v in frames.items()}
    if train_pool is not None:
        frames["train_pool"] = train_pool
    return {k: v.reset_index(drop=True) for k, v in frames.items()}


def probe_sets(cell: CellConfig) -> dict[str, list[dict]]:
    """The probe sets the cell is evaluated on (``data.probes_dir``'s, else generated),
    every ``eval.probe_stride``-th item of each."""
    if cell.data.probes_dir:
        sets = read_probes(cell.data.probes_dir)
    else:
        sets = generate_probes(ProbeConfig())
    return {name: rows[::cell.eval.probe_stride] for name, rows in sets.items()}


def qure_frame(cell: CellConfig) -> pd.DataFrame:
    """The QuRe sentences of ``data.qure_source`` (columns text, label, p, id)."""
    return load_qure(local_source(cell.data.qure_source, key="data.qure_source"),
                     expected_rows=cell.data.qure_rows)


def _read_splits(d) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """train / val / test of a task read from ``data.source`` (and ``data.test_source``);
    a local path that does not exist is refused naming its key (:func:`local_source`)."""
    source = local_source(d.source, key="data.source")
    test_source = local_source(d.test_source, key="data.test_source")
    if d.task == "frog":
        easy = load_frog(source, "easy", d.frog_task).rename(columns={"question": "text"})
        train, val = split_train_val(easy, d.train_frac, d.split_seed)
        test = load_frog(frog_test_source(source, test_source), "hard",
                         d.frog_task).rename(columns={"question": "text"})
        return train, val, test
    loader = load_sst5 if d.task == "sst5" else load_sts22
    if not d.test_source:
        raise ConfigError(f"data.test_source: task {d.task} needs a test file or split")
    pool = loader(source, "train")
    train, val = split_train_val(pool, d.train_frac, d.split_seed)
    return train, val, loader(test_source, "test")
