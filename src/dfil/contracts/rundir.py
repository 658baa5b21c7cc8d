"""The files of a run directory: the names that training writes and evaluation and
aggregation read.

``results/<grid>/runs/<key>/`` (key: :mod:`dfil.config.runkey`) holds the resolved cell, the
training outputs, and after evaluation the metrics (schema: :mod:`dfil.contracts.metrics`),
the per-example predictions and the learned membership functions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dfil.util.errors import RunFileError

CELL = "cell.yaml"
#: Best checkpoint by validation loss: LoRA adapter, heads and MF (safetensors).
BEST = "model.safetensors"
#: Attempt 1's best checkpoint, kept when a collapsed MF branch is retrained (App. D.2).
ATTEMPT1_BEST = "attempt1_model.safetensors"
#: Resume state while training (removed when an attempt ends).
RESUME = "resume.pt"
#: A LoRA run's adapter in peft's format (a folder: ``adapter_config.json``,
#: ``adapter_model.safetensors``), exported from BEST (:mod:`dfil.model.adapter`).
ADAPTER = "adapter"
ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
LOG = "train_log.jsonl"
ATTEMPTS = "attempts.json"
SUMMARY = "train_summary.json"
METRICS = "metrics.json"
PREDICTIONS = "predictions.parquet"
MF = "mf.json"
#: What training writes, and what evaluation writes, in a run directory besides CELL.
TRAINING_OUTPUTS = (SUMMARY, ATTEMPTS, BEST, ATTEMPT1_BEST, RESUME, LOG, ADAPTER)
EVALUATION_OUTPUTS = (METRICS, PREDICTIONS, MF)
#: Folders of a run directory that keep outputs moved aside: damaged files (the DAG makes
#: them again) and those of an earlier config. Never read as the run's results.
DAMAGED = "damaged"
SUPERSEDED = "superseded"
ASIDE = (DAMAGED, SUPERSEDED)


def read_run_json(path: Path, remedy: str) -> Any:
    """The JSON run file at ``path``; :class:`RunFileError` naming it and ``remedy`` (what
    makes it again) when it does not parse (a damaged or truncated file)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise RunFileError(f"{path}: unreadable run file ({err}); {remedy}") from None
