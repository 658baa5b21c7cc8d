"""Evaluating a trained run directory: every metric of the paper from its one checkpoint.

Writes ``metrics.json`` (all numbers, with provenance; contract:
:mod:`dfil.contracts.metrics`), ``predictions.parquet`` (one row per evaluated example and
set) and ``mf.json`` (learned centers and widths). A run whose training gave up (its
``train_summary.json`` a failure record, :mod:`dfil.contracts.failure`) is not evaluated:
the record becomes its ``metrics.json``, beside an empty predictions table and an
``mf.json`` without centers.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from dfil.config.cell import config_hash, load_cell
from dfil.contracts.failure import is_failure, write_failure
from dfil.contracts.identity import KEY as IDENTITY
from dfil.contracts.identity import differences, run_identity
from dfil.contracts.metrics import write_metrics
from dfil.contracts.predcheck import accuracy_block
from dfil.contracts.predictions import COLUMNS as PREDICTION_COLUMNS
from dfil.contracts.rundir import CELL, METRICS, MF, PREDICTIONS, SUMMARY, read_run_json
from dfil.core.methods import method_spec
from dfil.engine.device import deterministic, pick_device
from dfil.engine.frames import probe_sets, qure_frame, task_frames
from dfil.engine.inputs import stamped_inputs, trained_inputs
from dfil.engine.provenance import provenance
from dfil.engine.truncation import truncation_line
from dfil.evaluate import protocols as ev
from dfil.evaluate.scorer import Scorer
from dfil.model.registry import mf_kind
from dfil.util.atomic import atomic_path, atomic_write_json
from dfil.util.errors import MissingInputError, RefusedError


def _rows(set_name, ids, gold, p_true, preds, labels) -> pd.DataFrame:
    n = len(ids)
    frame = pd.DataFrame({"set": set_name, "id": list(ids),
                          "gold": gold if gold is not None else np.full(n, -1),
                          "p_true": p_true if p_true is not None else np.full(n, np.nan),
                          "p_hat": preds.p if preds.p is not None else np.full(n, np.nan)})
    for path in ("main", "mf", "ensemble"):
        frame[f"{path}_label"] = labels.get(path, np.full(n, -1))
    return frame


def _train_summary(run_dir: Path, cell, inputs: dict) -> dict:
    """The run's training summary, checked before any work: a run still training (or
    never trained) has none, and one trained for another config, or on other inputs than
    the cell reads now (``inputs``, :func:`dfil.engine.inputs.stamped_inputs`), is
    refused: weights are never evaluated on data they were not trained for."""
    expected_hash = config_hash(cell)
    path = run_dir / SUMMARY
    if not path.is_file():
        raise MissingInputError(f"{run_dir}: not trained yet (no {SUMMARY}); run `dfil train` on "
                         "it first, or wait for the training job to finish")
    summary = read_run_json(path, "move it aside and run `dfil train` on the run again "
                            "(it rewrites the summary from the recorded attempts)")
    if summary.get("config_hash") != expected_hash:
        raise RefusedError(f"{path}: trained for config {summary.get('config_hash')}, but "
                         f"{CELL} is config {expected_hash}; retrain the run")
    if is_failure(summary):
        return summary
    why = differences(summary.get(IDENTITY),
                      run_identity(cell.name, expected_hash, trained_inputs(inputs)))
    if why:
        raise RefusedError(f"{path}: trained on other inputs than cell {cell.name} reads "
                           f"now ({'; '.join(why)}); retrain the run: dfil train --cell "
                           f"{run_dir / CELL} --out {run_dir}")
    return summary


def evaluate_run(run_dir: str | Path, log=print) -> dict:
    """Compute every metric for the run in ``run_dir`` and write its output files; the
    sets whose prompts were cut to ``max_length`` are said in one ``log`` line."""
    started = time.perf_counter()
    run_dir = Path(run_dir)
    cell = load_cell(run_dir / CELL)
    inputs = stamped_inputs(cell)
    summary = _train_summary(run_dir, cell, inputs)
    if is_failure(summary):
        write_failed(run_dir, cell, summary)
        return summary
    with deterministic(cell.train.deterministic):
        device = pick_device()
        metrics, predictions = compute_metrics(cell, Scorer(cell, run_dir, device), summary)
        if line := truncation_line({k: v for k, v in metrics.get("truncation", {}).items()
                                    if k != "train"}):  # training's log said that one
            log(line)
        trained = summary.get("provenance", {})
        metrics["provenance"] = provenance(
            device, time.perf_counter() - started, inputs,
            {"training": trained, **({"memory": trained["memory"]} if "memory" in trained
                                     else {})})
        metrics = _write(run_dir, cell, metrics, predictions)
    return metrics


def write_failed(run_dir: Path, cell, record: dict) -> None:
    """The evaluation outputs of a cell that gave up: the failure ``record`` as its
    ``metrics.json``, an empty predictions table, an ``mf.json`` without centers."""
    with atomic_path(run_dir / PREDICTIONS) as tmp:
        pd.DataFrame(columns=PREDICTION_COLUMNS).to_parquet(tmp, index=False)
    atomic_write_json(run_dir / MF, {"centers": None, "widths": None,
                                     "init": cell.model.heads.mf_init,
                                     "failed": record["failed"]["reason"]})
    write_failure(run_dir / METRICS, record)


def compute_metrics(cell, score: Scorer, summary: dict) -> tuple[dict, pd.DataFrame]:
    """Every metric of the run (``metrics.json`` but its provenance) and the per-example
    predictions, from the run's ``score`` and training ``summary``; writes nothing."""
    frames = task_frames(cell)
    metrics, predictions = _path_metrics(cell, score, frames)
    if score.trainable is not None:
        metrics["params"] = {"trainable": score.trainable}
    metrics["data"] = _data_counts(frames, cell.model.num_classes)
    if score.centers is not None:
        metrics["mf"] = {"centers": score.centers.tolist(), "widths": _list(score.widths),
                         "init_centers": _init_centers(cell)}
        metrics["grid"] = ev.grid_check(score.centers, score.widths, cell.eval.grid_sizes)
    # Option scoring feeds only Table scaling's PRESQUE row: FRoG val/test, no probes or
    # QuRe (note R-zero-shot-eval); each would cost Q passes over thousands of prompts.
    probes = cell.data.task == "frog" and score.spec.trains
    if probes and cell.eval.probes:
        metrics.update(_probe_metrics(cell, score, metrics["alpha"], predictions))
    if probes and cell.eval.qure and cell.data.qure_source:
        metrics["qure"] = _qure_metrics(cell, score, metrics["alpha"], predictions)
    cut = {**_trained_truncation(summary), **score.truncation}
    if cut:
        metrics["truncation"] = cut
    metrics.update(train=summary, config_hash=summary["config_hash"], seed=cell.train.seed)
    if IDENTITY in summary:
        metrics[IDENTITY] = summary[IDENTITY]
    metrics.update({k: summary[k] for k in ("note", "data_note") if k in summary})
    return metrics, pd.concat(predictions, ignore_index=True)


