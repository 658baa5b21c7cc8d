"""A cell configuration's seeds trained together (dfil.train.driver.train_together over
dfil.train.pack): a pack of one is the solo run bit for bit, a frozen backbone's pack is
its solo runs bit for bit, a LoRA pack of three agrees with three solo runs within
PACK_RUN_TOLERANCE, a preempted pack resumes each seed to the uninterrupted result, and
finished seeds are left alone. Tiny random Llama, FRoG-like data, CPU, in process."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest
import torch
import yaml
from safetensors.torch import load_file

import dfil.train.pack as pack_module
from cells import tiny_cell
from dfil.contracts.rundir import ADAPTER_WEIGHTS as WEIGHTS
from dfil.data.synthetic import write_frog_like
from dfil.engine.checkpoint import read_checkpoint
from dfil.engine.provenance import device_name
from dfil.model.adapter import adapter_state
from dfil.train.driver import train_cell, train_together
from dfil.util.errors import ConfigError, Preempted

#: How far a LoRA pack's seed may end from its solo run (best validation loss): the
#: pack's padded width follows its longest row over all seeds, so the base's sums run
#: in another order, and AdamW carries last-bit differences through every step.
#: Measured: at most 3.4e-5 over three seeds and two epochs.
PACK_RUN_TOLERANCE = 1e-4
SEEDS = (11, 12, 13)


@pytest.fixture(scope="module")
def frog(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("frog")
    write_frog_like(out, seed=0, n_easy=48, n_hard=16)
    return out


def seed_cells(tmp: Path, frog: Path, seeds=SEEDS, **train) -> list[Path]:
    cells = []
    for seed in seeds:
        path = tiny_cell(tmp, frog, f"cell_s{seed}", epochs=2, seed=seed, **train)
        cells.append(path)
    return cells


def frozen(path: Path, method: str = "dfil") -> Path:
    cell = yaml.safe_load(path.read_text())
    cell["model"].update(method=method, adapter="none",
                         heads={"feature_norm": "standardize"})
    cell["model"].pop("lora")
    path.write_text(yaml.safe_dump(cell))
    return path


def solo(cells: list[Path], root: Path) -> list[Path]:
    runs = [root / f"solo{k}" for k in range(len(cells))]
    for cell, run in zip(cells, runs, strict=True):
        train_cell(cell, run, log=lambda _: None)
    return runs


def together(cells: list[Path], root: Path) -> list[Path]:
    """The pack's runs, each finished by its own train_cell after the pack, whose summary
    is the one the pack sealed for it, but for the provenance (the process that wrote
    it)."""
    runs = [root / f"pack{k}" for k in range(len(cells))]
    done = train_together(cells, runs, log=lambda _: None)
    assert done.trained == list(range(len(cells)))
    for k, (cell, run) in enumerate(zip(cells, runs, strict=True)):
        train_cell(cell, run, log=lambda _: None)
        written = json.loads((run / "train_summary.json").read_text())
        sealed = json.loads(json.dumps(done.summaries[k]))
        assert sealed.pop("provenance").keys() == written.pop("provenance").keys()
        assert sealed == written
    return runs


def test_a_pack_of_one_is_the_solo_run_bit_for_bit(tmp_path, frog):
    [cell] = seed_cells(tmp_path, frog, seeds=(11,))
    [alone], [packed] = solo([cell], tmp_path), together([cell], tmp_path)
    for name in ("model.safetensors", "train_log.jsonl"):
        assert (alone / name).read_bytes() == (packed / name).read_bytes(), name
    summary = json.loads((packed / "train_summary.json").read_text())
    assert summary["attempts"][0]["pack"] == {"seeds": [11], "size": 1,
                                              "device": device_name(torch.device("cpu"))}


@pytest.mark.parametrize("method", ["dfil", "attn_pool"])
def test_a_frozen_backbones_pack_is_its_solo_runs_bit_for_bit(tmp_path, frog, method):
    """Heads on cached features: each seed's heads run on its own rows, the same ops;
    attention pooling's token states cut to each seed's own longest prompt, the width
    its solo batch has (the pack's batch is as wide as its longest row of any seed)."""
    cells = [frozen(c, method) for c in seed_cells(tmp_path, frog)]
    for alone, packed in zip(solo(cells, tmp_path), together(cells, tmp_path), strict=True):
        for name in ("model.safetensors", "train_log.jsonl"):
            assert (alone / name).read_bytes() == (packed / name).read_bytes(), name


def test_a_lora_pack_of_three_agrees_with_three_solo_runs(tmp_path, frog):
    cells = seed_cells(tmp_path, frog)
    gaps = []
    for alone, packed in zip(solo(cells, tmp_path), together(cells, tmp_path), strict=True):
        a, b = (json.loads((r / "train_summary.json").read_text())["attempts"][0]
                for r in (alone, packed))
        assert a["best_epoch"] == b["best_epoch"]
        gaps.append(abs(a["best_val_loss"] - b["best_val_loss"]))
        assert b["pack"] == {"seeds": list(SEEDS), "size": 3,
                             "device": device_name(torch.device("cpu"))}
        _, state, _ = read_checkpoint(packed / "model.safetensors")  # peft loads its LoRA
        saved = load_file(str(packed / "adapter" / WEIGHTS))
        assert saved.keys() == adapter_state(state).keys()
        assert all(torch.equal(saved[k], t) for k, t in adapter_state(state).items())
    print("pack of three against solo runs, best val loss gaps:", gaps)
    assert max(gaps) <= PACK_RUN_TOLERANCE


def test_a_preempted_pack_resumes_each_seed_to_the_uninterrupted_result(tmp_path, frog,
                                                                        monkeypatch):
    cells = seed_cells(tmp_path, frog)
    whole = together(cells, tmp_path / "whole")
    runs = [tmp_path / f"cut{k}" for k in range(3)]
    real, calls = pack_module.pack_step, [0]

    def signalling(*args, **kwargs):
        calls[0] += 1
        if calls[0] == 4:  # mid-epoch 1 (6 steps an epoch)
            os.kill(os.getpid(), signal.SIGTERM)
        return real(*args, **kwargs)

    monkeypatch.setattr(pack_module, "pack_step", signalling)
    with pytest.raises(Preempted, match="step 4"):
        train_together(cells, runs, log=lambda _: None)
    assert all((r / "resume.pt").is_file() for r in runs)
    monkeypatch.setattr(pack_module, "pack_step", real)
    assert train_together(cells, runs, log=lambda _: None).trained == [0, 1, 2]
    for cell, cut, full in zip(cells, runs, whole, strict=True):
        train_cell(cell, cut, log=lambda _: None)
        assert (cut / "model.safetensors").read_bytes() == (
            full / "model.safetensors").read_bytes()
        summary = json.loads((cut / "train_summary.json").read_text())
        assert summary["attempts"][0]["resumes"] == [{"epoch": 1, "step": 4}]


def test_finished_seeds_are_left_alone_and_the_rest_train_together(tmp_path, frog):
    cells = seed_cells(tmp_path, frog)
    runs = [tmp_path / f"run{k}" for k in range(3)]
    train_cell(cells[1], runs[1], log=lambda _: None)
    before = (runs[1] / "train_summary.json").read_bytes()
    done = train_together(cells, runs, log=lambda _: None)
    assert done.trained == [0, 2] and done.finished == [0, 1, 2]
    assert (runs[1] / "train_summary.json").read_bytes() == before
    # a pack trained again (seed 0's run deleted) before seed 2's own job wrote its
    # summary: seed 2's attempts are done, so it is finished, not trained again
    assert not (runs[2] / "train_summary.json").exists()
    shutil.rmtree(runs[0])
    weights = (runs[2] / "model.safetensors").read_bytes()
    done = train_together(cells, runs, log=lambda _: None)
    assert done.trained == [0] and done.finished == [0, 1, 2]
    assert (runs[2] / "model.safetensors").read_bytes() == weights
    # what it seals for them: seed 1's summary as written before; seed 2's as its own
    # job then writes it, but for the provenance
    assert json.dumps(done.summaries[1], sort_keys=True) == json.dumps(
        json.loads(before), sort_keys=True)
    train_cell(cells[2], runs[2], log=lambda _: None)
    written = json.loads((runs[2] / "train_summary.json").read_text())
    sealed = json.loads(json.dumps(done.summaries[2]))
    assert sealed.pop("provenance").keys() == written.pop("provenance").keys()
    assert sealed == written

    # a finished seed's damaged memory plan or summary is its own job's to meet: the pack
    # trains the rest and seals what it can
    (runs[1] / "memory_plan.json").write_text("{")
    (runs[2] / "train_summary.json").write_text(json.dumps(
        {k: v for k, v in done.summaries[2].items() if k != "trained"}))
    shutil.rmtree(runs[0])
    lines = []
    done = train_together(cells, runs, log=lines.append)
    assert done.trained == [0] and done.finished == [0, 2] and sorted(done.summaries) == [0]
    assert any(line.startswith(f"{runs[1]}: trains on its own: ") for line in lines)
    assert any(line.startswith(f"{runs[2]}: its summary is left to its own job: "
                               "MetricsError") for line in lines)


def test_a_pack_is_one_configurations_seeds(tmp_path, frog):
    a, b = seed_cells(tmp_path, frog, seeds=(1, 2))
    other = tiny_cell(tmp_path, frog, "other", epochs=3, seed=2)
    with pytest.raises(ConfigError, match="not a seed of"):
        train_together([a, other], [tmp_path / "x", tmp_path / "y"])
    with pytest.raises(ConfigError, match="a seed given twice"):
        train_together([a, a], [tmp_path / "x", tmp_path / "y"])
    assert b.exists()


def test_dfil_train_with_several_cells_trains_them_as_one_pack(tmp_path, frog, capsys):
    from dfil.cli import main

    a, b = seed_cells(tmp_path, frog, seeds=(1, 2))
    x, y = tmp_path / "x", tmp_path / "y"
    assert main(["train", "--cell", str(a), "--cell", str(b), "--out", str(x),
                 "--out", str(y)]) == 0
    for run in (x, y):
        summary = json.loads((run / "train_summary.json").read_text())
        assert summary["trained"] and summary["attempts"][0]["pack"]["seeds"] == [1, 2]
    assert main(["train", "--cell", str(a), "--cell", str(b), "--out", str(x)]) == 2
    assert "2 --cell but 1 --out" in capsys.readouterr().err


def test_a_seed_its_pack_finished_has_its_summary_written_without_torch(tmp_path, frog):
    """The workflow's seed job after its pack (``--packed-by``): the summary the pack's
    record holds for the run, checked against the run's identity, in a process that never
    imports torch; a cell edited since trains here instead, saying why."""
    import subprocess
    import sys

    from dfil.cli import main

    a, b = seed_cells(tmp_path, frog, seeds=(1, 2))
    x, y, record = tmp_path / "x", tmp_path / "y", tmp_path / "pack.json"
    assert main(["train", "--cell", str(a), "--cell", str(b), "--out", str(x), "--out",
                 str(y), "--pack-record", str(record)]) == 0
    sealed = json.loads(record.read_text())["summaries"]
    assert sorted(sealed) == [str(x), str(y)] and not (x / "train_summary.json").exists()
    assert (x / "adapter" / WEIGHTS).is_file()  # exported by the pack
    args = ["train", "--cell", str(a), "--out", str(x), "--packed-by", str(record)]
    code = ("import sys; from dfil.cli import main; code = main(sys.argv[1:]); "
            "assert 'torch' not in sys.modules, 'torch imported'; sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                          text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": ""})
    assert done.returncode == 0, done.stderr
    assert "finished in its pack" in done.stdout
    assert json.loads((x / "train_summary.json").read_text()) == sealed[str(x)]

    # another run's training in x since (a directory moved): x's own files decide
    (x / "train_summary.json").unlink()
    shutil.copy(y / "attempts.json", x / "attempts.json")
    assert main(args) == 0
    summary = json.loads((x / "train_summary.json").read_text())
    assert summary["retrained"]["because"][0].startswith("config ")
    assert summary["cell"] == sealed[str(x)]["cell"] and summary != sealed[str(x)]

    cell = yaml.safe_load(b.read_text())  # edited since its pack trained it
    cell["train"]["lr_heads"] = 0.002
    b.write_text(yaml.safe_dump(cell))
    assert main(["train", "--cell", str(b), "--out", str(y), "--packed-by",
                 str(record)]) == 0
    summary = json.loads((y / "train_summary.json").read_text())
    assert summary["retrained"]["because"][0].startswith("config ")
    assert summary != sealed[str(y)]


