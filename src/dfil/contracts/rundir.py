"""The files of a run directory: the names that training writes and evaluation and
aggregation read.

``results/<grid>/runs/<key>/`` (key: :mod:`dfil.runkey`) holds the resolved cell, the
training outputs, and after evaluation the metrics (schema: :mod:`dfil.contracts.metrics`),
the per-example predictions and the learned membership functions.
"""

CELL = "cell.yaml"
#: Best checkpoint by validation loss: LoRA adapter, heads and MF (safetensors).
BEST = "model.safetensors"
#: Attempt 1's best checkpoint, kept when a collapsed MF branch is retrained (App. D.2).
ATTEMPT1_BEST = "attempt1_model.safetensors"
#: Resume state while training (removed when an attempt ends).
RESUME = "resume.pt"
LOG = "train_log.jsonl"
ATTEMPTS = "attempts.json"
SUMMARY = "train_summary.json"
METRICS = "metrics.json"
PREDICTIONS = "predictions.parquet"
MF = "mf.json"
