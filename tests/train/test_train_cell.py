"""Training one cell: smoke run, preemption (SIGTERM and SIGKILL), determinism,
collapse remediation, damaged checkpoints. Tiny random Llama, synthetic FRoG data."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import torch
import yaml

from cells import interrupted, run_cli, stable, tiny_cell
from dfil.cli import main
from dfil.data.synthetic import write_frog_like

# Real processes (training, Snakemake, the hub mirror): `pytest -m "not slow"` skips them.
pytestmark = pytest.mark.slow

RUN_FILES = {"cell.yaml", "model.safetensors", "train_log.jsonl", "train_summary.json",
             "metrics.json", "predictions.parquet", "mf.json"}


@pytest.fixture(scope="module")
def frog_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("frog")
    write_frog_like(out, seed=0, n_easy=96, n_hard=40)
    return out


def make_cell(tmp: Path, frog: Path, name="smoke", probes=False, **train) -> Path:
    return tiny_cell(tmp, frog, name, probes=probes, **train)


@pytest.fixture(scope="module")
def reference(tmp_path_factory, frog_dir):
    tmp = tmp_path_factory.mktemp("ref")
    cell = make_cell(tmp, frog_dir)
    assert main(["train", "--cell", str(cell), "--out", str(tmp / "run")]) == 0
    assert main(["evaluate", "--run", str(tmp / "run")]) == 0
    return tmp / "run"


def test_smoke_cell_writes_every_file_with_probes(tmp_path, frog_dir):
    cell = make_cell(tmp_path, frog_dir, probes=True, epochs=1)
    assert main(["train", "--cell", str(cell), "--out", str(tmp_path / "run")]) == 0
    assert main(["evaluate", "--run", str(tmp_path / "run")]) == 0
    run = tmp_path / "run"
    assert RUN_FILES <= {p.name for p in run.iterdir()}
    assert not (run / "resume.pt").exists()
    m = json.loads((run / "metrics.json").read_text())
    for key in ("compositional", "csmc", "ipr", "entailment", "naturalistic", "grid", "p_mae"):
        assert key in m
    assert set(m["test"]) == {"main", "mf", "ensemble", "best"}
    assert m["test"]["best"] == m["test"][m["best_path"]]  # the validation-chosen path
    assert m["data"]["total"] == {split: sum(c) for split, c in m["data"]["counts"].items()}
    assert m["params"]["trainable"] > 0 and len(m["mf"]["init_centers"]) == 8
    assert m["grid"]["1000"]["nearest_center"] == 0
    assert m["compositional"]["oracle"]["self"]["all"] == 1.0  # by construction
    assert m["entailment"]["mf_centers"] == 1.0  # by construction
    assert m["data_note"].startswith("synthetic stand-in")
    prov = m["provenance"]
    assert {"git_commit", "package_version", "device", "wall_seconds", "peak_rss_mb"} <= set(prov)
    log = [json.loads(x) for x in (run / "train_log.jsonl").read_text().splitlines()]
    assert len(log) == 1 and {"val_loss", "val_acc_mf", "centers", "train_total"} <= set(log[0])
    import pandas as pd

    preds = pd.read_parquet(run / "predictions.parquet")
    assert {"test", "compositional", "csmc_a", "entailment_b", "ipr"} <= set(preds["set"])


def test_same_seed_twice_gives_identical_metrics(tmp_path, frog_dir, reference):
    cell = make_cell(tmp_path, frog_dir)
    assert main(["train", "--cell", str(cell), "--out", str(tmp_path / "run")]) == 0
    assert main(["evaluate", "--run", str(tmp_path / "run")]) == 0
    again = json.loads((tmp_path / "run" / "metrics.json").read_text())
    first = json.loads((reference / "metrics.json").read_text())
    assert stable(again) == stable(first)
    assert (tmp_path / "run" / "model.safetensors").read_bytes() == (
        reference / "model.safetensors").read_bytes()


@pytest.mark.parametrize("sig,at_step", [("SIGTERM", 18), ("SIGKILL", 17)])
def test_killed_training_resumes_to_identical_metrics(tmp_path, frog_dir, reference, sig,
                                                      at_step):
    # 77 train examples / batch 8 = 10 steps per epoch: step 18 is mid epoch 2, after the
    # epoch-1 checkpoint.
    cell = make_cell(tmp_path, frog_dir)
    run = tmp_path / "run"
    first = interrupted(cell, run, sig, at_step)
    if sig == "SIGTERM":
        assert first.returncode == 143, first.stderr
        assert "preempted" in first.stderr
    else:
        assert first.returncode == -9
    assert (run / "resume.pt").exists() and not (run / "train_summary.json").exists()
    second = run_cli("train", "--cell", cell, "--out", run)
    assert second.returncode == 0, second.stderr
    assert "resuming attempt 1 at epoch 2" in second.stdout
    # The summary records where the restart picked up (Snakemake deletes a restarted
    # job's log); an uninterrupted run records none.
    (resume,) = json.loads((run / "train_summary.json").read_text())["attempts"][0]["resumes"]
    # SIGTERM in step 18 = epoch 2's 8th: the state saved after it resumes at step index
    # 8; SIGKILL leaves the end-of-epoch-1 state.
    expected = {"epoch": 2, "step": 8 if sig == "SIGTERM" else 0}
    assert resume == expected, resume
    assert f"resuming attempt 1 at epoch 2, step {resume['step']}" in second.stdout
    reference_summary = json.loads((reference / "train_summary.json").read_text())
    assert reference_summary["attempts"][0]["resumes"] == []
    assert main(["evaluate", "--run", str(run)]) == 0
    resumed = json.loads((run / "metrics.json").read_text())
    assert stable(resumed) == stable(json.loads((reference / "metrics.json").read_text()))
    assert (run / "train_log.jsonl").read_text() == (reference / "train_log.jsonl").read_text()


def test_forced_mf_collapse_triggers_remediation(tmp_path, frog_dir):
    # A threshold above 1 makes any MF accuracy a collapse.
    cell = make_cell(tmp_path, frog_dir, epochs=1, collapse_threshold=1.01)
    run = tmp_path / "run"
    assert main(["train", "--cell", str(cell), "--out", str(run)]) == 0
    assert main(["evaluate", "--run", str(run)]) == 0
    attempts = json.loads((run / "metrics.json").read_text())["train"]["attempts"]
    assert [a["attempt"] for a in attempts] == [1, 2]
    assert [a["stop_grad_p"] for a in attempts] == [False, True]
    assert (run / "attempt1_model.safetensors").is_file()


def test_few_shot_budget_turns_stop_gradient_on(tmp_path, frog_dir):
    from dfil.config.cell import load_cell

    path = make_cell(tmp_path, frog_dir)
    data = yaml.safe_load(path.read_text())
    data["data"]["budget"] = 16
    path.write_text(yaml.safe_dump(data))
    assert load_cell(path).model.loss.stop_grad_p is True


def test_corrupt_checkpoints_are_clear_errors(tmp_path, frog_dir, reference, capsys):
    cell = make_cell(tmp_path, frog_dir)
    run = tmp_path / "run"
    assert interrupted(cell, run, "SIGTERM", 5).returncode == 143
    resume = run / "resume.pt"
    resume.write_bytes(resume.read_bytes()[: resume.stat().st_size // 2])
    assert main(["train", "--cell", str(cell), "--out", str(run)]) == 2
    err = capsys.readouterr().err
    assert "resume.pt: resume checkpoint is corrupt or truncated" in err
    assert resume.exists()  # nothing is thrown away
    # A run still training is refused before any evaluation work.
    assert main(["evaluate", "--run", str(run)]) == 2
    assert "not trained yet (no train_summary.json)" in capsys.readouterr().err
    done = tmp_path / "done"
    shutil.copytree(reference, done)
    (done / "model.safetensors").write_bytes(b"garbage")
    assert main(["evaluate", "--run", str(done)]) == 2
    assert "model.safetensors: not a readable safetensors checkpoint" in capsys.readouterr().err


def test_a_damaged_checkpoint_never_counts_as_trained(tmp_path, frog_dir, capsys):
    cell = make_cell(tmp_path, frog_dir, epochs=1)
    run = tmp_path / "run"
    assert main(["train", "--cell", str(cell), "--out", str(run)]) == 0
    best = run / "model.safetensors"
    good = best.read_bytes()
    best.write_bytes(good[: len(good) // 2])  # truncated
    assert main(["train", "--cell", str(cell), "--out", str(run)]) == 2
    err = capsys.readouterr().err
    assert f"{best}: not a readable safetensors checkpoint" in err
    assert f"the run is not trained after all: delete {run}" in err
    best.write_bytes(good[:-16] + b"\xff" * 16)  # tensor bytes overwritten, header intact
    assert main(["train", "--cell", str(cell), "--out", str(run)]) == 2
    assert "tensor bytes do not match the content hash" in capsys.readouterr().err
    assert main(["evaluate", "--run", str(run)]) == 2
    assert "tensor bytes do not match the content hash" in capsys.readouterr().err
    assert not (run / "metrics.json").exists()


def test_bad_cell_key_is_named(tmp_path, frog_dir, capsys):
    path = make_cell(tmp_path, frog_dir)
    data = yaml.safe_load(path.read_text())
    data["train"]["epocs"] = 3
    path.write_text(yaml.safe_dump(data))
    assert main(["train", "--cell", str(path), "--out", str(tmp_path / "run")]) == 2
    assert "train.epocs: unknown key" in capsys.readouterr().err


def test_frozen_backbone_mode_is_named_and_cached(tmp_path, frog_dir, monkeypatch):
    monkeypatch.setenv("DFIL_CACHE", str(tmp_path / "cache"))
    path = make_cell(tmp_path, frog_dir, epochs=1)
    data = yaml.safe_load(path.read_text())
    data["model"]["adapter"] = "none"
    data["model"]["heads"] = {"feature_norm": "standardize"}
    # Whole prompts: cut to their last 128 characters they all end alike, and every
    # feature would be constant (centred, with std 1).
    data["data"]["max_length"] = 512
    path.write_text(yaml.safe_dump(data))
    assert main(["train", "--cell", str(path), "--out", str(tmp_path / "run")]) == 0
    assert main(["evaluate", "--run", str(tmp_path / "run")]) == 0
    m = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert m["note"].startswith("frozen backbone")
    mf = json.loads((tmp_path / "run" / "mf.json").read_text())
    assert mf["note"] == m["note"]
    cached = sorted((tmp_path / "cache" / "features").glob("*.safetensors"))
    assert {p.name.endswith(".states.safetensors") for p in cached} == {True, False}
    from safetensors.torch import load_file

    tensors = load_file(str(tmp_path / "run" / "model.safetensors"))
    assert all(k.startswith("heads.") for k in tensors)
    # The standardisation holds the training features' statistics (not 0 and 1).
    assert tensors["heads.norm.std"].ne(1).all() and tensors["heads.norm.mean"].ne(0).any()
    # Attention pooling reads the token states the same pass cached: no new backbone pass,
    # and (ids cached too) no tokenizer.
    def no_tokenizer(spec):
        raise AssertionError("a cached frozen-backbone job loaded the tokenizer")

    monkeypatch.setattr("dfil.engine.features.load_tokenizer", no_tokenizer)
    data["model"]["method"] = "attn_pool"
    path.write_text(yaml.safe_dump(data))
    assert main(["train", "--cell", str(path), "--out", str(tmp_path / "attn")]) == 0
    assert main(["evaluate", "--run", str(tmp_path / "attn")]) == 0
    assert sorted((tmp_path / "cache" / "features").glob("*.safetensors")) == cached
    assert "heads.attn.score.weight" in load_file(str(tmp_path / "attn" / "model.safetensors"))
    # A few-shot subset reads its rows of the full training split's features.
    data["model"]["method"] = "dfil"
    data["data"]["budget"] = 16
    path.write_text(yaml.safe_dump(data))
    assert main(["train", "--cell", str(path), "--out", str(tmp_path / "few")]) == 0
    assert sorted((tmp_path / "cache" / "features").glob("*.safetensors")) == cached
    assert json.loads((tmp_path / "few" / "train_summary.json").read_text())[
        "train_examples"] == 16
    # Standardised by its pool's statistics (the full split's features, no labels), not
    # by those of its 16 rows.
    few = load_file(str(tmp_path / "few" / "model.safetensors"))
    for key in ("heads.norm.mean", "heads.norm.std"):
        assert torch.equal(few[key], tensors[key]), key
    assert main(["evaluate", "--run", str(tmp_path / "few")]) == 0
    total = json.loads((tmp_path / "few" / "metrics.json").read_text())["data"]["total"]
    assert set(total) == {"train", "val", "test"} and total["train"] == 16


def test_zero_shot_needs_no_training(tmp_path, frog_dir):
    path = make_cell(tmp_path, frog_dir)
    data = yaml.safe_load(path.read_text())
    data["model"]["method"] = "zero_shot"
    path.write_text(yaml.safe_dump(data))
    run = tmp_path / "run"
    assert main(["train", "--cell", str(path), "--out", str(run)]) == 0
    assert not (run / "model.safetensors").exists()
    assert main(["evaluate", "--run", str(run)]) == 0
    m = json.loads((run / "metrics.json").read_text())
    assert set(m["test"]) == {"main", "best"} and m["train"]["trained"] is False


def test_changed_config_trains_afresh_and_keeps_the_old_outputs(tmp_path, frog_dir, capsys):
    run = tmp_path / "run"
    first = make_cell(tmp_path, frog_dir, name="first", epochs=1)
    assert main(["train", "--cell", str(first), "--out", str(run)]) == 0
    old_model = (run / "model.safetensors").read_bytes()
    old_hash = json.loads((run / "train_summary.json").read_text())["config_hash"]
    # The DAG's way: the run's own cell.yaml is rewritten, then trained in place.
    data = yaml.safe_load((run / "cell.yaml").read_text())
    data["model"]["lora"]["r"] = 8
    data["train"]["epochs"] = 2
    (run / "cell.yaml").write_text(yaml.safe_dump(data))
    assert main(["train", "--cell", str(run / "cell.yaml"), "--out", str(run)]) == 0
    summary = json.loads((run / "train_summary.json").read_text())
    assert summary["config_hash"] != old_hash
    assert summary["attempts"][0]["config_hash"] == summary["config_hash"]
    assert summary["attempts"][0]["final"]["epoch"] == 2
    assert (run / "model.safetensors").read_bytes() != old_model
    kept = run / "superseded" / old_hash
    assert (kept / "model.safetensors").read_bytes() == old_model
    assert f"trained for config {old_hash}" in capsys.readouterr().out
    # Same config again: nothing to do, nothing moved.
    assert main(["train", "--cell", str(run / "cell.yaml"), "--out", str(run)]) == 0
    assert sorted(p.name for p in (run / "superseded").iterdir()) == [old_hash]


def test_training_never_rewrites_the_cell_it_was_given(tmp_path, frog_dir):
    # The DAG's way: the run directory's own cell.yaml is the input (here as written by
    # hand, not in the resolved form dfil would write).
    run = tmp_path / "run"
    run.mkdir()
    cell = run / "cell.yaml"
    shutil.copyfile(make_cell(tmp_path, frog_dir, epochs=1), cell)
    before, stat = cell.read_bytes(), cell.stat()
    assert main(["train", "--cell", str(cell), "--out", str(run)]) == 0
    after = cell.stat()
    assert cell.read_bytes() == before
    assert (after.st_ino, after.st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns)
    assert main(["evaluate", "--run", str(run)]) == 0


@pytest.mark.parametrize("left,recorded", [("4:30", True), ("2:00:00", False)])
def test_a_sigterm_at_the_time_limit_on_the_last_attempt_leaves_a_timeout_record(
        tmp_path, frog_dir, left, recorded):
    """On Snakemake's last attempt a SIGTERM with the SLURM job's time nearly out (a fake
    squeue says how much is left) is a TIMEOUT: the cell's record, exit 0, for
    `dfil grid status` and the tables. With hours left it is a preemption: exit 143, the
    state saved, SLURM's requeue resumes it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "squeue").write_text(f"#!/bin/sh\necho {left}\n")
    (bin_dir / "squeue").chmod(0o755)
    cell, run = make_cell(tmp_path, frog_dir), tmp_path / "run"
    out = interrupted(cell, run, "SIGTERM", 5, "--attempt", "3", "--log", "x.log",
                      env={"PATH": f"{bin_dir}:{os.environ['PATH']}", "SLURM_JOB_ID": "9",
                           "DFIL_LAST_ATTEMPT": "3"})
    summary = run / "train_summary.json"
    if recorded:
        assert out.returncode == 0, out.stderr[-2000:]
        failed = json.loads(summary.read_text())["failed"]
        assert (failed["reason"], failed["attempt"], failed["log"]) == ("TIMEOUT", 3, "x.log")
        assert "gave up on the last attempt (TIMEOUT)" in out.stderr
    else:
        assert out.returncode == 143 and not summary.exists()
        assert (run / "resume.pt").exists()