def test_a_seed_the_pack_cannot_seal_is_left_to_its_own_job(tmp_path, frog, monkeypatch):
    """A seed whose summary the pack cannot write (its checkpoint unreadable when its
    adapter is exported) is finished without a sealed summary; the other seeds are not
    held back, and the seed's own job then meets the error itself."""
    import dfil.train.driver as driver
    from dfil.util.errors import CheckpointError

    cells = seed_cells(tmp_path, frog, seeds=(1, 2))
    runs = [tmp_path / "a", tmp_path / "b"]
    real = driver.export_adapter

    def failing(run_dir):
        if Path(run_dir) == runs[0]:
            raise CheckpointError(f"{run_dir}: unreadable checkpoint")
        return real(run_dir)

    monkeypatch.setattr(driver, "export_adapter", failing)
    lines = []
    done = train_together(cells, runs, log=lines.append)
    assert done.finished == [0, 1] and sorted(done.summaries) == [1]
    assert any("its summary is left to its own job" in line for line in lines)


def test_a_seed_resumed_from_a_solo_runs_state_trains_on_its_own(tmp_path, frog,
                                                                   monkeypatch):
    """A solo run's resume state holds no pack dropout stream: that seed stays out of the
    pack, and its own run continues it."""
    import dfil.train.step as step_module

    cells = seed_cells(tmp_path, frog, seeds=(11, 12))
    runs = [tmp_path / "a", tmp_path / "b"]
    real, calls = step_module.compute_loss, [0]

    def signalling(*args, **kwargs):
        calls[0] += 1
        if calls[0] == 3:
            os.kill(os.getpid(), signal.SIGTERM)
        return real(*args, **kwargs)

    monkeypatch.setattr(step_module, "compute_loss", signalling)
    with pytest.raises(Preempted):
        train_cell(cells[0], runs[0], log=lambda _: None)
    monkeypatch.setattr(step_module, "compute_loss", real)
    done = train_together(cells, runs, log=lambda _: None)
    assert done.trained == [1] and done.finished == [1]
    train_cell(cells[0], runs[0], log=lambda _: None)
    summary = json.loads((runs[0] / "train_summary.json").read_text())
    assert summary["attempts"][0]["resumes"] and "pack" not in summary["attempts"][0]


