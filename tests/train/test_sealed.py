"""A seed its pack sealed (dfil.train.sealed): the record's summary is taken only while the
run is the one its cell makes now. The workflow asks no GPU for that seed's job on the
same answer, so a seed whose data or config changed unseen trains on its own GPU class."""

from __future__ import annotations

import numpy as np
import yaml
from safetensors.numpy import save_file

from cells import tiny_cell
from dfil.config.cell import load_cell
from dfil.contracts.pack import pack_record, write_pack_record
from dfil.data.synthetic import write_frog_like
from dfil.engine.inputs import cell_identity
from dfil.train.sealed import sealed_summary


def sealed(tmp_path):
    """A cell on stamped synthetic data, its run holding attempts and a checkpoint, and
    a pack record that sealed the run's summary with the cell's identity now."""
    frog = tmp_path / "frog"
    write_frog_like(frog, seed=0, n_easy=16, n_hard=8)
    cell = tiny_cell(tmp_path, frog)
    run = tmp_path / "run"
    run.mkdir()
    (run / "attempts.json").write_text("[]")
    save_file({"w": np.zeros(2, dtype=np.float32)}, run / "model.safetensors")
    identity = cell_identity(load_cell(cell))
    summary = {"cell": "cell", "config_hash": identity["config_hash"], "identity": identity,
               "attempts": [], "trained": True, "provenance": {}}
    record = tmp_path / "pack.json"
    write_pack_record(record, pack_record([str(run)], [str(run)], [str(run)],
                                          summaries={str(run): summary}))
    return frog, cell, run, record, summary


def test_the_sealed_summary_of_the_run_the_cell_makes_now_is_taken(tmp_path):
    _, cell, run, record, summary = sealed(tmp_path)
    assert sealed_summary([record], cell, run) == (summary, [])
    # no record among the job's inputs (pack off, a dry run): nothing to say
    assert sealed_summary([], cell, run) == (None, [])
    assert sealed_summary([record], cell, tmp_path / "other") == (None, [])


def test_a_checkpoint_cut_short_since_is_left_to_the_seeds_own_job(tmp_path):
    _, cell, run, record, _ = sealed(tmp_path)
    best = run / "model.safetensors"
    best.write_bytes(best.read_bytes()[:-3])
    summary, why = sealed_summary([record], cell, run)
    assert summary is None and why == [f"{best}: unreadable: {best.stat().st_size} bytes "
                                       f"where its header says {best.stat().st_size + 3}"]


def test_data_made_again_since_the_pack_is_named_and_the_summary_declined(tmp_path):
    frog, cell, run, record, _ = sealed(tmp_path)
    write_frog_like(frog, seed=1, n_easy=16, n_hard=8)  # its stamp now says other digests
    summary, why = sealed_summary([record], cell, run)
    assert summary is None
    assert any(w.startswith("data.source/easy.jsonl ") for w in why), why


def test_a_cell_edited_since_the_pack_is_declined_with_its_config_hashes(tmp_path):
    _, cell, run, record, before = sealed(tmp_path)
    data = yaml.safe_load(cell.read_text())
    data["train"]["lr_heads"] = 0.002
    cell.write_text(yaml.safe_dump(data))
    summary, why = sealed_summary([record], cell, run)
    after = cell_identity(load_cell(cell))["config_hash"]
    assert summary is None and why[0] == f"config {before['config_hash']} -> {after}"


def test_a_cell_that_cannot_be_read_is_declined_saying_why(tmp_path):
    _, cell, run, record, _ = sealed(tmp_path)
    cell.write_text("model: [")
    summary, why = sealed_summary([record], cell, run)
    assert summary is None and len(why) == 1 and str(cell) in why[0]