def _path_metrics(cell, score: Scorer, frames: dict) -> tuple[dict, list[pd.DataFrame]]:
    """Accuracy blocks of each path on validation and test, the ensemble's alpha (given,
    or chosen on validation), the path chosen on validation, p's error; and the test rows
    of the predictions."""
    q, centers = cell.model.num_classes, score.centers
    val, test = frames["val"], frames["test"]
    val_gold, gold, p_test = (val["label"].to_numpy(), test["label"].to_numpy(),
                              test["p"].to_numpy())
    val_preds = score(val, label_col="label", p_col="p", name="val")
    alpha = cell.eval.alpha
    if alpha is None:
        alpha = ev.select_alpha(val_preds, val_gold, cell.eval.alpha_grid)
    test_preds = score(test, label_col="label", p_col="p", name="test")
    test_labels = ev.path_labels(test_preds, centers, alpha)
    metrics = {"cell": cell.name, "method": cell.model.method, "alpha": alpha,
               "test": {path: accuracy_block(lab, gold, p_test, q)
                        for path, lab in test_labels.items()},
               "val": {path: accuracy_block(lab, val_gold, None, q)
                       for path, lab in ev.path_labels(val_preds, centers, alpha).items()}}
    val_acc = {path: block["acc"] for path, block in metrics["val"].items()}
    if val_acc:  # App. D.2: the path with the best validation accuracy (first of equals)
        metrics["best_path"] = max(val_acc, key=val_acc.get)
        metrics["test"]["best"] = metrics["test"][metrics["best_path"]]
    if test_preds.p is not None:
        metrics["p_mae"] = float(np.abs(test_preds.p - p_test).mean())
    return metrics, [_rows("test", test["id"], gold, p_test, test_preds, test_labels)]


def _trained_truncation(summary: dict) -> dict:
    """The training split's cut prompts, as the last training attempt recorded them."""
    attempts = summary.get("attempts") or [{}]
    record = (attempts[-1].get("truncation") or {}).get("train")
    return {"train": record} if record else {}