def test_a_signal_after_every_seed_diverged_stops_cleanly(tmp_path, frog, monkeypatch):
    """Every seed's loss non-finite, then SIGTERM in the same epoch: Preempted (no state
    saved for a diverged seed), never an IndexError."""
    import torch

    cells = seed_cells(tmp_path, frog, seeds=(11, 12))
    runs = [tmp_path / "a", tmp_path / "b"]
    real, calls = pack_module.pack_step, [0]

    def poisoned(setup, *args, **kwargs):
        calls[0] += 1
        with torch.no_grad():
            for heads in setup.pack.heads:
                next(heads.parameters()).fill_(float("nan"))
        if calls[0] == 2:
            os.kill(os.getpid(), signal.SIGTERM)
        return real(setup, *args, **kwargs)

    monkeypatch.setattr(pack_module, "pack_step", poisoned)
    with pytest.raises(Preempted, match="none \\(all diverged\\)"):
        train_together(cells, runs, log=lambda _: None)
    assert not any((r / "resume.pt").exists() for r in runs)


def test_a_pack_that_fails_on_the_last_attempt_leaves_each_seed_to_its_own_run(
        tmp_path, frog, monkeypatch):
    """A command line's pack failing on the last attempt records nothing over a finished
    seed: each seed's own run goes on (and records its own failure, if it has one)."""
    import dfil.train.driver as driver
    from dfil.cli import main

    a, b = seed_cells(tmp_path, frog, seeds=(1, 2))
    x, y = tmp_path / "x", tmp_path / "y"
    train_cell(b, y, log=lambda _: None)

    def broken(*args, **kwargs):
        raise RuntimeError("a broken pack")

    monkeypatch.setattr(driver, "train_together", broken)
    monkeypatch.setenv("DFIL_LAST_ATTEMPT", "1")
    assert main(["train", "--cell", str(a), str(b), "--out", str(x), str(y),
                 "--attempt", "1"]) == 0
    for run in (x, y):
        summary = json.loads((run / "train_summary.json").read_text())
        assert summary["trained"] and "failed" not in summary


