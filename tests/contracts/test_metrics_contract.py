"""The metrics.json contract: schema, finiteness, the measurement walk, and a record
built by the real evaluator for every method validates."""

import json

import numpy as np
import pytest
import yaml

from dfil.contracts.metrics import (
    digest,
    measures,
    read_metrics,
    validate_metrics,
    write_metrics,
)
from dfil.core.methods import METHODS, method_spec
from dfil.core.quantifiers import QURE_CENTERS
from dfil.data.synthetic import write_frog_like
from dfil.engine.predict import Predictions
from dfil.util.errors import MetricsError
from records import metrics_record


def test_valid_record_round_trips(tmp_path):
    path = tmp_path / "metrics.json"
    written = write_metrics(path, metrics_record())
    assert written == {**metrics_record(), "digest": digest(metrics_record())}
    assert read_metrics(path) == written


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_is_refused_naming_the_key(tmp_path, bad):
    record = metrics_record(p_mae=bad)
    with pytest.raises(MetricsError, match=r"run7: non-finite metric p_mae"):
        validate_metrics(record, "run7")
    with pytest.raises(MetricsError):
        write_metrics(tmp_path / "m.json", record)
    assert not (tmp_path / "m.json").exists()


def test_nan_tokens_in_a_file_are_refused(tmp_path):
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(metrics_record()).replace('"alpha": 0.5', '"alpha": NaN'))
    with pytest.raises(MetricsError, match="non-finite metric alpha"):
        read_metrics(path)


@pytest.mark.parametrize("change, key", [
    ({"test": {"mf": {"acc": 1.2, "per_class_acc": [], "n": 1}}}, "test.mf.acc"),
    ({"test": {"median": {"acc": 0.5, "per_class_acc": [], "n": 1}}}, "test"),
    ({"surprise": 1.0}, "<root>"),
    ({"config_hash": "xyz"}, "config_hash"),
])
def test_schema_violations_name_the_key(change, key):
    with pytest.raises(MetricsError, match=f"metrics key {key}"):
        validate_metrics(metrics_record(**change), "f.json")


def test_measures_skip_descriptive_subtrees():
    found = dict(measures(metrics_record()))
    assert found["csmc.mf.consistency"] == 0.9 and found["test.mf.per_class_acc.0"] == 1.0
    assert "test.mf.per_class_acc.1" not in found  # null: class absent
    assert not [k for k in found if k.startswith(("train", "provenance", "seed"))]
    assert not [k for k in found if "per_pair" in k]


class StubScorer:
    """Predictions with each method's paths (what its heads output), without a model."""

    def __init__(self, cell, run_dir, device):
        self.cell, self.spec = cell, method_spec(cell.model.method)
        q = cell.model.num_classes
        gaussian = self.spec.mf in ("ordered", "unordered")
        self.centers = np.array(QURE_CENTERS[:q]) if gaussian else None
        self.widths = np.full(q, 0.1) if gaussian else None
        self.trainable = 123 if self.spec.trains else None
        self.rng = np.random.default_rng(0)

    truncation: dict = {}

    def __call__(self, frame, text_col="text", task=None, label_col=None, p_col=None,
                 name=None):
        n, q, s = len(frame), self.cell.model.num_classes, self.spec
        main = self.rng.dirichlet(np.ones(q), n) if s.main or not s.trains else None
        p = self.rng.uniform(0, 1, n) if s.numeric else None
        mf = self.rng.normal(size=(n, q)) if s.mf else None
        return Predictions(main_probs=main, p=p, mf_scores=mf)


@pytest.mark.slow
@pytest.mark.parametrize("method", sorted(METHODS))
def test_evaluator_writes_a_valid_record_for_every_method(tmp_path, monkeypatch, method):
    from dfil.config.cell import config_hash, load_cell
    from dfil.contracts.identity import run_identity
    from dfil.engine.inputs import stamped_inputs, trained_inputs
    from dfil.evaluate import run as evaluate_run_module

    write_frog_like(tmp_path / "frog", seed=0, n_easy=48, n_hard=24)
    run = tmp_path / "run"
    run.mkdir()
    cell = {"name": method, "model": {"method": method},
            "data": {"source": str(tmp_path / "frog"), "standin": True},
            "eval": {"grid_sizes": [100], "probe_stride": 50, "alpha": None}}
    (run / "cell.yaml").write_text(yaml.safe_dump(cell))
    loaded = load_cell(run / "cell.yaml")
    identity = run_identity(method, config_hash(loaded), trained_inputs(stamped_inputs(loaded)))
    summary = {"cell": method, "config_hash": config_hash(loaded), "identity": identity,
               "trained": method_spec(method).trains, "attempts": [],
               "provenance": {"package_version": "0", "git_commit": "x", "device": "cpu",
                              "wall_seconds": 0.0}}
    (run / "train_summary.json").write_text(json.dumps(summary))
    monkeypatch.setattr(evaluate_run_module, "Scorer", StubScorer)
    metrics = evaluate_run_module.evaluate_run(run)
    assert read_metrics(run / "metrics.json") == json.loads(json.dumps(metrics))
    assert metrics["identity"] == identity
    spec = method_spec(method)
    paths = ({"main"} if spec.main or not spec.trains else set()) | (
        {"mf"} if spec.numeric else set())
    assert paths <= set(metrics["test"]) and "best" in metrics["test"]