def _data_counts(frames: dict, q: int) -> dict:
    """Examples per class and in all of each split (not a few-shot cell's train_pool)."""
    splits = {k: frames[k] for k in ("train", "val", "test")}
    return {"counts": {split: np.bincount(f["label"].to_numpy(), minlength=q).tolist()
                       for split, f in splits.items()},
            "total": {split: len(f) for split, f in splits.items()}}


def _qure_metrics(cell, score: Scorer, alpha, predictions: list) -> dict:
    """Accuracy of each path on the QuRe sentences; their rows join ``predictions``."""
    qure = qure_frame(cell)
    gold = qure["label"].to_numpy()
    preds = score(qure, task="frog", label_col="label", p_col="p", name="qure")
    labels = ev.path_labels(preds, score.centers, alpha)
    predictions.append(_rows("qure", qure["id"], gold, qure["p"].to_numpy(), preds, labels))
    return {path: accuracy_block(lab, gold, None, cell.model.num_classes)
            for path, lab in labels.items()}


def mf_record(metrics: dict, cell) -> dict:
    """``mf.json``: the learned centers and widths as ``metrics.json`` holds them (None
    for a method without a Gaussian MF), the configured init, and the run's notes."""
    mf = metrics.get("mf", {})
    record = {"centers": mf.get("centers"), "widths": mf.get("widths"),
              "init": cell.model.heads.mf_init}
    record.update({k: metrics[k] for k in ("note", "data_note") if k in metrics})
    return record


def _write(run_dir: Path, cell, metrics: dict, predictions: pd.DataFrame) -> dict:
    """The run's evaluation outputs: predictions, ``mf.json`` and ``metrics.json`` (the
    record as written, with its digest, is returned)."""
    with atomic_path(run_dir / PREDICTIONS) as tmp:
        predictions.to_parquet(tmp, index=False)
    atomic_write_json(run_dir / MF, mf_record(metrics, cell))
    return write_metrics(run_dir / METRICS, metrics)


def _list(values: np.ndarray | None) -> list[float] | None:
    return None if values is None else values.tolist()


def _init_centers(cell) -> list[float] | None:
    """The centers the cell's MF started from (Table centers_detail's first row)."""
    if method_spec(cell.model.method).mf != "ordered":
        return None
    kind = mf_kind("ordered")
    mf = kind.build(cell.model.num_classes, cell.model.heads)
    return kind.centers(mf).detach().double().tolist()


def _probe_metrics(cell, score: Scorer, alpha, predictions: list) -> dict:
    """The probe sets' metrics (Sec. 5); their rows join ``predictions``."""
    centers = score.centers
    probes = probe_sets(cell)
    out = {}
    comp = pd.DataFrame(probes["compositional"])
    preds = score(comp, task="frog")
    out["compositional"] = ev.compositional_metrics(probes["compositional"], preds, centers,
                                                    preds.main_labels)
    predictions.append(_rows("compositional", comp["id"], comp["qure_label"].to_numpy(),
                             comp["p_base"].to_numpy(), preds,
                             ev.path_labels(preds, centers, alpha)))
    for name, col_a, col_b in (("csmc", "text_a", "text_b"),
                               ("entailment", "text_i", "text_j")):
        frame = pd.DataFrame(probes[name])
        pa, pb = score(frame, col_a, "frog"), score(frame, col_b, "frog")
        la, lb = ev.path_labels(pa, centers, alpha), ev.path_labels(pb, centers, alpha)
        if name == "csmc":
            out["csmc"] = ev.csmc_metrics(probes["csmc"], la, lb, cell.eval.csmc_ties)
        else:
            out["entailment"] = ev.entailment_metrics(probes["entailment"], centers, la, lb)
        for side, preds_side, labels_side in (("a", pa, la), ("b", pb, lb)):
            predictions.append(_rows(f"{name}_{side}", frame["id"], None, None, preds_side,
                                     labels_side))
    for name, metric in (("ipr", ev.ipr_metrics), ("naturalistic", ev.naturalistic_metrics)):
        frame = pd.DataFrame(probes[name])
        preds = score(frame, task="frog")
        out[name] = metric(probes[name], preds, centers, preds.main_labels)
        gold_col = "label" if name == "ipr" else "qure_label"
        predictions.append(_rows(name, frame["id"], frame[gold_col].to_numpy(), None, preds,
                                 ev.path_labels(preds, centers, alpha)))
    return out