def test_a_preempted_seed_stops_the_seeds_after_it(monkeypatch):
    import argparse

    import dfil.cli.jobs as jobs

    ran = []

    def one(args):
        ran.append(args.out)
        return 143

    monkeypatch.setattr(jobs, "_train", one)
    seeds = [argparse.Namespace(out=Path(n), attempt=None) for n in ("x", "y")]
    assert jobs._one_by_one(seeds) == 143 and ran == [Path("x")]


def test_a_pack_retraining_another_configs_outputs_says_so_in_each_summary(tmp_path, frog):
    cells = seed_cells(tmp_path, frog, seeds=(1, 2))
    runs = together(cells, tmp_path)
    for path in cells:  # the configuration edited: each seed's outputs are another's
        cell = yaml.safe_load(path.read_text())
        cell["train"]["lr_heads"] = 0.002
        path.write_text(yaml.safe_dump(cell))
    assert train_together(cells, runs, log=lambda _: None).trained == [0, 1]
    for cell, run in zip(cells, runs, strict=True):
        train_cell(cell, run, log=lambda _: None)
        summary = json.loads((run / "train_summary.json").read_text())
        assert summary["retrained"]["because"][0].startswith("config ")
        assert (run / summary["retrained"]["superseded"] / "model.safetensors").is_file()