def test_a_bad_cell_input_stops_training_before_anything_is_moved(tmp_path, frog_dir, capsys,
                                                                 monkeypatch):
    """A cell edited into one that cannot train (a typo in its data path, a symlink loop,
    a path shaped like a hub id, an emptied cell file) is one line naming the key or file; the
    finished outputs of the old config stay where they are (no superseded/)."""
    import datasets

    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: pytest.fail("hub lookup"))
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "run"
    first = make_cell(tmp_path, frog_dir, name="first", epochs=1)
    assert main(["train", "--cell", str(first), "--out", str(run)]) == 0
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    names = sorted(p.name for p in run.iterdir())  # adapter/ too
    cell = run / "cell.yaml"
    data = yaml.safe_load(cell.read_text())
    typo, loop = str(tmp_path / "frgo"), tmp_path / "loop"
    loop.symlink_to("loop")
    for source, start in [(typo, f"data.source: {typo} does not exist; "),
                          (str(loop), f"data.source: {loop} is a symlink loop ("),
                          ("data/frog", "data.source: data/frog does not exist; "),
                          (None, f"{cell}: empty, no cell config; remake it ")]:
        data["data"]["source"] = source  # a config edit: a new hash
        cell.write_text(yaml.safe_dump(data) if source else "")
        capsys.readouterr()
        assert main(["train", "--cell", str(cell), "--out", str(run)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"dfil train: error: {start}") and err.count("\n") == 1, err
        assert sorted(p.name for p in run.iterdir()) == names  # no superseded/
        assert all((run / n).read_bytes() == b for n, b in before.items() if n != "cell.yaml")


@pytest.mark.parametrize("keep_going", [True, False])
def test_a_diverging_cell_is_recorded_on_its_first_attempt_and_not_retried(
        tmp_path, frog_dir, monkeypatch, capsys, keep_going):
    """A loss that turns NaN (step 5 on) stops training at the end of epoch 1. With
    keep-going the first attempt records it (exit 0: Snakemake runs it no more), naming
    the step and the remedy; evaluation copies the record and `dfil grid status` shows
    it. Without keep-going it is exit status 4 and no summary."""
    import math

    import dfil.train.step as step_module
    from dfil.cli.jobs import EXIT_DIVERGED
    from dfil.results.status import cell_status

    real, calls = step_module.compute_loss, [0]

    def poisoned(*args, **kwargs):
        terms = real(*args, **kwargs)
        calls[0] += 1
        if calls[0] >= 5:
            terms.total = terms.total * math.nan
        return terms

    monkeypatch.setattr(step_module, "compute_loss", poisoned)
    if keep_going:
        monkeypatch.setenv("DFIL_LAST_ATTEMPT", "3")
    else:
        monkeypatch.delenv("DFIL_LAST_ATTEMPT", raising=False)
    cell, run = make_cell(tmp_path, frog_dir, epochs=3), tmp_path / "run"
    code = main(["train", "--cell", str(cell), "--out", str(run), "--attempt", "1",
                 "--log", "x.log"])
    err = capsys.readouterr().err
    assert "first at epoch 1, step 5: the run diverged; lower the learning rates" in err
    if not keep_going:
        assert code == EXIT_DIVERGED and not (run / "train_summary.json").exists()
        return
    assert code == 0 and "gave up for good (non-finite loss)" in err
    failed = json.loads((run / "train_summary.json").read_text())["failed"]
    assert (failed["reason"], failed["attempt"], failed["log"]) == ("non-finite loss", 1,
                                                                    "x.log")
    assert failed["message"].startswith("non-finite loss: the training loss is NaN or "
                                        "infinite, first at epoch 1, step 5")
    assert not (run / "model.safetensors").exists()
    assert main(["evaluate", "--run", str(run), "--attempt", "1"]) == 0
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["failed"] == failed
    assert cell_status(run, "t.log", "e.log") == (failed["message"], "x.log")