def died(tmp_path, status: int, attempt: int, monkeypatch, last: str | None = "2") -> int:
    """``dfil died`` for a train_pack job whose `dfil train` exited with ``status``."""
    from dfil.cli import main

    if last is None:
        monkeypatch.delenv("DFIL_LAST_ATTEMPT", raising=False)
    else:
        monkeypatch.setenv("DFIL_LAST_ATTEMPT", last)
    return main(["died", "--pack-record", str(tmp_path / "pack.json"), "--out", "r/a", "r/b",
                 "--status", str(status), "--attempt", str(attempt), "--log", "l.log"])


def test_a_pack_killed_on_its_last_attempt_records_that_it_gave_up(tmp_path, monkeypatch):
    from dfil.contracts.pack import read_pack_record

    record = tmp_path / "pack.json"
    # an earlier attempt: the status stands, and Snakemake tries again
    assert died(tmp_path, 137, 1, monkeypatch) == 137 and not record.exists()
    # without keep-going there is no last attempt to record
    assert died(tmp_path, 137, 2, monkeypatch, last=None) == 137 and not record.exists()
    # a preemption saved its states: SLURM requeues it, nothing is recorded
    assert died(tmp_path, 143, 2, monkeypatch) == 143 and not record.exists()
    # the last attempt, killed: the record says the pack gave up, its seeds train alone
    assert died(tmp_path, 137, 2, monkeypatch) == 0
    written = read_pack_record(record)
    assert written["runs"] == ["r/a", "r/b"] and written["together"] == []
    assert written["finished"] == [] and written["gave_up"]["reason"] == "error"
    assert "exit status 137 (SIGKILL)" in written["gave_up"]["message"]
    assert "l.log" in written["gave_up"]["message"]


def test_a_record_the_pack_wrote_before_it_died_stands(tmp_path, monkeypatch):
    from dfil.contracts.pack import pack_record, write_pack_record

    record = tmp_path / "pack.json"
    write_pack_record(record, pack_record(["r/a", "r/b"], ["r/a", "r/b"]))
    before = record.read_bytes()
    assert died(tmp_path, 139, 1, monkeypatch) == 0 and record.read_bytes() == before
    assert died(tmp_path, 143, 2, monkeypatch) == 0 and record.read_bytes() == before
    # another pack's runs: not this job's record, so a retry, or on the last attempt
    # the death recorded over it
    write_pack_record(record, pack_record(["r/c"], ["r/c"]))
    assert died(tmp_path, 139, 1, monkeypatch) == 139
    assert died(tmp_path, 139, 2, monkeypatch) == 0
    message = json.loads(record.read_text())["gave_up"]["message"]
    assert "was killed (exit status 139 (SIGSEGV))" in message
    record.write_text("{damaged")  # not a record either
    assert died(tmp_path, 1, 2, monkeypatch) == 0
    message = json.loads(record.read_text())["gave_up"]["message"]
    assert "exited with status 1, before it recorded why" in message
